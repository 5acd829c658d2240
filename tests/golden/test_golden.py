"""Each golden case played again must write its approved record byte for byte.

A record holds every step, think time, fault and result of a match, so any change in how the
match loops play, time, charge or record shows up here as the first line that differs. Such a
change may be intended: then the records are rewritten with ``python -m tests.golden.regenerate``
and a reviewer approves the diff, which is the point of keeping them.
"""

from __future__ import annotations

import pytest

from .cases import CASES, RECORDS, record_path, replay_report

REGENERATE = (
    "if the change is intended, run `python -m tests.golden.regenerate` from the repo root "
    "and have a reviewer approve the diff of tests/golden/records/"
)
SHOWN = 1000
"""Characters of a differing line shown in a failure (a result line with many hands is long)."""


def first_difference(expected: str, actual: str) -> str:
    """Describe the first line where ``actual`` differs from ``expected`` (1-based)."""
    old, new = expected.splitlines(keepends=True), actual.splitlines(keepends=True)
    for number, (was, now) in enumerate(zip(old, new, strict=False), start=1):
        if was != now:
            return f"line {number} differs:\n  approved: {_shown(was)}\n  now:      {_shown(now)}"
    if len(old) != len(new):
        number = min(len(old), len(new)) + 1
        if len(old) > len(new):
            return f"line {number} is missing now:\n  approved: {_shown(old[number - 1])}"
        return f"line {number} is new:\n  now:      {_shown(new[number - 1])}"
    return "the texts differ in no line (an encoding difference?)"


def _shown(line: str) -> str:
    text = repr(line.rstrip("\n")) if not line.endswith("\n") else line.rstrip("\n")
    return text if len(text) <= SHOWN else f"{text[:SHOWN]}... ({len(text)} characters)"


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_case_writes_its_approved_record(name: str) -> None:
    path = record_path(name)
    if not path.exists():
        pytest.fail(f"{name}: no approved record at {path}; {REGENERATE}", pytrace=False)
    approved = path.read_bytes()
    now = CASES[name]().encode("utf-8")
    if now != approved:
        where = first_difference(approved.decode("utf-8"), now.decode("utf-8"))
        pytest.fail(f"{name}: the record differs from {path}\n{where}\n{REGENERATE}", pytrace=False)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_approved_record_replays(name: str) -> None:
    """A reviewer approves a diff by eye; the engine checks that what was approved is sound."""
    path = record_path(name)
    if not path.exists():
        pytest.skip(f"no approved record for {name} (the test above fails for it)")
    ok, report = replay_report(path.read_text(encoding="utf-8"))
    assert ok, f"{path}: {report}"


def test_every_record_has_a_case_and_every_case_a_record() -> None:
    files = {path.stem for path in RECORDS.glob("*.jsonl")}
    orphans, missing = sorted(files - set(CASES)), sorted(set(CASES) - files)
    assert not orphans and not missing, (
        f"records with no case: {orphans or 'none'}; cases with no record: {missing or 'none'}; "
        f"{REGENERATE} (it writes the missing and deletes the orphans)"
    )


def test_a_difference_is_shown_at_its_first_line() -> None:
    """The failure message is the reviewer's starting point: it must point at the right line."""
    assert first_difference("a\nb\nc\n", "a\nB\nc\n") == (
        "line 2 differs:\n  approved: b\n  now:      B"
    )
    assert first_difference("a\nb\n", "a\n") == "line 2 is missing now:\n  approved: b"
    assert first_difference("a\n", "a\nb\n") == "line 2 is new:\n  now:      b"
    assert first_difference("a\nb\n", "a\nb") == "line 2 differs:\n  approved: b\n  now:      'b'"

"""A class whose bots the arena hosts (docs/hosting.md), end to end through the real referee
and the real command line.

The scripted class of tests/fakes/class_term.py with ``hosted``: forty students register on the
light install; the playing ones submit their bots with ``domino-arena bot submit`` (half a
Python file with a Bot, half a folder whose command speaks the stdio protocol with no SDK); the
referee's own runner validates each version in its sandbox and hosts it; the graded tournament
is played by the hosted bots alone, no process of theirs outside the arena, and graded.
bench/class_bench.py --hosted plays the same class with all forty hosted.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest

from domino_arena.server.store import hosted
from tests.fakes.class_term import ClassTerm, Ran, csv_rows, rows_by, student_name

STUDENTS: Final = 40
PLAYING: Final = 10
"""Students whose bots are hosted and play: five Python files, five stdio programs. A ten-bot
tournament keeps the test to a few hundred games; the bench hosts all forty."""

pytestmark = pytest.mark.skipif(
    not Path("/usr/bin/bwrap").exists(), reason="bubblewrap is not installed"
)


@dataclass
class Hosted:
    term: ClassTerm
    submitted: list[Ran]
    grades: dict[str, str]


@pytest.fixture(scope="module")
def hosted_class(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hosted]:
    folder: Path = tmp_path_factory.mktemp("hosted-class")
    term = ClassTerm(folder, STUDENTS, 0, PLAYING, hosted=True)
    try:
        term.open_course()
        term.register()
        submitted = term.submit()
        term.play()
        yield Hosted(term, submitted, term.export())
    finally:
        term.close()


def test_each_student_submits_on_the_light_install_and_each_version_is_validated(
    hosted_class: Hosted,
) -> None:
    term = hosted_class.term
    assert len(hosted_class.submitted) == PLAYING
    for n, ran in enumerate(hosted_class.submitted, start=1):
        bot = term.latest[student_name(n)]
        assert ran.out.startswith(f"{bot} v1 sha256:") and ran.out.rstrip().endswith("checking")
        (version,) = hosted.versions(term.storage.engine, bot)
        assert version.status == "accepted", version
        assert version.kind == ("python" if n % 2 else "command"), version
        assert version.submitter == f"bot {bot}", version


def test_the_hosted_bots_play_the_graded_tournament_with_no_process_outside_the_arena(
    hosted_class: Hosted,
) -> None:
    term = hosted_class.term
    assert term.bots == []  # the test connected nobody: every student's bot is hosted
    t = term.wait_finished(term.tournament_id)
    hosted_bots = {term.latest[student_name(n)] for n in range(1, PLAYING + 1)}
    assert set(t.entrants) == hosted_bots | {"house:greedy", "house:random"}
    matches = term.storage.matches(limit=10_000, tournament_id=term.tournament_id)
    assert len(matches) == t.progress.total > 0
    for match in matches:
        assert match.termination in ("normal", "adjudicated"), (match.id, match.detail)
        assert not any(match.faults), (match.id, match.faults)
    for match in matches[:20]:  # each hosted seat's log was kept, and nobody crashed
        logs = hosted.match_logs(term.storage.engine, match.id)
        assert {log.bot for log in logs} == set(match.seats) & hosted_bots, (match.id, logs)
        assert not any(log.crashed for log in logs), logs
    assert hosted_bots <= set(term.referee.connected())


def test_every_student_has_a_grade_row_and_the_hosted_ones_are_graded(hosted_class: Hosted) -> None:
    table = rows_by(csv_rows(hosted_class.grades["csv"]), "owner")
    assert set(table) == {student_name(n) for n in range(1, STUDENTS + 1)}
    for n in range(1, STUDENTS + 1):
        row = table[student_name(n)]
        if n <= PLAYING:
            assert row["status"] == "graded" and row["grade"] in ("A", "B", "F"), row
        else:
            assert row["status"] == "no submission" and row["grade"] == "", row

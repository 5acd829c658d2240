"""Rewrite the golden records from the cases: ``python -m tests.golden.regenerate`` (repo root).

This is the one way the files in ``records/`` change. It plays every case of ``cases.py``,
writes the files whose text differs, deletes the files no case owns any more, and prints each
file with what happened to it, so the diff a reviewer must approve is exactly what changed.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from .cases import CASES, RECORDS, record_path


def regenerate() -> list[tuple[Path, str]]:
    """Write every case's record; return each file touched or checked with its status.

    The status is ``new``, ``changed``, ``unchanged`` or ``removed`` (a file no case owns).
    """
    RECORDS.mkdir(exist_ok=True)
    done: list[tuple[Path, str]] = []
    for name in sorted(CASES):
        path = record_path(name)
        text = CASES[name]().encode("utf-8")
        old = path.read_bytes() if path.exists() else None
        if old == text:
            done.append((path, "unchanged"))
            continue
        path.write_bytes(text)
        done.append((path, "new" if old is None else "changed"))
    owned = {record_path(name) for name in CASES}
    for path in sorted(RECORDS.glob("*.jsonl")):
        if path not in owned:
            path.unlink()
            done.append((path, "removed"))
    return done


def main() -> int:
    # referee-void-referee-failure makes the referee log its own failure with a traceback, on
    # purpose: that is the behaviour its record pins, not news for whoever regenerates.
    logging.disable(logging.ERROR)
    done = regenerate()
    root = Path.cwd()
    for path, status in done:
        shown = path.relative_to(root) if path.is_relative_to(root) else path
        print(f"{shown}: {status}")
    touched = sum(status != "unchanged" for _, status in done)
    print(f"{len(CASES)} cases, {touched} file(s) changed")
    if touched:
        print("have a reviewer approve the diff: git status / git diff tests/golden/records")
    return 0


if __name__ == "__main__":
    sys.exit(main())

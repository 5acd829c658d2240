"""Running the command line in-process for the tests of tests/cli (capsys captures its output)."""

from __future__ import annotations

import re

import pytest

from domino_arena.server.cli.main import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def cli(capsys: pytest.CaptureFixture[str], command: str, *extra: str) -> tuple[int, str, str]:
    """Run ``command`` (split on spaces) followed by ``extra`` arguments kept whole (paths)."""
    return run(capsys, *command.split(), *extra)


def table_rows(out: str) -> list[list[str]]:
    """The cells of each line of a printed table (columns are two or more spaces apart)."""
    lines = [line.strip() for line in out.splitlines()]
    return [re.split(r"\s{2,}", line) for line in lines if line.strip("─ ")]

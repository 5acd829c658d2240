"""Running the command line in-process for the tests of tests/cli (capsys captures its output)."""

from __future__ import annotations

import pytest

from domino_arena.server.cli.main import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def cli(capsys: pytest.CaptureFixture[str], command: str, *extra: str) -> tuple[int, str, str]:
    """Run ``command`` (split on spaces) followed by ``extra`` arguments kept whole (paths)."""
    return run(capsys, *command.split(), *extra)

"""Running the command line in-process for the tests of tests/cli (capsys captures its output)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from domino_arena.server.cli.main import main
from domino_arena.server.ladder.ratings_store import RatedStorage
from tests.fakes.admin_server import TOKEN, AdminServer, FakeArena


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


@contextmanager
def admin_server(
    folder: Path, monkeypatch: pytest.MonkeyPatch, bots: Sequence[str] = ("alice", "bob", "carol")
) -> Iterator[AdminServer]:
    """The admin API on port 0 over a fresh SQLite storage holding ``bots``: real servicers and
    storage, the fake arena of tests/server/test_admin.py (tournaments and ladders change state
    at once); the admin token comes from the environment, as a user sets it."""
    monkeypatch.delenv("DOMINO_ARENA_SERVER", raising=False)
    storage = RatedStorage(f"sqlite:///{folder / 'cli.db'}")
    storage.open()
    for name in bots:
        storage.add_bot(name)
    server = AdminServer(FakeArena(storage))
    monkeypatch.setenv("DOMINO_ARENA_ADMIN_TOKEN", TOKEN)
    try:
        yield server
    finally:
        server.close()
        storage.close()


def admin(capsys: pytest.CaptureFixture[str], server: AdminServer, *args: str) -> str:
    """Run an admin command against ``server`` (token from the environment); return stdout."""
    code, out, err = run(capsys, *args, "--server", server.address)
    assert (code, err) == (0, ""), err
    return out

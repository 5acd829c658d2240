"""``bot create|list|rotate|disable|enable|delete`` against the admin API on port 0, and
``bot run`` stopping when its token is withdrawn (against the whole referee).

The admin servicer, the storage (SQLite) and the lobby are real; the arena behind them is the
fake of tests/fakes/admin_server.py. A command that makes a token prints only the token on
stdout, so ``TOKEN=$(domino-arena bot create x)`` works.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from domino_arena.server.cli.main import main
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.net.lobby import Connection
from domino_arena.server.store.bots import BotCheck, BotState
from domino_arena.v1 import admin_pb2 as admin_pb
from tests.fakes.admin_server import TOKEN, AdminServer, FakeArena
from tests.fakes.referee_server import WAIT, Referee

from .harness import run


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[RatedStorage]:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'bots.db'}")
    storage.open()
    yield storage
    storage.close()


@pytest.fixture
def server(storage: RatedStorage, monkeypatch: pytest.MonkeyPatch) -> Iterator[AdminServer]:
    monkeypatch.delenv("DOMINO_ARENA_SERVER", raising=False)
    monkeypatch.setenv("DOMINO_ARENA_ADMIN_TOKEN", TOKEN)
    server = AdminServer(FakeArena(storage))
    yield server
    server.close()


def bot(capsys: pytest.CaptureFixture[str], server: AdminServer, *args: str) -> tuple[str, str]:
    """Run ``bot ARGS`` against ``server``; it must succeed. Return stdout and stderr."""
    code, out, err = run(capsys, "bot", *args, "--server", server.address)
    assert code == 0, err
    return out, err


def test_create_prints_only_the_token_on_stdout(
    capsys: pytest.CaptureFixture[str], server: AdminServer, storage: RatedStorage
) -> None:
    out, err = bot(capsys, server, "create", "alice")
    token = out.removesuffix("\n")
    assert re.fullmatch(r"[0-9a-f]{64}", token), out
    assert storage.check_bot("alice", token) is BotCheck.OK
    assert err == (
        f"domino-arena: created bot 'alice' on the referee at {server.address}; "
        "its token, shown only this once:\n"
    )


def test_list_shows_state_connection_and_dates(
    capsys: pytest.CaptureFixture[str], server: AdminServer, storage: RatedStorage
) -> None:
    for name in ("alice", "bob", "carol"):
        storage.add_bot(name)
    storage.set_bot_enabled("bob", False)
    storage.delete_bot("carol")
    server.call(lambda: server.arena.lobby.connect(Connection("alice", ["passing"])))
    out, err = bot(capsys, server, "list")
    rows = [re.split(r"\s{2,}", line.strip()) for line in out.splitlines() if line.strip("─ ")]
    assert rows[0] == ["bot", "course", "owner", "state", "connected", "created", "token issued"]
    assert [row[:5] for row in rows[1:]] == [
        ["alice", "default", "-", "enabled", "yes"],
        ["bob", "default", "-", "disabled", "no"],
    ]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", c) for c in rows[1][5:])
    out, _ = bot(capsys, server, "list", "--all")
    rows = [re.split(r"\s{2,}", line.strip()) for line in out.splitlines() if line.strip("─ ")]
    assert rows[-1][:5] + rows[-1][6:] == ["carol", "default", "-", "deleted", "no", "-"]
    assert err == ""


def test_list_of_no_bots_says_so(capsys: pytest.CaptureFixture[str], server: AdminServer) -> None:
    out, _ = bot(capsys, server, "list")
    assert out == "no bots (--all shows the deleted ones too)\n"


def test_rotate_disable_enable_delete(
    capsys: pytest.CaptureFixture[str], server: AdminServer, storage: RatedStorage
) -> None:
    old = storage.add_bot("alice")
    out, err = bot(capsys, server, "rotate", "alice")
    new = out.removesuffix("\n")
    assert re.fullmatch(r"[0-9a-f]{64}", new) and new != old
    assert "bot 'alice' has a new token; the old one stopped working" in err
    assert storage.check_bot("alice", old) is BotCheck.WRONG_TOKEN
    assert storage.check_bot("alice", new) is BotCheck.OK
    out, _ = bot(capsys, server, "disable", "alice")
    assert out.startswith("bot 'alice' is disabled: its open stream was closed")
    assert storage.check_bot("alice", new) is BotCheck.DISABLED
    out, _ = bot(capsys, server, "enable", "alice")
    assert out == "bot 'alice' is enabled: it may connect with its token\n"
    assert storage.check_bot("alice", new) is BotCheck.OK
    out, _ = bot(capsys, server, "delete", "alice")
    assert out.startswith("bot 'alice' is deleted: its token was dropped")
    stored = storage.bot("alice")
    assert stored is not None and stored.state is BotState.DELETED


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ("create alice", "answered ALREADY_EXISTS: name: a bot named 'alice' exists already"),
        ("create a/b", "answered INVALID_ARGUMENT: name: bad bot name 'a/b' (3 characters)"),
        ("rotate zed", "answered NOT_FOUND: name: no bot is named 'zed'"),
        ("enable gone", "answered FAILED_PRECONDITION: bot 'gone' is deleted: a deleted bot"),
        ("delete gone", "FAILED_PRECONDITION: bot 'gone' is deleted: it was deleted already"),
    ],
)
def test_a_refusal_is_one_line_with_exit_status_2(
    capsys: pytest.CaptureFixture[str],
    server: AdminServer,
    storage: RatedStorage,
    args: str,
    words: str,
) -> None:
    storage.add_bot("alice")
    storage.add_bot("gone")
    storage.delete_bot("gone")
    code, out, err = run(capsys, "bot", *args.split(" "), "--server", server.address)
    assert (code, out) == (2, "")
    assert words in err and err.count("\n") == 1


def test_the_admin_token_is_needed(
    capsys: pytest.CaptureFixture[str], server: AdminServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DOMINO_ARENA_ADMIN_TOKEN")
    code, out, err = run(capsys, "bot", "create", "alice", "--server", server.address)
    assert (code, out) == (2, "")
    assert "no admin token: pass --admin-token" in err
    code, _, err = run(
        capsys, "bot", "list", "--server", server.address, "--admin-token-file", "/nonexistent"
    )
    assert code == 2 and "--admin-token-file" in err


def test_bot_add_help_says_it_writes_the_database_directly(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["bot", "add", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "writing the database directly (no referee is asked)" in out
    assert "With a referee running, use 'bot create' instead" in out


def test_bot_run_stops_with_the_reason_when_its_token_is_rotated(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``bot run`` does not knock again with a dead token: one line, exit status 2."""
    storage = RatedStorage(f"sqlite:///{tmp_path / 'run.db'}")
    storage.open()
    token = storage.add_bot("alice")
    referee = Referee(storage)
    rotations: list[threading.Thread] = []

    def rotate() -> None:
        referee.admin.RotateBotToken(admin_pb.RotateBotTokenRequest(name="alice"), timeout=WAIT)

    class OnWelcome(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.getMessage().startswith("welcomed by") and not rotations:
                rotations.append(threading.Thread(target=rotate))
                rotations[0].start()

    client_log = logging.getLogger("domino_arena.sdk.client")
    handler = OnWelcome()
    client_log.addHandler(handler)
    client_log.setLevel(logging.INFO)
    monkeypatch.setenv("DOMINO_ARENA_TOKEN", token)
    try:
        code, out, err = run(capsys, "bot", "run", "alice", "--server", referee.address)
    finally:
        client_log.removeHandler(handler)
        client_log.setLevel(logging.NOTSET)
        for thread in rotations:
            thread.join(WAIT)
        referee.close()
        storage.close()
    assert (code, out) == (2, "")
    assert (
        f"domino-arena: error: bot 'alice' stopped: the referee at {referee.address} refused "
        "it: token rotated: an admin gave bot 'alice' a new token" in err
    )
    assert len(rotations) == 1

"""``--json`` on the listing and status commands (one document, its keys those docs/admin.md
documents) and the tables' plain text when stdout is not a terminal.

Against the admin API on port 0: the servicers and the storage (SQLite) are real, the arena
behind them is the fake of tests/fakes/admin_server.py.
"""

from __future__ import annotations

import io
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from domino_arena.server.cli import tables
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.net.lobby import Connection
from domino_arena.server.store.tournaments import TournamentState
from tests.fakes.admin_server import AdminServer, stored_match
from tests.fakes.referee_server import ADMIN_TOKEN, Referee

from .harness import admin, admin_server, run

BOX_OR_ESCAPE = re.compile("[\x1b\u2500-\u257f]")
"""An ANSI escape or a box-drawing character: neither belongs in plain output."""

MATCH_KEYS = {"match_id", "game", "bots", "seed", "result", "faults", "rated", "tournament_id"}
MATCH_KEYS |= {"game_index", "created", "deal_id", "rotation", "rating_model"}
RESULT_KEYS = {"termination", "winner", "scores", "side_of_seat", "faulted_seat", "fault"}
RESULT_KEYS |= {"detail"}
TOURNAMENT_KEYS = {"id", "name", "game", "entrants", "games_per_pairing", "deals", "max_deals"}
TOURNAMENT_KEYS |= {"time_control", "fault_policy", "max_strikes", "concurrency", "wait_ms"}
TOURNAMENT_KEYS |= {"rated", "state", "progress", "created", "results", "seed_commitment"}


@pytest.fixture
def referee(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AdminServer]:
    with admin_server(tmp_path, monkeypatch) as server:
        yield server


def document(capsys: pytest.CaptureFixture[str], server: AdminServer, *args: str) -> Any:
    """Run ``args --json``: stdout must be one JSON object of format 1, with no markup."""
    out = admin(capsys, server, *args, "--json")
    assert not BOX_OR_ESCAPE.search(out), out
    answer = json.loads(out)
    assert isinstance(answer, dict) and answer["format"] == 1
    return answer


def test_matches_json(capsys: pytest.CaptureFixture[str], referee: AdminServer) -> None:
    storage = referee.arena.storage
    storage.save_match(stored_match("m1", ("alice", "bob"), 0, minute=1))
    storage.save_match(stored_match("m2", ("carol", "bob"), 1, minute=2))
    answer = document(capsys, referee, "matches")
    assert set(answer) == {"format", "matches"}
    assert [m["match_id"] for m in answer["matches"]] == ["m2", "m1"]
    m2 = answer["matches"][0]
    assert set(m2) >= MATCH_KEYS
    assert set(m2["result"]) >= RESULT_KEYS
    assert m2["bots"] == ["carol", "bob"] and m2["seed"] == "7"  # uint64: a string
    assert m2["result"]["termination"] == "TERMINATION_NORMAL"
    assert (m2["result"]["winner"], m2["result"]["scores"]) == (1, [20, 101])
    assert m2["created"] == "2026-01-01T12:02:00Z"
    assert list(m2["game"]) == ["passing"]  # the game is the one key of GameConfig
    assert document(capsys, referee, "matches", "--game", "moon") == {"format": 1, "matches": []}


def test_tournament_list_and_status_json(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    out = admin(capsys, referee, "tournament", "create", "passing", "--bots", "alice,bob,carol")
    tid = out.split()[1]
    referee.arena.storage.save_match(
        stored_match("g0", ("alice", "bob"), 0, tournament_id=tid, game_index=0)
    )
    listed = document(capsys, referee, "tournament", "list")
    assert set(listed) == {"format", "tournaments"}
    [t] = listed["tournaments"]
    assert set(t) >= TOURNAMENT_KEYS
    assert (t["id"], t["state"], t["entrants"]) == (
        tid,
        "TOURNAMENT_STATE_CREATED",
        ["alice", "bob", "carol"],
    )
    status = document(capsys, referee, "tournament", "status", tid)
    assert set(status) == {"format", "tournament"}
    t = status["tournament"]
    assert set(t) >= TOURNAMENT_KEYS and t["id"] == tid
    assert {"total", "done", "running", "waiting"} <= set(t["progress"])
    assert t["progress"]["done"] == 1
    alice = next(r for r in t["results"] if r["bot"] == "alice")
    assert (alice["games"], alice["wins"], alice["points"]) == (1, 1, 1.0)
    assert "seed" not in t  # unset until the tournament ends (an optional field)
    assert t["time_control"] == {"move_ms": 1000, "bank_ms": 10000, "grace_ms": 50}
    assert document(capsys, referee, "tournament", "list") == listed  # nothing changed


def test_tournament_status_follow_json_prints_only_the_end(
    capsys: pytest.CaptureFixture[str], referee: AdminServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = admin(
        capsys, referee, "tournament", "create", "passing", "--bots", "alice,bob", "--start"
    )
    tid = out.split()[1]

    def finish(seconds: float) -> None:
        referee.arena.live.pop(tid)
        referee.arena.storage.set_tournament_state(tid, TournamentState.FINISHED)

    monkeypatch.setattr(time, "sleep", finish)
    answer = document(capsys, referee, "tournament", "status", tid, "--follow")
    assert answer["tournament"]["state"] == "TOURNAMENT_STATE_FINISHED"


def test_bot_list_json(capsys: pytest.CaptureFixture[str], referee: AdminServer) -> None:
    referee.arena.storage.set_bot_enabled("bob", False)
    referee.call(lambda: referee.arena.lobby.connect(Connection("alice", ["passing"])))
    answer = document(capsys, referee, "bot", "list")
    assert set(answer) == {"format", "bots"}
    bots = {b["name"]: b for b in answer["bots"]}
    assert list(bots) == ["alice", "bob", "carol"]
    assert {"name", "state", "connected", "created", "token_issued"} <= set(bots["alice"])
    assert (bots["alice"]["state"], bots["alice"]["connected"]) == ("BOT_STATE_ENABLED", True)
    assert (bots["bob"]["state"], bots["bob"]["connected"]) == ("BOT_STATE_DISABLED", False)


def test_ladder_list_json(capsys: pytest.CaptureFixture[str], referee: AdminServer) -> None:
    assert document(capsys, referee, "ladder", "list") == {"format": 1, "ladders": []}
    admin(capsys, referee, "ladder", "start", "passing", "--seed", "4", "--max-deals", "30")
    [ladder] = document(capsys, referee, "ladder", "list")["ladders"]
    keys = {"game", "time_control", "fault_policy", "max_strikes", "concurrency", "seed"}
    assert keys | {"started", "finished", "max_deals"} <= set(ladder)
    assert (ladder["seed"], ladder["max_deals"], ladder["concurrency"]) == ("4", 30, 4)
    assert ladder["fault_policy"] == "FAULT_POLICY_SUBSTITUTE"


def test_match_run_json(
    capsys: pytest.CaptureFixture[str], referee: AdminServer, tmp_path: Path
) -> None:
    lobby = referee.arena.lobby
    referee.call(lambda: [lobby.connect(Connection(n, ["passing"])) for n in ("alice", "bob")])
    path = tmp_path / "m.jsonl"
    answer = document(
        capsys, referee, "match", "run", "passing", "--bots", "alice,bob", "--record", str(path)
    )
    assert set(answer) == {"format", "match_id", "bots", "result", "record_file"}
    assert answer["bots"] == ["alice", "bob"] and answer["record_file"] == str(path)
    assert set(answer["result"]) >= RESULT_KEYS
    assert answer["result"]["termination"] == "TERMINATION_NORMAL"
    assert path.read_text()
    answer = document(capsys, referee, "match", "run", "passing", "--bots", "bob,alice")
    assert answer["record_file"] is None


def test_standings_json_has_its_format(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    referee.arena.storage.save_match(stored_match("a", ("alice", "bob"), 0))
    answer = document(capsys, referee, "standings", "passing", "--elo-only")
    assert answer["game"] == "passing"
    assert [r["bot"] for r in answer["rows"]] == ["alice", "bob"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["tournament", "status", "nope"], "NOT_FOUND: no tournament has id 'nope'"),
        (["matches", "--limit", "0"], "--limit: must be 1 to 1000, got 0"),
        (["match", "run", "passing", "--bots", "alice,bob"], "bot 'alice' is not connected"),
    ],
)
def test_json_mode_errors_go_to_stderr(
    capsys: pytest.CaptureFixture[str], referee: AdminServer, args: list[str], words: str
) -> None:
    code, out, err = run(capsys, *args, "--json", "--server", referee.address)
    assert (code, out) == (2, "")
    assert err.startswith("domino-arena: error: ") and words in err and err.count("\n") == 1


@pytest.mark.parametrize("force_color", [None, "1"])
def test_tables_off_a_terminal_are_plain_text(
    capsys: pytest.CaptureFixture[str],
    referee: AdminServer,
    monkeypatch: pytest.MonkeyPatch,
    force_color: str | None,
) -> None:
    if force_color is None:
        monkeypatch.delenv("FORCE_COLOR", raising=False)
    else:
        monkeypatch.setenv("FORCE_COLOR", force_color)
    storage = referee.arena.storage
    storage.save_match(stored_match("m1", ("alice", "bob"), 0, minute=1))
    out = admin(capsys, referee, "tournament", "create", "passing", "--bots", "alice,bob")
    tid = out.split()[1]
    storage.save_match(stored_match("g0", ("alice", "bob"), 0, tournament_id=tid, game_index=0))
    admin(capsys, referee, "ladder", "start", "passing")
    for args in (
        ["matches"],
        ["tournament", "list"],
        ["tournament", "status", tid],
        ["bot", "list"],
        ["ladder", "list"],
        ["standings", "passing", "--elo-only", "--head-to-head"],
    ):
        out = admin(capsys, referee, *args)
        assert not BOX_OR_ESCAPE.search(out), (args, out)
    lines = admin(capsys, referee, "matches").splitlines()
    assert re.split(r"\s{2,}", lines[0]) == [
        *("id", "game", "bots", "result", "winner", "scores", "created"),
    ]  # no edge padding: the header starts the line
    assert lines[1].startswith("m1  ") and lines[2].startswith("g0  ")


def test_markup_in_a_cell_is_shown_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tables, "terminal", lambda: False)
    out = io.StringIO()
    Console(file=out, width=80).print(tables.table(None, ["bot"], [["[bold]x[/bold]"]]))
    assert [line.rstrip() for line in out.getvalue().splitlines()] == ["bot", "[bold]x[/bold]"]


def test_tables_on_a_terminal_keep_their_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tables, "terminal", lambda: True)
    out = io.StringIO()
    Console(file=out, width=80, force_terminal=True).print(
        tables.table("t", ["bot", "games"], [["alice", 3]])
    )
    assert "─" in out.getvalue() and "\x1b[" in out.getvalue()


def test_compare_json_has_its_format(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'compare.db'}")
    storage.open()
    tokens = {name: storage.add_bot(name) for name in ("alice", "bob")}
    server = Referee(storage)
    try:
        for name, token in tokens.items():
            server.connect(name, token)
        monkeypatch.setenv("DOMINO_ARENA_ADMIN_TOKEN", ADMIN_TOKEN)
        monkeypatch.setattr(time, "sleep", lambda seconds: None)
        code, out, err = run(
            capsys,
            *("compare", "alice", "bob", "passing", "--sets", "1", "--seed", "3", "--json"),
            *("--server", server.address),
        )
    finally:
        server.close()
        storage.close()
    assert (code, err) == (0, ""), err
    assert not BOX_OR_ESCAPE.search(out), out
    answer = json.loads(out)
    assert set(answer) == {"format", "id", "name", "state", "games", "comparison"}
    assert (answer["format"], answer["state"]) == (1, "finished")
    assert {"candidate", "baseline", "verdict", "sets", "estimate"} <= set(answer["comparison"])

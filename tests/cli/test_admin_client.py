"""The ``domino-arena`` admin commands, against the admin API on port 0, and ``bot run``.

A refusal the user can fix costs one line on stderr and exit status 2; a referee that is down
or failed, exit status 1.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from domino_arena.bots.__main__ import main as bots_main
from domino_arena.sdk import runner
from domino_arena.sdk.match.notices import Step
from domino_arena.sdk.match.results import MatchResult, Termination
from domino_arena.sdk.rules import make_game
from domino_arena.server.cli.main import main
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.net.lobby import Connection
from domino_arena.server.play.match_spec import MatchSpec
from domino_arena.server.store.tournaments import TournamentState
from tests.fakes.admin_server import TOKEN, AdminServer, stored_match
from tests.fakes.referee_server import ADMIN_TOKEN, WAIT, Referee

from .harness import admin, admin_server, run, table_rows

# -- the admin commands, against the admin API on port 0 -----------------------------------------
# The servicers are real and so is the storage (SQLite); the arena behind them is the fake of
# tests/server/test_admin.py, so tournaments and ladders change state at once.


@pytest.fixture
def referee(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AdminServer]:
    with admin_server(tmp_path, monkeypatch) as server:
        yield server


@pytest.mark.parametrize(
    ("args", "token", "code", "words"),
    [
        (["tournament", "list"], None, 2, "no admin token: pass --admin-token or set"),
        (["standings", "moon"], "wrong", 2, "answered UNAUTHENTICATED: wrong admin token"),
        (["matches"], "", 2, "no admin token"),
        (["tournament", "start", "nope"], TOKEN, 2, "NOT_FOUND: no tournament has id 'nope'"),
        (["standings", "chess"], TOKEN, 2, "INVALID_ARGUMENT: game: unknown game 'chess'"),
        (["record", "nope"], TOKEN, 2, "NOT_FOUND: no stored match has id 'nope'"),
        (["ladder", "stop", "moon"], TOKEN, 2, "NOT_FOUND: no moon ladder is running"),
        (["watch", "nope"], None, 2, "NOT_FOUND: no match has id 'nope'"),
        (["matches", "--limit", "0"], TOKEN, 2, "--limit: must be 1 to 1000, got 0"),
        (
            ["tournament", "create", "passing", "--bots", "alice,zed"],
            TOKEN,
            2,
            "INVALID_ARGUMENT: entrants: unknown bot(s) zed",
        ),
        (
            ["tournament", "create", "passing", "--bots", "alice,bob", "--max-strikes", "0"],
            TOKEN,
            2,
            "--max-strikes: must be 1 or more, got 0",
        ),
    ],
    ids=[
        "no-token",
        "wrong-token",
        "empty-token",
        "unknown-tournament",
        "unknown-game",
        "unknown-match",
        "no-ladder",
        "watch-unknown",
        "limit",
        "unknown-entrant",
        "strikes",
    ],
)
def test_admin_commands_report_mistakes_in_one_line(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    referee: AdminServer,
    *,
    args: list[str],
    token: str | None,
    code: int,
    words: str,
) -> None:
    monkeypatch.delenv("DOMINO_ARENA_ADMIN_TOKEN")
    extra = [] if token is None else ["--admin-token", token]
    got, out, err = run(capsys, *args, "--server", referee.address, *extra)
    assert (got, out) == (code, "")
    assert err.startswith("domino-arena: error: ") and err.count("\n") == 1, err
    assert words in err
    assert referee.arena.calls == []


@pytest.mark.parametrize(
    "args",
    [["tournament", "list"], ["standings", "moon"], ["watch", "m1"], ["ladder", "list"]],
    ids=["tournament", "standings", "watch", "ladder"],
)
def test_a_referee_that_is_down_is_named_and_exits_1(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    monkeypatch.setenv("DOMINO_ARENA_ADMIN_TOKEN", "t")
    monkeypatch.setenv("DOMINO_ARENA_SERVER", "127.0.0.1:1")
    code, out, err = run(capsys, *args)
    assert (code, out) == (1, "")
    assert err.startswith("domino-arena: error: cannot reach the referee at 127.0.0.1:1: ")
    assert err.count("\n") == 1


def test_tournament_create_start_status_pause_cancel_and_list(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    out = admin(
        capsys,
        referee,
        *("tournament", "create", "passing", "--bots", "alice,bob,carol", "--name", "cup"),
        *("--seed", "3", "--games-per-pairing", "2", "--deals", "fresh", "--unrated"),
        *("--time-control", "500ms+5s/100ms", "--fault-policy", "forfeit", "--wait", "2.5"),
        "--concurrency",
        "2",
    )
    first = out.splitlines()[0]
    match = re.fullmatch(r"tournament (\w+) created: cup", first)
    assert match, out
    tid = match.group(1)
    assert "Passing Game, 2 players, to 101: created, 0/12 games" in out
    assert "entrants: alice, bob, carol" in out
    assert "2 games per pairing, fresh deals, unrated\n" in out
    assert re.search(r"seed commitment [0-9a-f]{64}; the seed is shown when it ends", out), out
    assert "seed 3" not in out
    assert "time control 0.5s+5s/100ms, forfeit; 2 at once; waits 2.5 s for absent bots" in out
    assert f"start it with: domino-arena tournament start {tid}" in out
    assert admin(capsys, referee, "tournament", "start", tid) == (
        f"tournament {tid}: started; running, 0/12 games (1 running, 0 waiting for bots)\n"
    )
    storage = referee.arena.storage
    storage.save_match(
        stored_match("g0", ("alice", "bob"), 0, tournament_id=tid, game_index=0, rated=False)
    )
    status = admin(capsys, referee, "tournament", "status", tid)
    assert status.splitlines()[0] == f"tournament {tid}: cup"
    rows = table_rows(status)
    # The performance is the tournament's own fit: one game each, so provisional, one-sided.
    alice, bob, carol = (
        next(r for r in rows if r[1:2] == [name]) for name in ("alice", "bob", "carol")
    )
    assert alice[:8] == ["1", "alice", "1", "1", "0", "0", "0", "1"]
    assert alice[8].startswith("≥ ") and alice[8].endswith(" (provisional)")
    assert bob[:8] == ["2", "bob", "1", "0", "0", "1", "0", "0"]
    assert bob[8].startswith("≤ ") and bob[8].endswith(" (provisional)")
    assert carol == ["3", "carol", "0", "0", "0", "0", "0", "0", "-"]
    assert ["alice", "x", "1-0-0"] in rows  # the crosstable: alice against alice, bob, carol
    assert ["carol", "x"] in rows
    assert "pausing" in admin(capsys, referee, "tournament", "pause", tid)
    code, _, err = run(capsys, "tournament", "pause", tid, "--server", referee.address)
    assert code == 2
    assert f"FAILED_PRECONDITION: tournament {tid} is paused: only a running" in err
    assert "cancelled" in admin(capsys, referee, "tournament", "cancel", tid)
    over = admin(capsys, referee, "tournament", "status", tid)
    assert re.search(
        rf"seed 3, salt [0-9a-f]{{32}}, commitment [0-9a-f]{{64}}; "
        rf"check with: domino-arena verify {tid}",
        over,
    ), over
    listed = table_rows(admin(capsys, referee, "tournament", "list"))
    assert [tid, "cup", "Passing Game, 2 players, to 101", "cancelled", "1", "12", "3"] == (
        listed[1][:7]
    )
    assert referee.arena.calls == [
        ("create", tid),
        ("start", tid),
        ("pause", tid),
        ("cancel", tid),
    ]


def test_tournament_create_can_start_at_once(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    out = admin(
        capsys, referee, "tournament", "create", "moon", "--bots", "alice,bob,carol", "--start"
    )
    assert "Three-Player Moon, 3 players, to 21: running, 0/" in out
    assert "duplicate deals, rated" in out
    assert "start it with" not in out


def test_tournament_status_follow_shows_progress_until_it_ends(
    capsys: pytest.CaptureFixture[str], referee: AdminServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = admin(
        capsys, referee, "tournament", "create", "passing", "--bots", "alice,bob", "--start"
    )
    tid = out.split()[1]
    storage = referee.arena.storage
    polls: list[float] = []

    def next_poll(seconds: float) -> None:
        """Instead of sleeping: one more game is stored, and the second poll finds it over."""
        polls.append(seconds)
        storage.save_match(
            stored_match(f"g{len(polls)}", ("alice", "bob"), 1, tournament_id=tid, game_index=1)
        )
        if len(polls) == 2:
            referee.arena.live.pop(tid)
            storage.set_tournament_state(tid, TournamentState.FINISHED)

    monkeypatch.setattr(time, "sleep", next_poll)
    status = admin(capsys, referee, "tournament", "status", tid, "--follow")
    assert polls == [1.0, 1.0]
    assert "finished, 1/2 games" in status
    bob = next(r for r in table_rows(status) if r[1:2] == ["bob"])
    assert bob[:8] == ["1", "bob", "1", "1", "0", "0", "0", "1"] and bob[8].startswith("≥ ")


def test_standings_and_head_to_head_tables(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    storage = referee.arena.storage
    storage.save_match(stored_match("a", ("alice", "bob"), 0, minute=1))
    storage.save_match(stored_match("b", ("carol", "bob"), 0, minute=2))
    rows = table_rows(
        admin(capsys, referee, "standings", "passing", "--head-to-head", "--elo-only")
    )
    assert rows[0] == ["passing: live Elo ladder (not the official standings)"]
    ranked = [row[:2] for row in rows if row[0] in {"1", "2", "3"}]
    assert ranked == [["1", "alice"], ["2", "carol"], ["3", "bob"]]
    bob = next(row for row in rows if row[1:2] == ["bob"])
    assert bob[4:] == ["2", "0", "0", "2", "0"]
    assert ["bob", "0-0-1", "x", "0-0-1"] in rows
    assert admin(capsys, referee, "standings", "moon", "--elo-only") == "no rated moon games yet\n"


def test_matches_and_record(
    capsys: pytest.CaptureFixture[str], referee: AdminServer, tmp_path: Path
) -> None:
    storage = referee.arena.storage
    storage.save_match(stored_match("m1", ("alice", "bob"), 0, minute=1))
    storage.save_match(stored_match("m2", ("carol", "bob"), 1, minute=2))
    rows = table_rows(admin(capsys, referee, "matches"))
    assert [row[0] for row in rows[1:]] == ["m2", "m1"]
    carol_bob = ["Passing Game, 2 players, to 101", "carol, bob", "normal", "bob", "20-101"]
    assert rows[1][1:6] == carol_bob
    only_alice = table_rows(admin(capsys, referee, "matches", "--bot", "alice", "--limit", "5"))
    assert [row[0] for row in only_alice[1:]] == ["m1"]
    assert admin(capsys, referee, "matches", "--game", "moon") == "no matches\n"
    assert admin(capsys, referee, "record", "m2") == '{"header": true}\n'
    path = tmp_path / "m2.jsonl"
    code, out, err = run(capsys, "record", "m2", "-o", str(path), "--server", referee.address)
    assert (code, out, err) == (0, "", f"record written to {path}\n")
    assert path.read_text() == '{"header": true}\n'


def test_ladder_start_list_stop(capsys: pytest.CaptureFixture[str], referee: AdminServer) -> None:
    out = admin(
        capsys,
        referee,
        *("ladder", "start", "passing", "--players", "3", "--seed", "4", "--max-deals", "30"),
    ) + admin(capsys, referee, "ladder", "list")
    assert out.startswith(
        "passing ladder started: Passing Game, 3 players, to 101, 4 games at once, "
        "time control 1s+10s/50ms, seed 4, adjudicated after 30 deals\n"
    )
    assert ["Passing Game, 3 players, to 101", "4", "1s+10s/50ms", "substitute", "0", "0"] in (
        table_rows(out)
    )
    assert admin(capsys, referee, "ladder", "stop", "passing") == (
        "passing ladder stopping: its running games finish\n"
    )
    assert admin(capsys, referee, "ladder", "list") == "no ladder is running\n"


def test_match_run_sends_the_token(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    lobby = referee.arena.lobby
    referee.call(lambda: [lobby.connect(Connection(n, ["passing"])) for n in ("alice", "bob")])
    out = admin(capsys, referee, "match", "run", "passing", "--bots", "alice,bob", "--seed", "1")
    lines = out.splitlines()
    assert lines[0].endswith(": Passing Game, 2 players, to 101")
    assert lines[1] == "result: normal; side 0 (seat 0) wins 101-0"
    assert referee.arena.specs[0].seed == 1
    assert referee.arena.specs[0].max_deals == 1000
    admin(capsys, referee, "match", "run", "passing", "--bots", "alice,bob", "--max-deals", "7")
    assert referee.arena.specs[1].max_deals == 7
    code, _, err = run(
        capsys,
        "match",
        "run",
        "passing",
        "--bots",
        "alice,bob",
        "--max-deals",
        "0",
        "--server",
        referee.address,
    )
    assert code == 2 and "--max-deals: must be 1 or more, got 0" in err


def test_watch_prints_each_public_step_as_it_happens(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    game = make_game("passing")
    hub = referee.hub
    spec = MatchSpec(game=game, bots=("alice", "bob"), seed=6, match_id="live")
    steps: list[Step] = []
    state = game.new_game(6)
    rng = random.Random(6)
    while not state.is_terminal():
        after = state.apply(rng.choice(state.legal_actions()))
        steps.append(
            Step(len(steps), state.current_seat, after.history[-1].action, None, state, after)
        )
        state = after
    feed = hub.on_step("live")
    subscribed = threading.Event()
    subscribe = hub.subscribe

    def watched(match_id: str) -> Any:
        subscription = subscribe(match_id)
        subscribed.set()
        return subscription

    referee.call(lambda: hub.started(spec))
    referee.call(lambda: [feed(step) for step in steps[:5]])
    hub.subscribe = watched  # type: ignore[method-assign]
    result: list[tuple[int, str, str]] = []
    watcher = threading.Thread(
        target=lambda: result.append(run(capsys, "watch", "live", "--server", referee.address))
    )
    watcher.start()
    assert subscribed.wait(WAIT)
    referee.call(lambda: [feed(step) for step in steps[5:]])
    outcome = state.outcome()
    assert outcome is not None
    end = MatchResult(Termination.NORMAL, outcome.winner, outcome.scores, outcome=outcome)
    referee.call(lambda: hub.ended("live", end))
    watcher.join(WAIT)
    ((code, out, err),) = result
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[:3] == [
        "match live: Passing Game, 2 players, to 101",
        "side 0: seat 0 alice",
        "side 1: seat 1 bob",
    ]
    plays = [line for line in lines if re.match(r"^  seat \d: ", line)]
    assert len(plays) == sum(1 for step in steps if step.seat >= 0)
    for line, step in zip(plays, (s for s in steps if s.seat >= 0), strict=True):
        assert line.startswith(f"  seat {step.seat}: {step.action}")
    assert any(line.startswith("  end of deal 1 (") for line in lines)
    assert lines[-3].startswith(f"result: normal; side {outcome.winner} ")


def test_the_commands_against_a_real_referee(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The referee of ``domino-arena serve`` (its arena, storage and ratings) behind the CLI."""
    storage = RatedStorage(f"sqlite:///{tmp_path / 'real.db'}")
    storage.open()
    tokens = {name: storage.add_bot(name) for name in ("alice", "bob")}
    referee = Referee(storage)
    try:
        for name, token in tokens.items():
            referee.connect(name, token)
        monkeypatch.setenv("DOMINO_ARENA_SERVER", f"127.0.0.1:{referee.port}")
        monkeypatch.setenv("DOMINO_ARENA_ADMIN_TOKEN", ADMIN_TOKEN)
        code, out, err = run(capsys, "match", "run", "passing", "--bots", "alice,bob")
        assert code == 0, err
        match_id = out.split()[1].rstrip(":")
        code, out, _ = run(capsys, "matches", "--bot", "alice")
        assert code == 0 and [row[0] for row in table_rows(out)[1:]] == [match_id]
        code, out, _ = run(capsys, "record", match_id)
        assert code == 0 and json.loads(out.splitlines()[0])["match_id"] == match_id
        code, out, _ = run(capsys, "standings", "passing", "--elo-only")
        assert code == 0
        assert sorted(row[1] for row in table_rows(out)[2:]) == ["alice", "bob"]
        code, out, _ = run(capsys, "standings", "passing")  # one game: the official fit too
        assert code == 0 and "passing 2p: official standings (plackett-luce/1; 1 game," in out
        code, _, err = run(capsys, "watch", match_id)
        assert code == 2
        assert f"match {match_id} is over: get its record with 'domino-arena record" in err
        code, out, err = run(capsys, "tournament", "create", "passing", "--bots", "alice,bob")
        assert code == 0, err
        tid = out.split()[1]
        code, out, _ = run(capsys, "tournament", "cancel", tid)
        assert (code, out) == (0, f"tournament {tid}: cancelled; cancelled, 0/2 games\n")
        code, _, err = run(capsys, "tournament", "list", "--admin-token", "nope")
        assert code == 2 and "UNAUTHENTICATED: wrong admin token" in err
    finally:
        referee.close()
        storage.close()


def test_bot_run_reads_the_referee_address_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``bot run`` and ``python -m domino_arena.bots`` default to ``$DOMINO_ARENA_SERVER``."""
    seen: list[str | None] = []

    def fake_run(bot: object, *, server: str | None = None, **_: object) -> None:
        seen.append(server)

    monkeypatch.setattr(runner, "run", fake_run)
    monkeypatch.setenv("DOMINO_ARENA_SERVER", "10.0.0.9:7000")
    assert main(["bot", "run", "x", "--token", "t"]) == 0
    assert bots_main(["x", "--token", "t"]) == 0
    assert seen[0] == "10.0.0.9:7000"
    assert seen[1] in (None, "10.0.0.9:7000")  # None: run() reads the environment itself
    assert main(["bot", "run", "x", "--token", "t", "--server", "h:1"]) == 0
    assert seen[2] == "h:1"

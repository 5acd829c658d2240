"""The ``domino-arena`` command line: play, replay, games and every user error.

``main([...])`` runs in-process (capsys captures its output); one test runs the installed
console script to prove the entry point exists. A user's mistake must cost one line on stderr
and exit status 2, never a traceback.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from domino_arena.bots import HOUSE_BOTS
from domino_arena.bots import greedy as greedy_module
from domino_arena.bots.__main__ import main as bots_main
from domino_arena.sdk import runner
from domino_arena.sdk.bot import Bot
from domino_arena.sdk.match.notices import Step
from domino_arena.sdk.match.results import MatchResult, Termination
from domino_arena.sdk.records import read_record
from domino_arena.sdk.rules import CHANCE, DRAW, GAMES, Action, Observation, make_game
from domino_arena.server.cli.main import COMMANDS, main
from domino_arena.server.net.lobby import Connection
from domino_arena.server.play.match_spec import MatchSpec
from domino_arena.server.store.storage import Storage, TournamentState

from .sdk.test_local import CONFIG_IDS, CONFIGS, ModestBot
from .server.test_admin import TOKEN, WAIT, AdminServer, FakeArena, stored_match
from .server.test_service import ADMIN_TOKEN, Referee


@pytest.fixture
def modest(monkeypatch: pytest.MonkeyPatch) -> str:
    """Offer the test's ModestBot as house bot "modest" (uniformly random Moon never ends)."""
    monkeypatch.setitem(HOUSE_BOTS, "modest", ModestBot)
    return "modest"


def cli_args(name: str, options: dict[str, Any], bot: str) -> list[str]:
    """Return the ``play`` arguments for a game configuration, with ``bot`` in every seat."""
    game = make_game(name, **options)
    args = ["play", name, "--bots", ",".join([bot] * game.num_players)]
    if "players" in options:
        args += ["--players", str(options["players"])]
    if options.get("partnerships"):
        args.append("--partners")
    return args


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def cli(capsys: pytest.CaptureFixture[str], command: str, *extra: str) -> tuple[int, str, str]:
    """Run ``command`` (split on spaces) followed by ``extra`` arguments kept whole (paths)."""
    return run(capsys, *command.split(), *extra)


@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=CONFIG_IDS)
def test_play_prints_a_transcript_that_matches_the_record(
    name: str,
    options: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    modest: str,
) -> None:
    path = tmp_path / "game.jsonl"
    args = [*cli_args(name, options, modest), "--seed", "17", "--record", str(path)]
    code, out, err = run(capsys, *args)
    assert (code, err) == (0, "")
    record = read_record(path)
    game = make_game(name, **options)
    lines = out.splitlines()
    assert lines[0] == f"{game.describe()}; seed 17"
    seat_steps = [line for line in lines if re.match(r"^  seat \d+: ", line)]
    taken = [s for s in record.steps if s.seat != CHANCE]
    assert len(seat_steps) == len(taken)
    for line, step in zip(seat_steps, taken, strict=True):
        text = f"  seat {step.seat}: {step.action}"
        assert line == text or line.startswith(f"{text}  (scores ")
    deals = [line for line in lines if re.match(r"^deal \d+", line)]
    assert len(deals) == 1 + sum(1 for s in record.steps if s.seat == CHANCE)
    hands = [line for line in lines if line.startswith("  hand of seat ")]
    assert len(hands) == len(deals) * game.num_players
    ends = [line for line in lines if line.startswith("  end of deal ")]
    assert len(ends) == len(record.result.hands)
    scores = "-".join(str(s) for s in record.result.scores)
    assert f"result: side {record.result.winner} " in out
    assert f"wins {scores}; " in out
    assert lines[-2:] == ["re-run with: --seed 17", f"record written to {path}"]


@pytest.mark.parametrize(
    ("args", "header", "sides"),
    [
        (["--players", "2"], "Passing Game, 2 players, to 101", ["side 1: seat 1 random"]),
        (["--players", "3"], "Passing Game, 3 players, to 101", ["side 2: seat 2 random"]),
        (["--players", "4"], "Passing Game, 4 players, to 61", ["side 3: seat 3 random"]),
        (
            ["--players", "4", "--partners"],
            "Passing Game, 4 players in partnerships, to 61",
            ["side 0: seat 0 random, seat 2 random", "side 1: seat 1 random, seat 3 random"],
        ),
    ],
)
def test_play_passing_at_every_table(
    args: list[str], header: str, sides: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    players = int(args[1])
    bots = ",".join(["random"] * players)
    code, out, err = run(capsys, "play", "passing", *args, "--bots", bots, "--seed", "3")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"{header}; seed 3"
    for side in sides:
        assert side in lines
    assert len([line for line in lines if line.startswith("  hand of seat ")]) % players == 0
    assert "result: side " in out


def test_play_uses_the_target_rule_and_generic_options(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(
        capsys,
        "play passing --players 3 --target-rule pagat --bots random,random,random --seed 1 --quiet",
    )
    assert code == 0
    assert out.startswith("Passing Game, 3 players, to 61; seed 1, first seat ")
    code, out, _ = cli(
        capsys,
        "play passing -o players=4 --option partnerships=true"
        " --bots random,random,random,random --seed 1 --quiet",
    )
    assert code == 0
    assert out.startswith("Passing Game, 4 players in partnerships, to 61; seed 1")


def test_the_same_seed_plays_the_same_game(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["play", "passing", "--bots", "random,greedy", "--seed", "99"]
    _, first, _ = run(capsys, *args)
    _, second, _ = run(capsys, *args)
    _, other, _ = run(capsys, "play", "passing", "--bots", "random,greedy", "--seed", "98")
    assert first == second
    assert first != other


def test_the_default_seed_is_printed_and_replays_the_game(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "play", "passing", "--bots", "random,random")
    assert code == 0
    found = re.search(r"^re-run with: --seed (\d+)$", out, re.MULTILINE)
    assert found is not None
    seed = found.group(1)
    assert out.startswith(f"Passing Game, 2 players, to 101; seed {seed}\n")
    _, again, _ = run(capsys, "play", "passing", "--bots", "random,random", "--seed", seed)
    assert again == out


def test_first_seat_picks_the_starter(capsys: pytest.CaptureFixture[str]) -> None:
    for seat in (0, 1):
        _, out, _ = cli(
            capsys, "play passing --bots random,random --seed 5 --first-seat", str(seat)
        )
        assert f"\ndeal 1, seat {seat} first\n" in out


def test_quiet_prints_only_the_result(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "play passing --bots random,random --seed 5 -o players=2 --quiet")
    assert code == 0
    lines = out.splitlines()
    assert re.fullmatch(r"Passing Game, 2 players, to 101; seed 5, first seat [01]", lines[0])
    assert lines[1].startswith("result: side ")
    assert re.fullmatch(r"  side 0 \(seat 0 random\): \d+( {2}winner)?", lines[2])
    assert lines[-1] == "re-run with: --seed 5"
    assert len(lines) == 5


def test_play_then_replay_succeeds(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    run(capsys, "play", "passing", "--bots", "greedy,random", "--seed", "8", "--record", str(path))
    steps = len(read_record(path).steps)
    assert run(capsys, "replay", str(path)) == (0, f"OK: {steps} steps, result matches\n", "")


def test_replay_reports_the_first_differing_step(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "m.jsonl"
    run(capsys, "play", "passing", "--bots", "random,random", "--seed", "8", "--record", str(path))
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    step = json.loads(lines[4])
    step["seat"] = 1 - step["seat"]
    lines[4] = json.dumps(step) + "\n"
    path.write_text("".join(lines), encoding="utf-8")
    code, out, err = run(capsys, "replay", str(path))
    assert (code, err) == (1, "")
    assert out == (
        f"FAIL: step 3 (line 5): the record has seat {step['seat']} acting "
        f"('{step['action']}'), but seat {1 - step['seat']} is to move\n"
    )


def test_games_lists_every_game_with_its_options(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "games")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 2 * len(GAMES)
    for name in sorted(GAMES):
        assert any(line.startswith(f"{name} ") for line in lines)
    assert re.search(r"^passing +Passing Game, 2 players, to 101$", out, re.MULTILINE)
    assert "options: players=2 partnerships=false target_rule=gamerules" in out


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0
    assert out.startswith("usage: domino-arena [-h] COMMAND ...")
    for command in COMMANDS:
        assert f"    {command.name}" in out
    code, out, _ = run(capsys, "play", "--help")
    assert code == 0
    assert out.startswith("usage: domino-arena play [-h] [--players N] --bots B1,B2[,...]")


# -- errors ---------------------------------------------------------------------------------------


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def one_error(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    code, out, err = run(capsys, *args)
    assert code == 2
    assert out == ""
    assert err.endswith("\n")
    assert err.count("\n") == 1, err
    assert err.startswith("domino-arena: error: ")
    assert "Traceback" not in err
    return err.removeprefix("domino-arena: error: ").rstrip("\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["play", "chess", "--bots", "random"], "unknown game 'chess': expected one of "),
        (
            ["play", "passing", "--players", "5", "--bots", "random"],
            "passing: players must be 2, 3 or 4, got 5",
        ),
        (
            ["play", "passing", "--players", "3", "--partners", "--bots", "random,random,random"],
            "passing: partnerships need 4 players, got 3",
        ),
        (
            ["play", "passing", "--target-rule", "house", "--bots", "random,random"],
            "passing: target_rule must be one of gamerules, pagat, got 'house'",
        ),
        (
            ["play", "passing", "-o", "colour=red", "--bots", "random,random"],
            "passing: unknown option 'colour' (options: players, partnerships, target_rule)",
        ),
        (
            ["play", "passing", "-o", "players", "--bots", "random,random"],
            "--option: expected KEY=VALUE, got 'players'",
        ),
        (
            ["play", "passing", "-o", "players=many", "--bots", "random,random"],
            "passing: option 'players' must be int, got 'many'",
        ),
        (
            ["play", "passing", "--players", "3", "--bots", "random,random"],
            "--bots: 3 bots are needed, one per seat (Passing Game, 3 players, to 101), "
            "got 2: random,random",
        ),
        (
            ["play", "passing", "--bots", "random,clever"],
            "--bots: unknown bot 'clever': expected one of greedy, random",
        ),
        (
            ["play", "passing", "--bots", "random,random", "--first-seat", "2"],
            "--first-seat: 2 is not a seat of a 2-player game (0 to 1)",
        ),
        (
            ["play", "passing", "--bots", "random,random", "--seed", "abc"],
            "argument --seed: invalid int value: 'abc' (see 'domino-arena play --help')",
        ),
        (
            ["play", "passing"],
            "the following arguments are required: --bots (see 'domino-arena play --help')",
        ),
        ([], "the following arguments are required: COMMAND (see 'domino-arena --help')"),
        (["fly"], "argument COMMAND: invalid choice: 'fly'"),
        (["replay"], "the following arguments are required: FILE"),
    ],
)
def test_usage_errors_cost_one_line_and_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert one_error(capsys, args).startswith(message)


def test_partners_for_a_game_without_partnerships_is_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    without = [name for name in GAMES if "partnerships" not in make_game(name).options()]
    if not without:
        pytest.skip("every registered game has a partnership option")
    name = without[0]
    players = make_game(name).num_players
    message = one_error(
        capsys, ["play", name, "--partners", "--bots", ",".join(["random"] * players)]
    )
    assert message.startswith(f"--partners: {name} has no option 'partnerships'")


def test_players_for_a_fixed_size_game_must_match(capsys: pytest.CaptureFixture[str]) -> None:
    fixed = [name for name in sorted(GAMES) if "players" not in make_game(name).options()]
    if not fixed:
        pytest.skip("every registered game has a players option")
    game = make_game(fixed[0])
    n = game.num_players
    bots = ",".join(["random"] * (n + 1))
    message = one_error(capsys, ["play", game.name, "--players", str(n + 1), "--bots", bots])
    assert message == f"--players: {game.title} is played by {n} players, got {n + 1}"


def test_a_missing_record_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    assert one_error(capsys, ["replay", str(missing)]) == (
        f"cannot read {missing}: No such file or directory"
    )


def test_a_truncated_record_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    run(capsys, "play", "passing", "--bots", "random,random", "--seed", "8", "--record", str(path))
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = write(tmp_path, "cut.jsonl", "".join(lines[:-1]))
    assert one_error(capsys, ["replay", cut]) == (
        f"{cut}: record ends after line {len(lines) - 1} without a result line (truncated?)"
    )


def test_a_malformed_record_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = write(tmp_path, "bad.jsonl", "this is not a record\n")
    assert one_error(capsys, ["replay", bad]) == (
        f"{bad}: line 1: not JSON: Expecting value: line 1 column 1 (char 0)"
    )
    path = tmp_path / "m.jsonl"
    run(capsys, "play", "passing", "--bots", "random,random", "--seed", "8", "--record", str(path))
    text = path.read_text(encoding="utf-8").replace('"action": "pass"', '"action": "jump 6-4"', 1)
    jumped = write(tmp_path, "jump.jsonl", text)
    assert one_error(capsys, ["replay", jumped]).startswith(
        f"{jumped}: line {_line_of(text, 'jump 6-4')}: unknown action 'jump 6-4'"
    )


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_an_unwritable_record_path_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "no-such-dir" / "m.jsonl"
    args = ["play", "passing", "--bots", "random,random", "--record", str(target)]
    assert one_error(capsys, args) == (
        f"--record: cannot write {target}: the folder {target.parent} does not exist"
    )


def test_a_bot_without_a_strategy_for_the_game_is_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(
        greedy_module.STRATEGY_MODULES, "passing", "domino_arena.bots.greedy.not_written"
    )
    assert one_error(capsys, ["play", "passing", "--bots", "greedy,random", "--seed", "1"]) == (
        "--bots: greedy: no strategy for game 'passing' yet (bots/greedy/not_written.py is missing)"
    )


class Drawer(Bot):
    """Always draws, which is illegal on the opening turn of the Passing Game."""

    name = "drawer"

    def choose(self, observation: Observation) -> Action:
        return DRAW


def test_an_illegal_move_by_a_bot_is_one_line_and_exit_1(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(HOUSE_BOTS, "drawer", lambda seed: Drawer())
    code, out, err = run(
        capsys, "play", "passing", "--bots", "drawer,drawer", "--seed", "1", "--first-seat", "0"
    )
    assert code == 1
    assert out == ""
    assert err.startswith(
        "domino-arena: error: bot 'drawer' in seat 0 chose 'draw' at step 0: RULES.md "
    )
    assert "; legal actions: play " in err
    assert err.count("\n") == 1


# -- the installed console script -----------------------------------------------------------------


def test_the_console_script_is_installed(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "domino-arena"
    assert script.exists(), f"{script} is missing: run `pip install -e .`"

    def console(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(script), *args], capture_output=True, text=True, check=False, timeout=60
        )

    games = console("games")
    assert games.returncode == 0
    assert "passing" in games.stdout
    record = tmp_path / "m.jsonl"
    played = console(
        "play",
        "passing",
        "--bots",
        "random,random",
        "--seed",
        "4",
        "--quiet",
        "--record",
        str(record),
    )
    assert played.returncode == 0, played.stderr
    assert "re-run with: --seed 4" in played.stdout
    replayed = console("replay", str(record))
    assert replayed.returncode == 0
    assert replayed.stdout.startswith("OK: ")
    refused = console("play", "chess", "--bots", "random")
    assert refused.returncode == 2
    assert refused.stderr.startswith("domino-arena: error: unknown game 'chess'")
    assert "Traceback" not in refused.stderr


# -- the admin commands, against the admin API on port 0 -----------------------------------------
# The servicers are real and so is the storage (SQLite); the arena behind them is the fake of
# tests/server/test_admin.py, so tournaments and ladders change state at once.


@pytest.fixture
def referee(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AdminServer]:
    monkeypatch.delenv("DOMINO_ARENA_SERVER", raising=False)
    storage = Storage(f"sqlite:///{tmp_path / 'cli.db'}")
    storage.open()
    for name in ("alice", "bob", "carol"):
        storage.add_bot(name)
    server = AdminServer(FakeArena(storage))
    monkeypatch.setenv("DOMINO_ARENA_ADMIN_TOKEN", TOKEN)
    yield server
    server.close()
    storage.close()


def admin(capsys: pytest.CaptureFixture[str], server: AdminServer, *args: str) -> str:
    """Run an admin command against ``server`` (token from the environment); return stdout."""
    code, out, err = run(capsys, *args, "--server", server.address)
    assert (code, err) == (0, ""), err
    return out


def table_rows(out: str) -> list[list[str]]:
    """The cells of each line of a printed table (columns are two or more spaces apart)."""
    lines = [line.strip() for line in out.splitlines()]
    return [re.split(r"\s{2,}", line) for line in lines if line.strip("─ ")]


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
        *("--seed", "3", "--games-per-pairing", "2", "--no-duplicate-deals", "--unrated"),
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
    assert "2 games per pairing, fresh deals, unrated; seed 3" in out
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
    assert ["1", "alice", "1", "1", "0", "0", "0", "1", "1512"] in rows
    assert ["2", "carol", "0", "0", "0", "0", "0", "0", "1500"] in rows
    assert ["3", "bob", "1", "0", "0", "1", "0", "0", "1488"] in rows
    assert ["alice", "x", "1-0-0"] in rows  # the crosstable: alice against alice, bob, carol
    assert ["carol", "x"] in rows
    assert "pausing" in admin(capsys, referee, "tournament", "pause", tid)
    code, _, err = run(capsys, "tournament", "pause", tid, "--server", referee.address)
    assert code == 2
    assert f"FAILED_PRECONDITION: tournament {tid} is paused: only a running" in err
    assert "cancelled" in admin(capsys, referee, "tournament", "cancel", tid)
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
    assert ["1", "bob", "1", "1", "0", "0", "0", "1", "1512"] in table_rows(status)


def test_standings_and_head_to_head_tables(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    storage = referee.arena.storage
    storage.save_match(stored_match("a", ("alice", "bob"), 0, minute=1))
    storage.save_match(stored_match("b", ("carol", "bob"), 0, minute=2))
    rows = table_rows(admin(capsys, referee, "standings", "passing", "--head-to-head"))
    assert rows[0] == ["passing standings"]
    ranked = [row[:2] for row in rows if row[0] in {"1", "2", "3"}]
    assert ranked == [["1", "alice"], ["2", "carol"], ["3", "bob"]]
    bob = next(row for row in rows if row[1:2] == ["bob"])
    assert bob[4:] == ["2", "0", "0", "2", "0"]
    assert ["bob", "0-0-1", "x", "0-0-1"] in rows
    assert admin(capsys, referee, "standings", "moon") == "no rated moon games yet\n"


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
        capsys, referee, "ladder", "start", "passing", "--players", "3", "--seed", "4"
    ) + admin(capsys, referee, "ladder", "list")
    assert out.startswith(
        "passing ladder started: Passing Game, 3 players, to 101, 4 games at once, "
        "time control 1s+10s/50ms, seed 4\n"
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
    storage = Storage(f"sqlite:///{tmp_path / 'real.db'}")
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
        code, out, _ = run(capsys, "standings", "passing")
        assert code == 0
        assert sorted(row[1] for row in table_rows(out)[2:]) == ["alice", "bob"]
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

"""The ``domino-arena`` commands that need no referee: play, replay, games and every user error.

``main([...])`` runs in-process (capsys captures its output); one test runs the installed
console script to prove the entry point exists, one checks that these commands never load the
service. A user's mistake must cost one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Final

import pytest

from domino_arena.bots import HOUSE_BOTS
from domino_arena.bots import greedy as greedy_module
from domino_arena.sdk.bot import Bot
from domino_arena.sdk.match.records import read_record
from domino_arena.sdk.rules import CHANCE, DRAW, GAMES, Action, Observation, make_game
from domino_arena.server.cli.main import COMMANDS
from tests.fakes.bots import ModestBot
from tests.fakes.games import CONFIG_IDS, CONFIGS
from tests.fakes.readme import example

from .harness import cli, run


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
        "play passing --option players=4 --option partnerships=true"
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
    code, out, _ = cli(
        capsys, "play passing --bots random,random --seed 5 --option players=2 --quiet"
    )
    assert code == 0
    lines = out.splitlines()
    assert re.fullmatch(r"Passing Game, 2 players, to 101; seed 5, first seat [01]", lines[0])
    assert lines[1].startswith("result: side ")
    assert re.fullmatch(r"  side 0 \(seat 0 random\): \d+( {2}winner)?", lines[2])
    assert lines[-1] == "re-run with: --seed 5"
    assert len(lines) == 5


def test_play_adjudicates_at_max_deals_and_the_record_replays(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "capped.jsonl"
    code, out, _ = run(
        capsys,
        *("play", "moon", "--bots", "random,random,random", "--seed", "4", "--quiet"),
        *("--max-deals", "3", "--record", str(path)),
    )
    assert code == 0
    lines = out.splitlines()
    assert lines[1] == (
        "result: adjudicated: no winner by the rules after 3 deals, the referee's cap "
        "(max_deals); scores -9/5/-13: seat 1 (random) has the highest score and wins"
    )
    assert lines[3] == "  side 1 (seat 1 random): 5  winner"
    record = read_record(path)
    assert record.options == {} and record.result.termination == "adjudicated"
    assert run(capsys, "replay", str(path))[0] == 0


def test_moon_refuses_the_retired_deal_limit_option(capsys: pytest.CaptureFixture[str]) -> None:
    message = one_error(
        capsys, ["play", "moon", "--bots", "random,random,random", "--option", "deal_limit=50"]
    )
    assert "moon: option 'deal_limit' is retired (got '50')" in message
    assert "max_deals" in message


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
    assert out.startswith("usage: domino-arena [-h] [--version] COMMAND ...")
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
            ["play", "passing", "--option", "colour=red", "--bots", "random,random"],
            "passing: unknown option 'colour' (options: players, partnerships, target_rule)",
        ),
        (
            ["play", "passing", "--option", "players", "--bots", "random,random"],
            "--option: expected KEY=VALUE, got 'players'",
        ),
        (
            ["play", "passing", "--option", "players=many", "--bots", "random,random"],
            "passing: option 'players' must be int, got 'many'",
        ),
        (
            ["play", "passing", "--players", "3", "--bots", "random,random"],
            "--bots: 3 bots are needed, one per seat (Passing Game, 3 players, to 101), "
            "got 2: random,random",
        ),
        (
            ["play", "passing", "--bots", "random,clever"],
            "--bots: unknown bot 'clever': expected one of greedy, memorizer, random",
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
        "domino-arena: error: bot 'drawer' in seat 0 chose 'draw' at step 0: docs/rules.md "
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


def test_the_local_commands_never_load_the_service(tmp_path: Path) -> None:
    """play, replay, games and --help start without grpc, trio or SQLAlchemy (they are slow)."""
    record = tmp_path / "m.jsonl"
    script = """
import contextlib, io, sys
from domino_arena.server.cli.main import main
record = sys.argv[1]
with contextlib.redirect_stdout(io.StringIO()):
    codes = [
        main(["play", "passing", "--bots", "random,random", "--seed", "4", "--record", record]),
        main(["replay", record]),
        main(["games"]),
        main(["--help"]),
        main(["play", "--help"]),
    ]
print(codes, sorted({m.split(".")[0] for m in sys.modules} & {"grpc", "trio", "sqlalchemy"}))
"""
    done = subprocess.run(
        [sys.executable, "-c", script, str(record)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert done.stdout == "[0, 0, 0, 0, 0] []\n", done.stderr


def test_play_seats_a_bot_of_ones_own_beside_the_house_bots(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "mybot.py").write_text(MY_BOT)
    record = tmp_path / "m.jsonl"
    spec = f"{tmp_path / 'mybot.py'}:HeavyFirst"
    code, out, _ = run(
        capsys,
        "play",
        "passing",
        "--bots",
        f"{spec},greedy",
        "--seed",
        "3",
        "--quiet",
        "--record",
        str(record),
    )
    assert code == 0
    assert "  side 0 (seat 0 heavy-first): " in out
    assert read_record(record).seats == ("heavy-first", "greedy")
    assert run(capsys, "replay", str(record))[0] == 0


@pytest.mark.parametrize(
    ("attribute", "words"),
    [
        ("Nope", "--bots: cannot load {spec}: AttributeError: module 'mybot' has no attribute"),
        ("Later", "--bots: {spec} is an AsyncBot: local play takes a Bot"),
        ("NOT_A_BOT", "--bots: cannot load {spec}: ValueError:"),
    ],
)
def test_a_bot_of_ones_own_that_cannot_play_locally_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, attribute: str, words: str
) -> None:
    (tmp_path / "mybot.py").write_text(MY_BOT)
    spec = f"{tmp_path / 'mybot.py'}:{attribute}"
    message = one_error(capsys, ["play", "passing", "--bots", f"{spec},greedy"])
    assert message.startswith(words.format(spec=spec)), message


MY_BOT: Final = (
    example()[2]
    + """
from domino_arena.sdk import AsyncBot

NOT_A_BOT = 42


class Later(AsyncBot):
    async def choose(self, observation: Observation) -> Action:
        return observation.legal_actions[0]
"""
)
"""The README's bot as a user saves it, and two things local play cannot seat."""

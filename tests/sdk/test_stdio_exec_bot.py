"""ExecBot: a program speaking the stdio protocol plays local games and the compliance check as
a Bot (real child processes: the script of tests/fakes/stdio_bots.py, run with this Python)."""

from __future__ import annotations

import os
import select
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from domino_arena.bots import make_bot
from domino_arena.sdk.local import match_start_info, play_game
from domino_arena.sdk.match.records import replay
from domino_arena.sdk.match.results import FaultKind, FaultPolicy, Termination
from domino_arena.sdk.rules import CHANCE, DEAL, make_game
from domino_arena.sdk.stdio import child
from domino_arena.sdk.stdio.child import ChildCommand
from domino_arena.sdk.stdio.exec_bot import BotReportedError, ExecBot, ExecBotError
from domino_arena.sdk.testing import check_bot, load_bot
from tests.fakes.stdio_bots import WAIT, script_command, write_script


@pytest.fixture
def script(tmp_path: Path) -> Path:
    return write_script(tmp_path)


@pytest.fixture
def bots() -> Iterator[list[ExecBot]]:
    made: list[ExecBot] = []
    yield made
    for bot in made:
        bot.close()


def _exec(bots: list[ExecBot], command: ChildCommand, **options: object) -> ExecBot:
    bot = ExecBot(command, on_stderr=lambda _chunk: None, **options)  # type: ignore[arg-type]
    bots.append(bot)
    return bot


@pytest.mark.parametrize("name", ["passing", "moon", "straight", "doubles"])
def test_a_program_plays_a_whole_local_game(script: Path, bots: list[ExecBot], name: str) -> None:
    game = make_game(name)
    player = _exec(bots, script_command(script, "play"))
    seats = [player, *(make_bot("greedy", seat) for seat in range(1, game.num_players))]
    result = play_game(game, seats, seed=5, timer=None)
    assert result.result.termination in (Termination.NORMAL, Termination.ADJUDICATED)
    assert replay(result.record).ok


def test_a_reply_error_is_the_programs_own_bot_error(script: Path, bots: list[ExecBot]) -> None:
    game = make_game("passing")
    player = _exec(bots, script_command(script, "error"))
    with pytest.raises(BotReportedError, match="KeyError: no such tile"):
        play_game(game, [player, make_bot("greedy", 1)], seed=5)
    second = _exec(bots, script_command(script, "error"))
    result = play_game(
        game, [second, make_bot("greedy", 1)], seed=5, fault_policy=FaultPolicy.FORFEIT
    )
    assert result.result.fault is FaultKind.BOT_ERROR
    assert result.record.faults[0].reason == "KeyError: no such tile"


@pytest.mark.parametrize(
    ("mode", "words"),
    [
        ("garbage", "stdout line 1: not JSON: Expecting value at column 1; the bot was stopped"),
        ("exit", "exited (exit status 3); its last stderr lines:\n  started\n  giving up"),
        ("huge", "stdout line 1: line longer than 1048576 bytes; the bot was stopped"),
    ],
)
def test_a_broken_program_raises_naming_the_command_line_and_rule(
    script: Path, bots: list[ExecBot], mode: str, words: str
) -> None:
    player = _exec(bots, script_command(script, mode))
    with pytest.raises(ExecBotError) as caught:
        play_game(make_game("passing"), [player, make_bot("greedy", 1)], seed=5)
    message = str(caught.value)
    assert message.startswith(f"bot command '{sys.executable} {script} {mode}': ")
    assert words in message


def test_a_silent_program_times_out(script: Path, bots: list[ExecBot]) -> None:
    player = _exec(bots, script_command(script, "silent"), reply_timeout=0.2)
    with pytest.raises(ExecBotError, match=r"no reply to match local turn 1 within 0.2 s"):
        play_game(make_game("passing"), [player, make_bot("greedy", 1)], seed=5)


def test_stderr_is_drained_so_a_chatty_program_never_blocks(
    script: Path, bots: list[ExecBot]
) -> None:
    seen: list[int] = []
    player = ExecBot(
        script_command(script, "stderr-flood"), on_stderr=lambda c: seen.append(len(c))
    )
    bots.append(player)
    result = play_game(make_game("passing"), [player, make_bot("greedy", 1)], seed=5)
    assert result.result.termination is Termination.NORMAL
    assert sum(seen) > 10 << 20  # more than 10 MiB went through the pipe


def test_the_compliance_check_runs_a_program_in_every_seat(
    script: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    bot = load_bot(f"exec:{sys.executable} {script} play")
    report = check_bot(bot, games=["passing", "moon"], positions=3)
    assert report.passed, str(report)
    assert report.bot == "ExecBot 'stdio_bot'"
    assert report.games == len(report.configurations) == 5
    assert capfd.readouterr().err.count("started") == 1  # one process for every seat


def test_exec_spec_errors_are_clear(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'nonesuch' is not an executable file"):
        load_bot("exec:nonesuch --flag")
    with pytest.raises(ValueError, match="expected a command after 'exec:'"):
        load_bot("exec:  ")


def test_stop_kills_a_child_that_ignores_sigterm_and_its_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild"
    code = (
        "import signal, subprocess, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "p = subprocess.Popen(['sleep', '600'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
        "print('ready', flush=True)\n"
        "time.sleep(600)\n"
    )
    process = child.popen(ChildCommand((sys.executable, "-c", code)))
    assert process.stdout is not None and process.stdout.readline() == b"ready\n"
    grandchild = int(pid_file.read_text())
    assert os.getpgid(grandchild) == process.pid  # its own session and group
    watch = os.pidfd_open(grandchild)
    assert child.stop(process, grace=0.2) == -signal.SIGKILL
    readable, _, _ = select.select([watch], [], [], WAIT)  # the grandchild ended too
    os.close(watch)
    assert readable == [watch]


def test_the_documented_example_bot_plays(tmp_path: Path, bots: list[ExecBot]) -> None:
    """The Python bot without the SDK in docs/writing-a-bot.md plays a whole game."""
    doc = (Path(__file__).parents[2] / "docs" / "writing-a-bot.md").read_text()
    after = doc.split("**A whole bot in Python without the SDK**", 1)[1]
    source = after.split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "example.py").write_text(source)
    player = _exec(bots, ChildCommand((sys.executable, str(tmp_path / "example.py"))))
    game = make_game("straight")
    seats = [player, *(make_bot("greedy", seat) for seat in range(1, game.num_players))]
    assert replay(play_game(game, seats, seed=2, timer=None).record).ok


def test_a_program_that_never_reads_its_stdin_never_blocks_the_game(bots: list[ExecBot]) -> None:
    """Far more than a pipe holds (64 KiB) is written to a child that reads nothing; the hooks
    return at once and ``choose`` ends at its timeout."""
    player = _exec(bots, ChildCommand(("sleep", "600")), reply_timeout=0.2)
    game = make_game("moon")
    state = game.new_game(1)
    while state.current_seat == CHANCE:
        state.apply(DEAL)
    seat = state.current_seat
    snapshot = state.observe(seat)
    for index in range(300):  # each start carries a whole snapshot: about 2 KB a line
        info = match_start_info(
            f"m{index}",
            game,
            seat,
            ["a", "b", "c"],
            fault_policy=FaultPolicy.SUBSTITUTE,
            max_strikes=3,
            snapshot=snapshot,
        )
        player.on_match_start(info)
    with pytest.raises(ExecBotError, match=r"no reply to match m299 turn 1 within 0\.2 s"):
        player.choose(snapshot)

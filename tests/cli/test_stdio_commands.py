"""The stdio protocol in the commands: ``domino-arena play GAME --bots exec:CMD,greedy``,
``python -m domino_arena.sdk.testing exec:CMD`` and ``domino-arena bot run NAME --exec CMD``
(the last as a real process against a real referee), with real child programs."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from domino_arena.sdk.testing import main as check_main
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.v1 import referee_pb2 as pb
from tests.cli.harness import run
from tests.fakes.processes import Process, command
from tests.fakes.referee_server import WAIT, Referee, passing_match
from tests.fakes.stdio_bots import write_script


def test_play_seats_a_program_beside_a_house_bot(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    script = write_script(tmp_path)
    record = tmp_path / "game.jsonl"
    spec = f"exec:{sys.executable} {script} play,greedy"
    code, out, _ = run(
        capsys, "play", "passing", "--bots", spec, "--seed", "3", "--record", str(record)
    )
    assert code == 0, out
    assert "stdio_bot" in out and "wins" in out
    assert record.exists()


def test_play_names_a_broken_program_and_its_rule(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    script = write_script(tmp_path)
    spec = f"exec:{sys.executable} {script} garbage,greedy"
    code, _, err = run(capsys, "play", "passing", "--bots", spec, "--seed", "3")
    assert code == 1
    assert "stdout line 1: not JSON: Expecting value at column 1; the bot was stopped" in err
    code, _, err = run(capsys, "play", "passing", "--bots", "exec:./nonesuch,greedy")
    assert code == 2 and "'./nonesuch' is not an executable file" in err


def test_the_compliance_check_takes_a_program(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    script = write_script(tmp_path)
    spec = f"exec:{sys.executable} {script} play"
    assert check_main([spec, "--games", "passing", "--positions", "3"]) == 0
    assert "ExecBot 'stdio_bot': PASSED" in capsys.readouterr().out
    failing = f"exec:{sys.executable} {script} error"
    assert check_main([failing, "--games", "passing", "--positions", "3"]) == 1
    assert "choose raised KeyError: no such tile" in capsys.readouterr().out


def test_bot_run_exec_plays_a_program_against_a_referee(tmp_path: Path) -> None:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'run.db'}")
    storage.open()
    referee = Referee(storage)
    token_file = tmp_path / "token"
    token_file.write_text(storage.add_bot("student") + "\n")
    script = write_script(tmp_path)
    args = ["bot", "run", "student", "--exec", f"{sys.executable} {script} play"]
    args += ["--server", referee.address, "--token-file", str(token_file), "--games", "passing"]
    process = Process(command(*args), cwd=tmp_path)
    try:
        process.wait_line("relay welcomed as 'student'")
        referee.connect("house", storage.add_bot("house"))
        response = referee.admin.RunMatch(
            passing_match("student", "house", policy=pb.FAULT_POLICY_FORFEIT), timeout=WAIT
        )
        assert response.result.termination == pb.TERMINATION_NORMAL, response.result.detail
        process.wait_line("started")  # the program's stderr comes through
        os.kill(process.popen.pid, signal.SIGTERM)
        code, _ = process.finish()
        assert code == 0
    finally:
        process.stop()
        referee.close()
        storage.close()


def test_bot_run_exec_refuses_a_missing_program(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run(capsys, "bot", "run", "x", "--token", "t", "--exec", "./nonesuch")
    assert code == 2 and "--exec ./nonesuch: './nonesuch' is not an executable file" in err

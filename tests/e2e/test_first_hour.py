"""A student's first hour, one line at a time (issue 28), against ``domino-arena serve``.

The SDK's ``run()`` with a wrong or missing token, or taken over by a second copy of the bot,
prints one line and exits 1 (sdk/runner.py ``BotStopped``), never a traceback. Ctrl-C on
``match run`` prints the match's id and cancels the match on the referee: the referee logs it
aborted with the reason, tells its bots, and frees their seats. Every wait is for a line or a
message; a SIGINT is sent only once the referee has logged the match's start.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import grpc
import pytest

from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.processes import Process, command, served_port
from tests.fakes.referee_server import ADMIN_METADATA, ADMIN_TOKEN, Policy, RawBot, first_legal

_RUN: Final = """
import sys
from domino_arena.bots import make_bot
from domino_arena.sdk import run
token = sys.argv[3] if len(sys.argv) > 3 else None
run(lambda: make_bot("random", 1), server=sys.argv[1], name=sys.argv[2], token=token)
"""
"""A student's bot script: ``python -c _RUN ADDRESS NAME [TOKEN]``."""


@dataclass
class Served:
    folder: Path
    address: str
    server: Process
    tokens: dict[str, str]

    def script(self, name: str, *token: str) -> Process:
        """The student's script (``run()``) as the bot ``name``, with ``token`` if given."""
        env = {"DOMINO_ARENA_TOKEN": ""}
        return Process([sys.executable, "-c", _RUN, self.address, name, *token], self.folder, env)

    def raw(self, name: str, policy: Policy | None = first_legal) -> RawBot:
        """A bot speaking the protocol from this process, welcomed as ``name``."""
        channel = grpc.insecure_channel(self.address)
        bot = RawBot(channel, policy)
        bot.hello(name, self.tokens[name], ("passing",))
        bot.wait_kind("welcome")
        return bot


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("first-hour")
    db = f"sqlite:///{folder / 'arena.db'}"
    tokens: dict[str, str] = {}
    for name in ("student", "twin", "quick", "silent"):
        code, output = Process(command("bot", "add", name, "--db", db), folder).finish()
        assert code == 0, output
        tokens[name] = output.splitlines()[-1]
    server = Process(
        command("serve", "--port", "0", "--db", db, "--admin-token", ADMIN_TOKEN, "--no-web"),
        folder,
    )
    try:
        yield Served(folder, f"127.0.0.1:{served_port(server)}", server, tokens)
    finally:
        server.stop()


def _one_line(process: Process) -> str:
    """The process's exit (status 1) and the one line it printed beside the SDK's log."""
    code, output = process.finish()
    assert code == 1, output
    assert "Traceback" not in output, output
    lines = [line for line in output.splitlines() if " INFO " not in line]
    assert len(lines) == 1, output
    return lines[0]


def test_run_with_a_wrong_token_prints_one_line(served: Served) -> None:
    line = _one_line(served.script("student", "not-its-token"))
    assert line.startswith(f"bot 'student' stopped: the referee at {served.address} refused it: ")
    assert "wrong token" in line and "bot register" in line


def test_run_with_no_token_prints_one_line(served: Served) -> None:
    line = _one_line(served.script("student"))
    assert line.startswith("bot 'student' not started: no token for bot 'student': ")
    assert "$DOMINO_ARENA_TOKEN" in line


def test_run_taken_over_by_a_second_copy_prints_one_line(served: Served) -> None:
    first = served.script("twin", served.tokens["twin"])
    try:
        first.wait_line("welcomed by", context=[served.server])
        second = served.raw("twin")
        try:
            line = _one_line(first)
        finally:
            second.close()
    finally:
        first.stop()
    assert line == (
        f"bot 'twin' stopped: another copy of it connected to {served.address} with its token "
        "and took its seats; run one copy only (stop the other one, or this one)"
    )


def test_ctrl_c_on_match_run_names_the_match_and_cancels_it_on_the_referee(
    served: Served,
) -> None:
    quick = served.raw("quick")
    silent = served.raw("silent", policy=None)  # never answers: the match waits on it
    admin = admin_pb_grpc.AdminServiceStub(grpc.insecure_channel(served.address))
    run = Process(
        command(
            *("match", "run", "passing", "--bots", "quick,silent", "--time-control", "60s+600s"),
            *("--server", served.address, "--admin-token", ADMIN_TOKEN),
        ),
        served.folder,
    )
    try:
        started = served.server.wait_line("match started: id=", context=[run])
        match_id = started.split("match started: id=", 1)[1].split()[0]
        silent.wait_kind("request")
        run.popen.send_signal(signal.SIGINT)
        code, output = run.finish()
        aborted = served.server.wait_line(f"match aborted: id={match_id}")
        end = silent.wait_kind("match_end").match_end
        connected = admin.ListConnected(admin_pb.ListConnectedRequest(), metadata=ADMIN_METADATA)
        assert {b.name: b.matches for b in connected.bots} == {"quick": 0, "silent": 0}
    finally:
        run.stop()
        for bot in (quick, silent):
            bot.close()
    assert code == 130, output
    assert output == (
        f"domino-arena: match {match_id} cancelled on the referee at {served.address} (Ctrl-C): "
        "aborted, not stored; its bots are free"
    )
    assert "cancelled: the client that started it stopped" in aborted
    assert end.match_id == match_id and end.result.termination == pb.TERMINATION_ABORTED
    listed = admin.ListMatches(admin_pb.ListMatchesRequest(), metadata=ADMIN_METADATA)
    assert match_id not in {m.match_id for m in listed.matches}

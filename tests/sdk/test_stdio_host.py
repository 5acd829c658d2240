"""``python -m domino_arena.sdk.stdio FILE.py:Class``: a Python Bot over the stdio protocol, run
as the sandbox runs it, with only ``domino_arena.sdk``, ``domino_arena.v1`` and
``google.protobuf`` importable (no gRPC, no server, no site-packages), driven by ExecBot in real
local games."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import google.protobuf
import pytest
from google.protobuf import json_format

import domino_arena.sdk
import domino_arena.v1
from domino_arena.bots import make_bot
from domino_arena.sdk.local import match_start_info, play_game
from domino_arena.sdk.match.results import FaultKind, FaultPolicy, Termination
from domino_arena.sdk.rules import CHANCE, DEAL, make_game
from domino_arena.sdk.stdio.child import ChildCommand
from domino_arena.sdk.stdio.codec import encode_referee_message
from domino_arena.sdk.stdio.exec_bot import ExecBot
from domino_arena.sdk.wire import action_from_proto, match_start_to_proto, observation_to_proto
from domino_arena.v1 import games_pb2
from domino_arena.v1 import referee_pb2 as pb

BOT = """
from domino_arena.sdk import Bot


class Last(Bot):
    def on_match_start(self, info):
        self.seat = info.seat

    def choose(self, observation):
        assert observation.seat == self.seat
        return observation.legal_actions[-1]


class Broken(Bot):
    def choose(self, observation):
        raise ValueError("no tile fits")
"""


@pytest.fixture
def sandbox_path(tmp_path: Path) -> Path:
    """A folder of links holding only the three packages a hosted Python bot may import."""
    root = tmp_path / "lib"
    packages = Path(google.protobuf.__file__).parent.parent
    links = {
        "domino_arena/sdk": Path(domino_arena.sdk.__file__).parent,
        "domino_arena/v1": Path(domino_arena.v1.__file__).parent,
        "google/protobuf": packages / "protobuf",
    }
    if (packages / "_upb").exists():
        links["google/_upb"] = packages / "_upb"  # protobuf's C implementation
    for name, target in links.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).symlink_to(target.resolve())
    return root


def _command(lib: Path, folder: Path, entry: str) -> ChildCommand:
    """Python without site-packages (-S, -s; PYTHONPATH is the only path: -I would ignore it)."""
    env = {"PYTHONPATH": str(lib), "PATH": os.environ.get("PATH", "")}
    argv = (sys.executable, "-S", "-s", "-m", "domino_arena.sdk.stdio", entry)
    return ChildCommand(argv, cwd=str(folder), env=env)


@pytest.fixture
def bots() -> Iterator[list[ExecBot]]:
    made: list[ExecBot] = []
    yield made
    for bot in made:
        bot.close()


def test_the_sandbox_path_has_no_grpc(sandbox_path: Path, tmp_path: Path) -> None:
    probe = (
        "import sys, domino_arena.sdk, domino_arena.sdk.wire, domino_arena.sdk.stdio.host\n"
        "import domino_arena.sdk.loading\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'grpc', 'trio', 'rich'}))\n"
        "import grpc\n"
    )
    env = {"PYTHONPATH": str(sandbox_path)}
    done = subprocess.run(
        [sys.executable, "-S", "-s", "-c", probe],
        check=False,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.stdout == "[]\n"
    assert "No module named 'grpc'" in done.stderr


@pytest.mark.parametrize("name", ["passing", "moon"])
def test_a_python_bot_plays_over_stdio_with_only_the_sdk(
    sandbox_path: Path, tmp_path: Path, bots: list[ExecBot], name: str
) -> None:
    (tmp_path / "mybot.py").write_text(BOT)
    player = ExecBot(_command(sandbox_path, tmp_path, "mybot.py:Last"), name="last")
    bots.append(player)
    game = make_game(name)
    seats = [player, *(make_bot("greedy", s) for s in range(1, game.num_players))]
    result = play_game(game, seats, seed=9, timer=None)
    assert result.result.termination in (Termination.NORMAL, Termination.ADJUDICATED)


def test_a_choose_that_raises_answers_with_its_error(
    sandbox_path: Path, tmp_path: Path, bots: list[ExecBot]
) -> None:
    (tmp_path / "mybot.py").write_text(BOT)
    stderr: list[bytes] = []
    player = ExecBot(_command(sandbox_path, tmp_path, "mybot.py:Broken"), on_stderr=stderr.append)
    bots.append(player)
    result = play_game(
        make_game("passing"),
        [player, make_bot("greedy", 1)],
        seed=9,
        fault_policy=FaultPolicy.FORFEIT,
    )
    assert result.result.fault is FaultKind.BOT_ERROR
    assert result.record.faults[0].reason == "ValueError: no tile fits"
    player.close()
    text = b"".join(stderr).decode()
    assert "choose raised ValueError: no tile fits" in text and "Traceback" in text


def test_the_host_answers_lines_it_reads(sandbox_path: Path, tmp_path: Path) -> None:
    """The protocol by hand: a welcome, a resumed match's start and a request in, a reply out."""
    (tmp_path / "mybot.py").write_text(BOT)
    game = make_game("passing")
    state = game.new_game(3)
    while state.current_seat == CHANCE:
        state.apply(DEAL)
    observation = state.observe(state.current_seat)
    info = match_start_info(
        "m1",
        game,
        state.current_seat,
        ["a", "b"],
        fault_policy=FaultPolicy.SUBSTITUTE,
        max_strikes=3,
        snapshot=observation,
    )
    request = pb.ActionRequest(
        match_id="m1", turn=4, observation=observation_to_proto(observation, history=False)
    )
    welcome = pb.Welcome(name="x", protocol_version=2)
    lines = [
        encode_referee_message(pb.RefereeMessage(welcome=welcome)),
        b"\n",
        encode_referee_message(pb.RefereeMessage(match_start=match_start_to_proto(info))),
        encode_referee_message(pb.RefereeMessage(request=request)),
    ]
    command = _command(sandbox_path, tmp_path, "mybot.py:Last")
    done = subprocess.run(
        command.argv,
        input=b"".join(lines),
        env=dict(command.env or {}),
        cwd=command.cwd,
        capture_output=True,
        check=True,
    )
    (reply,) = [json.loads(line)["reply"] for line in done.stdout.splitlines()]
    assert (reply["matchId"], reply["turn"]) == ("m1", 4)
    assert (
        action_from_proto(json_format.ParseDict(reply["action"], games_pb2.Action()))
        == (observation.legal_actions[-1])
    )

"""The example bots of examples/ (Node.js, C++, Go), built and played through a real referee.

Each example is built from its own files into the test's folder (``npm ci`` on a copy of
examples/node; ``cmake`` on examples/cpp, which generates its code from proto/; ``go vet``,
``go test`` and ``go build`` of examples/go, offline, with Go's caches in the test's folder).
The gRPC examples run as their own processes and dial ``domino-arena serve`` like any remote
bot; the Go example speaks the stdio protocol, so ``bot run NAME --exec`` dials in for it (the
stdio relay, as the hosted runner uses it). Against greedy house bots (``bot run``, each its
own process) each plays one match of every game configuration at once over its single stream,
seated in a different seat each time, through the admin API's RunMatch. Every match must end
normally with no fault, and every record must replay; then SIGINT must stop it with status 0.
The Go example also plays every configuration locally as ``exec:`` plays it
(``domino-arena play GAME --bots exec:./gobot,greedy``), and passes the compliance check.

A missing toolchain (node and npm; cmake, a C++ compiler, pkg-config, protoc and
grpc_cpp_plugin; go) skips that example's tests, or fails them when
``DOMINO_ARENA_EXAMPLES_TESTS`` is ``required`` (.ci/run sets it and installs them). The tests
wait on output lines, never on a timer; the timeouts only bound a failure.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import grpc
import pytest

from domino_arena.bots import make_bot
from domino_arena.sdk.bot import Bot
from domino_arena.sdk.local import play_game
from domino_arena.sdk.match.records import parse_record, replay
from domino_arena.sdk.match.results import Termination
from domino_arena.sdk.rules import Game, configurations
from domino_arena.sdk.stdio.child import ChildCommand
from domino_arena.sdk.stdio.exec_bot import ExecBot
from domino_arena.sdk.wire import game_to_proto
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.v1 import admin_pb2, admin_pb2_grpc, referee_pb2
from tests.fakes.processes import WAIT, Process, command, served_port

REQUIRED_ENV: Final = "DOMINO_ARENA_EXAMPLES_TESTS"
"""Set to ``required`` (CI does) to fail, not skip, when a toolchain is missing."""
ROOT: Final = Path(__file__).resolve().parents[2]
EXAMPLES: Final = ROOT / "examples"
ADMIN_TOKEN: Final = "examples-admin-token"
HOUSE: Final = ("greedy-1", "greedy-2", "greedy-3")
"""Greedy house bots: they finish Moon quickly (random players seldom do)."""
BUILD_TIMEOUT: Final = 600.0
"""Seconds a build may take before the test fails (the C++ one takes about a minute)."""
MATCH_TIMEOUT: Final = 120.0
TIME_CONTROL: Final = referee_pb2.TimeControl(move_ms=2000, bank_ms=10_000, grace_ms=200)
FINISHED: Final = {
    referee_pb2.TERMINATION_NORMAL,
    5,  # TERMINATION_ADJUDICATED, the referee's cap on deals: a fair end too
}


@dataclass(frozen=True)
class Example:
    """One example bot: the programs it needs and how to build it and run it."""

    name: str
    tools: tuple[str, ...]
    build: Callable[[Path], list[str]]
    """Build into the given folder; return the command that runs the bot."""
    libraries: tuple[str, ...] = ()
    """pkg-config packages it links with."""
    stdio: bool = False
    """It speaks the stdio protocol: ``bot run NAME --exec`` connects it (the relay)."""


def run_build(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    """Run one build step; return its output."""
    done = subprocess.run(
        args,
        cwd=cwd,
        env=None if env is None else {**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def build_node(folder: Path) -> list[str]:
    copy = folder / "node"
    shutil.copytree(EXAMPLES / "node", copy, ignore=shutil.ignore_patterns("node_modules"))
    run_build(["npm", "ci", "--no-audit", "--no-fund"], copy)
    return ["node", str(copy / "bot.js"), "--proto-dir", str(ROOT / "proto")]


def build_cpp(folder: Path) -> list[str]:
    build = folder / "cpp-build"
    # -O0 without debug information: the generated code compiles in half the time
    flags = ["-DCMAKE_BUILD_TYPE=Debug", "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -g0"]
    run_build(["cmake", "-S", str(EXAMPLES / "cpp"), "-B", str(build), *flags], folder)
    run_build(["cmake", "--build", str(build), "-j", str(os.cpu_count() or 2)], folder)
    return [str(build / "domino-bot")]


def go_env(folder: Path) -> dict[str, str]:
    """Go's caches in the test's folder, and no network: the example uses the standard
    library only, so it builds on a clean machine with nothing downloaded."""
    return {
        "GOCACHE": str(folder / "go-cache"),
        "GOPATH": str(folder / "go-path"),
        "GOFLAGS": "-mod=mod",
        "GOPROXY": "off",
        "GOTOOLCHAIN": "local",
        "CGO_ENABLED": "0",
    }


def build_go(folder: Path) -> list[str]:
    """``go vet`` and ``go test`` (its own unit tests), then a static binary, as the example's
    README builds it for a submission."""
    env = go_env(folder)
    source = EXAMPLES / "go"
    run_build(["go", "vet", "./..."], source, env)
    run_build(["go", "test", "./..."], source, env)
    binary = folder / "gobot"
    run_build(["go", "build", "-o", str(binary), "."], source, env)
    return [str(binary)]


NODE: Final = Example("node", ("node", "npm"), build_node)
CPP: Final = Example(
    "cpp",
    ("cmake", "make", "c++", "pkg-config", "protoc", "grpc_cpp_plugin"),
    build_cpp,
    libraries=("grpc++", "protobuf"),
)
GO: Final = Example("go", ("go",), build_go, stdio=True)


def missing_tools(example: Example) -> list[str]:
    """What of the example's toolchain this machine lacks."""
    missing = [tool for tool in example.tools if shutil.which(tool) is None]
    if not missing and example.libraries:
        found = subprocess.run(["pkg-config", "--exists", *example.libraries], check=False)
        if found.returncode != 0:
            missing.append(f"the pkg-config packages {', '.join(example.libraries)}")
    return missing


def skip_or_fail(why: str) -> None:
    """Skip the test, or fail it when the examples' tests are required."""
    if os.environ.get(REQUIRED_ENV) == "required":
        pytest.fail(f"{REQUIRED_ENV}=required but {why}", pytrace=False)
    pytest.skip(why)


def why_missing(example: Example) -> str | None:
    missing = missing_tools(example)
    if not missing:
        return None
    return f"examples/{example.name}: {', '.join(missing)} not found (see .ci/run)"


def require(example: Example) -> None:
    """Skip the test when the example's toolchain is missing, or fail when it is required."""
    why = why_missing(example)
    if why is not None:
        skip_or_fail(why)


class Builds:
    """The examples built into one folder, each once, when a test first asks for it.

    Not all at the module's start: under pytest-xdist each example's test may run in another
    worker, and each worker would build both (the C++ build takes most of this module's time).
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.commands: dict[str, list[str]] = {}

    def command(self, example: Example) -> list[str]:
        """The command that runs the example, built if it is not yet."""
        if example.name not in self.commands:
            self.commands[example.name] = example.build(self.folder)
        return self.commands[example.name]


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> Builds:
    return Builds(tmp_path_factory.mktemp("builds"))


@dataclass
class Arena:
    folder: Path
    port: int
    server: Process
    house: list[Process]
    tokens: dict[str, str]


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arena]:
    """A referee on a fresh SQLite file, the greedy house bots connected, the examples known."""
    if all(missing_tools(example) for example in (NODE, CPP, GO)):
        # no example can be built here: skip (or fail) before starting anything
        skip_or_fail("; ".join(filter(None, (why_missing(e) for e in (NODE, CPP, GO)))))
    folder = tmp_path_factory.mktemp("examples")
    db = f"sqlite:///{folder / 'arena.db'}"
    storage = RatedStorage(db)
    storage.open()
    try:
        tokens = {name: storage.add_bot(name) for name in (*HOUSE, "node-bot", "cpp-bot", "go-bot")}
    finally:
        storage.close()
    args = ["serve", "--port", "0", "--db", db, "--admin-token", ADMIN_TOKEN, "--no-web"]
    server = Process(command(*args), folder)
    processes = [server]
    try:
        port = served_port(server)
        house = []
        for seed, name in enumerate(HOUSE):
            args = ["bot", "run", name, "--bot", "greedy", "--server", f"127.0.0.1:{port}"]
            house.append(
                Process(
                    command(*args, "--seed", str(seed)),
                    folder,
                    {"DOMINO_ARENA_TOKEN": tokens[name]},
                )
            )
        processes += house
        connected = {
            server.wait_line("bot connected: name=", context=house).split("name=")[1].split()[0]
            for _ in HOUSE
        }
        assert connected == set(HOUSE)
        yield Arena(folder, port, server, house, tokens)
    finally:
        for process in processes:
            process.stop()


def config_id(game: Game) -> str:
    teams = "-partners" if len(game.sides) != game.num_players else ""
    return f"{game.name}-{game.num_players}{teams}"


def run_match(
    stub: admin_pb2_grpc.AdminServiceStub, game: Game, bots: list[str], seed: int
) -> admin_pb2.RunMatchResponse:
    request = admin_pb2.RunMatchRequest(
        game=game_to_proto(game),
        bots=bots,
        has_seed=True,
        seed=seed,
        time_control=TIME_CONTROL,
    )
    metadata = (("authorization", f"Bearer {ADMIN_TOKEN}"),)
    response: admin_pb2.RunMatchResponse = stub.RunMatch(
        request, metadata=metadata, timeout=MATCH_TIMEOUT
    )
    return response


def play_every_configuration(arena: Arena, name: str, label: str) -> int:
    """One match of every game configuration at once against the house bots, the connected bot
    ``name`` in a different seat each time; each must end normally, with no fault, and replay.
    Returns how many matches were played."""
    games = list(configurations())
    assert len(games) == 12
    seatings = []
    for index, game in enumerate(games):
        bots = list(HOUSE[: game.num_players - 1])
        bots.insert(index % game.num_players, name)  # the example in every seat in turn
        seatings.append((game, bots, index))
    with grpc.insecure_channel(f"127.0.0.1:{arena.port}") as channel:
        stub = admin_pb2_grpc.AdminServiceStub(channel)
        with ThreadPoolExecutor(len(seatings)) as pool:
            futures = [pool.submit(run_match, stub, *seating) for seating in seatings]
            responses = [future.result() for future in futures]
    for (game, bots, _), response in zip(seatings, responses, strict=True):
        where = f"{label}, {config_id(game)}: {response.result}"
        assert response.result.termination in FINISHED, where
        assert response.result.faulted_seat == -1, where
        record = parse_record(response.record)
        assert list(record.seats) == bots, where
        assert record.faults == (), f"{where}: {record.faults}"
        report = replay(record)
        assert report.ok, f"{where}: {report}"
    return len(games)


@pytest.mark.parametrize("example", [NODE, CPP, GO], ids=lambda example: example.name)
def test_the_example_bot_plays_every_game_through_the_referee(
    builds: Builds, arena: Arena, example: Example
) -> None:
    require(example)
    bot_command = builds.command(example)
    name = f"{example.name}-bot"
    if example.stdio:  # its stderr comes through, its SIGINT is the relay's
        bot_command = command("bot", "run", name, "--exec", shlex.join(bot_command))
    env = {
        "DOMINO_ARENA_SERVER": f"127.0.0.1:{arena.port}",
        "DOMINO_ARENA_BOT": name,
        "DOMINO_ARENA_TOKEN": arena.tokens[name],
    }
    bot = Process(bot_command, arena.folder, env, wait=MATCH_TIMEOUT)
    try:
        arena.server.wait_line(f"bot connected: name={name} ", context=[bot])
        played = play_every_configuration(arena, name, example.name)
        for _ in range(played):  # each MatchEnd reached the bot before it is stopped
            bot.wait_line("match end ")
    finally:
        bot.popen.send_signal(signal.SIGINT)
        status, output = bot.finish()
    assert status == 0, output
    assert output.count("match end ") == played, output
    assert "FAULT" not in output, output
    assert "referee error" not in output, output


def test_the_check_passes_the_node_bot_and_reports_a_broken_one(
    builds: Builds, arena: Arena
) -> None:
    """Issue 12: `domino-arena check` over the referee, for a bot in another language: the Node
    example passes; the same bot answering with no action fails with the faults named."""
    require(NODE)
    name = "node-bot"
    check = ["check", name, "--server", f"127.0.0.1:{arena.port}", "--admin-token", ADMIN_TOKEN]
    check += ["--games", "passing,moon", "--positions", "4"]
    outputs = {}
    for misplay in ("", "malformed", "throw"):
        env = {
            "DOMINO_ARENA_SERVER": f"127.0.0.1:{arena.port}",
            "DOMINO_ARENA_BOT": name,
            "DOMINO_ARENA_TOKEN": arena.tokens[name],
            "DOMINO_ARENA_MISPLAY": misplay,
        }
        bot = Process(builds.command(NODE), arena.folder, env, wait=MATCH_TIMEOUT)
        try:
            arena.server.wait_line(f"bot connected: name={name} ", context=[bot])
            code, output = Process(command(*check), arena.folder, wait=MATCH_TIMEOUT).finish()
            outputs[misplay] = (code, output)
        finally:
            bot.popen.send_signal(signal.SIGINT)
            bot.finish()
    code, output = outputs[""]
    assert code == 0 and "PASSED" in output.upper(), output
    code, output = outputs["malformed"]
    assert code == 1, output
    assert "malformed" in output, output
    code, output = outputs["throw"]
    assert code == 1, output
    assert "choose raised RangeError: a bug on purpose" in output, output


def test_the_go_example_builds_offline_into_a_static_binary(builds: Builds) -> None:
    """examples/go: vetted, its own tests pass, and the binary needs no C library (CGO off),
    so a submission of it runs in the sandbox's read-only system."""
    require(GO)
    binary = builds.command(GO)[0]
    settings = run_build(["go", "version", "-m", binary], builds.folder, go_env(builds.folder))
    assert "CGO_ENABLED=0" in settings, settings
    assert "\tdep\t" not in settings, f"a module beyond the standard library:\n{settings}"


def test_the_go_example_plays_every_game_locally_over_stdio(builds: Builds) -> None:
    """examples/go as ``exec:`` plays it: one process, one local game of every configuration
    against greedy house bots, in a different seat each time, every answer legal (local play
    with no fault policy raises on anything else) and no fault charged."""
    require(GO)
    stderr = bytearray()
    heard = threading.Condition()

    def on_stderr(chunk: bytes) -> None:
        with heard:
            stderr.extend(chunk)
            heard.notify_all()

    gobot = ExecBot(
        ChildCommand(tuple(builds.command(GO))),
        name="gobot",
        reply_timeout=MATCH_TIMEOUT,
        on_stderr=on_stderr,
    )
    games = list(configurations())
    try:
        for index, game in enumerate(games):
            bots: list[Bot] = [make_bot("greedy", seed) for seed in range(game.num_players - 1)]
            bots.insert(index % game.num_players, gobot)
            played = play_game(game, bots, seed=index, match_id=f"local-{config_id(game)}")
            where = f"go, {config_id(game)}: {played.result}"
            assert played.result.termination in (Termination.NORMAL, Termination.ADJUDICATED), where
            assert played.result.faulted_seat is None, where
            assert played.record.faults == (), where
        with heard:  # the last MatchEnd may still be on its way through the pipe
            ended = heard.wait_for(lambda: stderr.count(b"match end ") >= len(games), WAIT)
            assert ended, bytes(stderr)
    finally:
        gobot.close()
    log = stderr.decode()
    assert log.startswith("welcomed as gobot (protocol 2"), log
    assert log.count("match end ") == len(games), log
    assert "FAULT" not in log and "not a message" not in log, log


def test_the_go_examples_readme_commands_play_it_and_check_it(builds: Builds) -> None:
    """``domino-arena play straight --bots exec:./gobot,greedy`` and ``python -m
    domino_arena.sdk.testing exec:./gobot``, as the example's README says."""
    require(GO)
    binary = Path(builds.command(GO)[0])
    play = [*command("play", "straight", "--bots", f"exec:./{binary.name},greedy")]
    check = [sys.executable, "-m", "domino_arena.sdk.testing", f"exec:./{binary.name}"]
    outputs = []
    for args in (play, [*check, "--positions", "4"]):
        done = subprocess.run(
            args,
            cwd=binary.parent,
            capture_output=True,
            text=True,
            timeout=MATCH_TIMEOUT,
            check=False,
        )
        assert done.returncode == 0, f"{args}:\n{done.stdout}\n{done.stderr}"
        outputs.append(done.stdout)
    assert "result: side " in outputs[0] and "gobot" in outputs[0], outputs[0]
    assert "PASSED" in outputs[1].upper(), outputs[1]

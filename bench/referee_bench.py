"""Moves per second through the real referee, against a plain grpc.aio ping-pong on loopback.

Usage::

    python bench/referee_bench.py [--levels 1,16,256] [--seconds S] [--bots K] [--game NAME]
                                  [--time-control TC] [--threaded-bots] [--no-events-baseline]
                                  [--profile] [--profile-bots] [--max-seconds T]

*Ours*: ``domino-arena serve --port 0`` runs as a subprocess on a fresh SQLite file; K bots are
created through :mod:`domino_arena.server.store.storage` and connected from ONE other process, which
runs random bots with the SDK (``domino_arena.sdk.run_async``, one stream per bot name, a new
bot object per match, ``choose`` answered on the event loop since it takes microseconds:
``Bot.threaded = False``; ``--threaded-bots`` keeps the SDK's worker threads). For each
concurrency level N, this process keeps N ``RunMatch`` calls in flight (N "lanes", each
starting its next match when the last one ended) for about S seconds, then waits for the last
ones. Lane i plays bot pair ``i mod K/2``, so one stream serves several matches at once. A
*move* is a step with a seat >= 0 in the returned records (the ``deal`` chance steps are not
counted); moves/s = moves / wall time of the level. The referee speaks protocol version 2: one
message each way per move (the events ride in the seat's next request, which leaves out the
deal's history), and each side writes what waits for one stream as one message (a batch), which
happens when a stream serves several matches at once.

*Plain*: in the same run, a grpc.aio server subprocess and a client subprocess play the same
conversation with nothing behind it: one bidirectional stream per "match", the server writes a
message the size of the game's median ``ActionRequest`` (as the referee serializes it, measured
on seeded random games: the observation without its history and the events since the seat's
last request), the client answers with one the size of the median ``ActionReply``,
over and over (``google.protobuf.BytesValue`` messages with a bytes field of the right length).
N streams over min(N, K) channels, for S seconds; round trips/s = round trips / wall time.
A second plain run (skip it with ``--no-events-baseline``) also writes two event-sized
messages before each request: protocol version 1's pattern for a 2-player move (a request, an
event to each seat, a reply), kept as a reference for what the protocol change saved.

Each level runs ours, then plain, so both see the same machine load (other work on the
machine shows in the ``busy`` column: 100% per core). The first table is the verdict: ours /
plain, against issue 14's floors of 0.5 at 16 and 0.6 at 256 matches. The second says where
the time went: each process's CPU in % of one core and in microseconds per move (or round
trip), the figure that least depends on the machine's load.

``--profile`` runs the referee under cProfile (the figures are then slower than normal, not the
official ones) and prints its top functions when it stops; ``--profile-bots`` does the same for the
bots' process. The run stops by itself: it gives up after ``--max-seconds`` (exit 1). It exits 1 on
an error (a process that died, a match that did not end normally, a fault), never on a missed floor
(it prints "below floor").
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import io
import itertools
import json
import os
import pstats
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, ClassVar, Final, TypeVar

import grpc
from google.protobuf import wrappers_pb2

from domino_arena.bots.random_bot import RandomBot
from domino_arena.sdk.rules import Game, make_game
from domino_arena.sdk.wire import action_to_proto, game_to_proto, observation_to_proto
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc
from domino_arena.v1 import referee_pb2 as pb

R = TypeVar("R")

ADMIN_TOKEN: Final = "bench-admin-token"
"""The admin token the benchmark's referee is started with."""
ADMIN_METADATA: Final = (("authorization", f"Bearer {ADMIN_TOKEN}"),)
FLOORS: Final = {16: 0.5, 256: 0.6}
"""Issue 14's floor of ours/plain at each level that has one."""
PLAIN_SERVICE: Final = "bench.PingPong"
EVENTS_PER_MOVE: Final = 2
"""Events the referee sends per move in a 2-player game: one to each seat."""
STARTUP_WAIT: Final = 60.0
"""Seconds a subprocess may take to become ready before the run fails."""
SIZE_SAMPLE_SEEDS: Final = 20
CLOCK_TICKS: Final = os.sysconf("SC_CLK_TCK")


class CycleError(Exception):
    """The benchmark cannot go on: a process died, a wait ran out, a match went wrong."""


# -- processes and /proc ---------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) the process ``pid`` has used so far, in seconds."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def machine_ticks() -> tuple[int, int]:
    """(busy, total) CPU ticks of the whole machine so far, from /proc/stat."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    total = sum(values[:8])
    return total - idle, total


def load_text() -> str:
    """The load averages and CPU count, as ``uptime`` would say them."""
    one, five, fifteen = Path("/proc/loadavg").read_text().split()[:3]
    return f"load average {one}, {five}, {fifteen} on {os.cpu_count()} CPUs"


def python_command(*args: str) -> list[str]:
    return [sys.executable, *args]


def this_script(*args: str) -> list[str]:
    return python_command(str(Path(__file__).resolve()), *args)


def wait_for_line(path: Path, fragment: str, process: subprocess.Popen[Any]) -> str:
    """Return the first line of the file ``path`` holding ``fragment`` (a process's output)."""
    deadline = time.monotonic() + STARTUP_WAIT
    while time.monotonic() < deadline:
        if path.exists():
            for line in path.read_text().splitlines():
                if fragment in line:
                    return line
        if process.poll() is not None:
            raise CycleError(
                f"the {path.stem} process exited with status {process.returncode}: "
                f"{path.read_text()[-2000:] if path.exists() else ''}"
            )
        time.sleep(0.05)
    raise CycleError(f"no line with {fragment!r} in {path} after {STARTUP_WAIT:g} s")


def stop_process(process: subprocess.Popen[Any], signum: int, wait: float) -> int | None:
    """Send ``signum`` and wait up to ``wait`` s; kill the process if it is still there."""
    if process.poll() is None:
        process.send_signal(signum)
        try:
            process.wait(wait)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            return None
    return process.returncode


# -- message sizes ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sizes:
    """Median serialized sizes of what one move puts on the wire, from seeded random games."""

    request: int
    """``RefereeMessage(request=ActionRequest(...))``, as the referee writes it: the observation
    without its history, and the events since the seat's last request."""
    reply: int
    """``BotMessage(reply=ActionReply(...))``, as the SDK writes it."""
    event: int
    """``RefereeMessage(event=Event(...))``, as protocol version 1 sent one to each seat per step
    (the events baseline)."""
    moves_per_match: float


def measure_sizes(game: Game, seeds: int = SIZE_SAMPLE_SEEDS) -> Sizes:
    """Play ``seeds`` random games locally and serialize each decision's messages."""
    from domino_arena.sdk.rules import LogEntry  # noqa: PLC0415
    from domino_arena.sdk.rules.state import public_entry  # noqa: PLC0415
    from domino_arena.sdk.wire import event_to_proto  # noqa: PLC0415

    requests: list[int] = []
    replies: list[int] = []
    events: list[int] = []
    moves: list[int] = []
    for seed in range(seeds):
        rng = random.Random(seed)
        state = game.new_game(seed)
        match_id = uuid.uuid4().hex
        turn = 0
        waiting: list[list[pb.Event]] = [[] for _ in range(game.num_players)]
        while not state.is_terminal():
            seat = state.current_seat
            if state.is_chance():
                action = state.legal_actions()[0]
            else:
                turn += 1
                request = pb.ActionRequest(
                    match_id=match_id,
                    turn=turn,
                    observation=observation_to_proto(state.observe(seat), history=False),
                    clock=pb.Clock(move_ms=10_000, bank_ms=60_000),
                    events=waiting[seat],
                )
                waiting[seat] = []
                action = rng.choice(state.legal_actions())
                reply = pb.ActionReply(match_id=match_id, turn=turn, action=action_to_proto(action))
                requests.append(pb.RefereeMessage(request=request).ByteSize())
                replies.append(pb.BotMessage(reply=reply).ByteSize())
            state = state.apply(action)
            for viewer, kept in enumerate(waiting):
                entry = public_entry(LogEntry(seat, action), viewer)
                kept.append(event_to_proto(entry, state.scores, state.deal_number))
            if seat >= 0:
                alone = event_to_proto(entry, state.scores, state.deal_number, match_id)
                events.append(pb.RefereeMessage(event=alone).ByteSize())
        moves.append(turn)
    return Sizes(
        request=round(statistics.median(requests)),
        reply=round(statistics.median(replies)),
        event=round(statistics.median(events)),
        moves_per_match=statistics.median(moves),
    )


def payload(size: int) -> wrappers_pb2.BytesValue:
    """A ``BytesValue`` whose serialized size is exactly ``size`` bytes (``size`` >= 2)."""
    length = size - 2
    while length > 0 and wrappers_pb2.BytesValue(value=b"x" * length).ByteSize() > size:
        length -= 1
    message = wrappers_pb2.BytesValue(value=b"x" * length)
    if message.ByteSize() != size:
        raise ValueError(f"cannot make a BytesValue of {size} bytes")
    return message


# -- the bot process (role "bots") --------------------------------------------------------------


class InlineRandomBot(RandomBot):
    """The random house bot, answered on the event loop: it takes microseconds."""

    threaded: ClassVar[bool] = False


async def bots_main(server: str, credentials: Path, game: str, threaded: bool) -> None:
    """Connect every bot in ``credentials`` (name -> token) and play until SIGTERM."""
    import logging  # noqa: PLC0415

    from domino_arena.sdk import run_async  # noqa: PLC0415

    logging.basicConfig(level=logging.WARNING, format="bots: %(levelname)s %(name)s: %(message)s")
    tokens: dict[str, str] = json.loads(credentials.read_text())
    seeds = itertools.count(1)
    kind = RandomBot if threaded else InlineRandomBot

    def new_bot() -> RandomBot:
        return kind(next(seeds))

    players = asyncio.gather(
        *(
            run_async(new_bot, server=server, name=name, token=token, games=[game])
            for name, token in tokens.items()
        )
    )
    await play_until_sigterm(players)


async def play_until_sigterm(players: asyncio.Future[Any]) -> None:
    """Let the bots (``players``) play until the bench sends SIGTERM, then stop them; raise
    what ended them if they ended first."""
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    stopping = asyncio.ensure_future(stop.wait())
    waits: list[asyncio.Future[Any]] = [players, stopping]
    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    if players.done():
        players.result()  # raises what ended the bots early
    players.cancel()
    stopping.cancel()
    await asyncio.gather(players, stopping, return_exceptions=True)


# -- the plain ping-pong (roles "plain-server" and "plain-client") ------------------------------


async def plain_server_main(request_size: int, event_size: int) -> None:
    """Serve the ping-pongs on a free port, print it, and stop on SIGTERM.

    ``Play``: write a request-sized message, read the reply, again. ``PlayWithEvents``: the
    same, with :data:`EVENTS_PER_MOVE` event-sized messages written before each request (the
    referee's message pattern, without the referee).
    """
    big = payload(request_size)
    event = payload(event_size)

    async def ping_pong(
        context: grpc.aio.ServicerContext[wrappers_pb2.BytesValue, wrappers_pb2.BytesValue],
        events: int,
    ) -> None:
        try:
            while True:
                for _ in range(events):
                    await context.write(event)
                await context.write(big)
                reply: object = await context.read()
                if reply is grpc.aio.EOF:
                    return
        except Exception:  # the client went away
            return

    async def play(request_iterator: object, context: Any) -> None:
        await ping_pong(context, 0)

    async def play_with_events(request_iterator: object, context: Any) -> None:
        await ping_pong(context, EVENTS_PER_MOVE)

    handlers = {
        name: grpc.stream_stream_rpc_method_handler(
            function,
            request_deserializer=wrappers_pb2.BytesValue.FromString,
            response_serializer=wrappers_pb2.BytesValue.SerializeToString,
        )
        for name, function in (("Play", play), ("PlayWithEvents", play_with_events))
    }
    server = grpc.aio.server()
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(PLAIN_SERVICE, handlers),)
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"plain serving on 127.0.0.1:{port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()
    await server.stop(1.0)


async def plain_client_main(
    *, port: int, streams: int, channels: int, seconds: float, reply_size: int, events: int
) -> None:
    """Run ``streams`` ping-pong streams for ``seconds``; print the figures as one JSON line."""
    small = payload(reply_size)
    method = f"/{PLAIN_SERVICE}/{'PlayWithEvents' if events else 'Play'}"
    opened = [grpc.aio.insecure_channel(f"127.0.0.1:{port}") for _ in range(channels)]
    methods = [
        channel.stream_stream(
            method,
            request_serializer=wrappers_pb2.BytesValue.SerializeToString,
            response_deserializer=wrappers_pb2.BytesValue.FromString,
        )
        for channel in opened
    ]
    for channel in opened:
        await channel.channel_ready()
    start = time.perf_counter()
    cpu = time.process_time()
    deadline = start + seconds

    async def one(index: int) -> int:
        call = methods[index % channels]()
        count = 0
        while True:
            for _ in range(events + 1):
                if await call.read() is grpc.aio.EOF:
                    raise CycleError("the plain server ended a stream")
            await call.write(small)
            count += 1
            if time.perf_counter() >= deadline:
                break
        await call.done_writing()
        while await call.read() is not grpc.aio.EOF:
            pass
        return count

    counts = await asyncio.gather(*(one(i) for i in range(streams)))
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu
    for channel in opened:
        await channel.close()
    print(json.dumps({"count": sum(counts), "seconds": wall, "cpu": cpu}), flush=True)


# -- the measurements -----------------------------------------------------------------------------


@dataclass
class Phase:
    """One measured run: what it counted (moves or round trips) and what it cost."""

    count: int
    seconds: float
    cpu: dict[str, float]
    """Process name -> CPU seconds it used during the run."""
    busy: float
    """The whole machine's CPU use during the run, in % of one core."""

    @property
    def rate(self) -> float:
        return self.count / self.seconds if self.seconds else 0.0

    def core_percent(self, name: str) -> float:
        return 100.0 * self.cpu.get(name, 0.0) / self.seconds if self.seconds else 0.0

    def micros_each(self, name: str) -> float:
        return 1e6 * self.cpu.get(name, 0.0) / self.count if self.count else 0.0


@dataclass
class LevelResult:
    """What one concurrency level measured."""

    level: int
    ours: Phase
    matches: int
    faults: int
    abnormal: int
    plain: Phase
    plain_events: Phase | None

    @property
    def ratio(self) -> float:
        return self.ours.rate / self.plain.rate if self.plain.rate else 0.0

    @property
    def verdict(self) -> str:
        floor = FLOORS.get(self.level)
        if floor is None:
            return "-"
        return "ok" if self.ratio >= floor else "below floor"


def count_moves(record: str) -> tuple[int, int]:
    """(moves, faults) in a JSON Lines match record: steps with a seat >= 0, fault lines."""
    moves = faults = 0
    for line in record.splitlines():
        obj = json.loads(line)
        if obj["type"] == "step" and obj["seat"] >= 0:
            moves += 1
        elif obj["type"] == "fault":
            faults += 1
    return moves, faults


async def wait_connected(address: str, names: Sequence[str]) -> None:
    """Return once every bot in ``names`` is connected to the referee at ``address``."""
    async with grpc.aio.insecure_channel(address) as channel:
        admin = admin_pb_grpc.AdminServiceStub(channel)
        deadline = time.monotonic() + STARTUP_WAIT
        while time.monotonic() < deadline:
            with contextlib.suppress(grpc.aio.AioRpcError):
                listed = await admin.ListConnected(
                    admin_pb.ListConnectedRequest(), metadata=ADMIN_METADATA, timeout=5
                )
                if {bot.name for bot in listed.bots} >= set(names):
                    return
            await asyncio.sleep(0.1)
    raise CycleError(f"the bots did not all connect within {STARTUP_WAIT:g} s")


@dataclass(frozen=True, slots=True)
class Lanes:
    """How ``run_ours`` starts matches: the referee, the game, the bot pairs, the clock."""

    address: str
    game: Game
    pairs: Sequence[tuple[str, str]]
    time_control: TimeControl
    call_timeout: float


async def run_ours(
    lanes: Lanes,
    level: int,
    seconds: float,
    seed_base: int,
    lane_times: list[tuple[int, float]] | None = None,
) -> tuple[list[admin_pb.RunMatchResponse], float]:
    """Keep ``level`` matches running for about ``seconds``; return the responses and wall time.

    Each of ``level`` lanes runs matches one after the other (lane i plays the bot pair
    ``i mod len(pairs)``, seats swapped every match) and starts no new one after ``seconds``.
    ``lane_times``, when given, gets each lane's (index of its first response, seconds it ran):
    a lane's rate has no tail of lanes already done.
    """
    move_ms, bank_ms, grace_ms = lanes.time_control.to_ms()
    clock = pb.TimeControl(move_ms=move_ms, bank_ms=bank_ms, grace_ms=grace_ms)
    config = game_to_proto(lanes.game)
    seeds = itertools.count(seed_base)
    responses: list[admin_pb.RunMatchResponse] = []
    async with grpc.aio.insecure_channel(lanes.address) as channel:
        admin = admin_pb_grpc.AdminServiceStub(channel)
        start = time.perf_counter()

        async def lane(index: int) -> None:
            a, b = lanes.pairs[index % len(lanes.pairs)]
            played = 0
            mine: list[admin_pb.RunMatchResponse] = []
            while True:
                request = admin_pb.RunMatchRequest(
                    game=config,
                    bots=[a, b] if played % 2 == 0 else [b, a],
                    has_seed=True,
                    seed=next(seeds),
                    time_control=clock,
                    fault_policy=pb.FAULT_POLICY_SUBSTITUTE,
                )
                mine.append(
                    await admin.RunMatch(
                        request, metadata=ADMIN_METADATA, timeout=lanes.call_timeout
                    )
                )
                played += 1
                if time.perf_counter() - start >= seconds:
                    if lane_times is not None:
                        lane_times.append((len(responses), time.perf_counter() - start))
                    responses.extend(mine)
                    return

        await asyncio.gather(*(lane(i) for i in range(level)))
        wall = time.perf_counter() - start
    return responses, wall


# -- the orchestra --------------------------------------------------------------------------------


class Cluster:
    """The subprocesses of a run, their output files in ``folder``; :meth:`close` kills all."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.processes: dict[str, subprocess.Popen[Any]] = {}
        self._logs: list[IO[str]] = []

    def start(self, name: str, args: list[str]) -> subprocess.Popen[Any]:
        log = self.log_path(name).open("w")
        self._logs.append(log)
        process = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.processes[name] = process
        return process

    def log_path(self, name: str) -> Path:
        return self.folder / f"{name}.log"

    def check_alive(self) -> None:
        """Raise :class:`CycleError` if a long-lived process has died."""
        for name, process in self.processes.items():
            if process.poll() is not None and not name.startswith("plain-client"):
                raise CycleError(
                    f"the {name} process exited with status {process.returncode}: "
                    f"{self.log_path(name).read_text()[-2000:]}"
                )

    def close(self) -> None:
        for process in self.processes.values():
            stop_process(process, signal.SIGKILL, 5.0)
        for log in self._logs:
            log.close()


@dataclass(frozen=True, slots=True)
class PlainServer:
    """The running plain ping-pong server and how its clients run."""

    process: subprocess.Popen[Any]
    port: int
    seconds: float
    reply_size: int
    max_channels: int


async def run_plain(cluster: Cluster, plain: PlainServer, level: int, events: int) -> Phase:
    """Run one plain client subprocess (``level`` streams); return what it measured.

    The streams share min(``level``, bot names) channels, as the bots' streams share one
    process; ``events`` event-sized messages precede each request-sized one.
    """
    server, seconds = plain.process, plain.seconds
    name = f"plain-client-{level}-{events}"
    args = ["--role", "plain-client", "--port", str(plain.port), "--streams", str(level)]
    args += ["--channels", str(min(level, plain.max_channels)), "--seconds", str(seconds)]
    args += ["--reply-size", str(plain.reply_size), "--events", str(events)]
    server_cpu = cpu_seconds(server.pid)
    ticks = machine_ticks()
    client = cluster.start(name, this_script(*args))
    try:
        code = await asyncio.to_thread(client.wait, seconds + STARTUP_WAIT)
    except subprocess.TimeoutExpired:
        raise CycleError(
            f"the plain client did not stop within {seconds + STARTUP_WAIT:g} s"
        ) from None
    server_cpu = cpu_seconds(server.pid) - server_cpu
    busy = busy_percent(ticks)
    text = cluster.log_path(name).read_text()
    if code != 0:
        raise CycleError(f"the plain client exited with status {code}: {text[-2000:]}")
    figures = json.loads(text.strip().splitlines()[-1])
    return Phase(
        count=figures["count"],
        seconds=figures["seconds"],
        cpu={"server": server_cpu, "client": figures["cpu"]},
        busy=busy,
    )


def busy_percent(since: tuple[int, int]) -> float:
    """The machine's CPU use since ``since`` (from :func:`machine_ticks`), % of one core."""
    busy, total = machine_ticks()
    cores = os.cpu_count() or 1
    return 100.0 * cores * (busy - since[0]) / max(1, total - since[1])


async def orchestrate(args: argparse.Namespace, cluster: Cluster) -> list[LevelResult]:
    """Set everything up, measure every level, stop everything; return the results."""
    from domino_arena.server.store.storage import Storage  # noqa: PLC0415

    game = make_game(args.game, players=2)
    levels: list[int] = args.levels
    print(f"game: {game.describe()}; time control {args.time_control}; fault policy substitute")
    print(
        f"levels: {', '.join(map(str, levels))} concurrent matches, new matches started for "
        f"{args.seconds:g} s at each; plain runs {args.seconds:g} s at each"
    )
    print(
        f"bots: {args.bots} names in 1 SDK process, random choice "
        f"({'in worker threads' if args.threaded_bots else 'inline, Bot.threaded = False'})"
    )
    print(f"machine: {load_text()} at the start")

    sizes = measure_sizes(game)
    print(
        f"message sizes (medians over {SIZE_SAMPLE_SEEDS} seeded random games, "
        f"{sizes.moves_per_match:g} moves a game): ActionRequest {sizes.request} B, "
        f"ActionReply {sizes.reply} B, Event {sizes.event} B"
    )

    started = time.perf_counter()
    database = f"sqlite:///{cluster.folder / 'referee.db'}"
    storage = Storage(database)
    storage.open()
    names = [f"bench-{i:03d}" for i in range(args.bots)]
    tokens = {name: storage.add_bot(name) for name in names}
    storage.close()
    credentials = cluster.folder / "tokens.json"
    credentials.write_text(json.dumps(tokens))
    took = time.perf_counter() - started
    print(f"setup: {len(names)} bots made with storage.add_bot in {took:.1f} s")

    serve = [
        "-m",
        "domino_arena.server.cli.main",
        "serve",
        "--port",
        "0",
        "--admin-token",
        ADMIN_TOKEN,
        "--db",
        database,
    ]
    profile_file = cluster.folder / "referee.prof"
    if args.profile:
        serve = ["-m", "cProfile", "-o", str(profile_file), *serve]
    referee = cluster.start("referee", python_command(*serve))
    line = wait_for_line(cluster.log_path("referee"), "serving on 127.0.0.1:", referee)
    address = f"127.0.0.1:{int(line.rsplit(':', 1)[1])}"
    bots_args = ["--role", "bots", "--server", address, "--credentials", str(credentials)]
    bots_args += ["--game", args.game] + (["--threaded-bots"] if args.threaded_bots else [])
    bots_profile = cluster.folder / "bots.prof"
    if args.profile_bots:
        bots_args += ["--profile-file", str(bots_profile)]
    bots = cluster.start("bots", this_script(*bots_args))
    await wait_connected(address, names)
    plain_process = cluster.start(
        "plain-server",
        this_script(
            "--role",
            "plain-server",
            "--request-size",
            str(sizes.request),
            "--event-size",
            str(sizes.event),
        ),
    )
    line = wait_for_line(cluster.log_path("plain-server"), "plain serving on", plain_process)
    plain = PlainServer(
        plain_process, int(line.rsplit(":", 1)[1]), args.seconds, sizes.reply, len(names)
    )
    print(
        f"processes: referee {address} pid {referee.pid}; bots pid {bots.pid}; "
        f"plain server pid {plain_process.pid}"
        + ("; the referee runs under cProfile: slower than normal" if args.profile else "")
        + ("; the bots run under cProfile: slower than normal" if args.profile_bots else "")
    )

    pairs = [(names[i], names[i + 1]) for i in range(0, len(names) - 1, 2)]
    lanes = Lanes(address, game, pairs, TimeControl.parse(args.time_control), args.max_seconds)
    # Warm the referee's caches and both processes' code paths up: not counted.
    await run_ours(lanes, min(4, len(pairs)), 0.0, seed_base=0)

    results: list[LevelResult] = []
    for index, level in enumerate(levels):
        cluster.check_alive()
        print(f"\n{level} concurrent matches: ours...", end="", flush=True)
        cpu = {"referee": cpu_seconds(referee.pid), "bots": cpu_seconds(bots.pid)}
        ticks = machine_ticks()
        responses, wall = await run_ours(lanes, level, args.seconds, (index + 1) * 1_000_000)
        ours_cpu = {
            "referee": cpu_seconds(referee.pid) - cpu["referee"],
            "bots": cpu_seconds(bots.pid) - cpu["bots"],
        }
        busy = busy_percent(ticks)
        moves = faults = abnormal = 0
        for response in responses:
            counted, faulted = count_moves(response.record)
            moves += counted
            faults += faulted
            abnormal += response.result.termination != pb.TERMINATION_NORMAL
        ours = Phase(moves, wall, ours_cpu, busy)
        print(f" {ours.rate:.0f} moves/s; plain...", end="", flush=True)
        cluster.check_alive()
        plain_phase = await run_plain(cluster, plain, level, 0)
        print(f" {plain_phase.rate:.0f} round trips/s", end="", flush=True)
        events_phase = None
        if not args.no_events_baseline:
            print("; plain with events...", end="", flush=True)
            events_phase = await run_plain(cluster, plain, level, EVENTS_PER_MOVE)
            print(f" {events_phase.rate:.0f} round trips/s", end="", flush=True)
        print(flush=True)
        results.append(
            LevelResult(level, ours, len(responses), faults, abnormal, plain_phase, events_phase)
        )

    stop_process(bots, signal.SIGTERM, 10.0)
    code = stop_process(referee, signal.SIGINT, 30.0)
    stop_process(plain_process, signal.SIGTERM, 10.0)
    if code != 0:
        raise CycleError(
            f"the referee exited with status {code}: "
            f"{cluster.log_path('referee').read_text()[-2000:]}"
        )
    print_tables(results, len(pairs))
    if args.profile:
        print_profile(profile_file, args.profile_lines, "referee")
        if args.profile_out:
            Path(args.profile_out).write_bytes(profile_file.read_bytes())
            print(f"\nprofile written to {args.profile_out}")
    if args.profile_bots:
        print_profile(bots_profile, args.profile_lines, "bots")
    return results


def per_stream(level: int, pairs: int) -> float:
    """Matches each bot's stream serves at once at ``level`` (lane i plays pair i mod pairs)."""
    return level / min(level, pairs)


def print_tables(results: Sequence[LevelResult], pairs: int) -> None:
    """The verdict table, where the referee beats plain ping-pong, then where the time went."""
    print(
        f"\n{'matches':>7} {'per stream':>10} {'ours moves/s':>12} {'plain round trips/s':>19} "
        f"{'ours/plain':>10}  floor "
        + ", ".join(f"{floor} at {level}" for level, floor in FLOORS.items())
    )
    for r in results:
        print(
            f"{r.level:>7} {per_stream(r.level, pairs):>10.1f} {r.ours.rate:>12.0f} "
            f"{r.plain.rate:>19.0f} {r.ratio:>10.2f}  {r.verdict}"
        )
    beaten = [r for r in results if r.ratio > 1.0]
    print(
        "the referee beats plain one-message ping-pong (its batches: every message due to a "
        "stream in one loop turn is one write) at "
        + (
            ", ".join(
                f"{r.level} matches ({per_stream(r.level, pairs):g} per stream, {r.ratio:.2f}x)"
                for r in beaten
            )
            if beaten
            else "no level of this run (it can where many matches share a stream: --bots 2)"
        )
    )
    print(
        "\nwhere the time went (CPU in % of one core and in microseconds per move or round trip;"
        " busy: the whole machine, 100% per core):"
    )
    print(
        f"{'matches':>7} {'played':>6} {'moves':>7} {'wall s':>6} {'busy%':>5} "
        f"{'referee%':>8} {'us/move':>7} {'bots%':>5} {'us/move':>7} | "
        f"{'plain srv%':>10} {'us/rt':>5} {'cli%':>4} {'us/rt':>5} {'busy%':>5} | "
        f"{'+events rt/s':>12} {'srv us/rt':>9} {'ours/that':>9}"
    )
    for r in results:
        o, p, e = r.ours, r.plain, r.plain_events
        events = "-".rjust(12) + " " + "-".rjust(9) + " " + "-".rjust(9)
        if e is not None:
            events = (
                f"{e.rate:>12.0f} {e.micros_each('server'):>9.0f} "
                f"{o.rate / e.rate if e.rate else 0:>9.2f}"
            )
        print(
            f"{r.level:>7} {r.matches:>6} {o.count:>7} {o.seconds:>6.1f} {o.busy:>5.0f} "
            f"{o.core_percent('referee'):>8.0f} {o.micros_each('referee'):>7.0f} "
            f"{o.core_percent('bots'):>5.0f} {o.micros_each('bots'):>7.0f} | "
            f"{p.core_percent('server'):>10.0f} {p.micros_each('server'):>5.0f} "
            f"{p.core_percent('client'):>4.0f} {p.micros_each('client'):>5.0f} {p.busy:>5.0f} | "
            f"{events}"
        )


def print_profile(path: Path, lines: int, name: str) -> None:
    """Print a process's top functions by own time and by cumulative time."""
    for order in ("tottime", "cumulative"):
        stream = io.StringIO()
        stats = pstats.Stats(str(path), stream=stream)
        stats.strip_dirs().sort_stats(order).print_stats(lines)
        print(f"\n{name} profile (main thread), top {lines} by {order}:")
        print(stream.getvalue().split("\n", 1)[1].strip("\n"))


# -- the command line -----------------------------------------------------------------------------


def levels_type(text: str) -> list[int]:
    try:
        levels = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected numbers separated by commas, got {text}"
        ) from None
    if not levels or min(levels) < 1:
        raise argparse.ArgumentTypeError(f"expected positive numbers, got {text}")
    return levels


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Moves/s through the referee with random SDK bots over loopback, "
        "against a plain grpc.aio ping-pong with the same message sizes.",
        epilog="The floor (issue 14): ours/plain >= 0.5 at 16 and 0.6 at 256 concurrent matches.",
    )
    parser.add_argument(
        "--levels",
        type=levels_type,
        default=[1, 16, 256],
        metavar="N,N,..",
        help="concurrent matches (default 1,16,256)",
    )
    parser.add_argument(
        "--seconds",
        type=float,
        default=10.0,
        metavar="S",
        help="keep starting matches for S seconds per level; plain runs S seconds (default 10)",
    )
    parser.add_argument(
        "--bots", type=int, default=16, metavar="K", help="bot names, K/2 pairs (default 16)"
    )
    parser.add_argument(
        "--game", default="passing", choices=("passing", "straight"), help="default passing"
    )
    parser.add_argument(
        "--time-control",
        default="10s+60s/1s",
        metavar="TC",
        help="generous, so nothing faults (default 10s+60s/1s)",
    )
    parser.add_argument(
        "--threaded-bots",
        action="store_true",
        help="run choose in the SDK's worker threads (the default for a Bot) instead of inline",
    )
    parser.add_argument(
        "--no-events-baseline",
        action="store_true",
        help="skip the second plain run, which also writes 2 event-sized messages per round trip",
    )
    parser.add_argument(
        "--profile", action="store_true", help="run the referee under cProfile and print its top"
    )
    parser.add_argument(
        "--profile-lines", type=int, default=30, metavar="N", help="functions to print (30)"
    )
    parser.add_argument("--profile-out", metavar="FILE", help="keep the cProfile data in FILE")
    parser.add_argument(
        "--profile-bots", action="store_true", help="run the bots under cProfile and print its top"
    )
    parser.add_argument(
        "--max-seconds",
        type=float,
        default=290.0,
        metavar="T",
        help="give up (exit 1) after T seconds (default 290)",
    )
    internal = argparse.SUPPRESS
    parser.add_argument("--role", choices=("bots", "plain-server", "plain-client"), help=internal)
    parser.add_argument("--server", help=internal)
    parser.add_argument("--credentials", type=Path, help=internal)
    parser.add_argument("--port", type=int, help=internal)
    parser.add_argument("--streams", type=int, help=internal)
    parser.add_argument("--channels", type=int, help=internal)
    parser.add_argument("--request-size", type=int, help=internal)
    parser.add_argument("--reply-size", type=int, help=internal)
    parser.add_argument("--event-size", type=int, help=internal)
    parser.add_argument("--events", type=int, default=0, help=internal)
    parser.add_argument("--profile-file", type=Path, help=internal)
    return parser


def run_guarded(
    name: str, work: Callable[[], Awaitable[R]], cluster: Cluster, max_seconds: float
) -> R | None:
    """Run ``work()`` in a new asyncio loop for at most ``max_seconds``, then close
    ``cluster``'s processes; None, once the error is printed (as ``name: error: ...``), if it
    gave up or a process, a call or the machine failed."""

    async def guarded() -> R:
        try:
            return await asyncio.wait_for(work(), max_seconds)
        finally:
            cluster.close()  # before asyncio.run waits for threads blocked on a process

    try:
        return asyncio.run(guarded())
    except TimeoutError:
        print(f"{name}: error: gave up after {max_seconds:g} s", file=sys.stderr)
    except (CycleError, grpc.aio.AioRpcError, OSError) as exc:
        print(f"{name}: error: {exc}", file=sys.stderr)
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.role == "bots":
        profiler = cProfile.Profile() if args.profile_file else None
        if profiler is not None:
            profiler.enable()
        asyncio.run(bots_main(args.server, args.credentials, args.game, args.threaded_bots))
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(args.profile_file)
        return 0
    if args.role == "plain-server":
        asyncio.run(plain_server_main(args.request_size, args.event_size))
        return 0
    if args.role == "plain-client":
        asyncio.run(
            plain_client_main(
                port=args.port,
                streams=args.streams,
                channels=args.channels,
                seconds=args.seconds,
                reply_size=args.reply_size,
                events=args.events,
            )
        )
        return 0
    if args.bots < 2:
        print("referee_bench: error: --bots must be 2 or more", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="referee-bench-") as folder:
        cluster = Cluster(Path(folder))
        started = time.perf_counter()

        results = run_guarded(
            "referee_bench", lambda: orchestrate(args, cluster), cluster, args.max_seconds
        )
        if results is None:
            return 1
    print(
        f"\nmachine: {load_text()} at the end; the run took {time.perf_counter() - started:.0f} s"
    )
    failed = False
    for result in results:
        if result.abnormal or result.faults:
            print(
                f"referee_bench: error: at {result.level} matches, {result.abnormal} matches did "
                f"not end normally and {result.faults} faults were charged",
                file=sys.stderr,
            )
            failed = True
        floor = FLOORS.get(result.level)
        if floor is not None and result.ratio < floor:
            print(
                f"below floor: ours/plain = {result.ratio:.2f} at {result.level} matches "
                f"(floor {floor})"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

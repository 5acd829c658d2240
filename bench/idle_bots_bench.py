"""The referee's memory with 1,000 idle connected bots, against plain grpc.aio, and where it goes.

Usage (from the repository root)::

    python bench/idle_bots_bench.py [--bots N] [--channels C] [--settle S] [--max-seconds T]
        [--no-trace]

Three servers run one after the other on loopback, each a subprocess given the same N logins:

1. **raw grpc.aio**, the baseline: ``BotService.Play`` served by grpc.aio and nothing else
   (read the Hello, write a Welcome, read until the stream ends);
2. **the referee**: ``domino-arena serve --port 0 --no-web`` through the command line's
   ``main``, on a fresh SQLite file holding N bots written directly through
   :mod:`domino_arena.server.store` (one token hashed once and stored for every bot, so each
   login still runs the referee's full token check);
3. **the referee under tracemalloc** (skipped with ``--no-trace``): the same, with snapshots
   before the logins and after them: the Python objects each bot costs, by the line that
   allocated them. Tracing inflates this run's RSS; only its object counts are reported.

Before serving, servers 1 and 2 import their dependencies one group at a time and read their
own RSS after each (``VmRSS`` in ``/proc/self/status``): the MiB each group costs. One client
subprocess opens N ``BotService.Play`` streams over C channels (by default one channel, so one
TCP connection, per bot, as N real bots would), sends every Hello at once (bots coming back
after a restart) and waits for each Welcome; nothing else happens on the streams. The server's
RSS is read when it is ready, every 0.2 s during the logins (the peak) and S seconds after the
last welcome, all bots idle: the floor's figure. The referee must list all N bots
(``ListConnected``) and exit 0 on SIGTERM.

The run stops by itself (``--max-seconds`` per server, exit 1 when it runs out). It exits 1 on
an error (a process died, a login was refused, a bot is missing), never on a missed floor: it
prints "below floor".
"""

from __future__ import annotations

import sys
from pathlib import Path

if not __package__:  # run as a file: the repository root holds bench/ and tests/
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import argparse
import datetime as dt
import importlib
import json
import linecache
import os
import queue
import signal
import statistics
import subprocess
import tempfile
import threading
import time
import tracemalloc
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Final

from tests.fakes.processes import memory

ROOT: Final = Path(__file__).resolve().parent.parent
ADMIN_TOKEN: Final = "bench-admin-token"
"""The admin token the benchmark's referee is started with."""
ADMIN_METADATA: Final = (("authorization", f"Bearer {ADMIN_TOKEN}"),)
FLOOR_MIB: Final = 100.0
GOAL_RATIO: Final = 1.2
STARTUP_WAIT: Final = 60.0
"""Seconds a server may take to start, or the client to connect its channels."""
PREFIX: Final = "idle-"
CLOCK_TICKS: Final = os.sysconf("SC_CLK_TCK")
MIB: Final = 1024 * 1024
LOOP_CALLBACK: Final = (os.path.join("asyncio", "events.py"), "self._context.run(")
"""The line where the event loop runs a callback or a task's step (``Handle._run``)."""
TRACE_FRAMES: Final = 12
"""Frames kept per traced allocation: enough to find the referee's own line under asyncio's."""

_PROTOCOL: Final = (
    "grpc",
    "grpc.aio",
    "domino_arena.v1.referee_pb2",
    "domino_arena.v1.referee_pb2_grpc",
)
RAW_IMPORTS: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    ("asyncio (with ssl)", ("asyncio",)),
    ("grpc, protobuf, the protocol", _PROTOCOL),
)
"""What each server imports, one group at a time, before it serves (the label, the modules)."""
REFEREE_IMPORTS: Final = (
    *RAW_IMPORTS,
    (
        "health checking, reflection",
        ("grpc_health.v1.health", "grpc_reflection.v1alpha.reflection"),
    ),
    ("sqlalchemy", ("sqlalchemy",)),
    ("trio (attrs, outcome, sortedcontainers)", ("trio",)),
    ("prometheus_client", ("prometheus_client",)),
    ("domino_arena: the serve command", ("domino_arena.server.cli.serve",)),
)


class BenchError(Exception):
    """The benchmark cannot go on: a process died, a wait ran out, a login failed."""


# -- /proc ----------------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) the process ``pid`` has used so far, in seconds."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def load_text() -> str:
    """The load averages and CPU count, as ``uptime`` would say them."""
    one, five, fifteen = Path("/proc/loadavg").read_text().split()[:3]
    return f"load average {one}, {five}, {fifteen} on {os.cpu_count()} CPUs"


# -- the servers (roles "raw" and "referee") and the client (role "client") ------------------------


def import_steps(groups: Sequence[tuple[str, Sequence[str]]]) -> list[tuple[str, int]]:
    """Import ``groups`` in order; return the RSS before the first and after each."""
    steps = [("python (this script's standard library)", memory(os.getpid())["VmRSS"])]
    for label, modules in groups:
        for module in modules:
            importlib.import_module(module)
        steps.append((label, memory(os.getpid())["VmRSS"]))
    return steps


def raw_role() -> int:
    """The baseline server: plain grpc.aio, ``Play`` with no more than the protocol asks."""
    print("imports " + json.dumps(import_steps(RAW_IMPORTS)), flush=True)
    import asyncio  # noqa: PLC0415

    import grpc  # noqa: PLC0415

    from domino_arena.v1 import referee_pb2 as pb  # noqa: PLC0415
    from domino_arena.v1 import referee_pb2_grpc as pb_grpc  # noqa: PLC0415

    class Raw(pb_grpc.BotServiceServicer):
        async def Play(  # type: ignore[override]  # noqa: N802
            self, request_iterator: Any, context: Any
        ) -> None:
            first = await context.read()
            hello = first.hello
            welcome = pb.Welcome(name=hello.name, protocol_version=2, games=list(hello.games))
            await context.write(pb.RefereeMessage(welcome=welcome))
            while await context.read() is not grpc.aio.EOF:
                pass

    async def serve() -> None:
        server = grpc.aio.server()
        pb_grpc.add_BotServiceServicer_to_server(Raw(), server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        print(f"serving on 127.0.0.1:{port}", flush=True)
        await stop.wait()
        await server.stop(1.0)

    asyncio.run(serve())
    return 0


def referee_role(serve_argv: list[str], trace_folder: Path | None) -> int:
    """The referee as ``domino-arena serve`` runs it, after measured imports; with a trace
    folder, under tracemalloc, writing a snapshot there at each SIGUSR1."""
    print("imports " + json.dumps(import_steps(REFEREE_IMPORTS)), flush=True)
    if trace_folder is not None:
        tracemalloc.start(TRACE_FRAMES)
        taken = [0]

        def snapshot(_signum: int, _frame: object) -> None:
            taken[0] += 1
            tracemalloc.take_snapshot().dump(str(trace_folder / f"snapshot-{taken[0]}"))
            os.write(1, f"snapshot {taken[0]}\n".encode())

        signal.signal(signal.SIGUSR1, snapshot)
    from domino_arena.server.cli.main import main as cli_main  # noqa: PLC0415

    return cli_main(serve_argv)


async def client_main(*, server: str, bots: int, channels: int, token: str, hold: float) -> None:
    """Log ``bots`` bots in over ``channels`` channels, report, hold until stdin closes.

    Prints ``welcomed N SECONDS`` and one JSON line of login latencies once every bot is in,
    then keeps the streams open (idle) until its stdin is closed or ``hold`` seconds pass.
    """
    import asyncio  # noqa: PLC0415

    import grpc  # noqa: PLC0415

    from domino_arena.v1 import referee_pb2 as pb  # noqa: PLC0415
    from domino_arena.v1 import referee_pb2_grpc as pb_grpc  # noqa: PLC0415

    loop = asyncio.get_running_loop()
    release = asyncio.Event()

    def wait_stdin() -> None:
        sys.stdin.read()
        loop.call_soon_threadsafe(release.set)

    threading.Thread(target=wait_stdin, daemon=True).start()
    # A local subchannel pool: each channel is its own TCP connection, as separate bots are.
    options = [("grpc.use_local_subchannel_pool", 1)]
    opened = [grpc.aio.insecure_channel(server, options=options) for _ in range(channels)]
    await asyncio.wait_for(
        asyncio.gather(*(channel.channel_ready() for channel in opened)), STARTUP_WAIT
    )
    print(f"channels ready: {channels}", flush=True)
    stubs = [pb_grpc.BotServiceStub(channel) for channel in opened]
    calls: list[Any] = []
    start_time = time.perf_counter()

    async def login(index: int) -> float:
        call = stubs[index % channels].Play()
        calls.append(call)
        hello = pb.Hello(
            name=f"{PREFIX}{index:05d}",
            token=token,
            games=["passing"],
            protocol_version=2,
            client="idle_bots_bench",
        )
        await call.write(pb.BotMessage(hello=hello))
        answer: object = await call.read()
        if not isinstance(answer, pb.RefereeMessage) or answer.WhichOneof("message") != "welcome":
            raise BenchError(f"bot {hello.name}: expected a Welcome, got {answer}")
        return time.perf_counter() - start_time

    latencies = sorted(await asyncio.gather(*(login(i) for i in range(bots))))
    took = time.perf_counter() - start_time
    print(f"welcomed {bots} {took:.3f}", flush=True)
    summary = {
        "seconds": took,
        "p50": statistics.median(latencies),
        "p95": latencies[int(0.95 * (len(latencies) - 1))],
        "last": latencies[-1],
    }
    print(json.dumps(summary), flush=True)
    try:
        await asyncio.wait_for(release.wait(), hold)
    except TimeoutError:
        print("hold time over: closing", flush=True)
    for call in calls:
        call.cancel()
    for channel in opened:
        await channel.close()


# -- the run --------------------------------------------------------------------------------------


class Output:
    """The lines a subprocess prints, collected by a thread so they can be waited on."""

    def __init__(self, stream: IO[str], keep: Path) -> None:
        self.lines: queue.Queue[str | None] = queue.Queue()
        self._keep = keep.open("w")
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self._keep.write(line)
            self._keep.flush()
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def wait(self, fragment: str, timeout: float, on_tick: Any = None) -> str:
        """Return the next line holding ``fragment``; call ``on_tick()`` about every 0.2 s."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BenchError(f"no line with {fragment!r} within {timeout:g} s")
            try:
                line = self.lines.get(timeout=min(0.2, left))
            except queue.Empty:
                if on_tick is not None:
                    on_tick()
                continue
            if line is None:
                raise BenchError(f"the process ended before a line with {fragment!r}")
            if fragment in line:
                return line

    def close(self) -> None:
        self._thread.join(5.0)
        self._keep.close()


def start(args: list[str], log: Path) -> tuple[subprocess.Popen[str], Output]:
    process = subprocess.Popen(
        args,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stdout is not None
    return process, Output(process.stdout, log)


def create_bots(database: str, bots: int, prefix: str = PREFIX) -> tuple[str, float]:
    """Write ``bots`` bots sharing one token straight into the database; return it and the time."""
    from domino_arena.server.store.bots import hash_token, new_token  # noqa: PLC0415
    from domino_arena.server.store.storage import Storage  # noqa: PLC0415
    from domino_arena.server.store.tables import BOTS  # noqa: PLC0415

    started = time.perf_counter()
    storage = Storage(database)
    storage.open()
    token = new_token()
    stored = hash_token(token)
    now = dt.datetime.now(dt.UTC)
    rows = [{"name": f"{prefix}{i:05d}", "token_hash": stored, "created": now} for i in range(bots)]
    with storage.engine.begin() as connection:
        connection.execute(BOTS.insert(), rows)
    storage.close()
    return token, time.perf_counter() - started


@dataclass
class Figures:
    """What one server's run measured."""

    name: str
    bots: int
    imports: list[tuple[str, int]] = field(default_factory=list)
    start_rss: int = 0
    login_peak_rss: int = 0
    idle_rss: int = 0
    idle_anon: int = 0
    idle_threads: int = 0
    login: dict[str, float] = field(default_factory=dict)
    login_cpu: float = 0.0
    listed: int | None = None
    exit_code: int | None = None
    traced: list[tuple[str, int, int]] = field(default_factory=list)
    """Tracing only: (the allocating line, bytes, objects) the logins added, largest first."""

    @property
    def per_bot(self) -> float:
        """The RSS growth from ready to idle, per bot, in bytes."""
        return (self.idle_rss - self.start_rss) / max(1, self.bots)


def _module() -> list[str]:
    return [sys.executable, "-m", "bench.idle_bots_bench"]


def measure(
    name: str, args: argparse.Namespace, folder: Path, token_file: Path, server: list[str]
) -> Figures:
    """Start ``server``, log the bots in, read its memory idle, stop it (SIGTERM)."""
    figures = Figures(name, args.bots)
    tracing = "--trace-folder" in server
    process, output = start(server, folder / f"{name}.log")
    client: subprocess.Popen[str] | None = None
    client_out: Output | None = None
    try:
        steps = json.loads(output.wait("imports ", 120).removeprefix("imports "))
        figures.imports = [(str(label), int(rss)) for label, rss in steps]
        line = output.wait("serving on 127.0.0.1:", STARTUP_WAIT)
        address = f"127.0.0.1:{int(line.rsplit(':', 1)[1].split()[0])}"
        time.sleep(1.0)  # let the start-up settle before the baseline
        figures.start_rss = memory(process.pid)["VmRSS"]
        if tracing:
            process.send_signal(signal.SIGUSR1)
            output.wait("snapshot 1", 120)
        client_args = ["--role", "client", "--server", address, "--token-file", str(token_file)]
        client_args += ["--bots", str(args.bots), "--channels", str(args.channels)]
        client_args += ["--hold", str(args.max_seconds)]
        client, client_out = start([*_module(), *client_args], folder / f"{name}-client.log")
        client_out.wait("channels ready", STARTUP_WAIT)
        cpu = cpu_seconds(process.pid)
        peak = [0]

        def sample() -> None:
            if process.poll() is not None:
                raise BenchError(f"{name} exited with status {process.returncode}")
            peak[0] = max(peak[0], memory(process.pid)["VmRSS"])

        client_out.wait("welcomed", args.max_seconds, on_tick=sample)
        sample()
        figures.login_cpu = cpu_seconds(process.pid) - cpu
        figures.login = json.loads(client_out.wait("{", 10.0))
        figures.login_peak_rss = peak[0]
        print(
            f"{name}: {args.bots} logins in {figures.login['seconds']:.1f} s; "
            f"settling {args.settle:g} s...",
            flush=True,
        )
        time.sleep(args.settle)
        if "serve" in server:
            figures.listed = _listed(address)
        status = memory(process.pid)
        figures.idle_rss = status["VmRSS"]
        figures.idle_anon = status.get("RssAnon", 0)
        figures.idle_threads = status.get("Threads", 0)
        if tracing:
            process.send_signal(signal.SIGUSR1)
            output.wait("snapshot 2", 120)
            figures.traced = _traced(folder / "snapshot-1", folder / "snapshot-2")
        assert client.stdin is not None
        client.stdin.close()  # the client closes its streams and exits
        client.wait(30.0)
        process.send_signal(signal.SIGTERM)
        figures.exit_code = process.wait(30.0)
    finally:
        for each in (client, process):
            if each is not None and each.poll() is None:
                each.kill()
                each.wait()
        for out in (client_out, output):
            if out is not None:
                out.close()
    return figures


def _listed(address: str) -> int:
    """How many of the bench's bots the referee lists as connected (``ListConnected``)."""
    import grpc  # noqa: PLC0415

    from domino_arena.v1 import admin_pb2 as admin_pb  # noqa: PLC0415
    from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc  # noqa: PLC0415

    try:
        with grpc.insecure_channel(address) as channel:
            admin = admin_pb_grpc.AdminServiceStub(channel)
            listed = admin.ListConnected(
                admin_pb.ListConnectedRequest(), metadata=ADMIN_METADATA, timeout=30
            )
    except grpc.RpcError as exc:
        raise BenchError(f"ListConnected failed: {exc}") from None
    return sum(bot.name.startswith(PREFIX) for bot in listed.bots)


def _where(frame: tracemalloc.Frame) -> str:
    """A frame as ``path:line``, the path from the repository or from ``site-packages``."""
    path = frame.filename
    if path.startswith(str(ROOT) + os.sep):
        path = path[len(str(ROOT)) + 1 :]
    else:
        for marker in ("site-packages/", f"python{sys.version_info[0]}.{sys.version_info[1]}/"):
            if marker in path:
                path = path.split(marker, 1)[1]
                break
    return f"{path}:{frame.lineno}"


def _traced(before: Path, after: Path) -> list[tuple[str, int, int]]:
    """What the logins added, by allocating line: the innermost line of the referee's own
    code (server/, sdk/, bots/) where there is one, else the innermost line.

    Only the frames below the event loop's callback count: what gRPC's aio layer allocates in
    a callback of the loop has the referee's ``asyncio.run`` far above it, and is gRPC's."""
    own = tuple(str(ROOT / part) + os.sep for part in ("server", "sdk", "bots"))
    skip = [tracemalloc.Filter(False, tracemalloc.__file__)]
    old = tracemalloc.Snapshot.load(str(before)).filter_traces(skip)
    new = tracemalloc.Snapshot.load(str(after)).filter_traces(skip)
    sizes: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    for diff in new.compare_to(old, "traceback"):
        frames = list(reversed(diff.traceback))  # innermost first
        mine = next((f for f in _below_loop(frames) if f.filename.startswith(own)), frames[0])
        sizes[_where(mine)] += diff.size_diff
        counts[_where(mine)] += diff.count_diff
    return [(where, size, counts[where]) for where, size in sizes.most_common()]


def report(raw: Figures, referee: Figures, traced: Figures | None) -> list[str]:
    """Print the comparison and the breakdown; return the problems found (not missed floors)."""
    n = referee.bots

    def mib(value: float) -> str:
        return f"{value / MIB:.1f} MiB"

    rows = [
        ("", "raw grpc.aio", "referee", "referee - raw"),
        ("ready, no bot", mib(raw.start_rss), mib(referee.start_rss), ""),
        (f"{n} idle bots", mib(raw.idle_rss), mib(referee.idle_rss), ""),
        ("  of which anonymous", mib(raw.idle_anon), mib(referee.idle_anon), ""),
        (
            "  growth per bot",
            f"{raw.per_bot / 1024:.1f} KiB",
            f"{referee.per_bot / 1024:.1f} KiB",
            "",
        ),
        ("highest during logins", mib(raw.login_peak_rss), mib(referee.login_peak_rss), ""),
        (
            "logins (all at once)",
            f"{raw.login['seconds']:.1f} s",
            f"{referee.login['seconds']:.1f} s",
            "",
        ),
        ("CPU during the logins", f"{raw.login_cpu:.1f} s", f"{referee.login_cpu:.1f} s", ""),
        ("threads", str(raw.idle_threads), str(referee.idle_threads), ""),
    ]
    rows[1] = (*rows[1][:3], f"{(referee.start_rss - raw.start_rss) / MIB:+.1f} MiB")
    rows[2] = (*rows[2][:3], f"{(referee.idle_rss - raw.idle_rss) / MIB:+.1f} MiB")
    rows[4] = (*rows[4][:3], f"{(referee.per_bot - raw.per_bot) / 1024:+.1f} KiB")
    _table(rows)
    ratio = referee.idle_rss / raw.idle_rss
    verdict = "ok" if referee.idle_rss <= FLOOR_MIB * MIB else "below floor"
    print(
        f"\nreferee / raw grpc.aio with {n} idle bots: {ratio:.2f}x (goal {GOAL_RATIO:g}x); "
        f"referee {mib(referee.idle_rss)}, floor {FLOOR_MIB:g} MiB: {verdict}"
    )

    print(f"\nwhere the referee's {mib(referee.idle_rss)} go (raw grpc.aio beside it):")
    raw_steps = dict(_deltas(raw.imports))
    parts: list[tuple[str, float, float | None]] = [
        (f"import {label}", delta, raw_steps.get(label))
        for label, delta in _deltas(referee.imports)
    ]
    started = (referee.start_rss - referee.imports[-1][1], raw.start_rss - raw.imports[-1][1])
    parts.append(("started: database, gRPC server, threads", started[0], started[1]))
    parts.append((f"{n} bots: gRPC's own per-bot cost (raw's)", raw.per_bot * n, raw.per_bot * n))
    parts.append(
        (f"{n} bots: the referee's own per-bot state", (referee.per_bot - raw.per_bot) * n, None)
    )
    lines = [
        (
            f"  {label}",
            mib(value),
            f"{100 * value / referee.idle_rss:.0f}%",
            "-" if beside is None else mib(beside),
        )
        for label, value, beside in parts
    ]
    _table([("", "referee", "share", "raw"), *lines])

    if traced is not None:
        total = sum(size for _, size, _ in traced.traced)
        objects = sum(count for _, _, count in traced.traced)
        print(
            f"\nPython objects the logins left in the referee (tracemalloc, a third run): "
            f"{total / n / 1024:.1f} KiB and {objects / n:.0f} blocks per bot; the rest of the "
            f"growth per bot is gRPC's C core and the allocators. By allocating line (the "
            f"referee's own innermost line where there is one):"
        )
        for where, size, count in traced.traced[:15]:
            print(f"  {size / n:8.0f} B/bot  {count / n:6.1f} blocks/bot  {where}")
        print("By file (the referee's own innermost file; the rest: no frame of the referee's):")
        for where, size in _by_file(traced.traced)[:8]:
            print(f"  {size / n:8.0f} B/bot  {where}")

    problems = []
    if referee.listed != n:
        problems.append(f"ListConnected lists {referee.listed} of the {n} bots")
    for figures in (raw, referee, traced):
        if figures is not None and figures.exit_code != 0:
            problems.append(f"{figures.name} exited with status {figures.exit_code} on SIGTERM")
    return problems


def _below_loop(frames: list[tracemalloc.Frame]) -> Iterator[tracemalloc.Frame]:
    """``frames`` (innermost first) up to the event loop's running of a callback
    (``Handle._run`` in ``asyncio/events.py``), which starts every task step and callback."""
    for frame in frames:
        if frame.filename.endswith(LOOP_CALLBACK[0]) and LOOP_CALLBACK[1] in linecache.getline(
            frame.filename, frame.lineno
        ):
            return
        yield frame


def _by_file(traced: list[tuple[str, int, int]]) -> list[tuple[str, int]]:
    """The traced bytes summed by file: the referee's own files by name, the rest as one."""
    own = ("server/", "sdk/", "bots/")
    sizes: Counter[str] = Counter()
    for where, size, _ in traced:
        path = where.rsplit(":", 1)[0]
        sizes[path if path.startswith(own) else "(gRPC's aio objects, asyncio, the rest)"] += size
    return sizes.most_common()


def _deltas(steps: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Each import group's RSS growth (the first step: the interpreter's own RSS)."""
    return [(steps[0][0], steps[0][1])] + [
        (label, rss - steps[index][1]) for index, (label, rss) in enumerate(steps[1:])
    ]


def _table(rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        print("  ".join(cells).rstrip())


def run(args: argparse.Namespace, folder: Path) -> int:
    database = f"sqlite:///{folder / 'referee.db'}"
    token, seconds = create_bots(database, args.bots)
    token_file = folder / "token"
    token_file.write_text(token)
    print(f"setup: {args.bots} bots written in {seconds:.2f} s (one token hash shared by all)")
    raw = measure("raw grpc.aio", args, folder, token_file, [*_module(), "--role", "raw"])
    serve = ["serve", "--port", "0", "--admin-token", ADMIN_TOKEN, "--no-web", "--db"]
    referee_role_args = [*_module(), "--role", "referee", "--"]
    referee = measure("referee", args, folder, token_file, [*referee_role_args, *serve, database])
    traced = None
    if not args.no_trace:  # on the same database: the referee released its lease as it stopped
        trace = ["--role", "referee", "--trace-folder", str(folder), "--"]
        traced = measure(
            "referee under tracemalloc",
            args,
            folder,
            token_file,
            [*_module(), *trace, *serve, database],
        )
    problems = report(raw, referee, traced)
    for problem in problems:
        print(f"idle_bots_bench: error: {problem}", file=sys.stderr)
    return 1 if problems else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="The referee's RSS with N idle connected bots (authenticated, welcomed, "
        "no match), over loopback, against plain grpc.aio, and where it goes.",
        epilog=f"The floor (issue 14): {FLOOR_MIB:g} MiB RSS with 1,000 idle bots; the goal "
        f"{GOAL_RATIO:g}x plain grpc.aio's.",
    )
    parser.add_argument(
        "--bots", type=int, default=1000, metavar="N", help="bots to connect (default 1000)"
    )
    parser.add_argument(
        "--channels",
        type=int,
        metavar="C",
        help="channels (TCP connections) the client spreads its streams over (default: N)",
    )
    parser.add_argument(
        "--settle",
        type=float,
        default=3.0,
        metavar="S",
        help="seconds to wait after the last welcome before reading the RSS (default 3)",
    )
    parser.add_argument(
        "--max-seconds",
        type=float,
        default=280.0,
        metavar="T",
        help="give up (exit 1) if a server's logins take longer than T seconds (default 280)",
    )
    parser.add_argument(
        "--no-trace", action="store_true", help="skip the third run (the referee under tracemalloc)"
    )
    internal = argparse.SUPPRESS
    parser.add_argument("--role", choices=("client", "raw", "referee"), help=internal)
    parser.add_argument("--server", help=internal)
    parser.add_argument("--token-file", type=Path, help=internal)
    parser.add_argument("--hold", type=float, help=internal)
    parser.add_argument("--trace-folder", type=Path, help=internal)
    parser.add_argument("serve", nargs=argparse.REMAINDER, help=internal)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.channels is None:
        args.channels = args.bots
    if args.role == "raw":
        return raw_role()
    if args.role == "referee":
        return referee_role([a for a in args.serve if a != "--"], args.trace_folder)
    if args.role == "client":
        import asyncio  # noqa: PLC0415

        client = client_main(
            server=args.server,
            bots=args.bots,
            channels=args.channels,
            token=args.token_file.read_text(),
            hold=args.hold,
        )
        asyncio.run(client)
        return 0
    if args.bots < 1 or not 1 <= args.channels <= args.bots:
        print("idle_bots_bench: error: need 1 <= --channels <= --bots", file=sys.stderr)
        return 2
    print(
        f"parameters: {args.bots} bots over {args.channels} channels; settle {args.settle:g} s; "
        f"max {args.max_seconds:g} s per server"
    )
    print(f"machine: {load_text()} at the start")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="idle-bots-bench-") as name:
        folder = Path(name)
        try:
            status = run(args, folder)
        except (BenchError, OSError, subprocess.TimeoutExpired) as exc:
            print(f"idle_bots_bench: error: {exc}", file=sys.stderr)
            for log in sorted(folder.glob("*.log")):
                print(f"--- {log.name} (end):\n{log.read_text()[-1500:]}", file=sys.stderr)
            return 1
    print(f"machine: {load_text()} at the end; the run took {time.perf_counter() - started:.0f} s")
    return status


if __name__ == "__main__":
    sys.exit(main())

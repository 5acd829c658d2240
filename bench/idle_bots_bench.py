"""The referee's memory with 1,000 idle connected bots (issue 3's floor: under 150 MiB RSS).

Usage::

    python bench/idle_bots_bench.py [--bots N] [--channels C] [--settle S] [--max-seconds T]

``domino-arena serve --port 0`` runs as a subprocess on a fresh SQLite file holding N bots,
written directly through :mod:`domino_arena.server.store`: one token is hashed once
(``bots.hash_token``) and stored for every bot, so the referee still checks each login in
full.

One client subprocess opens N raw ``BotService.Play`` streams over C channels (by default one
channel, so one TCP connection, per bot, as N real bots would), sends each a ``Hello`` and
waits for its ``Welcome``: all logins are sent at once, like bots coming back after a referee
restart. Nothing else happens on the streams: no match is started.

The referee's RSS (``VmRSS`` in ``/proc/<pid>/status``) is read when it is ready, every 0.2 s
while the bots log in (the peak), and S seconds after the last welcome, when all bots are idle
(that is the figure the floor is about); ``ListConnected`` must list all N. Then the client
closes its streams and the referee gets SIGTERM and must exit 0.

The run stops by itself (``--max-seconds``, exit 1 when it runs out). It exits 1 on an error
(a process died, a login was refused, a bot is missing), never on a missed floor: it prints
"below floor".
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import queue
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final

import grpc

from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc
from domino_arena.v1 import referee_pb2 as pb
from domino_arena.v1 import referee_pb2_grpc as pb_grpc
from tests.fakes.processes import memory

ADMIN_TOKEN: Final = "bench-admin-token"
"""The admin token the benchmark's referee is started with."""
ADMIN_METADATA: Final = (("authorization", f"Bearer {ADMIN_TOKEN}"),)
FLOOR_MIB: Final = 150.0
STARTUP_WAIT: Final = 60.0
"""Seconds the referee may take to start, or the client to connect its channels."""
PREFIX: Final = "idle-"
CLOCK_TICKS: Final = os.sysconf("SC_CLK_TCK")
MIB: Final = 1024 * 1024


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


# -- the client (role "client") -------------------------------------------------------------------


async def client_main(*, server: str, bots: int, channels: int, token: str, hold: float) -> None:
    """Log ``bots`` bots in over ``channels`` channels, report, hold until stdin closes.

    Prints ``welcomed N SECONDS`` and one JSON line of login latencies once every bot is in,
    then keeps the streams open (idle) until its stdin is closed or ``hold`` seconds pass.
    """
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
    start = time.perf_counter()

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
        return time.perf_counter() - start

    latencies = sorted(await asyncio.gather(*(login(i) for i in range(bots))))
    took = time.perf_counter() - start
    print(f"welcomed {bots} {took:.3f}", flush=True)
    print(
        json.dumps(
            {
                "seconds": took,
                "p50": statistics.median(latencies),
                "p95": latencies[int(0.95 * (len(latencies) - 1))],
                "first": latencies[0],
                "last": latencies[-1],
            }
        ),
        flush=True,
    )
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
    """What the run measured."""

    bots: int
    channels: int
    setup_seconds: float = 0.0
    start_rss: int = 0
    login_peak_rss: int = 0
    idle_rss: int = 0
    idle_anon: int = 0
    idle_hwm: int = 0
    idle_threads: int = 0
    login: dict[str, float] = field(default_factory=dict)
    login_cpu: float = 0.0
    listed: int = 0
    exit_code: int | None = None
    stop_seconds: float = 0.0


def run(args: argparse.Namespace, folder: Path) -> Figures:
    figures = Figures(args.bots, args.channels)
    database = f"sqlite:///{folder / 'referee.db'}"
    token, figures.setup_seconds = create_bots(database, args.bots)
    print(
        f"setup: {args.bots} bots written to the database in {figures.setup_seconds:.2f} s "
        "(one token hash shared by all)"
    )
    serve = [
        sys.executable,
        "-m",
        "domino_arena.server.cli.main",
        "serve",
        "--port",
        "0",
        "--admin-token",
        ADMIN_TOKEN,
    ]
    referee, referee_out = start([*serve, "--db", database], folder / "referee.log")
    client: subprocess.Popen[str] | None = None
    client_out: Output | None = None
    try:
        line = referee_out.wait("serving on 127.0.0.1:", STARTUP_WAIT)
        address = f"127.0.0.1:{int(line.rsplit(':', 1)[1])}"
        time.sleep(1.0)  # let the start-up settle before the baseline
        figures.start_rss = memory(referee.pid)["VmRSS"]
        print(
            f"referee: {address}, pid {referee.pid}, "
            f"RSS {figures.start_rss / MIB:.1f} MiB with no bot"
        )

        client_args = ["--role", "client", "--server", address, "--token-file"]
        token_file = folder / "token"
        token_file.write_text(token)
        client_args += [str(token_file), "--bots", str(args.bots)]
        client_args += ["--channels", str(args.channels), "--hold", str(args.max_seconds)]
        script = str(Path(__file__).resolve())
        client, client_out = start([sys.executable, script, *client_args], folder / "client.log")
        client_out.wait("channels ready", STARTUP_WAIT)
        cpu = cpu_seconds(referee.pid)
        peak = [0]

        def sample() -> None:
            if referee.poll() is not None:
                raise BenchError(f"the referee exited with status {referee.returncode}")
            peak[0] = max(peak[0], memory(referee.pid)["VmRSS"])

        print(f"client: pid {client.pid}; {args.bots} logins sent at once...", flush=True)
        client_out.wait("welcomed", args.max_seconds, on_tick=sample)
        sample()
        figures.login_cpu = cpu_seconds(referee.pid) - cpu
        figures.login = json.loads(client_out.wait("{", 10.0))
        figures.login_peak_rss = peak[0]
        print(
            f"logins: {args.bots} in {figures.login['seconds']:.1f} s; referee CPU "
            f"{figures.login_cpu:.1f} s; settling {args.settle:g} s...",
            flush=True,
        )

        time.sleep(args.settle)
        with grpc.insecure_channel(address) as channel:
            admin = admin_pb_grpc.AdminServiceStub(channel)
            listed = admin.ListConnected(
                admin_pb.ListConnectedRequest(), metadata=ADMIN_METADATA, timeout=30
            )
        figures.listed = sum(bot.name.startswith(PREFIX) for bot in listed.bots)
        status = memory(referee.pid)
        figures.idle_rss = status["VmRSS"]
        figures.idle_anon = status.get("RssAnon", 0)
        figures.idle_hwm = status["VmHWM"]
        figures.idle_threads = status.get("Threads", 0)

        assert client.stdin is not None
        client.stdin.close()  # the client closes its streams and exits
        client.wait(30.0)
        stopping = time.perf_counter()
        referee.send_signal(signal.SIGTERM)
        figures.exit_code = referee.wait(30.0)
        figures.stop_seconds = time.perf_counter() - stopping
    finally:
        for process in (client, referee):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
        for output in (client_out, referee_out):
            if output is not None:
                output.close()
    return figures


def report(figures: Figures) -> list[str]:
    """Print the table; return the problems found (errors, not missed floors)."""
    login = figures.login
    n = figures.bots
    growth = figures.idle_rss - figures.start_rss
    rows = [
        ("bots connected (ListConnected)", f"{figures.listed} of {n}"),
        (
            "logins, all sent at once",
            f"{login['seconds']:.1f} s ({n / login['seconds']:.0f}/s); welcome after "
            f"p50 {login['p50']:.1f} s, p95 {login['p95']:.1f} s, last {login['last']:.1f} s",
        ),
        ("referee CPU during the logins", f"{figures.login_cpu:.1f} s"),
        ("referee RSS, started, no bot", f"{figures.start_rss / MIB:.1f} MiB"),
        ("referee RSS, highest sample during logins", f"{figures.login_peak_rss / MIB:.1f} MiB"),
        (f"referee RSS, {n} idle bots  <- the floor", f"{figures.idle_rss / MIB:.1f} MiB"),
        ("  of which anonymous (RssAnon)", f"{figures.idle_anon / MIB:.1f} MiB"),
        ("  growth over no bot, per bot", f"{growth / max(1, n) / 1024:.1f} KiB"),
        ("referee peak RSS (VmHWM)", f"{figures.idle_hwm / MIB:.1f} MiB"),
        ("referee threads", f"{figures.idle_threads}"),
        (
            "SIGTERM with the bots gone",
            f"exit status {figures.exit_code} after {figures.stop_seconds:.1f} s",
        ),
    ]
    width = max(len(name) for name, _ in rows)
    print()
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    verdict = "ok" if figures.idle_rss < FLOOR_MIB * MIB else "below floor"
    print(
        f"floor: RSS under {FLOOR_MIB:g} MiB with {n} idle bots: "
        f"{figures.idle_rss / MIB:.1f} MiB, {verdict}"
    )
    problems = []
    if figures.listed != n:
        problems.append(f"ListConnected lists {figures.listed} of the {n} bots")
    if figures.exit_code != 0:
        problems.append(f"the referee exited with status {figures.exit_code} on SIGTERM")
    return problems


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="The referee's RSS with N idle connected bots (authenticated, welcomed, "
        "no match), over loopback.",
        epilog=f"The floor (issue 3): under {FLOOR_MIB:g} MiB RSS with 1,000 idle bots.",
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
        help="give up (exit 1) if the logins take longer than T seconds (default 280)",
    )
    internal = argparse.SUPPRESS
    parser.add_argument("--role", choices=("client",), help=internal)
    parser.add_argument("--server", help=internal)
    parser.add_argument("--token-file", type=Path, help=internal)
    parser.add_argument("--hold", type=float, help=internal)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.channels is None:
        args.channels = args.bots
    if args.role == "client":
        asyncio.run(
            client_main(
                server=args.server,
                bots=args.bots,
                channels=args.channels,
                token=args.token_file.read_text(),
                hold=args.hold,
            )
        )
        return 0
    if args.bots < 1 or not 1 <= args.channels <= args.bots:
        print("idle_bots_bench: error: need 1 <= --channels <= --bots", file=sys.stderr)
        return 2
    print(
        f"parameters: {args.bots} bots over {args.channels} channels; settle {args.settle:g} s; "
        f"max {args.max_seconds:g} s"
    )
    print(f"machine: {load_text()} at the start")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="idle-bots-bench-") as folder:
        try:
            figures = run(args, Path(folder))
        except (BenchError, OSError, grpc.RpcError, subprocess.TimeoutExpired) as exc:
            print(f"idle_bots_bench: error: {exc}", file=sys.stderr)
            for name in ("referee.log", "client.log"):
                log = Path(folder) / name
                if log.exists():
                    print(f"--- {name} (end):\n{log.read_text()[-1500:]}", file=sys.stderr)
            return 1
    problems = report(figures)
    print(f"machine: {load_text()} at the end; the run took {time.perf_counter() - started:.0f} s")
    for problem in problems:
        print(f"idle_bots_bench: error: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

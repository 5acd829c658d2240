"""The soak: a real referee kept busy for minutes by 1,000 connected bots and 256 matches.

Usage (from the repository root)::

    python -m bench.soak --bots 1000 --matches 256 --minutes 10 [--workers 4] [--report F]

``domino-arena serve --port 0`` runs as a subprocess on a fresh SQLite file in a temporary
folder (loopback only, metrics on a free port) holding N bots written straight through the
store (one token, hashed once, as in ``bench/idle_bots_bench.py``). ``--workers`` processes run
N/W bots each, every one an SDK client (``domino_arena.sdk.run_async``) with the random house
bot answered inline. Once every bot is connected (the logins' time is reported apart), one
``AdminService.StartLadder`` with concurrency M keeps M rated games of Passing (2 players)
going among the connected bots for the whole run.

Every ``--interval`` seconds (10) the script records: the referee's RSS, the ladder's games
finished and running, the bots connected, the faults the referee charged (its metrics), the
errors the bots saw (faults told to them, and every warning or error the SDK logged:
reconnections, refusals), the gRPC errors of the script's own admin calls, and the matches
that look stuck: open at some bot, with no message to any of its bots for more than
``--stuck-after`` times the move time. At the end it prints errors, stuck matches, RSS
min/median/max over the samples, games/s, and writes every sample and the summary as JSON
(``--report``, default ``soak-report.json``).

Bounded: it stops after ``--minutes`` (then the ladder is stopped and every process gets
SIGTERM, then SIGKILL if it lingers); on Ctrl-C or any error every process it started is
ended too. The exit status is 1 when a process died, a bot saw an error, a match faulted or
stuck, or an admin call failed; 0 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import logging
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Final

import grpc
from prometheus_client.parser import text_string_to_metric_families

from bench.idle_bots_bench import MIB, BenchError, Output, create_bots, load_text, start
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.processes import memory

ADMIN_TOKEN: Final = "soak-admin-token"
ADMIN_METADATA: Final = (("authorization", f"Bearer {ADMIN_TOKEN}"),)
PREFIX: Final = "soak-"
GAME: Final = "passing"
STARTUP_WAIT: Final = 60.0
LOGIN_WAIT: Final = 600.0
"""Seconds every bot has to log in before the clock starts (a loaded machine logs in slowly)."""
STOP_WAIT: Final = 30.0
"""Seconds a process has to exit after SIGTERM before it is killed."""
CALL_TIMEOUT: Final = 30.0


# -- the bots (role "bots") -----------------------------------------------------------------------


@dataclass
class Activity:
    """What one worker's bots saw: the matches open and their last message, faults, errors."""

    last_seen: dict[str, float] = field(default_factory=dict)
    """Open match id -> ``time.monotonic()`` of its last message to one of this worker's bots."""
    ended: int = 0
    faults: int = 0
    errors: int = 0
    terminations: dict[str, int] = field(default_factory=dict)

    def touch(self, match_id: str) -> None:
        self.last_seen[match_id] = time.monotonic()


class ErrorCounter(logging.Handler):
    """Counts every warning or error the SDK logs (a lost stream, a refusal, a bad reply)."""

    def __init__(self, activity: Activity) -> None:
        super().__init__(logging.WARNING)
        self.activity = activity
        self.first: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.activity.errors += 1
        if len(self.first) < 5:
            self.first.append(record.getMessage()[:300])


def soak_bot_class() -> type[Any]:
    """The random house bot, answered inline, reporting what it sees to the worker's Activity.

    Built here so that the script's own role (the referee side) imports no bot code.
    """
    from domino_arena.bots.random_bot import RandomBot  # noqa: PLC0415
    from domino_arena.sdk.bot import FaultInfo, MatchEndInfo, MatchEvent, MatchStartInfo  # noqa: PLC0415
    from domino_arena.sdk.rules import Action, Observation  # noqa: PLC0415

    class SoakBot(RandomBot):
        threaded: ClassVar[bool] = False

        def __init__(self, seed: int, activity: Activity) -> None:
            super().__init__(seed)
            self.activity = activity
            self.match_id = ""

        def on_match_start(self, info: MatchStartInfo) -> None:
            self.match_id = info.match_id
            self.activity.touch(info.match_id)

        def choose(self, observation: Observation) -> Action:
            self.activity.touch(self.match_id)
            return super().choose(observation)

        def on_event(self, event: MatchEvent) -> None:
            self.activity.touch(event.match_id)

        def on_fault(self, fault: FaultInfo) -> None:
            self.activity.faults += 1

        def on_match_end(self, result: MatchEndInfo) -> None:
            activity = self.activity
            activity.last_seen.pop(result.match_id, None)
            activity.ended += 1
            word = str(result.termination)
            activity.terminations[word] = activity.terminations.get(word, 0) + 1

    return SoakBot


async def bots_main(server: str, token: str, first: int, count: int, interval: float) -> None:
    """Run bots ``first`` .. ``first + count - 1``; print a status line every ``interval`` s."""
    from domino_arena.sdk import run_async  # noqa: PLC0415

    activity = Activity()
    counter = ErrorCounter(activity)
    sdk_logger = logging.getLogger("domino_arena.sdk")
    sdk_logger.addHandler(counter)
    sdk_logger.propagate = False
    kind = soak_bot_class()
    seeds = itertools.count(first * 1_000_003)

    def new_bot() -> Any:
        return kind(next(seeds), activity)

    players = asyncio.gather(
        *(
            run_async(
                new_bot,
                server=server,
                name=f"{PREFIX}{index:05d}",
                token=token,
                games=[GAME],
                rng=random.Random(index),
            )
            for index in range(first, first + count)
        )
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)

    def status() -> None:
        now = time.monotonic()
        line = {
            "now": now,
            "open": {m: now - seen for m, seen in activity.last_seen.items()},
            "ended": activity.ended,
            "faults": activity.faults,
            "errors": activity.errors,
            "first_errors": counter.first,
            "terminations": activity.terminations,
        }
        print(json.dumps(line), flush=True)

    while not stop.is_set() and not players.done():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), interval)
        status()
    if players.done():
        players.result()  # raises what ended the bots early
    players.cancel()
    await asyncio.gather(players, return_exceptions=True)
    status()


# -- the referee's side ---------------------------------------------------------------------------


def metric_values(url: str) -> dict[str, float]:
    """The referee's metrics, each sample summed over its labels, by sample name."""
    with urllib.request.urlopen(url, timeout=CALL_TIMEOUT) as response:
        text = response.read().decode()
    values: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            values[sample.name] = values.get(sample.name, 0.0) + sample.value
    return values


@dataclass
class Sample:
    """One look at the run, every ``--interval`` seconds."""

    seconds: float
    rss_mib: float
    finished: int
    running: int
    connected: int
    referee_faults: int
    bot_faults: int
    bot_errors: int
    grpc_errors: int
    stuck: int
    oldest_silence: float
    """Seconds since the last message of the open match that has been silent longest."""


@dataclass
class Summary:
    """The run's outcome, as printed and written to the report."""

    parameters: dict[str, Any]
    samples: list[Sample] = field(default_factory=list)
    login_seconds: float = 0.0
    """From the workers' start until every bot was connected (before the clock started)."""
    games: int = 0
    games_per_second: float = 0.0
    rss_mib: dict[str, float] = field(default_factory=dict)
    stuck_matches: list[str] = field(default_factory=list)
    terminations: dict[str, int] = field(default_factory=dict)
    first_bot_errors: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    exit_codes: dict[str, int | None] = field(default_factory=dict)


class Run:
    """The processes of one soak and what it has seen of them."""

    def __init__(self, args: argparse.Namespace, folder: Path) -> None:
        self.args = args
        self.folder = folder
        self.processes: dict[str, subprocess.Popen[str]] = {}
        self.outputs: dict[str, Output] = {}
        self.status: dict[str, dict[str, Any]] = {}
        self.grpc_errors = 0
        self.stuck: set[str] = set()
        from domino_arena.server.play.timecontrol import TimeControl  # noqa: PLC0415

        self.time_control = TimeControl.parse(args.time_control)
        self.stuck_seconds = args.stuck_after * self.time_control.move
        self.summary = Summary(parameters=vars(args).copy())

    def start(self, name: str, argv: list[str]) -> Output:
        process, output = start(argv, self.folder / f"{name}.log")
        self.processes[name], self.outputs[name] = process, output
        return output

    def serve(self) -> tuple[str, str]:
        """Start the referee; return its address and the URL of its metrics."""
        database = f"sqlite:///{self.folder / 'soak.db'}"
        self.token, _ = create_bots(database, self.args.bots, PREFIX)
        serve = [sys.executable, "-m", "domino_arena.server.cli.main", "serve", "--port", "0"]
        serve += ["--db", database, "--admin-token", ADMIN_TOKEN, "--metrics-port", "0"]
        output = self.start("referee", serve)
        line = output.wait("metrics on http://", STARTUP_WAIT)
        metrics = line.split("metrics on ", 1)[1].strip()
        line = output.wait("serving on 127.0.0.1:", STARTUP_WAIT)
        return f"127.0.0.1:{int(line.rsplit(':', 1)[1])}", metrics

    def start_workers(self, address: str) -> None:
        args = self.args
        (self.folder / "token").write_text(self.token)
        share, extra = divmod(args.bots, args.workers)
        first = 0
        for worker in range(args.workers):
            count = share + (1 if worker < extra else 0)
            argv = [sys.executable, "-m", "bench.soak", "--role", "bots", "--server", address]
            argv += ["--token-file", str(self.folder / "token"), "--first", str(first)]
            argv += ["--count", str(count), "--interval", str(min(args.interval, 5.0))]
            self.start(f"bots-{worker}", argv)
            first += count

    def read_status(self, *, final: bool = False) -> None:
        """Take the newest status line of every worker (without waiting); ``final``: after
        the stop, when every worker has ended."""
        for name, output in self.outputs.items():
            if not name.startswith("bots-"):
                continue
            while not output.lines.empty():
                line = output.lines.get_nowait()
                if line is None:
                    if final:
                        break
                    raise BenchError(f"{name} exited (status {self.processes[name].poll()})")
                if line.startswith("{"):
                    self.status[name] = json.loads(line)

    def check_alive(self) -> None:
        for name, process in self.processes.items():
            if process.poll() is not None:
                raise BenchError(f"{name} exited with status {process.returncode}")

    def sample(self, started: float, admin: Any, metrics: str) -> Sample:
        self.check_alive()
        self.read_status()
        finished = running = 0
        try:
            ladders = admin.ListLadders(
                admin_pb.ListLaddersRequest(), metadata=ADMIN_METADATA, timeout=CALL_TIMEOUT
            )
            for ladder in ladders.ladders:
                finished += ladder.finished
                running += ladder.started - ladder.finished
        except grpc.RpcError as exc:
            self.grpc_errors += 1
            print(f"soak: ListLadders failed: {exc.code()} {exc.details()}", file=sys.stderr)
        values = metric_values(metrics)
        silences: dict[str, float] = {}
        for status in self.status.values():
            for match, silent in status["open"].items():
                silences[match] = min(silent, silences.get(match, silent))
        stuck = {m for m, silent in silences.items() if silent > self.stuck_seconds}
        self.stuck |= stuck
        return Sample(
            seconds=round(time.monotonic() - started, 1),
            rss_mib=round(memory(self.processes["referee"].pid)["VmRSS"] / MIB, 1),
            finished=finished,
            running=running,
            connected=int(values.get("domino_arena_bots_connected", 0)),
            referee_faults=int(values.get("domino_arena_faults_total", 0)),
            bot_faults=sum(s["faults"] for s in self.status.values()),
            bot_errors=sum(s["errors"] for s in self.status.values()),
            grpc_errors=self.grpc_errors,
            stuck=len(stuck),
            oldest_silence=round(max(silences.values(), default=0.0), 1),
        )

    def play(self) -> None:
        """Start everything, sample until the time is up, stop the ladder."""
        args = self.args
        address, metrics = self.serve()
        print(f"referee: {address}, pid {self.processes['referee'].pid}; metrics {metrics}")
        self.start_workers(address)
        self.wait_logins(metrics)
        from domino_arena.sdk.rules import make_game  # noqa: PLC0415
        from domino_arena.sdk.wire import game_to_proto  # noqa: PLC0415
        from domino_arena.server.net.wire import time_control_to_proto  # noqa: PLC0415

        request = admin_pb.StartLadderRequest(
            game=game_to_proto(make_game(GAME, players=2)),
            time_control=time_control_to_proto(self.time_control),
            fault_policy=pb.FAULT_POLICY_SUBSTITUTE,
            concurrency=args.matches,
            seed=args.seed,
        )
        with grpc.insecure_channel(address) as channel:
            admin = admin_pb_grpc.AdminServiceStub(channel)
            admin.StartLadder(request, metadata=ADMIN_METADATA, timeout=CALL_TIMEOUT)
            started = time.monotonic()
            end = started + args.minutes * 60.0
            header = "  time    RSS MiB  finished  running  bots  faults  errors  grpc  stuck"
            print(header, flush=True)
            while True:
                now = time.monotonic()
                if now >= end:
                    break
                self.wait(min(args.interval, end - now))
                sample = self.sample(started, admin, metrics)
                self.summary.samples.append(sample)
                print(
                    f"{sample.seconds:6.0f}s {sample.rss_mib:9.1f} {sample.finished:9d} "
                    f"{sample.running:8d} {sample.connected:5d} {sample.referee_faults:7d} "
                    f"{sample.bot_errors + sample.bot_faults:7d} {sample.grpc_errors:5d} "
                    f"{sample.stuck:6d}",
                    flush=True,
                )
            elapsed = time.monotonic() - started
            try:
                admin.StopLadder(
                    admin_pb.StopLadderRequest(game=GAME),
                    metadata=ADMIN_METADATA,
                    timeout=CALL_TIMEOUT,
                )
            except grpc.RpcError as exc:
                self.grpc_errors += 1
                print(f"soak: StopLadder failed: {exc.code()} {exc.details()}", file=sys.stderr)
        self.summarise(elapsed)

    def wait_logins(self, metrics: str) -> None:
        """Wait until every bot is connected (the referee's gauge); the clock starts after."""
        started = time.monotonic()
        connected = 0
        while connected < self.args.bots:
            if time.monotonic() - started > LOGIN_WAIT:
                raise BenchError(
                    f"{connected} of {self.args.bots} bots logged in after {LOGIN_WAIT:g} s"
                )
            self.wait(1.0)
            connected = int(metric_values(metrics).get("domino_arena_bots_connected", 0))
        took = time.monotonic() - started
        self.summary.login_seconds = round(took, 1)
        print(f"logins: {connected} bots connected in {took:.1f} s", flush=True)

    def wait(self, seconds: float) -> None:
        """Wait ``seconds``, returning early (to fail) if a process exits."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            self.check_alive()
            time.sleep(min(0.5, left))

    def summarise(self, elapsed: float) -> None:
        summary = self.summary
        samples = summary.samples
        last = samples[-1] if samples else None
        summary.games = last.finished if last else 0
        summary.games_per_second = round(summary.games / elapsed, 2) if elapsed else 0.0
        rss = [s.rss_mib for s in samples]
        if rss:
            summary.rss_mib = {
                "min": min(rss),
                "median": statistics.median(rss),
                "max": max(rss),
            }
        summary.stuck_matches = sorted(self.stuck)
        if last is not None:
            if last.bot_errors or last.bot_faults:
                summary.problems.append(
                    f"the bots saw {last.bot_errors} errors and {last.bot_faults} faults"
                )
            if last.referee_faults:
                summary.problems.append(f"the referee charged {last.referee_faults} faults")
        if self.grpc_errors:
            summary.problems.append(f"{self.grpc_errors} admin calls failed")
        if self.stuck:
            summary.problems.append(
                f"{len(self.stuck)} matches stuck (silent > {self.stuck_seconds:g} s)"
            )

    def stop(self) -> None:
        """SIGTERM every process still running (bots first), SIGKILL what lingers."""
        order = [name for name in self.processes if name != "referee"] + ["referee"]
        for group in (order[:-1], order[-1:]):
            for name in group:
                process = self.processes.get(name)
                if process is not None and process.poll() is None:
                    process.send_signal(signal.SIGTERM)
            for name in group:
                process = self.processes.get(name)
                if process is None:
                    continue
                try:
                    self.summary.exit_codes[name] = process.wait(STOP_WAIT)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
                    self.summary.exit_codes[name] = None
                    self.summary.problems.append(f"{name} did not stop on SIGTERM: killed")
        for output in self.outputs.values():
            output.close()
        self.read_status(final=True)
        summary = self.summary
        for status in self.status.values():  # the workers' last lines, written as they stopped
            for word, count in status["terminations"].items():
                summary.terminations[word] = summary.terminations.get(word, 0) + count
            summary.first_bot_errors += status["first_errors"]


def report(summary: Summary, path: Path) -> None:
    rss = summary.rss_mib
    print()
    print(f"logins: every bot connected {summary.login_seconds} s after the workers started")
    print(f"games finished: {summary.games} ({summary.games_per_second} games/s)")
    if rss:
        print(
            f"referee RSS: min {rss['min']:.1f} MiB, median {rss['median']:.1f} MiB, "
            f"max {rss['max']:.1f} MiB"
        )
    print(f"match ends the bots were told of (one per seat): {summary.terminations}")
    print(f"stuck matches: {len(summary.stuck_matches)}")
    for line in summary.first_bot_errors[:5]:
        print(f"  a bot's error: {line}")
    print(f"exit codes: {summary.exit_codes}")
    path.write_text(json.dumps(asdict(summary), indent=2, default=str) + "\n")
    print(f"report written to {path}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.soak",
        description="A real referee kept busy by many bots and matches for minutes: RSS, "
        "throughput, errors and stuck matches over time.",
    )
    parser.add_argument("--bots", type=int, default=1000, metavar="N", help="bots (1000)")
    parser.add_argument(
        "--matches", type=int, default=256, metavar="M", help="concurrent ladder games (256)"
    )
    parser.add_argument(
        "--minutes", type=float, default=10.0, metavar="T", help="duration in minutes (10)"
    )
    parser.add_argument("--workers", type=int, default=4, metavar="W", help="bot processes (4)")
    parser.add_argument(
        "--interval", type=float, default=10.0, metavar="S", help="seconds between samples (10)"
    )
    parser.add_argument(
        "--time-control",
        default="5s+30s/1s",
        metavar="TC",
        help="the games' time control, MOVE+BANK/GRACE (5s+30s/1s: generous, so a loaded "
        "machine does not fault the bots)",
    )
    parser.add_argument(
        "--stuck-after",
        type=float,
        default=10.0,
        metavar="K",
        help="a match is stuck when its bots hear nothing for K x the move time (10)",
    )
    parser.add_argument("--seed", type=int, default=1, metavar="S", help="the ladder's seed (1)")
    parser.add_argument(
        "--report",
        type=Path,
        default=Path("soak-report.json"),
        metavar="FILE",
        help="the JSON report (soak-report.json)",
    )
    internal = argparse.SUPPRESS
    parser.add_argument("--role", choices=("bots",), help=internal)
    parser.add_argument("--server", help=internal)
    parser.add_argument("--token-file", type=Path, help=internal)
    parser.add_argument("--first", type=int, help=internal)
    parser.add_argument("--count", type=int, help=internal)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.role == "bots":
        logging.basicConfig(level=logging.ERROR)
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(
                bots_main(
                    args.server, args.token_file.read_text(), args.first, args.count, args.interval
                )
            )
        return 0
    problems = [
        f"{flag} must be {rule}"
        for flag, ok, rule in (
            ("--bots", args.bots >= 2, "2 or more"),
            ("--matches", 1 <= args.matches <= 1024, "1-1024"),
            ("--workers", 1 <= args.workers <= args.bots, "1 to --bots"),
            ("--minutes", args.minutes > 0, "more than 0"),
            ("--interval", args.interval > 0, "more than 0"),
        )
        if not ok
    ]
    if problems:
        print(f"soak: error: {'; '.join(problems)}", file=sys.stderr)
        return 2
    print(
        f"soak: {args.bots} bots in {args.workers} processes, {args.matches} ladder games at "
        f"once, {args.minutes:g} min, time control {args.time_control}; {load_text()}",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="soak-") as folder:
        run = Run(args, Path(folder))
        failed = False
        try:
            run.play()
        except (BenchError, OSError, grpc.RpcError) as exc:
            failed = True
            run.summary.problems.append(f"error: {exc}")
            print(f"soak: error: {exc}", file=sys.stderr)
        except KeyboardInterrupt:
            failed = True
            run.summary.problems.append("interrupted")
            print("soak: interrupted: stopping every process", file=sys.stderr)
        finally:
            run.stop()
        if failed:
            for name in run.processes:
                log = Path(folder) / f"{name}.log"
                if log.exists():
                    print(f"--- {name}.log (end):\n{log.read_text()[-1200:]}", file=sys.stderr)
    report(run.summary, args.report)
    for problem in run.summary.problems:
        print(f"soak: problem: {problem}", file=sys.stderr)
    return 1 if run.summary.problems else 0


if __name__ == "__main__":
    sys.exit(main())

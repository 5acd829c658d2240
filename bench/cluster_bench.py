"""Moves per second, CPU per move and latency of a scaled-out arena against one referee.

Usage (from the repository root)::

    python bench/cluster_bench.py [--matches 32,96] [--hosts 1,2,3] [--seconds S] [--bots K]
                                  [--latency-seconds S] [--idle-seconds S] [--no-sqlite]
                                  [--quick] [--logs DIR] [--json FILE] [--profile ROLE]
                                  [--rounds R] [--nats URL] [--pg URL] [--max-seconds T]

Every *setup* below runs in turn, each on a fresh database, with its own server processes
(``domino-arena serve`` subprocesses on loopback, port 0) and ONE process of K random SDK bots
(the bots of ``bench/referee_bench.py``: ``run_async`` per bot name, a new bot object per
match, ``choose`` answered inline on the event loop):

- ``referee (sqlite)``: ``serve`` plain on an SQLite file (skip with ``--no-sqlite``): the
  figure ``referee_bench.py`` measures, for reference;
- ``referee (pg)``: ``serve`` plain on a fresh PostgreSQL database: **the baseline**, every ratio
  is against it;
- ``N hosts + N gw``: N ``serve --role host`` and N ``serve --role gateway`` processes, one
  NATS (``--nats``, a ``--cluster`` name of its own per setup), a fresh PostgreSQL database;
  bot i connects to gateway ``i mod N`` (a load balancer's spread: a pair's two bots are often
  on two gateways);
- ``N hosts + 1 gw`` (N > 1): the same with every bot on a single gateway.

A fresh database is ``CREATE DATABASE`` through ``--pg`` (default the machine's ``test``
database, trust auth) and is dropped (``WITH (FORCE)``) when the setup ends, whatever happens.

**Throughput**: for each level M of ``--matches``, the script keeps M ``AdminService.RunMatch``
calls in flight (``referee_bench.run_ours``: M lanes, lane i plays bot pair ``i mod K/2``,
starting its next match when one ends, for ``--seconds``, then waiting for the last) over the
hosts' admin ports, lane i on host ``i mod N``. Passing Game, 2 players, time control
``10s+60s/1s`` so nothing faults. A *move* is a record step with a seat >= 0; moves/s is moves
over the level's wall time, the last matches' tail included.

**CPU per move**: each process's user + system CPU from ``/proc/PID/stat`` over the level,
summed by role and divided by the moves: ``referee``, ``host`` (all hosts), ``gateway`` (all
gateways), ``nats`` (every ``nats-server`` process of the machine, if ``/proc`` lets us read it;
the broker may serve other work too), ``postgres`` (every process named ``postgres``: the
backends of this setup and anything else on that server; a backend that ends during the level
loses its CPU), ``bots``. ``busy`` is the whole machine's CPU, 100% per core; ``others`` is
``busy`` less every role's CPU: what else ran on the machine meanwhile (other work on a shared
machine, the kernel); ``top proc`` is the busiest single process in % of one core (near 100%: a
process bound by its core, as a single referee is). Before the levels, ``--idle-seconds`` with
every bot connected and no match give each role's idle CPU (heartbeats, timers).

**Turnaround** (the latency a bot sees): in the bots' process, for every decision, the time from
the moment a bot's ``choose`` returned in a match (the SDK then writes its reply) to the moment
the next ``choose`` of the same match is called (the SDK has read the next ``ActionRequest``,
for either seat). It spans the bot's SDK writing a reply, the server(s) taking it, applying the
move (and the chance steps after it), asking the next seat, and the SDK reading that request;
the first decision of each match has none. Reported at every throughput level (latency under
load) and, for the setups with at most one host, in a **latency** phase: one match at a time for
``--latency-seconds``: median and p90, and what the gateway adds (the cluster's figure minus
the PostgreSQL referee's).

``--rounds R`` runs every setup R times (all setups, then all again) and reports each setup's
best: per level the round with the most moves/s (with that round's CPU figures), the latency
phase with the lowest median; on a shared machine another process's bursts then stay out of the
comparison, as ``rules_bench.py`` keeps its fastest round. The JSON (``--json``) has every
round's figures too.

``--profile ROLE`` runs every ``host``, ``gateway`` or ``referee`` process under cProfile (the
figures are then not the official ones) and prints the top functions of the first one of each
setup; the ``.prof`` files stay in ``--logs``. Ctrl-C, SIGTERM or an error kills every process
the script started and drops every database it made. Exit status 1 on an error (a process that
died, a match that did not end normally, a fault).
"""

from __future__ import annotations

import sys
from pathlib import Path

if not __package__:  # run as a file: the repository root holds bench/ and tests/
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import argparse
import asyncio
import contextlib
import json
import logging
import os
import signal
import statistics
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, ClassVar, Final

from rich.console import Console
from rich.table import Table

from bench.referee_bench import (
    ADMIN_TOKEN,
    Cluster,
    CycleError,
    InlineRandomBot,
    Lanes,
    Phase,
    busy_percent,
    count_moves,
    cpu_seconds,
    load_text,
    machine_ticks,
    play_until_sigterm,
    print_profile,
    python_command,
    run_guarded,
    stop_process,
    wait_connected,
    wait_for_line,
)
from bench.referee_bench import run_ours as run_lanes
from domino_arena.sdk.bot import MatchEndInfo, MatchStartInfo
from domino_arena.sdk.rules import Action, Observation, make_game
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.cluster import create_database, drop_database

DEFAULT_NATS: Final = "nats://127.0.0.1:4222"
DEFAULT_PG: Final = "postgresql://postgres@127.0.0.1:5432/test"
GAME: Final = "passing"
TIME_CONTROL: Final = "10s+60s/1s"
SERVE: Final = ("-m", "domino_arena.server.cli.main", "serve")
ROLES: Final = ("referee", "host", "gateway", "nats", "postgres", "bots")
SERVER_ROLES: Final = ("referee", "host", "gateway", "nats", "postgres")
"""The roles whose CPU is the arena's side of a move (the bots are the clients)."""
MARK_WAIT: Final = 30.0
"""Seconds the bots' process may take to write its turnarounds when asked."""


# -- the bots' process (role "bots") ------------------------------------------------------------


@dataclass
class Turnarounds:
    """The bots' process's record of turnarounds (see the module's docstring)."""

    last: dict[str, float] = field(default_factory=dict)
    """Match id -> when the last ``choose`` in that match returned (``perf_counter``)."""
    seconds: list[float] = field(default_factory=list)


class TimedBot(InlineRandomBot):
    """The random house bot, answered inline, timing the server's turnaround per match."""

    record: ClassVar[Turnarounds] = Turnarounds()

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.match_id = ""

    def on_match_start(self, info: MatchStartInfo) -> None:
        self.match_id = info.match_id
        super().on_match_start(info)

    def choose(self, observation: Observation) -> Action:
        now = time.perf_counter()
        record = TimedBot.record
        last = record.last.get(self.match_id)
        if last is not None:
            record.seconds.append(now - last)
        action = super().choose(observation)
        record.last[self.match_id] = time.perf_counter()
        return action

    def on_match_end(self, result: MatchEndInfo) -> None:
        TimedBot.record.last.pop(self.match_id, None)
        super().on_match_end(result)


async def bots_main(credentials: Path, folder: Path) -> None:
    """Connect every bot in ``credentials`` (name -> [token, address]) and play until SIGTERM.

    On SIGUSR1 the turnarounds measured since the last SIGUSR1 go to ``folder/turnarounds-N.json``
    (N counts from 1; written whole, then renamed).
    """
    from domino_arena.sdk import run_async  # noqa: PLC0415

    logging.basicConfig(level=logging.WARNING, format="bots: %(levelname)s %(name)s: %(message)s")
    logins: dict[str, list[str]] = json.loads(credentials.read_text())
    seeds = iter(range(1, 1 << 62))

    def new_bot() -> TimedBot:
        return TimedBot(next(seeds))

    players = asyncio.gather(
        *(
            run_async(new_bot, server=address, name=name, token=token, games=[GAME])
            for name, (token, address) in logins.items()
        )
    )
    marks = iter(range(1, 1 << 62))

    def mark() -> None:
        measured, TimedBot.record.seconds = TimedBot.record.seconds, []
        path = folder / f"turnarounds-{next(marks)}.json"
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(measured))
        temporary.rename(path)

    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, mark)
    await play_until_sigterm(players)


class BotsProcess:
    """The running bots' process of a setup, and how to collect its turnarounds."""

    def __init__(self, process: subprocess.Popen[Any], folder: Path) -> None:
        self.process = process
        self.folder = folder
        self.marks = 0

    async def mark(self) -> list[float]:
        """The turnarounds the bots measured since the last mark (or since they started)."""
        self.marks += 1
        path = self.folder / f"turnarounds-{self.marks}.json"
        self.process.send_signal(signal.SIGUSR1)
        deadline = time.monotonic() + MARK_WAIT
        while not path.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise CycleError(f"the bots' process did not write {path.name}")
            await asyncio.sleep(0.02)
        seconds: list[float] = json.loads(path.read_text())
        path.unlink()
        return seconds


# -- /proc ---------------------------------------------------------------------------------------


def pids_named(command: str) -> list[int]:
    """The processes whose ``/proc/PID/comm`` is ``command`` (those we may read)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if (entry / "comm").read_text().strip() == command:
                    found.append(int(entry.name))
    return found


def cpu_of(pids: Sequence[int]) -> dict[int, float]:
    """PID -> CPU seconds so far, for the processes of ``pids`` that are still there."""
    figures = {}
    for pid in pids:
        with contextlib.suppress(OSError, ValueError, IndexError):
            figures[pid] = cpu_seconds(pid)
    return figures


def cpu_since(before: dict[int, float], after: dict[int, float]) -> float:
    """The CPU seconds used between two :func:`cpu_of` readings (a new process: all of its)."""
    return sum(seconds - before.get(pid, 0.0) for pid, seconds in after.items())


def busy_processes(seconds: float, leave_out: set[int]) -> list[str]:
    """The processes (not in ``leave_out``) that used over 5% of a core in ``seconds``."""
    pids = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]
    before = cpu_of(pids)
    time.sleep(seconds)
    after = cpu_of(list(before))
    found = []
    for pid, used in after.items():
        share = (used - before[pid]) / seconds
        if share > 0.05 and pid not in leave_out and pid != os.getpid():
            with contextlib.suppress(OSError):
                command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
                found.append(f"{pid} {100 * share:.0f}% {command.decode(errors='replace')[:80]}")
    return found


# -- databases -----------------------------------------------------------------------------------


class Databases:
    """The PostgreSQL databases the run makes through the admin URL, each dropped at the end."""

    def __init__(self, admin_url: str) -> None:
        self.admin_url = admin_url
        self.made: list[str] = []

    def create(self) -> str:
        """Make a fresh database; return its URL."""
        url = create_database(self.admin_url, "cluster_bench_")
        self.made.append(url)
        return url

    def drop(self, url: str) -> None:
        """Drop the database of ``url`` (one :meth:`create` made), its sessions ended first."""
        if url in self.made:
            drop_database(self.admin_url, url)
            self.made.remove(url)

    def drop_all(self) -> None:
        for url in list(self.made):
            try:
                drop_database(self.admin_url, url)
            except Exception as exc:  # still try the others
                print(f"cluster_bench: could not drop the database {url}: {exc}", file=sys.stderr)
            self.made.remove(url)


# -- setups and what they measured --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Setup:
    """What runs: a single referee (``hosts`` 0) or a cluster of hosts and gateways."""

    name: str
    hosts: int
    gateways: int
    database: str
    """``postgresql`` or ``sqlite``."""

    @property
    def cluster(self) -> bool:
        return self.hosts > 0

    @property
    def latency(self) -> bool:
        """Whether the setup gets a latency phase: a single referee, or one host."""
        return self.hosts <= 1


@dataclass
class Measured:
    """One phase of a setup: ``level`` matches at once."""

    level: int
    phase: Phase
    matches: int
    faults: int
    abnormal: int
    turnarounds: list[float]
    busiest: tuple[str, float] = ("", 0.0)
    """The role of the process that used the most CPU over the phase, and how much (% of one
    core): near 100% is a process that a core bounds."""

    @property
    def median_ms(self) -> float:
        return 1000 * statistics.median(self.turnarounds) if self.turnarounds else 0.0

    @property
    def p90_ms(self) -> float:
        if len(self.turnarounds) < 2:
            return self.median_ms
        return 1000 * statistics.quantiles(self.turnarounds, n=10)[8]

    def summary(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "moves": self.phase.count,
            "seconds": self.phase.seconds,
            "moves_per_second": self.phase.rate,
            "matches": self.matches,
            "faults": self.faults,
            "abnormal": self.abnormal,
            "cpu_seconds": self.phase.cpu,
            "cpu_micros_per_move": {role: self.phase.micros_each(role) for role in self.phase.cpu},
            "busy_percent": self.phase.busy,
            "busiest_process": {"role": self.busiest[0], "core_percent": self.busiest[1]},
            "turnaround_ms": {
                "count": len(self.turnarounds),
                "median": self.median_ms,
                "p90": self.p90_ms,
            },
        }


@dataclass
class SetupResult:
    setup: Setup
    levels: list[Measured] = field(default_factory=list)
    latency: Measured | None = None
    idle: dict[str, float] = field(default_factory=dict)
    """Role -> % of one core its processes used with no match running."""
    exit_codes: dict[str, int | None] = field(default_factory=dict)
    loads: list[tuple[float, float]] = field(default_factory=list)
    """The 1-minute load average before and after the setup ran, once per round."""
    took: float = 0.0

    def at(self, level: int) -> Measured | None:
        return next((m for m in self.levels if m.level == level), None)

    def summary(self) -> dict[str, Any]:
        return {
            "name": self.setup.name,
            "hosts": self.setup.hosts,
            "gateways": self.setup.gateways,
            "database": self.setup.database,
            "levels": [m.summary() for m in self.levels],
            "latency": self.latency.summary() if self.latency else None,
            "idle_core_percent": self.idle,
            "exit_codes": self.exit_codes,
            "load_1m_before_after": self.loads,
            "seconds": self.took,
        }


def best_of(rounds: Sequence[Sequence[SetupResult]]) -> list[SetupResult]:
    """Each setup's best figures over the rounds: per level the round with the most moves/s,
    the latency phase with the lowest median, the idle phase with the least CPU."""
    merged = []
    for index, first in enumerate(rounds[0]):
        same = [played[index] for played in rounds if index < len(played)]
        levels = [
            max((r.levels[number] for r in same), key=lambda m: m.phase.rate)
            for number in range(min(len(r.levels) for r in same))
        ]
        timed = [r.latency for r in same if r.latency is not None and r.latency.turnarounds]
        merged.append(
            SetupResult(
                first.setup,
                levels,
                min(timed, key=lambda m: m.median_ms) if timed else None,
                min((r.idle for r in same), key=lambda idle: sum(idle.values())),
                {name: code for r in same for name, code in r.exit_codes.items()},
                [load for r in same for load in r.loads],
                sum(r.took for r in same),
            )
        )
    return merged


def setups(hosts: Sequence[int], sqlite: bool) -> list[Setup]:
    """The setups of a run, in the order they run."""
    chosen = [Setup("referee (sqlite)", 0, 0, "sqlite")] if sqlite else []
    chosen.append(Setup("referee (pg)", 0, 0, "postgresql"))
    for count in hosts:
        plural = "s" if count > 1 else ""
        chosen.append(Setup(f"{count} host{plural} + {count} gw", count, count, "postgresql"))
        if count > 1:
            chosen.append(Setup(f"{count} hosts + 1 gw", count, 1, "postgresql"))
    return chosen


# -- one setup -----------------------------------------------------------------------------------


@dataclass
class Running:
    """The processes of a running setup: role -> pids, the admin addresses, the bots."""

    pids: dict[str, list[int]] = field(default_factory=lambda: {role: [] for role in ROLES})
    admin: list[str] = field(default_factory=list)
    """Where RunMatch goes: the referee, or every host."""
    names: list[str] = field(default_factory=list)
    """The names in the shared :class:`Cluster` of this setup's processes, in start order."""
    bots: BotsProcess | None = None

    def cpu(self) -> dict[str, dict[int, float]]:
        """Role -> :func:`cpu_of` its processes (``nats`` and ``postgres`` looked up anew)."""
        pids = dict(self.pids)
        pids["nats"] = pids_named("nats-server")
        pids["postgres"] = pids_named("postgres")
        return {role: cpu_of(found) for role, found in pids.items()}


def make_bots(url: str, names: Sequence[str]) -> dict[str, str]:
    """Create the bots in the database at ``url`` (migrating it); return name -> token."""
    from domino_arena.server.store.storage import Storage  # noqa: PLC0415

    storage = Storage(url)
    storage.open()
    try:
        return {name: storage.add_bot(name) for name in names}
    finally:
        storage.close()


def serve_command(args: argparse.Namespace, role: str, prof: Path, *options: str) -> list[str]:
    """The ``domino-arena serve`` command line of a process of ``role``."""
    command = [*SERVE, "--port", "0", "--admin-token", ADMIN_TOKEN, *options]
    if args.profile == role:
        command = ["-m", "cProfile", "-o", str(prof), *command]
    return python_command(*command)


async def start_server(cluster: Cluster, name: str, command: list[str]) -> str:
    """Start one server process; wait for its "serving on" line; return its address."""
    process = cluster.start(name, command)
    line = await asyncio.to_thread(
        wait_for_line, cluster.log_path(name), "serving on 127.0.0.1:", process
    )
    return f"127.0.0.1:{int(line.rsplit(':', 1)[1])}"


async def start_setup(
    args: argparse.Namespace, cluster: Cluster, setup: Setup, key: str, url: str
) -> Running:
    """Start the servers and the bots of ``setup`` on the database ``url``; wait until every
    server that runs matches sees every bot."""
    running = Running()
    names = [f"cb-{i:03d}" for i in range(args.bots)]
    tokens = await asyncio.to_thread(make_bots, url, names)
    folder = cluster.folder
    gateways: list[str] = []
    if not setup.cluster:
        name = f"{key}-referee"
        command = serve_command(args, "referee", folder / f"{name}.prof", "--db", url)
        address = await start_server(cluster, name, command)
        running.names.append(name)
        running.pids["referee"].append(cluster.processes[name].pid)
        running.admin.append(address)
        gateways.append(address)
    else:
        broker = ["--nats", args.nats, "--cluster", f"cb{uuid.uuid4().hex[:10]}", "--db", url]
        for role, count in (("host", setup.hosts), ("gateway", setup.gateways)):
            for index in range(count):
                name = f"{key}-{role}-{index + 1}"
                options = [*broker, "--role", role, "--node", name]
                command = serve_command(args, role, folder / f"{name}.prof", *options)
                address = await start_server(cluster, name, command)
                running.names.append(name)
                running.pids[role].append(cluster.processes[name].pid)
                (running.admin if role == "host" else gateways).append(address)
    logins = {name: [tokens[name], gateways[i % len(gateways)]] for i, name in enumerate(names)}
    credentials = folder / f"{key}-tokens.json"
    credentials.write_text(json.dumps(logins))
    marks = folder / f"{key}-marks"
    marks.mkdir()
    name = f"{key}-bots"
    script = str(Path(__file__).resolve())
    command = python_command(script, "--role", "bots", "--credentials", str(credentials))
    process = cluster.start(name, [*command, "--marks", str(marks)])
    running.names.append(name)
    running.pids["bots"].append(process.pid)
    running.bots = BotsProcess(process, marks)
    for address in running.admin:
        await wait_connected(address, names)
    return running


async def measure(
    cluster: Cluster,
    running: Running,
    pairs: Sequence[tuple[str, str]],
    *,
    level: int,
    seconds: float,
    seed_base: int,
) -> Measured:
    """Keep ``level`` matches running for ``seconds`` over the hosts; return what it cost."""
    assert running.bots is not None
    cluster.check_alive()
    game = make_game(GAME, players=2)
    control = TimeControl.parse(TIME_CONTROL)
    hosts = len(running.admin)
    plans = []
    for host, address in enumerate(running.admin):
        lanes = list(range(host, level, hosts))  # lane i runs on host i mod hosts
        if lanes:
            seated = [pairs[i % len(pairs)] for i in lanes]
            plans.append((Lanes(address, game, seated, control, 600.0), len(lanes), host))
    await running.bots.mark()  # forget what came before
    before = running.cpu()
    ticks = machine_ticks()
    start = time.perf_counter()
    answers = await asyncio.gather(
        *(
            run_lanes(lanes, count, seconds, seed_base + host * 10_000_000)
            for lanes, count, host in plans
        )
    )
    wall = time.perf_counter() - start
    after = running.cpu()
    busy = busy_percent(ticks)
    turnarounds = await running.bots.mark()
    cpu = {role: cpu_since(before[role], after[role]) for role in after if after[role]}
    responses: list[admin_pb.RunMatchResponse] = [r for found, _ in answers for r in found]
    moves = faults = abnormal = 0
    for response in responses:
        counted, faulted = count_moves(response.record)
        moves += counted
        faults += faulted
        abnormal += response.result.termination != pb.TERMINATION_NORMAL
    shares = [
        (role, 100 * (used - before[role].get(pid, 0.0)) / wall)
        for role in after
        for pid, used in after[role].items()
    ]
    busiest = max(shares, key=lambda share: share[1], default=("", 0.0))
    phase = Phase(moves, wall, cpu, busy)
    return Measured(level, phase, len(responses), faults, abnormal, turnarounds, busiest)


async def measure_idle(running: Running, seconds: float) -> dict[str, float]:
    """Role -> % of one core its processes use over ``seconds`` with no match running."""
    before = running.cpu()
    start = time.perf_counter()
    await asyncio.sleep(seconds)
    after = running.cpu()
    wall = time.perf_counter() - start
    return {
        role: 100 * cpu_since(before[role], after[role]) / wall for role in after if after[role]
    }


async def stop_setup(cluster: Cluster, running: Running) -> dict[str, int | None]:
    """Stop the bots, then the gateways, then the hosts (or the referee); return the exit
    statuses (None: it had to be killed)."""
    codes: dict[str, int | None] = {}
    order = sorted(running.names, key=lambda n: (not n.endswith("bots"), "-host-" in n))
    for name in order:
        process = cluster.processes.pop(name)
        signum = signal.SIGTERM if name.endswith("bots") else signal.SIGINT
        codes[name] = await asyncio.to_thread(stop_process, process, signum, 30.0)
    return codes


async def run_setup(
    args: argparse.Namespace,
    cluster: Cluster,
    databases: Databases,
    setup: Setup,
    index: int,
) -> SetupResult:
    """Run one setup from a fresh database to its drop; print each figure as it comes."""
    result = SetupResult(setup)
    load_before, started = os.getloadavg()[0], time.perf_counter()
    key = f"s{index}-" + (f"{setup.hosts}h{setup.gateways}g" if setup.cluster else setup.database)
    if setup.database == "sqlite":
        url = f"sqlite:///{cluster.folder / f'{key}.db'}"
    else:
        url = await asyncio.to_thread(databases.create)
    print(f"\n{setup.name} ({key}, {url.rsplit('/', 1)[-1]}): starting...", end="", flush=True)
    running = Running()
    try:
        running = await start_setup(args, cluster, setup, key, url)
        names = [f"cb-{i:03d}" for i in range(args.bots)]
        pairs = [(names[i], names[i + 1]) for i in range(0, len(names) - 1, 2)]
        # Warm every process's code paths and caches up: not counted.
        warm = await measure(
            cluster, running, pairs, level=2 * len(running.admin), seconds=0.0, seed_base=0
        )
        print(f" warmed up ({warm.matches} matches);", end="", flush=True)
        if args.idle_seconds > 0:
            await asyncio.sleep(1.0)  # the last records written, the bots' replies read
            result.idle = await measure_idle(running, args.idle_seconds)
            idle = sum(result.idle.get(role, 0.0) for role in ("referee", "host", "gateway"))
            print(f" idle {idle:.1f}% of a core;", end="", flush=True)
        for number, level in enumerate(args.matches):
            seeds = (index * 10 + number + 1) * 100_000_000
            measured = await measure(
                cluster, running, pairs, level=level, seconds=args.seconds, seed_base=seeds
            )
            result.levels.append(measured)
            print(
                f" {level}: {measured.phase.rate:.0f} moves/s,",
                f"turnaround {measured.median_ms:.1f} ms;",
                end="",
                flush=True,
            )
        if setup.latency and args.latency_seconds > 0:
            seeds = (index * 10 + 9) * 100_000_000
            latency = await measure(
                cluster, running, pairs, level=1, seconds=args.latency_seconds, seed_base=seeds
            )
            result.latency = latency
            print(
                f" latency: median {latency.median_ms:.2f} ms, p90 {latency.p90_ms:.2f} ms",
                f"({len(latency.turnarounds)} moves)",
                end="",
                flush=True,
            )
        print(flush=True)
        result.exit_codes = await stop_setup(cluster, running)
        for name, code in result.exit_codes.items():
            if code != 0:
                print(f"  warning: {name} exited with {code} (None: killed)", flush=True)
        if args.profile is not None:
            profiled = [n for n in running.names if f"-{args.profile}" in n]
            if profiled:
                prof = cluster.folder / f"{profiled[0]}.prof"
                if prof.exists():
                    print_profile(prof, args.profile_lines, profiled[0])
    finally:
        for name in running.names:  # after an error: kill what is left of this setup
            process = cluster.processes.pop(name, None)
            if process is not None:
                stop_process(process, signal.SIGKILL, 5.0)
        if setup.database != "sqlite":
            await asyncio.to_thread(databases.drop, url)
        result.loads.append((load_before, os.getloadavg()[0]))
        result.took = time.perf_counter() - started
    return result


# -- the report ----------------------------------------------------------------------------------


def fmt_load(load: tuple[float, float, float]) -> str:
    return " ".join(f"{value:.2f}" for value in load)


def print_report(console: Console, results: Sequence[SetupResult], levels: Sequence[int]) -> None:
    """The tables: moves/s, CPU per move by role, latency."""
    baseline = next((r for r in results if r.setup.name == "referee (pg)"), None)
    throughput = Table(title="moves/s (x: against the PostgreSQL referee at the same level)")
    throughput.add_column("setup")
    throughput.add_column("procs", justify="right")
    for level in levels:
        throughput.add_column(f"{level} m: moves/s", justify="right")
        throughput.add_column("x", justify="right")
        throughput.add_column("turn ms p50/p90", justify="right")
    throughput.add_column("load 1m before→after (each round)", justify="right")
    for result in results:
        setup = result.setup
        processes = 1 if not setup.cluster else setup.hosts + setup.gateways
        cells = [setup.name, str(processes)]
        for level in levels:
            measured = result.at(level)
            base = baseline.at(level) if baseline is not None else None
            if measured is None:
                cells += ["-", "-", "-"]
                continue
            ratio = measured.phase.rate / base.phase.rate if base and base.phase.rate else 0.0
            cells += [
                f"{measured.phase.rate:.0f}",
                f"{ratio:.2f}",
                f"{measured.median_ms:.1f}/{measured.p90_ms:.1f}",
            ]
        cells.append(", ".join(f"{before:.1f}→{after:.1f}" for before, after in result.loads))
        throughput.add_row(*cells)
    console.print(throughput)

    cpu = Table(
        title="CPU per move in µs, by role (all processes of the role together); arena: all but "
        "the bots; busy: the machine's CPU, 100% per core; others: busy less all roles (what "
        "else ran); top proc: the busiest process, % of a core"
    )
    columns = ["setup", "matches", "moves", "wall s", *ROLES, "arena", "x arena", "busy%"]
    columns += ["others%", "top proc"]
    for column in columns:
        cpu.add_column(column, justify="left" if column == "setup" else "right")
    for result in results:
        rows = list(result.levels) + ([result.latency] if result.latency is not None else [])
        for measured in rows:
            phase = measured.phase
            arena = sum(phase.micros_each(role) for role in SERVER_ROLES)
            base = None
            if baseline is not None:
                base = baseline.latency if measured.level == 1 else baseline.at(measured.level)
            base_arena = sum(base.phase.micros_each(role) for role in SERVER_ROLES) if base else 0.0
            cells = [
                result.setup.name,
                str(measured.level),
                str(phase.count),
                f"{phase.seconds:.1f}",
                *(f"{phase.micros_each(role):.0f}" if role in phase.cpu else "-" for role in ROLES),
                f"{arena:.0f}",
                f"{arena / base_arena:.2f}" if base_arena else "-",
                f"{phase.busy:.0f}",
                f"{phase.busy - sum(phase.core_percent(role) for role in phase.cpu):.0f}",
                f"{measured.busiest[0]} {measured.busiest[1]:.0f}%",
            ]
            cpu.add_row(*cells)
    console.print(cpu)

    if any(result.idle for result in results):
        idle = Table(title="idle: CPU in % of one core by role, all bots connected, no match")
        for column in ("setup", *ROLES):
            idle.add_column(column, justify="left" if column == "setup" else "right")
        for result in results:
            if result.idle:
                idle.add_row(
                    result.setup.name,
                    *(f"{result.idle[role]:.1f}" if role in result.idle else "-" for role in ROLES),
                )
        console.print(idle)
    if not any(result.latency is not None for result in results):
        return
    latency = Table(
        title="turnaround per move, one match at a time (ms): from a bot's choose returning to "
        "the next choose of the match"
    )
    for column in ("setup", "moves", "median", "p90", "mean", "+median", "+p90"):
        latency.add_column(column, justify="left" if column == "setup" else "right")
    base_latency = baseline.latency if baseline is not None else None
    for result in results:
        measured = result.latency
        if measured is None or not measured.turnarounds:
            continue
        added = ["-", "-"]
        if base_latency is not None and base_latency.turnarounds and result is not baseline:
            added = [
                f"{measured.median_ms - base_latency.median_ms:+.2f}",
                f"{measured.p90_ms - base_latency.p90_ms:+.2f}",
            ]
        latency.add_row(
            result.setup.name,
            str(len(measured.turnarounds)),
            f"{measured.median_ms:.2f}",
            f"{measured.p90_ms:.2f}",
            f"{1000 * statistics.fmean(measured.turnarounds):.2f}",
            *added,
        )
    console.print(latency)


# -- the orchestra -------------------------------------------------------------------------------


async def orchestrate(
    args: argparse.Namespace, cluster: Cluster, databases: Databases
) -> list[list[SetupResult]]:
    """Run every setup ``--rounds`` times (all of them, then all again); return each round's."""
    chosen = setups(args.hosts, not args.no_sqlite)
    print(
        f"game: {make_game(GAME, players=2).describe()}; time control {TIME_CONTROL}; "
        f"fault policy substitute; {args.bots} bots in 1 SDK process (random, inline)"
    )
    print(
        f"levels: {', '.join(map(str, args.matches))} matches at once for {args.seconds:g} s "
        f"each; latency phase {args.latency_seconds:g} s; setups: "
        + ", ".join(s.name for s in chosen)
    )
    print(f"NATS {args.nats}; PostgreSQL {args.pg} (a fresh database per setup)")
    nats = pids_named("nats-server")
    print(
        "nats-server pids: "
        + (", ".join(map(str, nats)) if nats else "none found: its CPU is not measured")
    )
    if args.profile:
        print(f"the {args.profile} processes run under cProfile: slower than normal")
    rounds = []
    for number in range(args.rounds):
        if args.rounds > 1:
            print(f"\n-- round {number + 1} of {args.rounds}", end="", flush=True)
        played = []
        for index, setup in enumerate(chosen):
            key = number * len(chosen) + index
            played.append(await run_setup(args, cluster, databases, setup, key))
        rounds.append(played)
    return rounds


def check(results: Sequence[SetupResult]) -> bool:
    """Print the errors (faults, abnormal ends); True if there were none."""
    good = True
    for result in results:
        for measured in [*result.levels, *([result.latency] if result.latency else [])]:
            if measured.faults or measured.abnormal:
                print(
                    f"cluster_bench: error: {result.setup.name} at {measured.level} matches: "
                    f"{measured.abnormal} matches did not end normally, {measured.faults} faults",
                    file=sys.stderr,
                )
                good = False
    return good


# -- the command line ----------------------------------------------------------------------------


def numbers(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas: {text}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive numbers: {text}")
    return values


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Moves/s, CPU per move by role and per-move latency of gateways + match "
        "hosts over NATS, against one referee, with random SDK bots over loopback."
    )
    parser.add_argument(
        "--matches",
        type=numbers,
        default=[32, 96],
        metavar="M,M,..",
        help="matches at once (default 32,96)",
    )
    parser.add_argument(
        "--hosts", type=numbers, default=[1, 2, 3], metavar="N,N,..", help="default 1,2,3"
    )
    parser.add_argument(
        "--seconds", type=float, default=15.0, metavar="S", help="per level (default 15)"
    )
    parser.add_argument(
        "--latency-seconds",
        type=float,
        default=10.0,
        metavar="S",
        help="one match at a time for S seconds (0: no latency phase; default 10)",
    )
    parser.add_argument(
        "--idle-seconds",
        type=float,
        default=3.0,
        metavar="S",
        help="measure the processes' CPU with no match running for S seconds (0: no; default 3)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        metavar="R",
        help="run every setup R times, all setups in turn, and keep each one's best figures "
        "(on a shared machine another process's bursts then stay out; default 1)",
    )
    parser.add_argument("--bots", type=int, default=32, metavar="K", help="bot names (32)")
    parser.add_argument("--no-sqlite", action="store_true", help="skip the SQLite referee")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run: by default 4 matches, hosts 1,2, 3 s per level, 8 bots, no SQLite",
    )
    parser.add_argument("--logs", type=Path, metavar="DIR", help="keep the processes' logs here")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the figures as JSON")
    parser.add_argument("--nats", default=DEFAULT_NATS, metavar="URL", help=f"{DEFAULT_NATS}")
    parser.add_argument(
        "--pg", default=DEFAULT_PG, metavar="URL", help=f"where to CREATE DATABASE ({DEFAULT_PG})"
    )
    parser.add_argument(
        "--profile",
        choices=("referee", "host", "gateway"),
        help="run these processes under cProfile (not the official figures)",
    )
    parser.add_argument(
        "--profile-lines", type=int, default=25, metavar="N", help="functions to print (25)"
    )
    parser.add_argument(
        "--max-seconds",
        type=float,
        default=1500.0,
        metavar="T",
        help="give up (exit 1) after T seconds (default 1500)",
    )
    internal = argparse.SUPPRESS
    parser.add_argument("--role", choices=("bots",), help=internal)
    parser.add_argument("--credentials", type=Path, help=internal)
    parser.add_argument("--marks", type=Path, help=internal)
    return parser


@contextlib.contextmanager
def log_folder(logs: Path | None) -> Iterator[Path]:
    if logs is not None:
        logs.mkdir(parents=True, exist_ok=True)
        yield logs
        return
    with tempfile.TemporaryDirectory(prefix="cluster-bench-") as folder:
        yield Path(folder)


def interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.role == "bots":
        asyncio.run(bots_main(args.credentials, args.marks))
        return 0
    if args.quick:  # new defaults: the options given still win
        parser.set_defaults(
            matches=[4], hosts=[1, 2], seconds=3.0, bots=8, latency_seconds=3.0, idle_seconds=1.0
        )
        parser.set_defaults(no_sqlite=True)
        args = parser.parse_args(argv)
    if args.bots < 2 or args.rounds < 1:
        print("cluster_bench: error: --bots must be 2 or more, --rounds 1 or more", file=sys.stderr)
        return 2
    console = Console(width=max(160, Console().width))
    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGINT, interrupt)  # even when started with SIGINT ignored (`cmd &`)
    load_start = os.getloadavg()
    print(f"machine: {load_text()} at the start")
    others = busy_processes(1.0, set())
    print("busy processes at the start (>5% of a core over 1 s): " + ("; ".join(others) or "none"))
    started = time.perf_counter()
    databases = Databases(args.pg)
    rounds: list[list[SetupResult]] = []
    with log_folder(args.logs) as folder:
        cluster = Cluster(folder)

        try:
            done = run_guarded(
                "cluster_bench",
                lambda: orchestrate(args, cluster, databases),
                cluster,
                args.max_seconds,
            )
            if done is None:
                return 1
            rounds = done
        except KeyboardInterrupt:
            print("\ncluster_bench: interrupted", file=sys.stderr)
            return 130
        finally:
            cluster.close()
            databases.drop_all()
            if args.logs is not None:
                print(f"logs in {folder}")
    load_end = os.getloadavg()
    results = best_of(rounds)
    print()
    if args.rounds > 1:
        print(f"best of {args.rounds} rounds: per setup and level the round with the most moves/s")
    print_report(console, results, args.matches)
    others = busy_processes(1.0, set())
    print(
        f"\nmachine: {os.cpu_count()} CPUs; load (1, 5, 15 min) {fmt_load(load_start)} at the "
        f"start, {fmt_load(load_end)} at the end; the run took "
        f"{time.perf_counter() - started:.0f} s"
    )
    print("busy processes at the end (>5% of a core over 1 s): " + ("; ".join(others) or "none"))
    if args.json is not None:
        report = {
            "command": sys.argv,
            "cpus": os.cpu_count(),
            "load_start": load_start,
            "load_end": load_end,
            "nats": args.nats,
            "pg": args.pg,
            "best": [r.summary() for r in results],
            "rounds": [[r.summary() for r in played] for played in rounds],
        }
        args.json.write_text(json.dumps(report, indent=2))
        print(f"figures written to {args.json}")
    return 0 if all([check(played) for played in rounds]) else 1


if __name__ == "__main__":
    sys.exit(main())

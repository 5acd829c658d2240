"""A scaled-out arena as separate processes: match hosts, gateways and house bots, each a
``domino-arena`` subprocess, on the machine's NATS and PostgreSQL (docs/cluster.md).

Each test gets its own cluster name (the prefix of every subject: tests sharing the machine's
NATS at :data:`NATS_URL` never hear each other) and its own PostgreSQL database, created on the
local server and dropped afterwards (:func:`fresh_database`). A test that restarts the broker
starts a private ``nats-server`` (:func:`private_nats`) on a port it reserved, so the machine's
broker, which other tests use meanwhile, is never touched.

A bot dials all the gateways as one gRPC target, ``ipv4:127.0.0.1:P1,127.0.0.1:P2``: gRPC's
``pick_first`` connects to the first address that answers, and the SDK dials a fresh channel at
every reconnection, so a bot goes through its first gateway while that one lives and through
the next when it dies, as behind a load balancer. :meth:`Cluster.bots` takes each bot's
gateways in the order it prefers them.

Everything is waited on by output lines: one process's (:meth:`Process.wait_line`), or the
first of several to log a line (:meth:`Cluster.first_line`, which answers "which host took the
tournament?"); the timeouts only bound a failure. The tournaments and the checks of what they
stored are in :mod:`tests.fakes.cluster_play`.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import grpc
import sqlalchemy as sa

from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc
from tests.fakes.processes import Process, command, served_port
from tests.fakes.store import POSTGRES_URL

WAIT: Final = 90.0
"""Seconds one step may take before the test fails (never reached when it passes)."""
NATS_URL: Final = "nats://127.0.0.1:4222"
"""The machine's NATS, shared by every test that does not restart it."""
ADMIN_TOKEN: Final = "cluster-test-admin-token"
BOTS: Final = ("random-1", "greedy-2", "random-3", "greedy-4")
"""The house bots of a cluster test, named KIND-N."""
LOG_RECORD: Final = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z [A-Z]+ ")
"""The start of a log record's line in a role's text log (``server/logs.py``)."""


def match_of(line: str) -> str:
    """The match id of a host's "match started: id=ID ..." line, or of a bot's "match ID
    started|resumed|ended: ..." one."""
    if " id=" in line:
        return line.split(" id=", 1)[1].split(maxsplit=1)[0]
    return line.split(" match ", 1)[1].split(maxsplit=1)[0]


def seats_of(line: str) -> list[str]:
    """The bots of a host's "match started: ... bots=A,B ..." line."""
    return line.split(" bots=", 1)[1].split(maxsplit=1)[0].split(",")


# -- the database ---------------------------------------------------------------------------------


def create_database(admin_url: str, prefix: str) -> str:
    """Make a new, empty PostgreSQL database named ``prefix`` and random hex through
    ``admin_url`` (a database of the server where this may be done); return its URL."""
    url = sa.make_url(admin_url).set(database=f"{prefix}{uuid.uuid4().hex[:16]}")
    with _admin(admin_url) as connection:
        connection.exec_driver_sql(f'CREATE DATABASE "{url.database}"')
    return url.render_as_string(hide_password=False)


def drop_database(admin_url: str, url: str) -> None:
    """Drop the database of ``url`` if it exists; ``WITH (FORCE)`` ends the sessions that
    killed processes may have left open."""
    with _admin(admin_url) as connection:
        name = sa.make_url(url).database
        connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def _admin(admin_url: str) -> Iterator[sa.Connection]:
    admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            yield connection
    finally:
        admin.dispose()


@contextmanager
def fresh_database() -> Iterator[str]:
    """A new, empty PostgreSQL database for the block; yields its URL, drops it after.

    A database of its own rather than a schema (what :mod:`tests.fakes.store` gives): the
    processes take a plain ``--db URL``.
    """
    url = create_database(POSTGRES_URL, "da_")
    try:
        yield url
    finally:
        drop_database(POSTGRES_URL, url)


# -- a private broker -----------------------------------------------------------------------------


def nats_binary() -> str:
    """The ``nats-server`` executable (the Debian package puts it in /usr/sbin)."""
    found = shutil.which("nats-server") or shutil.which("nats-server", path="/usr/sbin")
    assert found is not None, "nats-server is not installed (apt-get install nats-server)"
    return found


def private_nats(port: int, cwd: Path) -> Process:
    """Start a ``nats-server`` of the test's own on 127.0.0.1:``port`` (no JetStream: its
    default), and return it once it accepts clients.

    ``port`` may be one :func:`~tests.fakes.processes.reserved_port` holds: Go listens with
    ``SO_REUSEADDR``, as grpc does, so the server binds it beside the holder's socket.
    """
    args = [nats_binary(), "--addr", "127.0.0.1", "--port", str(port)]
    broker = Process(args, cwd, wait=WAIT)
    broker.wait_line("Server is ready")
    return broker


# -- the processes --------------------------------------------------------------------------------


class Watched(Process):
    """A :class:`Process` whose every new line also wakes whoever waits on ``board``, the
    condition all the processes of a :class:`Cluster` share (:meth:`Cluster.first_line`)."""

    def __init__(self, args: Sequence[str], cwd: Path, board: threading.Condition) -> None:
        self.board = board  # before the reader thread starts
        super().__init__(args, cwd, wait=WAIT)

    def heard(self, line: str | None) -> None:
        with self.board:
            super().heard(line)
            self.board.notify_all()


class Cluster:
    """The processes of one scaled-out arena: :meth:`start` hosts and gateways, :meth:`bots`;
    :meth:`stop` kills what still runs (the clean-up of a test, passed or failed).

    ``storage`` is the test's own connection to the cluster's database: the tournaments are
    stored there before the hosts start, and the results read from it at the end.
    """

    def __init__(
        self,
        cwd: Path,
        db: str,
        *,
        nats: str = NATS_URL,
        nats_flags: Sequence[str] = (),
        lease_seconds: float = 30.0,
        reconnect_grace: float = 10.0,
    ) -> None:
        self.cwd = cwd
        self.db = db
        self.nats = nats
        self.nats_flags = list(nats_flags)
        """The roles' flags beside ``--nats``: TLS and credentials (tests/fakes/secure_nats.py)."""
        self.name = f"t-{uuid.uuid4().hex[:12]}"
        """The cluster's name: the prefix of its subjects, this test's alone."""
        self.lease_seconds = lease_seconds
        self.reconnect_grace = reconnect_grace
        self.storage = RatedStorage(db)
        self.storage.open()
        self.tokens = {name: self.storage.add_bot(name) for name in BOTS}
        self.board = threading.Condition()
        self.hosts: dict[str, Watched] = {}
        self.gateways: dict[str, Watched] = {}
        self.bot: dict[str, Watched] = {}
        self.runners: dict[str, Watched] = {}
        self.ports: dict[str, int] = {}
        """The gRPC port of each host and gateway, by node name."""

    @property
    def processes(self) -> list[Process]:
        """Every process started (the context of a failed wait)."""
        return [
            *self.hosts.values(),
            *self.gateways.values(),
            *self.bot.values(),
            *self.runners.values(),
        ]

    def start(
        self,
        hosts: Iterable[str] = (),
        gateways: Iterable[str] = (),
        *,
        host_db: str | None = None,
        brokers: Mapping[str, str] | None = None,
    ) -> None:
        """Start match hosts and gateways named so, all at once, and return once every one of
        them serves (each on a free port, in :attr:`ports`). The hosts use ``host_db`` (a
        proxy's URL) if given, else the cluster's database, as the gateways do; a node named
        in ``brokers`` dials NATS at its URL there (a proxy's), the others at the cluster's."""
        started: dict[str, Watched] = {}
        for role, nodes in (("host", hosts), ("gateway", gateways)):
            for node in nodes:
                db = host_db if role == "host" and host_db is not None else self.db
                nats = (brokers or {}).get(node, self.nats)
                args = ["serve", "--role", role, "--node", node, "--cluster", self.name]
                args += ["--nats", nats, *self.nats_flags, "--db", db, "--port", "0"]
                args += ["--lease-seconds", str(self.lease_seconds)]
                args += ["--reconnect-grace", str(self.reconnect_grace)]
                args += ["--admin-token", ADMIN_TOKEN]
                started[node] = Watched(command(*args), self.cwd, self.board)
                (self.hosts if role == "host" else self.gateways)[node] = started[node]
        for node, process in started.items():
            self.ports[node] = served_port(process)

    def target(self, gateways: Sequence[str]) -> str:
        """One gRPC target for ``gateways``, tried in this order (see the module)."""
        return "ipv4:" + ",".join(f"127.0.0.1:{self.ports[node]}" for node in gateways)

    def bots(self, gateways: Mapping[str, Sequence[str]]) -> None:
        """Start each house bot of ``gateways`` (its kind: the first part of its name),
        dialling its gateways in the order given."""
        for seed, (name, preferred) in enumerate(gateways.items()):
            kind = name.split("-")[0]
            args = ["bot", "run", name, "--bot", kind, "--server", self.target(preferred)]
            args += ["--token", self.tokens[name], "--seed", str(seed), "--games", "passing"]
            self.bot[name] = Watched(command(*args), self.cwd, self.board)

    def start_runners(
        self,
        nodes: Iterable[str],
        gateways: Sequence[str],
        *,
        max_hosted: int = 500,
        hosting_dir: Path | None = None,
        idle_stop: float = 5.0,
    ) -> None:
        """Start runners of hosted bots named so (``serve --role runner``), dialling
        ``gateways``; each logs what it hosts (docs/hosting.md: on a cluster)."""
        for node in nodes:
            args = ["serve", "--role", "runner", "--node", node, "--db", self.db]
            args += ["--referee", self.target(gateways), "--idle-stop", str(idle_stop)]
            if hosting_dir is not None:
                args += ["--hosting-dir", str(hosting_dir)]
            args += ["--lease-seconds", str(self.lease_seconds), "--max-hosted", str(max_hosted)]
            self.runners[node] = Watched(command(*args), self.cwd, self.board)

    def first_line(
        self,
        fragment: str,
        among: Mapping[str, Watched],
        where: Callable[[str], bool] = lambda line: True,
    ) -> tuple[str, str]:
        """The first line containing ``fragment`` (and ``where`` of it) that one of ``among``
        (by name) logged, whenever it did, earlier lines included: its process's name and the
        line. The lines stay in the processes' queues for :meth:`Process.wait_line`."""

        def found() -> tuple[str, str] | None:
            for name, process in among.items():
                for line in list(process.lines):
                    if fragment in line and where(line):
                        return name, line
            return None

        with self.board:
            seen = self.board.wait_for(found, WAIT)
        assert seen is not None, f"none of {sorted(among)} logged {fragment!r}: {self.processes}"
        return seen

    @contextmanager
    def frozen(self, bot: str, host: str) -> Iterator[str]:
        """Freeze the house bot ``bot`` (SIGSTOP) between two of its matches and yield the id
        of its next match once ``host`` started it: a match sure to be running until the
        block ends, since it cannot end without the bot's moves. The bot goes on (SIGCONT)
        after the block; its clock ran meanwhile (keep the block shorter than a move and the
        bank)."""
        process = self.bot[bot]
        while True:  # the bot's latest match end, not an old line still queued
            line = process.wait_line(" ended: ", context=self.processes)
            if line == [seen for seen in list(process.lines) if " ended: " in seen][-1]:
                break
        os.kill(process.popen.pid, signal.SIGSTOP)
        try:
            ended = {match_of(line) for line in list(process.lines) if " ended: " in line}
            _, started = self.first_line(
                "match started: id=",
                {host: self.hosts[host]},
                lambda line: bot in seats_of(line) and match_of(line) not in ended,
            )
            yield match_of(started)
        finally:
            os.kill(process.popen.pid, signal.SIGCONT)

    def start_tournament(self, node: str, tournament_id: str) -> None:
        """Start the stored tournament through the admin API of the host ``node``."""
        with grpc.insecure_channel(f"127.0.0.1:{self.ports[node]}") as channel:
            admin = admin_pb_grpc.AdminServiceStub(channel)
            admin.StartTournament(
                admin_pb.StartTournamentRequest(tournament_id=tournament_id),
                metadata=(("authorization", f"Bearer {ADMIN_TOKEN}"),),
                timeout=WAIT,
            )

    def records_of(self, node: str) -> list[str]:
        """The log records' lines ``node`` (a host or a gateway) wrote so far."""
        process = {**self.hosts, **self.gateways}[node]
        return [line for line in process.lines if LOG_RECORD.match(line)]

    def stop(self) -> None:
        """Kill every process that still runs, keep each one's output in ``logs/NAME.log``
        under the test's directory (to read after a failure); close the test's storage."""
        logs = self.cwd / "logs"
        logs.mkdir(exist_ok=True)
        named = {**self.hosts, **self.gateways, **self.bot, **self.runners}
        for name, process in reversed(named.items()):
            process.stop()
            (logs / f"{name}.log").write_text("\n".join([*process.lines, ""]))
        self.storage.close()


@contextmanager
def cluster(cwd: Path, **settings: Any) -> Iterator[Cluster]:
    """A :class:`Cluster` on a :func:`fresh_database`, stopped after the block."""
    with fresh_database() as db:
        arena = Cluster(cwd, db, **settings)
        try:
            yield arena
        finally:
            arena.stop()

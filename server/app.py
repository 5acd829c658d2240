"""The composition root of the referee: storage, the arena, its tournaments' director, the gRPC
server and the trio guest.

asyncio owns the process and gRPC (grpc.aio is bound to an asyncio loop); trio runs as a guest
on the same thread (``trio.lowlevel.start_guest_run``'s guest, waiting on the asyncio loop:
``server/play/guest.py``) with one nursery that owns every match
(docs/decisions.md: decision 10). The app wires the network layer into the play
layer: the arena gets the gRPC lobby as its roster and builds remote seats over it; the gRPC
server (``server/net/grpc_server.py``) serves the bot stream, the admin API, the spectators,
gRPC health checking and server reflection.

Shutdown, on SIGINT/SIGTERM or when the caller sets ``stop``, follows the research's order:

1. health goes NOT_SERVING and no new match or stream is accepted;
2. the trio scope is cancelled: running matches end ABORTED (their bots are told) and the
   admin calls waiting on them get UNAVAILABLE; finished matches are already stored;
3. trio finishes (it must finish before the host loop stops);
4. every bot stream is closed with SHUTTING_DOWN and UNAVAILABLE;
5. ``server.stop(grace)`` lets the handlers end; nothing is left running.

``wait_for_termination`` is never used (cancelling it breaks ``stop``'s grace).

The referee lease (``server/store/lease.py``): :meth:`App.serve` takes it before binding any
port (another referee's live lease: :class:`~.store.lease.LeaseHeldError`), :func:`keep_lease`
renews it every :data:`~.store.lease.RENEW_SECONDS` in the trio nursery, retrying with the
writer's backoff while the database is away, and it is released after the shutdown. A referee
whose lease another one took over (it expired while the database was unreachable) stops as at
SIGTERM and :meth:`App.serve` raises :class:`~.store.lease.LeaseLostError`: the database is
the other referee's now.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import signal
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol

import outcome as outcome_module
import trio

from domino_arena.server.analysis.service.jobs import JobRunner
from domino_arena.server.analysis.service.pool import DEFAULT_WORKERS, AnalysisPool
from domino_arena.server.hosting.runner import Hosting, Runner, RunnerConfig
from domino_arena.server.hosting.sandbox import SandboxUnavailableError, probe
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.metrics import MetricsServer
from domino_arena.server.net.cluster.broker_security import PLAINTEXT, BrokerSecurity
from domino_arena.server.net.cluster.subjects import DEFAULT_CLUSTER
from domino_arena.server.net.grpc_server import BotSide, GrpcServer, ServerTls
from domino_arena.server.net.limits import DEFAULT_LIMITS, StreamLimits
from domino_arena.server.net.live_access import LiveAccess
from domino_arena.server.net.lobby import Lobby
from domino_arena.server.net.remote import RemoteSeat
from domino_arena.server.net.watch_limits import DEFAULT_WATCH_LIMITS, WatchLimits
from domino_arena.server.play import guest
from domino_arena.server.play.arena import LOG, Arena
from domino_arena.server.play.ownership import Steward, renewing
from domino_arena.server.play.people import DEFAULT_PEOPLE, PeopleBounds, Table
from domino_arena.server.store import lease, ownership
from domino_arena.server.store.engine import error_reason
from domino_arena.server.tournaments.lifecycle.director import Director

if TYPE_CHECKING:  # the broker's modules load nats-py: only a cluster's match host imports them
    from domino_arena.server.net.cluster.broker import Broker
    from domino_arena.server.net.cluster.hosting import BrokerLobby

DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 50051
DEFAULT_RECONNECT_GRACE: Final = 10.0
DEFAULT_SHUTDOWN_GRACE: Final = 2.0
GC_THRESHOLDS: Final = (10_000, 10, 10)
"""The collector's thresholds while serving (CPython's default: 700, 10, 10). A match makes
objects in bursts (a move's state, its record at the end) that would start a collection every
few moves; collecting less often took about 6% of the referee's CPU off at 256 matches
(bench/referee_bench.py)."""


ROLE_ALL: Final = "all"
ROLE_GATEWAY: Final = "gateway"
ROLE_HOST: Final = "host"
ROLES: Final = (ROLE_ALL, ROLE_GATEWAY, ROLE_HOST)


@dataclass(frozen=True, slots=True)
class Config:
    """How to serve: the address, the graces (seconds), the admin token, the metrics port,
    TLS and the bounds of the bot streams."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    reconnect_grace: float = DEFAULT_RECONNECT_GRACE
    shutdown_grace: float = DEFAULT_SHUTDOWN_GRACE
    admin_token: str = ""
    """The admin API's token; empty: every admin call is refused."""
    metrics_port: int | None = None
    """Serve Prometheus metrics on this port (0: any free port); None: no metrics server."""
    tls: ServerTls | None = None
    """Serve TLS (mutual TLS when it has a client CA); None: plaintext."""
    limits: StreamLimits = DEFAULT_LIMITS
    """The bounds of every bot stream (``server/net/limits.py``; ``serve`` sets some)."""
    role: str = ROLE_ALL
    """:data:`ROLE_ALL` (one process serves everything), or one role of a cluster:
    :data:`ROLE_GATEWAY` or :data:`ROLE_HOST` (docs/cluster.md)."""
    nats: str = ""
    """The broker's URL (a cluster role's; unused by :data:`ROLE_ALL`)."""
    nats_security: BrokerSecurity = PLAINTEXT
    """The broker's TLS and credentials (``serve --nats-*``)."""
    node: str = ""
    """This process's name in the cluster, in its logs, metrics and match records."""
    cluster: str = DEFAULT_CLUSTER
    """The cluster's name: the prefix of its subjects on the broker."""
    lease_seconds: float = 30.0
    """A match host's leases on tournaments and ladder pools last this long unrenewed."""
    relay_token: str = ""
    """The relay token: a web face (or a relay) holding it watches every course's signed-in
    matches, counted apart from the crowd (docs/spectators.md); empty: none is accepted."""
    watch_limits: WatchLimits = DEFAULT_WATCH_LIMITS
    """The bounds of the referee's watchers (``server/net/watch_limits.py``)."""
    think_times: bool = True
    """Keep each step's think time in the match records; False (the round robin's) leaves
    them out, so its records are the same bytes on every run (docs/referee.md)."""
    sign_record: Callable[[str], str] | None = None
    """Signs each record the admin API hands out (``serve --record-key``,
    ``server/play/record_signing.py``); None: handed out unsigned."""
    people: PeopleBounds = DEFAULT_PEOPLE
    """The bounds of people's matches and the time a seat has to connect (docs/people.md)."""
    analysis_workers: int = DEFAULT_WORKERS
    """Worker processes that analyse the queued matches (server/analysis/service/jobs.py: the
    tournaments of courses that ask, ``analyse --tournament``); 0: none run here. A single
    referee's alone: a cluster's hosts run none."""
    on_analysed: Callable[[str, str | None], None] | None = None
    """Told, in the trio thread, the match id and the error (None: stored) of each analysis
    the workers end (a test waits on it)."""
    hosting: Hosting | None = None
    """Run the hosted bots in this process (``server/hosting/runner.py``, docs/hosting.md): a
    single referee's default; None: hosted bots wait for a runner of their own."""


class App:
    """One referee: :meth:`serve` runs it in the current asyncio loop until ``stop`` is set.

    The storage is opened by the caller (so a bad database is reported before any port is
    bound) and is not closed here.
    """

    def __init__(self, config: Config, storage: RatedStorage) -> None:
        self.config = config
        self.holder = lease.new_holder()
        """This process in the lease tables (``server/store/lease.py``, ``ownership.py``)."""
        self.broker: Broker | None = None
        """A cluster's match host's broker connection (None: a single referee)."""
        self.lobby: Lobby | BrokerLobby
        steward: Steward | None = None
        if config.role == ROLE_HOST:
            from domino_arena.server.net.cluster.broker import Broker  # noqa: PLC0415
            from domino_arena.server.net.cluster.hosting import BrokerLobby  # noqa: PLC0415

            self.broker = Broker(
                config.nats, config.node, self._broker_state, config.cluster, config.nats_security
            )
            self.lobby = BrokerLobby(self.broker)
            steward = Steward(storage.engine, self.holder, config.node, config.lease_seconds)
        else:
            self.lobby = Lobby()
        self._server: GrpcServer | None = None
        self.arena = Arena(
            storage,
            lobby=self.lobby,
            seats=functools.partial(RemoteSeat, self.lobby),
            reconnect_grace=config.reconnect_grace,
            admin_token=config.admin_token,
            node=config.node if self.broker is not None else "",
            steward=steward,
            think_times=config.think_times,
        )
        self.table = Table(config.people)
        """People's seats and their tickets (docs/people.md; a single referee's)."""
        self.director = Director(self.arena)
        """Every tournament's life on this referee; its games run in the arena."""
        self.port: int | None = None
        self.metrics_port: int | None = None
        self.storage = storage
        self.lease_lost: lease.LeaseLostError | None = None
        self.runner: Runner | None = None
        """This referee's own runner of hosted bots, once it runs (``Config.hosting``)."""

    async def serve(self, stop: asyncio.Event, on_ready: Callable[[int], None]) -> None:
        """Take the database's lease, serve until ``stop`` is set (or trio fails, or the
        lease is lost), shut down cleanly and release the lease.

        ``on_ready`` gets the bound port (the real one when the config asks for port 0) once
        the server accepts calls.

        Raises:
            LeaseHeldError: another referee holds the database (nothing was bound); on a
                cluster's host: a single referee serves it.
            LeaseLostError: another referee took the lease over while this one served.
            OSError: the address cannot be bound.
        """
        if self.broker is not None:
            await self._serve_host(stop, on_ready)
            return
        engine = self.storage.engine
        await asyncio.to_thread(lease.acquire, engine, self.holder)
        LOG.debug("lease on the database taken (%s)", self.holder)
        try:
            await asyncio.to_thread(ownership.check_free, engine)
            await self._serve(stop, on_ready)
        finally:
            if self.lease_lost is None:
                try:
                    await asyncio.shield(asyncio.to_thread(lease.release, engine, self.holder))
                except Exception as error:  # the lease expires by itself
                    LOG.warning("the lease on the database not released: %s", error_reason(error))
        if self.lease_lost is not None:
            raise self.lease_lost

    async def _serve_host(self, stop: asyncio.Event, on_ready: Callable[[int], None]) -> None:
        """Serve as a cluster's match host: the broker first, then as a single referee, without
        the database's one lease (tournaments and ladder pools are leased one by one)."""
        from domino_arena.server.net.cluster.hosting import BrokerLobby  # noqa: PLC0415
        from domino_arena.server.net.cluster.spectating import WatchHost  # noqa: PLC0415

        assert self.broker is not None and isinstance(self.lobby, BrokerLobby)
        await asyncio.to_thread(lease.check_free, self.storage.engine, self.holder)
        await self.broker.connect()
        arena = self.arena
        access = LiveAccess(arena.storage, admin_token=self.config.admin_token)
        watching = WatchHost(
            arena.spectators, self.broker, self.lobby, lambda: arena.ladders, access
        )
        try:
            await self.lobby.start()
            await watching.start()
            arena.metrics.watch_broker(ROLE_HOST, self.broker)
            await self._serve(stop, on_ready)
        finally:
            await watching.close()
            await self.lobby.close()
            await self.broker.close()
            if arena.steward is not None:  # the other hosts take them at their next renewal
                try:
                    released = await asyncio.shield(asyncio.to_thread(arena.steward.release_all))
                    LOG.info("leases released: %d", released)
                except Exception as error:  # they expire by themselves
                    LOG.warning("leases not released: %s", error_reason(error))

    def _broker_state(self, up: bool) -> None:
        """The broker connection went down or came back: health follows (readiness)."""
        from domino_arena.server.net.cluster.hosting import BrokerLobby  # noqa: PLC0415

        if isinstance(self.lobby, BrokerLobby):
            self.lobby.broker_state(up)
        if self._server is not None:
            self._server.follow(up)

    async def _keep_lease(self, top: trio.CancelScope) -> None:
        engine, holder = self.storage.engine, self.holder

        def lost(error: lease.LeaseLostError) -> None:
            self.lease_lost = error
            top.cancel()

        await keep_lease(functools.partial(lease.renew, engine, holder), lost)

    async def _serve(self, stop: asyncio.Event, on_ready: Callable[[int], None]) -> None:
        """Serve until ``stop`` is set (or trio fails), then shut down cleanly.

        ``on_ready`` gets the bound port (the real one when the config asks for port 0) once
        the server accepts calls.

        Raises:
            OSError: the address cannot be bound.
        """
        loop = asyncio.get_running_loop()
        metrics_server: MetricsServer | None = None
        if self.config.metrics_port is not None:
            metrics_server = self.arena.metrics.serve(self.config.host, self.config.metrics_port)
            self.metrics_port = metrics_server.port
            LOG.info("metrics on http://%s:%d/metrics", self.config.host, metrics_server.port)
        lobby = self.lobby
        self.arena.metrics.watch_connected(lambda: len(lobby))
        bots = None
        if isinstance(lobby, Lobby):  # a single referee serves the bots itself
            bots = BotSide(lobby, self.storage, self.arena.metrics)
        server = GrpcServer(
            f"{self.config.host}:{self.config.port}",
            bots=bots,
            arena=self.arena,
            director=self.director,
            tls=self.config.tls,
            limits=self.config.limits,
            relay_token=self.config.relay_token,
            watch_limits=self.config.watch_limits,
            sign_record=self.config.sign_record,
            people=self.table,
        )
        self._server = server

        trio_ready: asyncio.Future[None] = loop.create_future()
        trio_done: asyncio.Future[outcome_module.Outcome[None]] = loop.create_future()
        top = trio.CancelScope()

        async def trio_main() -> None:
            with top:
                async with trio.open_nursery() as nursery:
                    self.arena.nursery = nursery
                    if not trio_ready.done():
                        trio_ready.set_result(None)
                    nursery.start_soon(self.director.resume_tournaments)
                    if self.broker is None:  # a cluster's host leases tournaments one by one
                        nursery.start_soon(self._keep_lease, top)
                        nursery.start_soon(self._analyse)
                    await trio.sleep_forever()
            self.arena.nursery = None

        def trio_finished(result: outcome_module.Outcome[None]) -> None:
            if not trio_done.done():
                trio_done.set_result(result)
            if not trio_ready.done():
                trio_ready.set_result(None)

        # trio's guest run, waiting on this loop rather than in a thread (server/play/guest.py)
        guest.start_guest_run(
            trio_main, done_callback=trio_finished, host_uses_signal_set_wakeup_fd=True
        )
        hosting: asyncio.Task[None] | None = None
        try:
            await asyncio.shield(trio_ready)
            await server.start()
            self.port = server.port
            hosting = self._start_hosting(server.port)
            on_ready(server.port)
            stopping = asyncio.ensure_future(stop.wait())
            waits: list[asyncio.Future[Any]] = [stopping, asyncio.shield(trio_done)]
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                stopping.cancel()
        finally:
            # Also reached when this task is cancelled: every await below is shielded or runs
            # after the cancellation was delivered.
            LOG.info(
                "shutting down: %d matches running, %d bots connected",
                len(self.arena.running),
                len(self.lobby.connections()),
            )
            await server.stop_accepting()
            if hosting is not None:
                hosting.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await hosting
            self.arena.shutting_down = True
            top.cancel()
            try:
                result = await asyncio.wait_for(
                    asyncio.shield(trio_done), self.config.shutdown_grace
                )
            except TimeoutError:
                abandoned = self.arena.abandon_saves()
                if abandoned:
                    LOG.warning(
                        "shutting down: %d finished matches not stored (the database is "
                        "unreachable); tournament games among them are played again at the "
                        "next start",
                        abandoned,
                    )
                result = await asyncio.shield(trio_done)
            LOG.debug("the matches ended")
            await server.close(self.config.shutdown_grace)
            LOG.debug("the gRPC server stopped")
            if metrics_server is not None:
                metrics_server.stop()
            result.unwrap()

    async def _analyse(self) -> None:
        """Run the analysis queue (server/analysis/service/jobs.py) in worker processes until the
        referee stops; a tournament that ends queues its matches if its course asks."""
        workers = self.config.analysis_workers
        if workers < 1:
            return
        pool = AnalysisPool(workers=workers)
        told = self.config.on_analysed
        runner = JobRunner(
            self.storage.engine,
            pool,
            on_done=None if told is None else lambda job, error: told(job.match_id, error),
        )
        self.director.on_finished = runner.tournament_finished
        self.arena.analysis_waker = runner.wake
        try:
            await runner.run()
        finally:
            self.director.on_finished = None
            self.arena.analysis_waker = None
            # The running analyses are abandoned: their jobs are pending at the next start.
            pool.close(cancel=True, wait=False)

    def _start_hosting(self, port: int) -> asyncio.Task[None] | None:
        """Start this referee's own runner of hosted bots, if the config asks for one."""
        hosting = self.config.hosting
        if hosting is None or self.broker is not None:
            return None
        host = self.config.host
        target = f"{'127.0.0.1' if host in ('', '0.0.0.0', '::', '[::]') else host}:{port}"
        config = RunnerConfig(
            target=target,
            workdir=hosting.workdir,
            idle_stop_seconds=hosting.idle_stop_seconds,
            poll_seconds=hosting.poll_seconds,
        )
        return asyncio.create_task(self._host_bots(config), name="hosted bots")

    async def _host_bots(self, config: RunnerConfig) -> None:
        """Run the hosted bots; without a sandbox, say so in one line and run none."""
        try:
            await asyncio.to_thread(probe)
        except SandboxUnavailableError as error:
            LOG.warning("hosted bots are not run: %s", error)
            return
        if self.config.tls is not None:
            LOG.warning(
                "hosted bots are not run by a TLS referee itself: run `domino-arena serve "
                "--role runner` beside it (docs/hosting.md)"
            )
            return
        self.runner = Runner(self.storage.engine, config)
        await self.runner.run()


async def keep_lease(
    renew: Callable[[], object],
    on_lost: Callable[[lease.LeaseLostError], None],
    *,
    every: float = lease.RENEW_SECONDS,
) -> None:
    """Call ``renew`` (blocking, in a thread) every ``every`` seconds, until cancelled.

    A transient database error is logged and retried after the writer's backoff (capped at
    ``every``), forever (:func:`~.play.ownership.renewing`); once ``renew`` raises
    :class:`LeaseLostError`, it is logged, passed to ``on_lost`` and this returns. Any other
    error propagates.
    """

    async def renewed(_: object) -> None:
        pass

    try:
        await renewing(
            lambda: trio.to_thread.run_sync(renew),
            renewed,
            every=every,
            what="the lease on the database",
        )
    except lease.LeaseLostError as error:
        LOG.error("%s; stopping: this referee no longer serves the database", error)
        on_lost(error)


@contextlib.contextmanager
def serving_gc() -> Iterator[None]:
    """The garbage collector as a referee wants it, for the ``with`` block: what was loaded
    before it lives as long as the referee, so the collector stops scanning it
    (``gc.freeze``), and it collects less often (:data:`GC_THRESHOLDS`). Restored after (the
    main job's referee shares its process with the command line, and tests run it in theirs).
    """
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


class Served(Protocol):
    """A process's role that serves until told to stop: :class:`App`, or a cluster's gateway
    (``server/app_gateway.py``)."""

    async def serve(self, stop: asyncio.Event, on_ready: Callable[[int], None]) -> None: ...


def run(
    config: Config,
    storage: RatedStorage,
    on_ready: Callable[[int], None],
    make: Callable[[Config, RatedStorage], Served] = App,
) -> None:
    """Serve ``make(config, storage)`` in a new asyncio loop until SIGINT or SIGTERM (main
    thread only), with the collector tuned for serving (:func:`serving_gc`)."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        try:
            await make(config, storage).serve(stop, on_ready)
        finally:
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(signum)

    with serving_gc():
        asyncio.run(main())

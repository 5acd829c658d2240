"""The composition root of a cluster's gateway: the bot service and its lobby, relayed to the
match hosts over the broker (docs/cluster.md).

A gateway runs no match, so it has no arena and no trio: the gRPC bot service (authentication
against the database, the per-stream limits, batching) over a :class:`~.net.lobby.Lobby` whose
listener is the :class:`~.net.cluster.gateway.Relay`, and the spectator service for every
host's matches (:mod:`~.net.cluster.spectating`). Health says SERVING only while the
broker connection is up (Kubernetes readiness). Shutdown: health NOT_SERVING and no new
stream; the relay tells the hosts its streams are gone (so their seats start their reconnect
grace at once instead of after the heartbeat timeout); the streams close with SHUTTING_DOWN,
as on a single referee; the broker connection is drained last.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from domino_arena.server.app import ROLE_GATEWAY, Config
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.metrics import Metrics, MetricsServer
from domino_arena.server.net.cluster.broker import Broker
from domino_arena.server.net.cluster.gateway import Relay
from domino_arena.server.net.cluster.spectating import ClusterSpectators
from domino_arena.server.net.grpc_server import BotSide, GrpcServer
from domino_arena.server.net.live_access import LiveAccess
from domino_arena.server.net.lobby import Lobby
from domino_arena.server.play.arena import LOG


class Gateway:
    """One gateway: :meth:`serve` runs it in the current asyncio loop until ``stop`` is set.

    The storage (for the bots' tokens) is opened by the caller and not closed here.
    """

    def __init__(self, config: Config, storage: RatedStorage) -> None:
        self.config = config
        self.storage = storage
        self.lobby = Lobby()
        self.metrics = Metrics()
        self.broker = Broker(
            config.nats, config.node, self._broker_state, config.cluster, config.nats_security
        )
        self.relay = Relay(self.lobby, self.broker)
        self.port: int | None = None
        self.metrics_port: int | None = None
        self._server: GrpcServer | None = None

    def _broker_state(self, up: bool) -> None:
        self.relay.broker_state(up)
        if self._server is not None:
            self._server.follow(up)

    async def serve(self, stop: asyncio.Event, on_ready: Callable[[int], None]) -> None:
        """Connect to the broker, serve the bots until ``stop`` is set, shut down cleanly.

        Raises:
            BrokerError: the broker cannot be reached (nothing was bound).
            OSError: the address cannot be bound.
        """
        config = self.config
        await self.broker.connect()
        metrics_server: MetricsServer | None = None
        try:
            await self.relay.start()
            lobby = self.lobby
            self.metrics.watch_connected(lambda: len(lobby))
            self.metrics.watch_broker(ROLE_GATEWAY, self.broker)
            if config.metrics_port is not None:
                metrics_server = self.metrics.serve(config.host, config.metrics_port)
                self.metrics_port = metrics_server.port
                LOG.info("metrics on http://%s:%d/metrics", config.host, metrics_server.port)
            server = GrpcServer(
                f"{config.host}:{config.port}",
                bots=BotSide(lobby, self.storage, self.metrics),
                arena=None,
                director=None,
                spectators=ClusterSpectators(
                    self.broker,
                    self.storage,
                    access=LiveAccess(
                        self.storage,
                        admin_token=config.admin_token,
                        relay_token=config.relay_token,
                    ),
                    limits=config.watch_limits,
                ),
                tls=config.tls,
                limits=config.limits,
            )
            self._server = server
            await server.start()
            if not self.broker.connected:
                await server.set_ready(False)
            self.port = server.port
            on_ready(server.port)
            try:
                await stop.wait()
            finally:
                LOG.info("shutting down: %d bots connected", len(lobby))
                await server.stop_accepting()
                await self.relay.close()
                await server.close(config.shutdown_grace)
        finally:
            if metrics_server is not None:
                metrics_server.stop()
            await self.broker.close()

"""The referee's gRPC server: its options, its services, health checking and reflection.

It serves the bot stream (:mod:`.service`), the admin API (:mod:`.admin`) and the spectators
(:mod:`.spectators`) over the arena and the lobby it is given, and says SERVING on gRPC health
checking while it accepts calls. The app (``server/app.py``) decides when each step happens;
the shutdown steps that belong to the network are :meth:`GrpcServer.stop_accepting` (health
goes NOT_SERVING, no new bot stream is admitted) and, once the matches have ended,
:meth:`GrpcServer.close` (every bot stream is closed with SHUTTING_DOWN, then the server stops
with a grace for the handlers).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from domino_arena.server.net.admin import AdminServicer
from domino_arena.server.net.lobby import Lobby
from domino_arena.server.net.service import BotServicer
from domino_arena.server.net.spectators import SpectatorServicer
from domino_arena.server.play.arena import SHUTTING_DOWN, Arena
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc
from domino_arena.v1 import referee_pb2 as pb
from domino_arena.v1 import referee_pb2_grpc as pb_grpc

SERVER_OPTIONS: Final[list[tuple[str, Any]]] = [
    # Refuse a port another process holds instead of silently sharing it (grpc's default).
    ("grpc.so_reuseport", 0),
    # Notice bots whose network vanished without a FIN.
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
    ("grpc.keepalive_permit_without_calls", 1),
]

SERVICE_NAMES: Final[Sequence[str]] = (
    pb.DESCRIPTOR.services_by_name["BotService"].full_name,
    admin_pb.DESCRIPTOR.services_by_name["AdminService"].full_name,
    admin_pb.DESCRIPTOR.services_by_name["SpectatorService"].full_name,
)
"""The full names of the services of the referee (for health checking and reflection)."""


class GrpcServer:
    """The gRPC server of one referee, bound to ``address`` (port 0: any free port).

    Raises:
        OSError: the address cannot be bound.
    """

    def __init__(self, arena: Arena, lobby: Lobby, address: str) -> None:
        self.lobby = lobby
        self._server = grpc.aio.server(options=SERVER_OPTIONS)
        pb_grpc.add_BotServiceServicer_to_server(
            BotServicer(lobby, arena.storage, arena.metrics), self._server
        )
        admin_pb_grpc.add_AdminServiceServicer_to_server(AdminServicer(arena), self._server)
        admin_pb_grpc.add_SpectatorServiceServicer_to_server(
            SpectatorServicer(arena.spectators, arena.storage), self._server
        )
        self._health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self._health, self._server)
        reflection.enable_server_reflection(
            (*SERVICE_NAMES, health.SERVICE_NAME, reflection.SERVICE_NAME), self._server
        )
        try:
            port = self._server.add_insecure_port(address)
        except RuntimeError as exc:
            raise OSError(f"cannot listen on {address}: {exc}") from None
        if port == 0:
            raise OSError(f"cannot listen on {address}")
        self.port: Final = port
        """The bound port (the real one when ``address`` asks for port 0)."""
        self._started = False

    async def start(self) -> None:
        """Accept calls, and say SERVING for the referee and each of its services."""
        await self._server.start()
        self._started = True
        for name in ("", *SERVICE_NAMES):
            await self._health.set(name, health_pb2.HealthCheckResponse.SERVING)

    async def stop_accepting(self) -> None:
        """Say NOT_SERVING and admit no new bot stream (the first step of a shutdown)."""
        await self._health.enter_graceful_shutdown()
        self.lobby.closing = True

    async def close(self, grace: float) -> None:
        """Close every bot stream with SHUTTING_DOWN, then stop, giving handlers ``grace`` s."""
        self.lobby.close_all(
            grpc.StatusCode.UNAVAILABLE,
            SHUTTING_DOWN,
            pb.Error(code=pb.ERROR_CODE_SHUTTING_DOWN, message=SHUTTING_DOWN),
        )
        if self._started:
            await self._server.stop(grace)

"""The referee's gRPC server: its options, its services, health checking and reflection.

It serves the bot stream (:mod:`.service`), the admin API (:mod:`.admin`), self-registration
(:mod:`.registration`) and the spectators (:mod:`.spectators`) over the arena and the lobby it
is given, and says SERVING on gRPC health checking while it accepts calls. The app
(``server/app.py``) decides when each step happens; the shutdown steps that belong to the
network are :meth:`GrpcServer.stop_accepting` (health goes NOT_SERVING, no new bot stream is
admitted) and, once the matches have ended, :meth:`GrpcServer.close` (every bot stream is
closed with SHUTTING_DOWN, then the server stops with a grace for the handlers).
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2, reflection_pb2_grpc

from domino_arena.server.metrics import Metrics
from domino_arena.server.net.admin import AdminServicer
from domino_arena.server.net.limits import DEFAULT_LIMITS, StreamLimits
from domino_arena.server.net.live_access import LiveAccess
from domino_arena.server.net.lobby import Lobby
from domino_arena.server.net.registration import RegistrationServicer
from domino_arena.server.net.service import BotServicer, TokenCheck
from domino_arena.server.net.spectators import SpectatorServicer, add_spectator_service
from domino_arena.server.net.table_service import TableServicer
from domino_arena.server.net.watch_limits import DEFAULT_WATCH_LIMITS, WatchLimits
from domino_arena.server.play.arena import SHUTTING_DOWN, Arena
from domino_arena.server.play.people import Table
from domino_arena.server.tournaments.lifecycle.director import Director
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
    admin_pb.DESCRIPTOR.services_by_name["RegistrationService"].full_name,
    admin_pb.DESCRIPTOR.services_by_name["SpectatorService"].full_name,
)
"""The full names of the services of the referee (for health checking and reflection)."""
BOT_SERVICE: Final = SERVICE_NAMES[0]
SPECTATOR_SERVICE: Final = SERVICE_NAMES[3]
TABLE_SERVICE: Final = admin_pb.DESCRIPTOR.services_by_name["TableService"].full_name
"""People at the table (docs/people.md): served by a referee that serves both its bots and its
arena (a single referee), beside :data:`SERVICE_NAMES`."""


class TlsFileError(ValueError):
    """A TLS file of the server that cannot be used: the message names the file and why."""


def _read_pem(path: str, flag: str, kind: bytes) -> bytes:
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError as exc:
        raise TlsFileError(f"{flag}: cannot read {path}: {exc.strerror or exc}") from None
    if b"-----BEGIN " not in data:
        raise TlsFileError(f"{flag}: {path} is not a PEM file (no '-----BEGIN' line)")
    if kind + b"-----" not in data:
        raise TlsFileError(f"{flag}: {path} holds no {kind.decode().lower()} (PEM)")
    return data


@dataclass(frozen=True, slots=True)
class ServerTls:
    """The server's certificate chain and key (PEM), and for mutual TLS the clients' CA."""

    certificate_chain: bytes
    private_key: bytes
    client_ca: bytes | None = None
    """Mutual TLS: every client must present a certificate signed by this CA."""

    @classmethod
    def load(cls, cert_file: str, key_file: str, client_ca_file: str | None = None) -> ServerTls:
        """Read and check the files: each readable PEM, the key the certificate's.

        Raises:
            TlsFileError: a file is missing, unreadable or not PEM, or the key does not match
                the certificate.
        """
        chain = _read_pem(cert_file, "--tls-cert", b"CERTIFICATE")
        key = _read_pem(key_file, "--tls-key", b"PRIVATE KEY")
        client_ca = None
        if client_ca_file is not None:
            client_ca = _read_pem(client_ca_file, "--tls-client-ca", b"CERTIFICATE")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        try:
            context.load_cert_chain(cert_file, key_file)
        except ssl.SSLError as exc:
            reason = "does not match the certificate" if "MISMATCH" in str(exc) else str(exc)
            raise TlsFileError(
                f"--tls-key: the key in {key_file} {reason} in {cert_file}"
            ) from None
        except OSError as exc:
            raise TlsFileError(f"--tls-cert: cannot load {cert_file}: {exc}") from None
        if client_ca_file is not None:
            try:
                context.load_verify_locations(client_ca_file)
            except (ssl.SSLError, OSError) as exc:
                raise TlsFileError(
                    f"--tls-client-ca: {client_ca_file} holds no usable CA certificate: {exc}"
                ) from None
        return cls(chain, key, client_ca)

    def credentials(self) -> grpc.ServerCredentials:
        return grpc.ssl_server_credentials(
            [(self.private_key, self.certificate_chain)],
            root_certificates=self.client_ca,
            require_client_auth=self.client_ca is not None,
        )


@dataclass(frozen=True, slots=True)
class BotSide:
    """What the bot service needs: the lobby of streams, the token check and the metrics."""

    lobby: Lobby
    storage: TokenCheck
    metrics: Metrics


class GrpcServer:
    """The gRPC server of one referee process, bound to ``address`` (port 0: any free port).

    It serves the bot service when given ``bots`` (a single referee, a cluster's gateway) and
    the admin API, registration and the spectators when given ``arena`` and the ``director``
    of its tournaments (a single referee, a cluster's match host); a gateway serves
    ``spectators`` (every host's matches) instead.
    With ``tls`` it serves TLS only (a plaintext client is refused at the handshake), and with
    its ``client_ca`` mutual TLS. ``limits`` bound every bot stream (:mod:`.limits`).
    ``sign_record`` signs the records the admin API hands out (``serve --record-key``).
    ``people``: the tickets of people's seats; with it a single referee (bots and arena) serves
    the TableService, authorised by ``relay_token`` (docs/people.md).

    Raises:
        OSError: the address cannot be bound.
    """

    def __init__(
        self,
        address: str,
        *,
        bots: BotSide | None,
        arena: Arena | None,
        director: Director | None,
        spectators: admin_pb_grpc.SpectatorServiceServicer | None = None,
        tls: ServerTls | None = None,
        limits: StreamLimits = DEFAULT_LIMITS,
        relay_token: str = "",
        watch_limits: WatchLimits = DEFAULT_WATCH_LIMITS,
        sign_record: Callable[[str], str] | None = None,
        people: Table | None = None,
    ) -> None:
        self.lobby = None if bots is None else bots.lobby
        self._server = grpc.aio.server(options=SERVER_OPTIONS)
        names: list[str] = []
        seats_people = people is not None and bots is not None and arena is not None
        if bots is not None:
            tickets = people if seats_people else None
            servicer = BotServicer(bots.lobby, bots.storage, bots.metrics, limits, tickets)
            pb_grpc.add_BotServiceServicer_to_server(servicer, self._server)
            names.append(BOT_SERVICE)
        if arena is not None:
            if director is None:
                raise ValueError("director: the admin API needs the arena's director too")
            admin_pb_grpc.add_AdminServiceServicer_to_server(
                AdminServicer(arena, director, sign_record), self._server
            )
            admin_pb_grpc.add_RegistrationServiceServicer_to_server(
                RegistrationServicer(arena.storage, arena.lobby), self._server
            )
            access = LiveAccess(
                arena.storage, admin_token=arena.admin_token, relay_token=relay_token
            )
            add_spectator_service(
                SpectatorServicer(
                    arena.spectators,
                    arena.storage,
                    arena.lobby,
                    lambda: arena.ladders,
                    access=access,
                    limits=watch_limits,
                ),
                self._server,
            )
            names += [name for name in SERVICE_NAMES if name != BOT_SERVICE]
            if seats_people:
                assert people is not None
                admin_pb_grpc.add_TableServiceServicer_to_server(
                    TableServicer(arena, people, relay_token), self._server
                )
                names.append(TABLE_SERVICE)
        elif spectators is not None:  # a cluster's gateway: every host's matches
            add_spectator_service(spectators, self._server)
            names.append(SPECTATOR_SERVICE)
        self.services: Final = tuple(names)
        """The full names of the services served (for health checking and reflection)."""
        self._health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self._health, self._server)
        _enable_reflection((*self.services, health.SERVICE_NAME), self._server)
        try:
            if tls is None:
                port = self._server.add_insecure_port(address)
            else:
                port = self._server.add_secure_port(address, tls.credentials())
        except RuntimeError as exc:
            raise OSError(f"cannot listen on {address}: {exc}") from None
        if port == 0:
            raise OSError(f"cannot listen on {address}")
        self.port: Final = port
        """The bound port (the real one when ``address`` asks for port 0)."""
        self._started = False
        self._stopping = False
        self._ready = True
        self._tasks: set[asyncio.Task[None]] = set()
        """False while a dependency the process serves through is away (a cluster role's
        broker connection): health says NOT_SERVING then, so Kubernetes stops routing to it."""

    async def start(self) -> None:
        """Accept calls, and say SERVING for the referee and each of its services (unless a
        dependency is away, see :meth:`set_ready`)."""
        await self._server.start()
        self._started = True
        await self._say()

    async def set_ready(self, ready: bool) -> None:
        """Say SERVING (``ready``) or NOT_SERVING on health checking, for every service."""
        self._ready = ready
        if self._started:
            await self._say()

    def follow(self, ready: bool) -> None:
        """:meth:`set_ready` from a plain call (a broker callback): done in a task."""
        task = asyncio.get_running_loop().create_task(self.set_ready(ready))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _say(self) -> None:
        if self._stopping:
            return
        status = (
            health_pb2.HealthCheckResponse.SERVING
            if self._ready
            else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        for name in ("", *self.services):
            await self._health.set(name, status)

    async def stop_accepting(self) -> None:
        """Say NOT_SERVING and admit no new bot stream (the first step of a shutdown)."""
        self._stopping = True
        await self._health.enter_graceful_shutdown()
        if self.lobby is not None:
            self.lobby.closing = True

    async def close(self, grace: float) -> None:
        """Close every bot stream with SHUTTING_DOWN, then stop, giving handlers ``grace`` s."""
        if self.lobby is not None:
            self.lobby.close_all(
                grpc.StatusCode.UNAVAILABLE,
                SHUTTING_DOWN,
                pb.Error(code=pb.ERROR_CODE_SHUTTING_DOWN, message=SHUTTING_DOWN),
            )
        if self._started:
            await self._server.stop(grace)


REFLECTION_V1: Final = "grpc.reflection.v1.ServerReflection"
"""Server reflection's stable name; grpcio-reflection serves only v1alpha (the same messages,
field for field, under another package), and newer tools (grpcurl, Postman) ask for v1."""


def _enable_reflection(services: Sequence[str], server: grpc.aio.Server) -> None:
    """Serve reflection as v1alpha and as v1: one servicer, the v1 method decoding and encoding
    the identical v1alpha messages."""
    names = (*services, reflection.SERVICE_NAME, REFLECTION_V1)
    servicer = reflection.aio.ReflectionServicer(names)
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]
    v1 = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(REFLECTION_V1, {"ServerReflectionInfo": v1}),)
    )

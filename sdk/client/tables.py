"""The referee's ``TableService`` over ``grpc.aio``, for the web face: seat a person, list the
opponents they may choose (docs/people.md).

Every call carries the referee's relay token (``authorization: Bearer <relay token>``): the
referee trusts the web face to say who the person is, as it trusts it to relay signed-in live
matches. Beside :class:`~.organizer.Organizer` and :class:`~.spectator.Spectator`, the only
clients the web face holds (only the SDK's client and the network edge speak gRPC).
"""

from __future__ import annotations

from typing import Final

import grpc

from domino_arena.v1 import admin_pb2, admin_pb2_grpc

from .errors import RefereeError
from .tls import ClientTls

CALL_SECONDS: Final = 10.0
"""How long one call may take."""


class TableError(RefereeError):
    """The referee refused the call or could not be reached; ``code`` is the gRPC status name
    (``INVALID_ARGUMENT``, ``PERMISSION_DENIED``, ``RESOURCE_EXHAUSTED``, ``UNAVAILABLE``...)
    and ``message`` its words."""


class TableClient:
    """A client of one referee's ``TableService`` (one channel, made in the running loop on
    first use, closed by :meth:`close`)."""

    def __init__(self, server: str, relay_token: str, *, tls: ClientTls | None = None) -> None:
        self.server = server
        self.tls = tls
        self._metadata = (("authorization", f"Bearer {relay_token}"),)
        self._channel: grpc.aio.Channel | None = None
        self._stub: admin_pb2_grpc.TableServiceAsyncStub | None = None

    def _table(self) -> admin_pb2_grpc.TableServiceAsyncStub:
        if self._stub is None:
            if self.tls is None:
                self._channel = grpc.aio.insecure_channel(self.server)
            else:
                self._channel = grpc.aio.secure_channel(self.server, self.tls.credentials())
            self._stub = admin_pb2_grpc.TableServiceStub(self._channel)
        return self._stub

    async def close(self) -> None:
        channel, self._channel, self._stub = self._channel, None, None
        if channel is not None:
            await channel.close()

    async def list_opponents(
        self, request: admin_pb2.ListOpponentsRequest
    ) -> admin_pb2.ListOpponentsResponse:
        """``ListOpponents``.

        Raises:
            TableError: the referee refused or cannot be reached.
        """
        try:
            return await self._table().ListOpponents(
                request, metadata=self._metadata, timeout=CALL_SECONDS
            )
        except grpc.aio.AioRpcError as exc:
            raise TableError(exc.code().name, exc.details() or "") from None

    async def seat_person(
        self, request: admin_pb2.SeatPersonRequest
    ) -> admin_pb2.SeatPersonResponse:
        """``SeatPerson``.

        Raises:
            TableError: the referee refused or cannot be reached.
        """
        try:
            return await self._table().SeatPerson(
                request, metadata=self._metadata, timeout=CALL_SECONDS
            )
        except grpc.aio.AioRpcError as exc:
            raise TableError(exc.code().name, exc.details() or "") from None

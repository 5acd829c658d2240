"""An organizer's calls of the referee's admin API over ``grpc.aio``, for the web face.

The web face acts on the referee with the signed-in organizer's own token (never a token of
its own), so the referee checks the organizer's authority exactly as it does for the command
line (docs/web.md: the organizer's page). The command line's admin client is blocking
(server/cli/admin_client.py); the web face serves on an event loop, hence this small async
client, beside :class:`~.spectator.Spectator` (the only other client the web face holds).
"""

from __future__ import annotations

from typing import Final

import grpc

from domino_arena.v1 import admin_pb2, admin_pb2_grpc

from .errors import RefereeError
from .tls import ClientTls

ADMIN_TIMEOUT: Final = 10.0
"""Seconds one admin call may take."""


class OrganizerError(RefereeError):
    """The referee refused the call or could not be reached; ``code`` is the gRPC status name
    (``NOT_FOUND``, ``PERMISSION_DENIED``, ``UNAVAILABLE``...) and ``message`` its words."""


class Organizer:
    """An organizer's client of one referee's admin API (one channel, closed by
    :meth:`close`)."""

    def __init__(self, server: str, *, tls: ClientTls | None = None) -> None:
        self.server = server
        if tls is None:
            self._channel = grpc.aio.insecure_channel(server)
        else:
            self._channel = grpc.aio.secure_channel(server, tls.credentials())
        self._stub = admin_pb2_grpc.AdminServiceStub(self._channel)

    async def close(self) -> None:
        await self._channel.close()

    async def set_owner_enabled(
        self, token: str, course: str, owner: str, *, enabled: bool, timeout: float = ADMIN_TIMEOUT
    ) -> None:
        """``EnableOwner`` or ``DisableOwner`` (the referee then closes the owner's bots'
        streams at once) with the organizer's ``token``.

        Raises:
            OrganizerError: the referee refused or could not be reached.
        """
        call = self._stub.EnableOwner if enabled else self._stub.DisableOwner
        request = admin_pb2.OwnerRequest(course=course, name=owner)
        metadata = (("authorization", f"Bearer {token}"),)
        try:
            await call(request, metadata=metadata, timeout=timeout)
        except grpc.aio.AioRpcError as exc:
            raise OrganizerError(exc.code().name, exc.details() or "") from None

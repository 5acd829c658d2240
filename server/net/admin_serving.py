"""What the parts of ``AdminServicer`` share: the call's context type and the servicer's
``_serve``, through which every RPC passes (the token, the caller's scope, the refusal's status).

Each group of RPCs (bots, checks, courses, grades, tournaments) is a mixin whose methods take
``self`` as :class:`Serving` (or a protocol extending it with the group's handler object), so
the group's module needs nothing from ``admin.py`` and ``admin.py`` needs only to list it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

import grpc
from google.protobuf.message import Message

Request = TypeVar("Request", bound=Message)
Response = TypeVar("Response", bound=Message)
Context = grpc.aio.ServicerContext[Any, Any]


class Serving(Protocol):
    """What a mixin needs of the servicer it is mixed into (``AdminServicer``)."""

    @property
    def arena(self) -> Any: ...

    async def _serve(
        self,
        context: Context,
        handler: Callable[[Request], Awaitable[Response]],
        request: Request,
    ) -> Response: ...

    def _handed_out(self, record: str | None) -> str:
        """A record as the API hands it out (signed when the referee has a key)."""

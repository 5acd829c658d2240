"""The referee's refusals and a lost stream, as the exceptions a bot's runner acts on.

Whether :func:`~domino_arena.sdk.runner.run` reconnects after one is the exception's
``retryable``; the tables map the referee's in-band codes and gRPC statuses onto them.
"""

from __future__ import annotations

from typing import Final

import grpc

from domino_arena.v1 import referee_pb2


class RefereeError(Exception):
    """The referee refused or ended the connection.

    Attributes:
        code: the referee's code: an ``ErrorCode`` name without its prefix for an in-band
            error (``"UNAUTHENTICATED"``), or a gRPC status name (``"UNAVAILABLE"``).
        message: the referee's own words.
        field: the field of our message it objected to, if it said.
        match_id: the match it concerns, if any.
    """

    retryable: bool = True
    """Whether :func:`~domino_arena.sdk.runner.run` reconnects after this error (with backoff)."""

    def __init__(self, code: str, message: str, *, field: str = "", match_id: str = "") -> None:
        self.code = code
        self.message = message
        self.field = field
        self.match_id = match_id
        where = f" (field '{field}')" if field else ""
        super().__init__(f"referee: {code}: {message or 'no details'}{where}")


class AuthenticationError(RefereeError):
    """The referee does not admit the bot: an unknown name, a wrong token, a disabled or deleted
    bot, or a token an admin withdrew while the bot was connected (its message begins "token
    rotated", "bot disabled" or "bot deleted"). Never retried: the same token would be refused
    again; get the bot created, enabled or a new token from the referee's admin.
    """

    retryable = False


class ProtocolError(RefereeError):
    """The two sides disagree about the protocol (a bad hello, an unknown game, a server that is
    not a Domino Arena referee). Never retried: the same hello would fail the same way."""

    retryable = False


class ConnectionLostError(RefereeError):
    """The stream could not be opened or it ended (referee down, network, shutdown)."""


class TakenOverError(RefereeError):
    """Another stream of this bot authenticated and took over its seats (``ALREADY_CONNECTED``).

    Not retried: the other stream is another process running the same bot, and two processes
    reconnecting in turn would take the seats from each other for ever.
    """

    retryable = False


_IN_BAND: Final[dict[int, type[RefereeError]]] = {
    referee_pb2.ERROR_CODE_UNAUTHENTICATED: AuthenticationError,
    referee_pb2.ERROR_CODE_BAD_HELLO: ProtocolError,
    referee_pb2.ERROR_CODE_UNKNOWN_GAME: ProtocolError,
    referee_pb2.ERROR_CODE_MALFORMED: ProtocolError,
}
"""In-band error codes that end the hello for good; every other code may be retried."""

_STATUS: Final[dict[grpc.StatusCode, type[RefereeError]]] = {
    grpc.StatusCode.UNAUTHENTICATED: AuthenticationError,
    grpc.StatusCode.PERMISSION_DENIED: AuthenticationError,
    grpc.StatusCode.INVALID_ARGUMENT: ProtocolError,
    grpc.StatusCode.UNIMPLEMENTED: ProtocolError,
    grpc.StatusCode.FAILED_PRECONDITION: ProtocolError,
    grpc.StatusCode.ALREADY_EXISTS: RefereeError,
    grpc.StatusCode.ABORTED: TakenOverError,
}
"""gRPC statuses that are the referee's answer; every other one is a lost connection.

The referee ends a stream that another stream of the same bot took over with an in-band
``ALREADY_CONNECTED`` error and then ABORTED; the status alone may arrive first (gRPC reports a
finished call's status before any message still buffered), so ABORTED means a takeover too.
"""


def error_from_message(error: referee_pb2.Error) -> RefereeError:
    """Return the exception for an in-band ``Error`` message."""
    name = referee_pb2.ErrorCode.Name(error.code).removeprefix("ERROR_CODE_")
    cls = _IN_BAND.get(error.code, RefereeError)
    return cls(name, error.message, field=error.field, match_id=error.match_id)


def error_from_status(code: grpc.StatusCode, details: str) -> RefereeError:
    """Return the exception for a stream that ended with gRPC status ``code``."""
    cls = _STATUS.get(code, ConnectionLostError)
    return cls(code.name, details)

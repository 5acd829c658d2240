"""The clock of a request and a match's time limits <-> ``Clock`` and ``TimeControl``.

The wire counts whole milliseconds; the referee keeps seconds. The referee's own
``TimeControl`` is server code the SDK does not import, so its pair lives beside the referee's
seats (``domino_arena.server.net.wire``); this module holds what both sides share.
"""

from __future__ import annotations

from domino_arena.sdk.bot import Clock, TimeLimits
from domino_arena.v1 import referee_pb2


def ms(seconds: float) -> int:
    """Return ``seconds`` as the wire's whole milliseconds, never below 0 (a spent bank)."""
    return max(0, round(seconds * 1000))


def clock_from_proto(message: referee_pb2.Clock, received: float) -> Clock:
    """Return the bot's clock for a request that arrived at ``received`` (``time.monotonic``)."""
    return Clock(message.move_ms, message.bank_ms, received)


def time_limits_from_proto(message: referee_pb2.TimeControl) -> TimeLimits:
    """Return a match's time limits as ``MatchStart`` reports them, in milliseconds."""
    return TimeLimits(message.move_ms, message.bank_ms, message.grace_ms)

"""The bounds of one bot stream: every limit the ``Play`` service enforces, by name.

A stream past one of them gets an in-band :class:`Error` naming the limit and ends with the
status given here; its seats see a disconnection, handled by the fault policy like any other
(see docs/referee.md, "Limits"). :class:`StreamLimits` holds them for one servicer, so a test
can use small values; the referee uses :data:`DEFAULT_LIMITS`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

OUTBOX_MESSAGES: Final = 10_000
"""Messages queued for one stream and not yet written: past it the stream is closed.

An honest bot reads what it is sent, so its outbox holds what waits for the next write (a few
messages per match it plays); only a bot that stops reading, while it keeps the referee busy,
can fill it. Every queued message is small (the errors echo at most :data:`ECHO_CHARS` of what
the bot sent), so this bounds the memory a stream holds."""

SEAT_INBOX_REPLIES: Final = 64
"""Replies queued for one seat and not yet taken by its match: past it the stream is closed.

A seat takes a reply each time it waits for one; an honest bot sends one reply per request, so
its seats' inboxes hold one or two replies at most (a late one after a timeout)."""

REPLIES_PER_SECOND: Final = 2_000.0
"""The sustained rate of replies a stream may send (each reply of an ``ActionReplies`` counts).

Generous: a bot playing 200 matches at once, each at 10 moves a second, stays under it."""

REPLY_BURST: Final = 4_000
"""How many replies a stream may send at once above the sustained rate (the bucket's size)."""

HELLO_TIMEOUT: Final = 5.0
"""Seconds a new stream has to send its Hello: past it the stream ends with DEADLINE_EXCEEDED."""

CLOSE_GRACE: Final = 2.0
"""Seconds a stream closed by the referee has to read the last Error before the status is sent
anyway (a bot that never reads gets only the status)."""

ECHO_CHARS: Final = 64
"""The most characters of a bot's own text (a match id) that an in-band error repeats."""

MAX_MESSAGE_BYTES: Final = 4 * 1024 * 1024
"""The largest message the referee receives (gRPC's default): a larger one ends the stream with
RESOURCE_EXHAUSTED before it reaches the referee's code."""


@dataclass(frozen=True, slots=True)
class StreamLimits:
    """The limits of the bot streams of one servicer (the defaults are the constants above)."""

    outbox_messages: int = OUTBOX_MESSAGES
    seat_inbox_replies: int = SEAT_INBOX_REPLIES
    replies_per_second: float = REPLIES_PER_SECOND
    reply_burst: int = REPLY_BURST
    hello_timeout: float = HELLO_TIMEOUT
    close_grace: float = CLOSE_GRACE
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)
    """The clock of the reply rate (seconds; tests pass a fake one)."""


DEFAULT_LIMITS: Final = StreamLimits()


class TokenBucket:
    """``rate`` tokens a second up to ``burst``; :meth:`take` spends one, False when empty."""

    __slots__ = ("_burst", "_clock", "_last", "_rate", "_tokens")

    def __init__(self, rate: float, burst: int, clock: Callable[[], float]) -> None:
        self._rate = rate
        self._burst = float(burst)
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock()

    def take(self) -> bool:
        """Spend one token if there is one; False (nothing spent) if the bucket is empty."""
        now = self._clock()
        self._tokens = min(self._burst, self._tokens + (now - self._last) * self._rate)
        self._last = now
        if self._tokens < 1.0:
            return False
        self._tokens -= 1.0
        return True


def echo(text: str) -> str:
    """Return ``text`` quoted for an in-band error, cut to :data:`ECHO_CHARS` characters."""
    if len(text) <= ECHO_CHARS:
        return repr(text)
    return f"{text[:ECHO_CHARS]!r}... ({len(text)} characters)"


def peer_host(peer: str) -> str:
    """The host of a gRPC peer string (``ipv4:1.2.3.4:5678`` -> ``ipv4:1.2.3.4``): one
    machine is one peer whichever port it calls from."""
    if peer.startswith("ipv6:"):
        host, _, _ = peer.rpartition("]:")
        return host + "]" if host else peer
    host, sep, _ = peer.rpartition(":")
    return host if sep and ":" in host else peer

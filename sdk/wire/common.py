"""What every converter of the wire family shares: its error and its message caches.

Encoding runs on every move of the referee, so the messages of tiles, actions, steps and games
are built once and copied into place (``extend`` copies), never rebuilt field by field; the
caches here are where those built messages are kept, each bounded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeVar

from google.protobuf.message import Message


class ConversionError(ValueError):
    """A message (or value) that has no faithful counterpart on the other side.

    Attributes:
        field: the path of the offending field, e.g. ``"action.play.tile"``.
        problem: what is there, e.g. ``"missing"`` or ``"9"``.
        expected: what would have been accepted.
    """

    def __init__(self, field: str, problem: str, expected: str) -> None:
        self.field = field
        self.problem = problem
        self.expected = expected
        where = f"{field}: " if field else ""
        super().__init__(f"{where}{problem}; expected {expected}")

    def under(self, prefix: str) -> ConversionError:
        """Return this error with its field path placed under ``prefix``."""
        field = f"{prefix}.{self.field}" if self.field else prefix
        return ConversionError(field, self.problem, self.expected)


K = TypeVar("K")
M = TypeVar("M")


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def field_bytes(number: int, message: Message) -> bytes:
    """Return the wire bytes of ``message`` as field ``number`` of the message holding it.

    Filling a repeated message field from such bytes (one ``MergeFromString`` of them all,
    joined) is several times faster than copying the messages in one by one, and encoding runs
    on every move of the referee.
    """
    payload = message.SerializeToString()
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


CACHE_LIMIT: Final = 8192
"""Entries a message cache keeps before it starts over, so it never grows without bound."""


def cached(cache: dict[K, M], key: K, build: Callable[[K], M]) -> M:
    """Return the message built for ``key`` (by equality), building it once."""
    message = cache.get(key)
    if message is None:
        if len(cache) >= CACHE_LIMIT:
            cache.clear()
        message = cache[key] = build(key)
    return message


def memo(cache: dict[int, tuple[K, M]], value: K, build: Callable[[K], M]) -> M:
    """Return the message built for the object ``value`` (by identity), building it once.

    The engines hand out the same action, log entry and trick objects move after move, and
    hashing a dataclass costs about as much as building a small message, so these caches key
    on ``id``.
    The entry keeps ``value`` alive, so its id cannot be reused while the entry exists.
    """
    hit = cache.get(id(value))
    if hit is not None and hit[0] is value:
        return hit[1]
    if len(cache) >= CACHE_LIMIT:
        cache.clear()
    message = build(value)
    cache[id(value)] = (value, message)
    return message

"""Who is connected through which gateway: the streams, their JSON, and the hosts' board.

A gateway announces each bot stream it admits and each it loses on :data:`~.subjects.PRESENCE`,
and every :data:`HEARTBEAT_SECONDS` publishes its whole list on :data:`~.subjects.HEARTBEAT`,
which corrects whatever a host missed (a host that started late, a message lost while NATS
restarted). A gateway that stays silent for :data:`GATEWAY_TIMEOUT` is taken for dead and its
bots for disconnected, so their seats start their reconnect grace (the bots reconnect through
another gateway). This is the shape of lila-ws's "connected users" pushes to lila.

A bot has one stream at a time: of two streams of one bot (it reconnected through another
gateway before the first noticed the drop), the newer wins (:meth:`Stream.newer_than`: the
wall-clock time of the Hello, then the id), on the hosts and on the gateway holding the older,
which closes it as a local takeover would.

The messages are small JSON objects read defensively: they come from the cluster's own
gateways, but a malformed one is logged and ignored (:class:`PresenceError`), never trusted.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

HEARTBEAT_SECONDS: Final = 1.0
"""How often a gateway publishes its whole list."""
GATEWAY_TIMEOUT: Final = 4.0
"""How long a host waits for a gateway's heartbeat before its bots count as disconnected."""
MAX_GAMES: Final = 16
"""The most games one stream may list (the referee knows four)."""


class PresenceError(ValueError):
    """A presence message that does not decode: which field, what was expected."""


@dataclass(frozen=True, slots=True)
class Stream:
    """One authenticated bot stream held by a gateway."""

    name: str
    games: tuple[str, ...]
    gateway: str
    """The node name of the gateway holding it."""
    id: str
    """Unique in the cluster: the gateway's node name, its run and a counter."""
    since: float
    """When its Hello was admitted (seconds since the epoch, the gateway's clock)."""

    def newer_than(self, other: Stream) -> bool:
        """Whether this stream replaces ``other`` (another stream of the same bot)."""
        return (self.since, self.id) > (other.since, other.id)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "games": list(self.games),
            "gateway": self.gateway,
            "id": self.id,
            "since": self.since,
        }

    @classmethod
    def from_json(cls, value: object) -> Stream:
        """Raises PresenceError: not an object of the fields above, each of its type."""
        if not isinstance(value, dict):
            raise PresenceError(f"a stream must be an object, not {type(value).__name__}")
        games = value.get("games")
        if not isinstance(games, list) or len(games) > MAX_GAMES:
            raise PresenceError(f"stream.games must be a list of at most {MAX_GAMES} names")
        since = value.get("since")
        if not isinstance(since, int | float) or isinstance(since, bool):
            raise PresenceError("stream.since must be a number (seconds since the epoch)")
        return cls(
            name=_text(value, "name"),
            games=tuple(_text({"game": g}, "game") for g in games),
            gateway=_text(value, "gateway"),
            id=_text(value, "id"),
            since=float(since),
        )


def _text(value: dict[str, Any], key: str) -> str:
    text = value.get(key)
    if not isinstance(text, str) or not text or len(text) > 200:
        raise PresenceError(f"stream.{key} must be a string of 1-200 characters")
    return text


def encode_change(kind: str, stream: Stream) -> bytes:
    """A :data:`~.subjects.PRESENCE` message: ``kind`` is ``up`` or ``down``."""
    return json.dumps({"kind": kind, "stream": stream.to_json()}).encode()


def decode_change(data: bytes) -> tuple[str, Stream]:
    """Raises PresenceError: not a change message."""
    value = _object(data)
    kind = value.get("kind")
    if kind not in ("up", "down"):
        raise PresenceError(f"kind must be 'up' or 'down', not {kind!r}")
    return kind, Stream.from_json(value.get("stream"))


def encode_heartbeat(gateway: str, streams: Iterable[Stream], *, back: bool = False) -> bytes:
    """A :data:`~.subjects.HEARTBEAT` message: the gateway and every stream it holds; ``back``:
    the gateway has just come back on the broker, so what the hosts sent its bots meanwhile
    was lost (NATS keeps nothing for an absent subscriber)."""
    value: dict[str, object] = {"gateway": gateway, "streams": [s.to_json() for s in streams]}
    if back:
        value["back"] = True
    return json.dumps(value).encode()


def decode_heartbeat(data: bytes) -> tuple[str, list[Stream], bool]:
    """The gateway, its streams and whether it is back from an outage.

    Raises PresenceError: not a heartbeat message."""
    value = _object(data)
    gateway = _text(value, "gateway")
    streams = value.get("streams")
    if not isinstance(streams, list):
        raise PresenceError("streams must be a list")
    back = value.get("back", False)
    if not isinstance(back, bool):
        raise PresenceError("back must be true or false")
    return gateway, [Stream.from_json(s) for s in streams], back


def _object(data: bytes) -> dict[str, Any]:
    try:
        value = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PresenceError(f"not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise PresenceError("the message must be a JSON object")
    return value


class Board:
    """A host's view of every gateway's streams: the newest stream of each bot, and when each
    gateway was last heard from. Pure bookkeeping (the clock is passed in): :meth:`up`,
    :meth:`down`, :meth:`heartbeat` and :meth:`expire` return what changed, as
    ``(appeared, gone)`` streams, for the caller to act on.
    """

    def __init__(self) -> None:
        self.streams: dict[str, Stream] = {}
        """The bot name -> its stream now."""
        self.heard: dict[str, float] = {}
        """The gateway -> when it was last heard from (the caller's clock)."""

    def up(self, stream: Stream, now: float) -> tuple[list[Stream], list[Stream]]:
        self.heard[stream.gateway] = now
        old = self.streams.get(stream.name)
        if old is not None and (old.id == stream.id or not stream.newer_than(old)):
            return [], []
        self.streams[stream.name] = stream
        return [stream], [] if old is None else [old]

    def down(self, stream: Stream, now: float) -> tuple[list[Stream], list[Stream]]:
        self.heard[stream.gateway] = now
        old = self.streams.get(stream.name)
        if old is None or old.id != stream.id:
            return [], []
        del self.streams[stream.name]
        return [], [old]

    def heartbeat(
        self, gateway: str, streams: Iterable[Stream], now: float
    ) -> tuple[list[Stream], list[Stream]]:
        """The gateway holds exactly ``streams`` now: add the new, drop the ones it lost."""
        self.heard[gateway] = now
        appeared: list[Stream] = []
        gone: list[Stream] = []
        held = set()
        for stream in streams:
            held.add(stream.id)
            new, old = self.up(stream, now)
            appeared += new
            gone += old
        for stream in list(self.streams.values()):
            if stream.gateway == gateway and stream.id not in held:
                del self.streams[stream.name]
                gone.append(stream)
        return appeared, gone

    def expire(self, now: float, timeout: float = GATEWAY_TIMEOUT) -> list[Stream]:
        """Forget the gateways silent for ``timeout`` and return their streams (now gone)."""
        dead = {g for g, heard in self.heard.items() if now - heard > timeout}
        if not dead:
            return []
        for gateway in dead:
            del self.heard[gateway]
        gone = [s for s in self.streams.values() if s.gateway in dead]
        for stream in gone:
            del self.streams[stream.name]
        return gone

    def refresh(self, now: float) -> None:
        """Count every gateway as heard from now (this host's own broker connection was away,
        which is no sign of the gateways' death)."""
        for gateway in self.heard:
            self.heard[gateway] = now

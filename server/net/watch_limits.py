"""How many may watch, and from where: the referee's bounds on its ``Watch`` streams.

Every step of a watched match is posted once (``server/play/spectators.py``), but each watcher
then costs one gRPC write per step on the referee's one thread, the thread its matches run on.
So the watchers a referee serves itself are few, and the crowd is served by relays that hold
one watch per match each: the web face (all its browsers share it) and any other client holding
the referee's relay token (docs/spectators.md, "Limits"). The bounds:

- :data:`MAX_WATCHERS` watches at once on this referee (relays' apart);
- :data:`MAX_WATCHERS_PER_MATCH` on one match (relays' apart);
- :data:`MAX_WATCHERS_PER_ADDRESS` from one client address (a machine: the port is ignored);
- :data:`MAX_RELAYS_PER_MATCH` relay watches on one match (web faces, relays: they are few).

So the writes one step of a match can cost the referee are at most
``per_match + relays_per_match`` (12 by default): the ceiling on the referee's work per turn
that watchers can cause, whatever the crowd. A watch past a bound ends at once with
RESOURCE_EXHAUSTED and a message naming the bound, its value and where to watch instead.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Final

MAX_WATCHERS: Final = 128
MAX_WATCHERS_PER_MATCH: Final = 8
MAX_WATCHERS_PER_ADDRESS: Final = 4
MAX_RELAYS_PER_MATCH: Final = 4

CROWD_HINT: Final = "watch through the web face's live pages, which share one watch per match"


@dataclass(frozen=True, slots=True)
class WatchLimits:
    """The bounds of one referee's watchers (the defaults are the constants above)."""

    server: int = MAX_WATCHERS
    per_match: int = MAX_WATCHERS_PER_MATCH
    per_address: int = MAX_WATCHERS_PER_ADDRESS
    relays_per_match: int = MAX_RELAYS_PER_MATCH

    def __post_init__(self) -> None:
        for name in ("server", "per_match", "per_address", "relays_per_match"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name}: expected 0 or more, got {getattr(self, name)}")

    @property
    def writes_per_step(self) -> int:
        """The most writes one step of one match can cost the referee (see the module)."""
        return self.per_match + self.relays_per_match


DEFAULT_WATCH_LIMITS: Final = WatchLimits()


class WatchRefusedError(Exception):
    """A watch past one of the bounds; the message says which."""


@dataclass(frozen=True, slots=True)
class Seat:
    """One admitted watch, to give back with :meth:`WatcherCounts.release`."""

    match_id: str
    address: str
    relay: bool


class WatcherCounts:
    """The watches open now, counted by match and by address, checked against the limits."""

    def __init__(self, limits: WatchLimits = DEFAULT_WATCH_LIMITS) -> None:
        self.limits = limits
        self.total = 0
        self._by_match: Counter[str] = Counter()
        self._by_address: Counter[str] = Counter()
        self._relays: Counter[str] = Counter()

    def admit(self, match_id: str, address: str, *, relay: bool) -> Seat:
        """Count one more watch of ``match_id`` from ``address`` (``relay``: holding the relay
        token), or refuse it.

        Raises:
            WatchRefusedError: a bound is reached; its message names it.
        """
        limits = self.limits
        if relay:
            if self._relays[match_id] >= limits.relays_per_match:
                raise WatchRefusedError(
                    f"watchers: {self._relays[match_id]} relays watch match {match_id}, the most "
                    f"one match may have (relays_per_match={limits.relays_per_match}); "
                    "follow one of them"
                )
            self._relays[match_id] += 1
            return Seat(match_id, address, relay=True)
        if self.total >= limits.server:
            raise WatchRefusedError(
                f"watchers: {self.total} watch this referee, the most it serves "
                f"(server={limits.server}); {CROWD_HINT}"
            )
        if self._by_match[match_id] >= limits.per_match:
            raise WatchRefusedError(
                f"watchers: {self._by_match[match_id]} watch match {match_id}, the most one match "
                f"may have (per_match={limits.per_match}); {CROWD_HINT}"
            )
        if self._by_address[address] >= limits.per_address:
            raise WatchRefusedError(
                f"watchers: {self._by_address[address]} watches are open from your address, the "
                f"most one address may hold (per_address={limits.per_address}); end one first"
            )
        self.total += 1
        self._by_match[match_id] += 1
        self._by_address[address] += 1
        return Seat(match_id, address, relay=False)

    def release(self, seat: Seat) -> None:
        """The watch of ``seat`` ended."""
        if seat.relay:
            _drop(self._relays, seat.match_id)
            return
        self.total -= 1
        _drop(self._by_match, seat.match_id)
        _drop(self._by_address, seat.address)

    def watching_from(self, address: str) -> int:
        """The watches open now from ``address``."""
        return self._by_address[address]


def _drop(counter: Counter[str], key: str) -> None:
    """Count one less for ``key``, forgetting it at zero (the counters stay as small as the
    watches open)."""
    counter[key] -= 1
    if counter[key] <= 0:
        del counter[key]

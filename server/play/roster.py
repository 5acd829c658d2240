"""What play needs of the network layer, as protocols: who is connected, and a seat per bot.

The arena, the tournaments and the ladders decide who plays when; they only need to know which
bots are connected (and which games each plays), how many matches each is seated in, and to
wait for a bot to connect. :class:`Roster` is that view; the gRPC lobby
(:class:`domino_arena.server.net.lobby.Lobby`) implements it, and tests may hand in their own.
How a bot's seat reaches it is the network's business too: the composition root gives the arena
a :data:`SeatFactory` (for the referee, one that builds a ``RemoteSeat``). So nothing in
``server/play`` imports ``server/net`` or grpc.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol, runtime_checkable

from domino_arena.sdk.match.records import MatchRecord
from domino_arena.sdk.match.results import MatchResult
from domino_arena.server.play.seats import Seat


class Present(Protocol):
    """A connected bot as play sees it: its name and the games it plays."""

    @property
    def name(self) -> str: ...
    @property
    def games(self) -> tuple[str, ...]: ...


class Roster(Protocol):
    """The connected bots by name, the matches each is seated in, and waiting for one."""

    @property
    def seated(self) -> collections.Counter[str]:
        """The bot name -> matches it is seated in now (connected or not)."""

    def get(self, name: str) -> Present | None:
        """The bot ``name`` if it is connected now, else None."""

    def connections(self) -> Sequence[Present]:
        """Every connected bot, sorted by name."""

    def seat(self, names: Iterable[str]) -> None:
        """Count one match more for each bot in ``names`` (its match starts)."""

    def unseat(self, names: Iterable[str]) -> None:
        """Count one match fewer for each bot in ``names`` (its match ended)."""

    async def wait_connected(self, name: str) -> None:
        """Return (trio) once the bot ``name`` is connected; safe to cancel."""

    def revoke(self, name: str, reason: str) -> bool:
        """Cut the bot ``name`` off now, for ``reason`` (its token was withdrawn); True if it
        was connected. Its seats see a lost connection: their fault policy takes over."""


class HostedSeat(Seat, Protocol):
    """A seat the arena hosts: the referee's :class:`Seat`, and the arena's own two calls."""

    def end(self, result: MatchResult) -> None:
        """Tell the bot the match ended (once; later calls do nothing), from any task."""

    def close(self) -> None:
        """Leave the bot: later replies for this match are not routed to the seat."""


@runtime_checkable
class Relayed(Protocol):
    """A seat whose bot's stream a cluster's gateway holds (a remote seat on a match host)."""

    @property
    def via(self) -> tuple[str, ...]:
        """The gateways the bot's stream went through in this match, in order (empty on a
        single referee)."""


SeatFactory = Callable[[str, str], HostedSeat]
"""Build the seat of the bot named by the first argument in the match of the second's id."""


def signed(record: MatchRecord, node: str, seats: Sequence[HostedSeat]) -> MatchRecord:
    """``record`` with the cluster's processes that handled it: the match host ``node`` and
    each seat's gateways (``MatchRecord.referee``); unchanged on a single referee (no node)."""
    if not node:
        return record
    gateways = [list(seat.via) if isinstance(seat, Relayed) else [] for seat in seats]
    return dataclasses.replace(record, referee={"host": node, "gateways": gateways})

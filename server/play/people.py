"""People at the table: the tickets of their seats, the bounds, and the match each waits for.

A person is one more remote seat (docs/decisions.md: decision 21; docs/people.md). The web face
asks the TableService for a seat; the referee opens a :class:`Ticket` here (a one-time token and
a seat name ``person:NAME#N``) and waits, in the arena's trio nursery, for that stream to say
Hello. Once it has, the match is played by the arena like any practice match, its record naming
the seat ``person:NAME``; if the seat does not connect by ``connect_by``, the ticket expires and
the match is dropped, never stored. A ticket admits one stream, once: the bot service asks
:meth:`Table.admit` instead of the bots' table for a person's seat name.

The bounds count a ticket from the moment it is opened until its match is over or it expired:
:attr:`PeopleBounds.per_person` matches of one person at once, :attr:`PeopleBounds.total` on the
referee.
"""

from __future__ import annotations

import collections
import dataclasses
import hmac
import itertools
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

import trio

from domino_arena.server.names import PERSON_SEAT, person_seat
from domino_arena.server.play.match_spec import FinishedMatch, MatchSpec
from domino_arena.server.play.timecontrol import TimeControl

LOG: Final = logging.getLogger("domino_arena.server")

DEFAULT_PER_PERSON: Final = 2
DEFAULT_TOTAL: Final = 32
DEFAULT_CONNECT_SECONDS: Final = 30.0


@dataclass(frozen=True, slots=True)
class PeopleBounds:
    """How many matches people may have at once, and how long a seat has to connect."""

    per_person: int = DEFAULT_PER_PERSON
    """Matches one person (a name in a course) may have waiting or running at once."""
    total: int = DEFAULT_TOTAL
    """Matches with a person that the referee keeps waiting or running at once."""
    connect_seconds: float = DEFAULT_CONNECT_SECONDS
    """Seconds from SeatPerson to the seat's Hello (``connect_by``)."""

    def __post_init__(self) -> None:
        if self.per_person < 1 or self.total < 1:
            raise ValueError("people's bounds: per_person and total must be 1 or more")
        if not 0 < self.connect_seconds <= 3600:
            raise ValueError("people's bounds: connect_seconds must be more than 0, at most 3600")


DEFAULT_PEOPLE: Final = PeopleBounds()


class BoundError(Exception):
    """A seat the bounds refuse now (RESOURCE_EXHAUSTED); the message names the bound."""


@dataclass(slots=True)
class Ticket:
    """One person's seat in one match, from SeatPerson to the match's end (or expiry)."""

    seat_name: str
    """The stream's name, ``person:NAME#N`` (the Hello's)."""
    token: str
    person: tuple[str, str]
    """(The course, the person's name): what the per-person bound counts."""
    spec: MatchSpec
    connect_by: float
    """When the seat must have connected, on the table's clock."""
    used: bool = False
    """A stream said Hello with it: no other may."""


Play = Callable[[MatchSpec], Awaitable[FinishedMatch]]
"""The arena's trio-side ``play``: run a match and store it."""
WaitConnected = Callable[[str], Awaitable[None]]
"""The lobby's ``wait_connected``: return once the stream of that name is connected."""


class Table:
    """The open tickets and the matches people have now, under ``bounds``.

    ``clock`` (``time.monotonic``) stamps ``connect_by``; a Hello after it is refused whether or
    not the waiting task has noticed yet, so tests move a fake clock instead of waiting.
    """

    def __init__(
        self,
        bounds: PeopleBounds | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.bounds = bounds or PeopleBounds()
        self.clock = clock
        self.tickets: dict[str, Ticket] = {}
        """Seat name -> its ticket, until its match is over or it expired."""
        self.per_person: collections.Counter[tuple[str, str]] = collections.Counter()
        self._numbers = itertools.count(1)

    def open(self, spec: MatchSpec, seat: int, course: str, name: str) -> Ticket:
        """Open the ticket of ``name``'s seat ``seat`` in ``spec`` (whose ``bots`` name it
        ``person:NAME``); return it, with ``spec.streams`` naming the seat's stream.

        Raises:
            BoundError: the person, or the referee, has as many matches as allowed.
        """
        bounds = self.bounds
        person = (course, name)
        if self.per_person[person] >= bounds.per_person:
            raise BoundError(
                f"people.per_person: '{name}' has {self.per_person[person]} matches waiting or "
                f"running, the most one person may have (per_person={bounds.per_person}); "
                "finish one first"
            )
        if len(self.tickets) >= bounds.total:
            raise BoundError(
                f"people.total: {len(self.tickets)} matches with people are waiting or running "
                f"on this referee, the most it allows (total={bounds.total}); try again later"
            )
        seat_name = person_seat(name, next(self._numbers))
        streams = list(spec.stream_names)
        streams[seat] = seat_name
        ticket = Ticket(
            seat_name,
            secrets.token_urlsafe(32),
            person,
            dataclasses.replace(spec, streams=tuple(streams)),
            self.clock() + bounds.connect_seconds,
        )
        self.tickets[seat_name] = ticket
        self.per_person[person] += 1
        return ticket

    def admit(self, seat_name: str, token: str) -> str | None:
        """Let the stream ``seat_name`` in with ``token`` (once); None if admitted, else why not.

        A wrong token, a used ticket, an expired one and one that never was are told apart only
        for the right token: a wrong one hears "wrong token" (as for a bot)."""
        if PERSON_SEAT.fullmatch(seat_name) is None:
            return f"bad person seat name '{seat_name[:80]}': expected person:NAME#N"
        ticket = self.tickets.get(seat_name)
        if ticket is None:
            return f"no seat '{seat_name}' is waiting: its match is over or its ticket expired"
        if not hmac.compare_digest(token.encode(), ticket.token.encode()):
            return f"wrong token for seat '{seat_name}'"
        if ticket.used:
            return f"seat '{seat_name}' is taken: a seat token admits one connection"
        if self.clock() > ticket.connect_by:
            return f"seat '{seat_name}' expired: it did not connect by its connect_by"
        ticket.used = True
        return None

    def close(self, ticket: Ticket) -> None:
        """Forget ``ticket``: its match is over, or it expired (its bounds are free again)."""
        if self.tickets.get(ticket.seat_name) is ticket:
            del self.tickets[ticket.seat_name]
            self.per_person[ticket.person] -= 1
            if self.per_person[ticket.person] <= 0:
                del self.per_person[ticket.person]

    async def seat_and_play(
        self, ticket: Ticket, wait_connected: WaitConnected, play: Play
    ) -> FinishedMatch | None:
        """Wait (trio) for the seat's stream until ``connect_by``, then play and store the
        match; None if the seat never connected (the match is dropped: no record). A failure
        to store is logged here: this task has no caller to tell."""
        spec = ticket.spec
        try:
            # The window counts from now, a moment after SeatPerson: the table's clock says
            # when a Hello is too late (admit), trio's when to stop waiting for one.
            with trio.move_on_after(self.bounds.connect_seconds):
                await wait_connected(ticket.seat_name)
            if not ticket.used:
                LOG.info(
                    "person seat expired: match=%s seat=%s (not connected within %g s)",
                    spec.match_id,
                    ticket.seat_name,
                    self.bounds.connect_seconds,
                )
                return None
            try:
                return await play(spec)
            except Exception:  # the arena logged it; nobody else to tell
                LOG.warning("person match not stored: id=%s", spec.match_id)
                return None
        finally:
            self.close(ticket)


DEFAULT_HUMAN_MOVE_MS: Final = 60_000
"""A person's time per move when the course sets none (``Course.human_move_ms`` 0)."""
HUMAN_BANK: Final = 30.0
"""A person's bank for the whole match, seconds: a little room for a long think."""
HUMAN_GRACE: Final = 1.0
"""A person's network grace, seconds: the web face relays each move through a browser."""


def human_clock(move_ms: int) -> TimeControl:
    """The clock of a person's seat in a course whose human move time is ``move_ms`` (0: the
    default, :data:`DEFAULT_HUMAN_MOVE_MS`)."""
    return TimeControl(
        move=(move_ms or DEFAULT_HUMAN_MOVE_MS) / 1000, bank=HUMAN_BANK, grace=HUMAN_GRACE
    )

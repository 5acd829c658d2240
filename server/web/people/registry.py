"""The person matches this web face plays, bounded per person and in all.

Each match a person starts is one :class:`~.seat.SeatClient` here, found by its match id. A
match is running from the moment its seat is asked for (:meth:`PersonMatches.reserve`, before
the referee is called, so two quick posts cannot both pass the bound) until it is over; an
ended match is kept :data:`KEPT_SECONDS` more (its page says how it ended and links the replay)
among the latest :data:`KEPT_ENDED`. A bound reached is a refusal whose message names it.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from typing import Final

from domino_arena.server.web.params import WebError
from domino_arena.server.web.people.seat import PACE, SeatClient
from domino_arena.server.web.people.tables import Person

PER_PERSON: Final = 2
"""Matches one person may have running at once (a second tab, not a farm of them)."""
IN_ALL: Final = 200
"""Matches this web face plays at once, over every person (each is one stream to the referee
and a task here)."""
KEPT_SECONDS: Final = 900.0
"""How long an ended match's page still answers (then: the replay, ``/matches/{id}``)."""
KEPT_ENDED: Final = 1000
"""The most ended matches kept."""


class PersonMatches:
    """The person matches of this web face (see the module). ``pace`` is the seconds between
    the other seats' steps on the person's page (tests set 0)."""

    def __init__(
        self,
        *,
        per_person: int = PER_PERSON,
        in_all: int = IN_ALL,
        pace: float = PACE,
        kept_seconds: float = KEPT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if per_person < 1 or in_all < 1 or pace < 0:
            raise ValueError(
                f"per_person, in_all: expected at least 1, pace at least 0; got {per_person}, "
                f"{in_all}, {pace}"
            )
        self.per_person = per_person
        self.in_all = in_all
        self.pace = pace
        self.kept_seconds = kept_seconds
        self.clock = clock
        self.closing: list[Callable[[], Awaitable[None]]] = []
        """What else to close with the matches (the referee's channel)."""
        self._matches: dict[str, SeatClient] = {}
        self._pending: Counter[Person] = Counter()

    def running(self, person: Person | None = None) -> int:
        """Matches running now (asked for or playing), of ``person`` or of everyone."""
        live = [m for m in self._matches.values() if not m.over]
        if person is None:
            return len(live) + self._pending.total()
        return sum(m.person == person for m in live) + self._pending[person]

    @contextlib.contextmanager
    def reserve(self, person: Person) -> Iterator[None]:
        """Hold a place for ``person``'s new match while its seat is asked for (the caller
        :meth:`add` s it before leaving the block).

        Raises:
            WebError: 429, the person's bound is reached; 503, the web face's is.
        """
        self._forget_old()
        mine = self.running(person)
        if mine >= self.per_person:
            raise WebError(
                429,
                f"too many matches: you have {mine} running, the most one person may "
                f"({self.per_person}); finish one first",
            )
        if self.running() >= self.in_all:
            raise WebError(
                503,
                f"too many matches: this web face plays {self.in_all} for people now, the "
                "most it may; try again in a few minutes",
            )
        self._pending[person] += 1
        try:
            yield
        finally:
            self._pending[person] -= 1
            if self._pending[person] <= 0:
                del self._pending[person]

    def add(self, match: SeatClient) -> None:
        self._matches[match.match_id] = match

    def get(self, match_id: str) -> SeatClient | None:
        self._forget_old()
        return self._matches.get(match_id)

    def _forget_old(self) -> None:
        now = self.clock()
        ended = [
            m
            for m in self._matches.values()
            if m.ended_at is not None and (now - m.ended_at >= self.kept_seconds)
        ]
        kept = sorted(
            (m for m in self._matches.values() if m.ended_at is not None and m not in ended),
            key=lambda m: m.ended_at or 0.0,
        )
        ended += kept[: max(0, len(kept) - KEPT_ENDED)]
        for match in ended:
            del self._matches[match.match_id]

    async def close(self) -> None:
        """Stop every seat (the web face is shutting down)."""
        for match in list(self._matches.values()):
            await match.stop()
        self._matches.clear()
        for close in self.closing:
            await close()

"""Spectators: follow a running match as it happens, seeing only what every seat may see.

The arena feeds the :class:`SpectatorHub` as a match runs (:meth:`~SpectatorHub.started`, then
:meth:`~SpectatorHub.step` and :meth:`~SpectatorHub.hand_end`, then :meth:`~SpectatorHub.ended`)
and each ``Watch`` stream reads its own :class:`Subscription`. A spectator is no seat: every
step passes through :func:`~domino_arena.sdk.rules.state.public_entry` with the viewer
:data:`SPECTATOR`, so a Moon discard shows no tile, and a deal is a bare ``deal`` step; the
table after a step is the engine's own ``observe(SPECTATOR)``, which holds no hand; hands,
the boneyard and the widow are in no item at all. A table is made only for a match somebody
watches, once per step for all its watchers; a late watcher gets the steps so far without
tables and the table after the last of them. The hub deals in these public items only;
the network layer turns each into its message as it writes it (``server/net``), so the hub
knows nothing of the wire.

The referee never waits for a spectator. Every hub call is a plain call on the one thread that
trio (the matches) and asyncio (the gRPC handlers) share; it only appends to queues. A spectator
that lets :data:`MAX_PENDING` items pile up is dropped, told why, rather than holding memory
for a match that does not slow down for it. A spectator that joins mid-match first gets the
public steps so far.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import datetime as dt
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

from domino_arena.sdk.match.notices import Step
from domino_arena.sdk.match.results import MatchResult
from domino_arena.sdk.rules import SPECTATOR, GameState, HandResult, LogEntry, Observation
from domino_arena.sdk.rules.state import public_entry
from domino_arena.server.play.match_spec import MatchSpec

LOG: Final = logging.getLogger("domino_arena.server")

MAX_PENDING: Final = 1000
"""Unread items a spectator may have before it is dropped (a whole Moon game is ~300)."""

REMEMBERED_ENDS: Final = 1000
"""How many ended matches the hub remembers, to answer "over" rather than "unknown"."""


@dataclass(frozen=True, slots=True)
class WatchStart:
    """The first item of every subscription: the match being watched."""

    spec: MatchSpec


@dataclass(frozen=True, slots=True)
class PublicStep:
    """A step as a spectator may see it, with the totals per side and the deal after it."""

    entry: LogEntry
    scores: tuple[int, ...]
    deal: int
    table: Observation | None = None
    """The public table after the step (``observe(SPECTATOR)``); None in a late watcher's
    backlog but for its last step."""


@dataclass(frozen=True, slots=True)
class PublicHandEnd:
    """A scored hand, with the totals per side after it."""

    hand: HandResult
    scores: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class WatchEnd:
    """The last item of a match that ended (normally, by forfeit, void or aborted)."""

    result: MatchResult
    sides: tuple[int, ...]
    """The side of each seat, for the result."""


@dataclass(frozen=True, slots=True)
class Dropped:
    """The last item of a dropped spectator's queue: why it was dropped."""

    reason: str


Item = WatchStart | PublicStep | PublicHandEnd | WatchEnd | Dropped


class Subscription:
    """One spectator of one match: the items it has not read yet, in order."""

    def __init__(
        self,
        match_id: str,
        max_pending: int,
        backlog: Sequence[Item] = (),
    ) -> None:
        self.match_id = match_id
        self.queue: asyncio.Queue[Item] = asyncio.Queue()
        for item in backlog:
            self.queue.put_nowait(item)
        self.max_pending = max_pending + len(backlog)
        """The backlog comes all at once and is bounded by the match: it does not count."""
        self.dropped: str | None = None
        """Why it was dropped; None while it keeps up."""

    def put(self, item: Item) -> bool:
        """Queue ``item``; False (and the spectator dropped) if too many are unread."""
        if self.dropped is not None:
            return False
        if self.queue.qsize() >= self.max_pending:
            self.dropped = (
                f"dropped: {self.queue.qsize()} messages of match {self.match_id} were waiting "
                "unread, and a match never waits for its spectators; watch again to catch up"
            )
            self.queue.put_nowait(Dropped(self.dropped))
            return False
        self.queue.put_nowait(item)
        return True

    async def get(self) -> Item:
        """Return the next item (waiting for it); :class:`Dropped` or :class:`WatchEnd` last."""
        return await self.queue.get()


@dataclass(slots=True)
class _Watched:
    """A running match as spectators see it."""

    start: WatchStart
    sides: tuple[int, ...]
    """The side of each seat, for the match result."""
    started: dt.datetime
    history: list[PublicStep | PublicHandEnd] = field(default_factory=list)
    """Every public step and hand end so far (steps without their tables)."""
    subscribers: list[Subscription] = field(default_factory=list)
    state: GameState | None = None
    """The position after the last step, for the table a new watcher starts from."""
    steps: int = 0
    scores: tuple[int, ...] = ()
    deal: int = 1


@dataclass(frozen=True, slots=True)
class LiveMatch:
    """A match that can be watched now, as a lobby lists it."""

    spec: MatchSpec
    started: dt.datetime
    steps: int
    deal: int
    scores: tuple[int, ...]
    watchers: int


class NotWatchableError(KeyError):
    """No running match has that id (it never ran, or it is over)."""

    def __str__(self) -> str:  # KeyError would show the message quoted
        return str(self.args[0])


class SpectatorHub:
    """The running matches as spectators see them, and who watches each."""

    def __init__(self, max_pending: int = MAX_PENDING) -> None:
        if max_pending < 1:
            raise ValueError(f"max_pending: expected at least 1, got {max_pending}")
        self.max_pending = max_pending
        self._matches: dict[str, _Watched] = {}
        self._ended: collections.OrderedDict[str, None] = collections.OrderedDict()

    # -- the arena's side ---------------------------------------------------------------------

    def started(self, spec: MatchSpec) -> None:
        """A match starts: spectators may watch it from now until :meth:`ended`."""
        game = spec.game
        sides = tuple(game.side_of(seat) for seat in range(game.num_players))
        self._matches[spec.match_id] = _Watched(
            WatchStart(spec), sides, dt.datetime.now(dt.UTC), scores=(0,) * len(game.sides)
        )

    def step(
        self,
        match_id: str,
        entry: LogEntry,
        scores: Sequence[int],
        deal: int,
        state: GameState | None = None,
    ) -> None:
        """One step was applied (``entry`` as the engine logged it; the hub hides what it must).

        ``scores`` are the totals per side after it, ``deal`` the deal number after it,
        ``state`` the position after it (for the public table; None: no table).
        """
        watched = self._matches.get(match_id)
        if watched is not None:
            watched.state = state
            watched.steps += 1
            watched.scores = tuple(scores)
            watched.deal = deal
        item = PublicStep(public_entry(entry, SPECTATOR), tuple(scores), deal)
        if watched is None or not watched.subscribers or state is None:
            self._add(match_id, item)
        else:
            self._add(match_id, item, dataclasses.replace(item, table=state.observe(SPECTATOR)))

    def hand_end(self, match_id: str, hand: HandResult, scores: Sequence[int]) -> None:
        """A hand was scored; ``scores`` are the totals per side after it."""
        self._add(match_id, PublicHandEnd(hand, tuple(scores)))

    def ended(self, match_id: str, result: MatchResult) -> None:
        """The match is over (normally, by forfeit, void or aborted): tell its spectators."""
        watched = self._matches.pop(match_id, None)
        if watched is None:
            return
        self._ended[match_id] = None
        while len(self._ended) > REMEMBERED_ENDS:
            self._ended.popitem(last=False)
        end = WatchEnd(result, watched.sides)
        for subscription in watched.subscribers:
            subscription.put(end)

    def on_step(self, match_id: str) -> Callable[[Step], None]:
        """Return an ``on_step`` callback for :func:`~.referee.play_match` that feeds the hub
        every step of ``match_id`` and every hand it ends."""

        def feed(step: Step) -> None:
            after = step.after
            entry = LogEntry(step.seat, step.action)
            self.step(match_id, entry, after.scores, after.deal_number, after)
            for hand in after.hand_results[len(step.before.hand_results) :]:
                self.hand_end(match_id, hand, after.scores)

        return feed

    def _add(
        self,
        match_id: str,
        item: PublicStep | PublicHandEnd,
        sent: PublicStep | PublicHandEnd | None = None,
    ) -> None:
        """Keep ``item`` in the match's history and send ``sent`` (``item`` with its table;
        ``item`` itself when None) to every watcher."""
        sent = item if sent is None else sent
        watched = self._matches.get(match_id)
        if watched is None:
            LOG.debug("spectators: a step of match %s, which is not watchable", match_id)
            return
        watched.history.append(item)
        for subscription in tuple(watched.subscribers):
            if not subscription.put(sent):
                self.unsubscribe(subscription)

    # -- the spectators' side -----------------------------------------------------------------

    def subscribe(self, match_id: str) -> Subscription:
        """Watch ``match_id``: the subscription starts with its start and its steps so far.

        Raises:
            NotWatchableError: no running match has that id (:meth:`ended_recently` tells
                whether it just ended).
        """
        watched = self._matches.get(match_id)
        if watched is None:
            raise NotWatchableError(f"no running match has id '{match_id}'")
        backlog: list[Item] = [watched.start, *watched.history]
        steps = [i for i, item in enumerate(backlog) if isinstance(item, PublicStep)]
        if steps and watched.state is not None:
            last = backlog[steps[-1]]
            assert isinstance(last, PublicStep)
            backlog[steps[-1]] = dataclasses.replace(last, table=watched.state.observe(SPECTATOR))
        subscription = Subscription(match_id, self.max_pending, backlog)
        watched.subscribers.append(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        """Stop feeding ``subscription`` (its stream ended, or it was dropped)."""
        watched = self._matches.get(subscription.match_id)
        if watched is not None and subscription in watched.subscribers:
            watched.subscribers.remove(subscription)

    def ended_recently(self, match_id: str) -> bool:
        """Whether ``match_id`` ran here and is over (among the last :data:`REMEMBERED_ENDS`)."""
        return match_id in self._ended

    def running(self) -> list[str]:
        """The ids of the matches that can be watched now."""
        return list(self._matches)

    def live(self) -> list[LiveMatch]:
        """The matches that can be watched now, oldest first, with where each stands."""
        return [
            LiveMatch(w.start.spec, w.started, w.steps, w.deal, w.scores, len(w.subscribers))
            for w in self._matches.values()
        ]

    def watchers(self, match_id: str) -> int:
        """How many spectators watch ``match_id`` now."""
        watched = self._matches.get(match_id)
        return 0 if watched is None else len(watched.subscribers)

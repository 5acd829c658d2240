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

One fan-out per match (docs/spectators.md). Each match has ONE feed
(:mod:`domino_arena.server.feed`) of :class:`Posted` items that every watcher of it shares: a
step is made public, its table drawn (only while somebody watches) and appended once, whatever
the number of watchers; the network
layer turns each posted item into its message once too (:attr:`Posted.wires`). A watcher is a
cursor into the feed (:class:`Subscription`), woken by one event when the feed grows; it takes
everything new at once. So the referee's work per step that watchers cause is a table, an
append and a wake-up; what each watcher then writes is bounded by the watcher limits of the
network layer (``server/net/watch_limits.py``).

The referee never waits for a spectator. Every hub call is a plain call on the one thread that
trio (the matches) and asyncio (the gRPC handlers) share. A spectator more than
:data:`MAX_PENDING` items behind is dropped, told why
(:class:`~domino_arena.server.feed.Dropped`). A spectator that joins mid-match first gets the
public steps so far.
"""

from __future__ import annotations

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
from domino_arena.server.feed import Cursor, Feed
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


Item = WatchStart | PublicStep | PublicHandEnd | WatchEnd


@dataclass(slots=True, eq=False)
class Posted:
    """One item of a match's feed, shared by every watcher of the match.

    A step is kept bare (no table) with the table after it beside it, when somebody watched
    then: live watchers are sent it with its table, a late watcher's backlog without (but for
    its last step). ``wires`` is the network layer's cache: the item as it writes it, with the
    table (True) or without (False), made once by the first watcher that writes it.
    """

    item: WatchStart | PublicStep | PublicHandEnd | WatchEnd
    table: Observation | None = None
    wires: dict[bool, bytes] = field(default_factory=dict)

    def sent(self, with_table: bool) -> WatchStart | PublicStep | PublicHandEnd | WatchEnd:
        """The item as a watcher gets it: a step with its table when ``with_table`` and known."""
        item = self.item
        if with_table and self.table is not None and isinstance(item, PublicStep):
            return dataclasses.replace(item, table=self.table)
        return item


Outgoing = tuple[Posted, bool]
"""What a watcher writes next: a posted item, and whether with its table."""


_Unseen = tuple[LogEntry, tuple[int, ...], int, Sequence[HandResult]]
"""A step nobody watched: its entry (not yet public), the scores and the deal after it, the
hands it ended."""


@dataclass(slots=True)
class _Watched:
    """A running match as spectators see it: its feed and who follows it."""

    spec: MatchSpec
    start: Posted
    sides: tuple[int, ...]
    """The side of each seat, for the match result."""
    started: dt.datetime
    feed: Feed[Outgoing] = field(default_factory=Feed)
    """Every public step (with its table, when drawn) and hand end so far, then the end."""
    subscribers: list[Subscription] = field(default_factory=list)
    state: GameState | None = None
    """The position after the last step, for the table a new watcher starts from."""
    steps: int = 0
    scores: tuple[int, ...] = ()
    deal: int = 1
    unseen: list[_Unseen] = field(default_factory=list)
    """The steps since the last time somebody watched, as the engine logged them: made public
    and posted (``SpectatorHub._catch_up``) only when somebody subscribes, so a step of a
    match nobody watches costs a tuple and an append."""


class Subscription(Cursor[Outgoing]):
    """One spectator of one match: its backlog, then its place in the match's feed."""

    def __init__(
        self, match_id: str, watched: _Watched, backlog: list[Outgoing], max_pending: int
    ) -> None:
        super().__init__(watched.feed, f"match {match_id}", max_pending, backlog)
        self.match_id = match_id


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
            spec,
            Posted(WatchStart(spec)),
            sides,
            dt.datetime.now(dt.UTC),
            scores=(0,) * len(game.sides),
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
        if watched is None:
            LOG.debug("spectators: a step of match %s, which is not watchable", match_id)
            return
        watched.state = state
        watched.steps += 1
        watched.scores = tuple(scores)
        watched.deal = deal
        posted = Posted(PublicStep(public_entry(entry, SPECTATOR), tuple(scores), deal))
        if watched.subscribers and state is not None:  # a table only for a watched match
            posted.table = state.observe(SPECTATOR)
        watched.feed.post((posted, True))

    def hand_end(self, match_id: str, hand: HandResult, scores: Sequence[int]) -> None:
        """A hand was scored; ``scores`` are the totals per side after it."""
        watched = self._matches.get(match_id)
        if watched is not None:
            watched.feed.post((Posted(PublicHandEnd(hand, tuple(scores))), True))

    def ended(self, match_id: str, result: MatchResult) -> None:
        """The match is over (normally, by forfeit, void or aborted): tell its spectators."""
        watched = self._matches.pop(match_id, None)
        if watched is None:
            return
        watched.unseen = []  # nobody watched them, and nobody can now
        self._ended[match_id] = None
        while len(self._ended) > REMEMBERED_ENDS:
            self._ended.popitem(last=False)
        watched.feed.post((Posted(WatchEnd(result, watched.sides)), True))
        watched.feed.close()

    def on_step(self, match_id: str) -> Callable[[Step], None]:
        """Return an ``on_step`` callback for :func:`~.referee.play_match` that feeds the hub
        every step of ``match_id`` and every hand it ends.

        While nobody watches the match, a step is only kept as it is (``_Watched.unseen``);
        the first watcher's :meth:`subscribe` makes the kept steps public and posts them.
        """
        matches = self._matches

        def feed(step: Step) -> None:
            after = step.after
            entry = LogEntry(step.seat, step.action)
            hands = after.hand_results[len(step.before.hand_results) :]
            watched = matches.get(match_id)
            if watched is None or watched.subscribers:
                self.step(match_id, entry, after.scores, after.deal_number, after)
                for hand in hands:
                    self.hand_end(match_id, hand, after.scores)
                return
            scores = tuple(after.scores)
            watched.unseen.append((entry, scores, after.deal_number, hands))
            watched.state = after
            watched.steps += 1
            watched.scores = scores
            watched.deal = after.deal_number

        return feed

    def _catch_up(self, watched: _Watched) -> None:
        """Post the steps kept while nobody watched (without tables: nobody saw them live)."""
        unseen, watched.unseen = watched.unseen, []
        feed = watched.feed
        for entry, scores, deal, hands in unseen:
            feed.post((Posted(PublicStep(public_entry(entry, SPECTATOR), scores, deal)), True))
            for hand in hands:
                feed.post((Posted(PublicHandEnd(hand, scores)), True))

    # -- the spectators' side -----------------------------------------------------------------

    def subscribe(self, match_id: str) -> Subscription:
        """Watch ``match_id``: the subscription starts with its start and its steps so far
        (without tables, but for the last), then follows the match's feed.

        Raises:
            NotWatchableError: no running match has that id (:meth:`ended_recently` tells
                whether it just ended).
        """
        watched = self._matches.get(match_id)
        if watched is None:
            raise NotWatchableError(f"no running match has id '{match_id}'")
        self._catch_up(watched)
        backlog: list[Outgoing] = [(watched.start, False)]
        backlog.extend((posted, False) for posted, _ in watched.feed.log)
        last_step = next(
            (
                i
                for i in range(len(backlog) - 1, 0, -1)
                if isinstance(backlog[i][0].item, PublicStep)
            ),
            None,
        )
        if last_step is not None and watched.state is not None:
            posted = backlog[last_step][0]
            if posted.table is None:  # nobody watched then: the table after it, once
                posted.table = watched.state.observe(SPECTATOR)
            backlog[last_step] = (posted, True)
        subscription = Subscription(match_id, watched, backlog, self.max_pending)
        watched.subscribers.append(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        """Stop counting ``subscription`` (its stream ended, or it was dropped)."""
        watched = self._matches.get(subscription.match_id)
        if watched is not None and subscription in watched.subscribers:
            watched.subscribers.remove(subscription)

    def ended_recently(self, match_id: str) -> bool:
        """Whether ``match_id`` ran here and is over (among the last :data:`REMEMBERED_ENDS`)."""
        return match_id in self._ended

    def running(self) -> list[str]:
        """The ids of the matches that can be watched now."""
        return list(self._matches)

    def spec(self, match_id: str) -> MatchSpec | None:
        """The match ``match_id`` if it runs now (for its course and tournament), else None."""
        watched = self._matches.get(match_id)
        return None if watched is None else watched.spec

    def live(self) -> list[LiveMatch]:
        """The matches that can be watched now, oldest first, with where each stands."""
        return [
            LiveMatch(w.spec, w.started, w.steps, w.deal, w.scores, len(w.subscribers))
            for w in self._matches.values()
        ]

    def watchers(self, match_id: str) -> int:
        """How many spectators watch ``match_id`` now."""
        watched = self._matches.get(match_id)
        return 0 if watched is None else len(watched.subscribers)

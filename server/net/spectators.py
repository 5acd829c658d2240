"""Spectators: follow a running match as it happens, seeing only what every seat may see.

The arena feeds the :class:`SpectatorHub` as a match runs (:meth:`~SpectatorHub.started`, then
:meth:`~SpectatorHub.step` and :meth:`~SpectatorHub.hand_end`, then :meth:`~SpectatorHub.ended`)
and each ``Watch`` stream reads its own :class:`Subscription`. A spectator is no seat: every
step passes through :func:`~domino_arena.sdk.rules.state.public_entry` with the viewer
:data:`SPECTATOR`, so a Moon discard shows no tile, and a deal is a bare ``deal`` step; hands,
the boneyard and the widow have no field in what is sent at all. The messages are built by
:mod:`domino_arena.sdk.wire.convert`, the one translation layer.

The referee never waits for a spectator. Every hub call is a plain call on the one thread that
trio (the matches) and asyncio (the gRPC handlers) share; it only appends to queues. A spectator
that lets :data:`MAX_PENDING` messages pile up is dropped, told why, rather than holding memory
for a match that does not slow down for it. A spectator that joins mid-match first gets the
public steps so far. While nobody watches a match, its steps are kept as they came and turned
into messages only when someone subscribes.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Protocol

import grpc

from domino_arena.sdk.match.notices import Step
from domino_arena.sdk.match.results import MatchResult
from domino_arena.sdk.rules import HandResult, LogEntry
from domino_arena.sdk.rules.state import public_entry
from domino_arena.sdk.wire.convert import game_to_proto, hand_result_to_proto, step_to_proto
from domino_arena.server.net.remote import result_to_proto
from domino_arena.server.store.storage import StoredMatch
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc
from domino_arena.v1 import referee_pb2 as pb

if TYPE_CHECKING:
    from domino_arena.server.play.match_spec import MatchSpec

LOG: Final = logging.getLogger("domino_arena.server")

SPECTATOR: Final = -1
"""The viewer a spectator is to :func:`public_entry`: no seat, so it sees no private tile."""

MAX_PENDING: Final = 1000
"""Unread messages a spectator may have before it is dropped (a whole Moon game is ~300)."""

REMEMBERED_ENDS: Final = 1000
"""How many ended matches the hub remembers, to answer "over" rather than "unknown"."""


@dataclass(frozen=True, slots=True)
class Dropped:
    """The last item of a dropped spectator's queue: why it was dropped."""

    reason: str


Item = admin_pb.SpectatorMessage | Dropped


class Subscription:
    """One spectator of one match: the messages it has not read yet, in order."""

    def __init__(
        self,
        match_id: str,
        max_pending: int,
        backlog: Sequence[admin_pb.SpectatorMessage] = (),
    ) -> None:
        self.match_id = match_id
        self.queue: asyncio.Queue[Item] = asyncio.Queue()
        for message in backlog:
            self.queue.put_nowait(message)
        self.max_pending = max_pending + len(backlog)
        """The backlog comes all at once and is bounded by the match: it does not count."""
        self.dropped: str | None = None
        """Why it was dropped; None while it keeps up."""

    def put(self, message: admin_pb.SpectatorMessage) -> bool:
        """Queue ``message``; False (and the spectator dropped) if too many are unread."""
        if self.dropped is not None:
            return False
        if self.queue.qsize() >= self.max_pending:
            self.dropped = (
                f"dropped: {self.queue.qsize()} messages of match {self.match_id} were waiting "
                "unread, and a match never waits for its spectators; watch again to catch up"
            )
            self.queue.put_nowait(Dropped(self.dropped))
            return False
        self.queue.put_nowait(message)
        return True

    async def get(self) -> Item:
        """Return the next message (waiting for it), or :class:`Dropped` at the end."""
        return await self.queue.get()


@dataclass(frozen=True, slots=True)
class _StepItem:
    entry: LogEntry
    scores: tuple[int, ...]
    deal: int


@dataclass(frozen=True, slots=True)
class _HandItem:
    hand: HandResult
    scores: tuple[int, ...]


@dataclass(slots=True)
class _Watched:
    """A running match as spectators see it."""

    start: admin_pb.SpectatorMessage
    sides: tuple[int, ...]
    """The side of each seat, for the match result."""
    history: list[_StepItem | _HandItem] = field(default_factory=list)
    """Every public step and hand end so far, as they came (turned into messages on demand)."""
    subscribers: list[Subscription] = field(default_factory=list)


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
        move_ms, bank_ms, grace_ms = spec.time_control.to_ms()
        start = admin_pb.WatchStart(
            match_id=spec.match_id,
            game=game_to_proto(game),
            players=spec.bots,
            time_control=pb.TimeControl(move_ms=move_ms, bank_ms=bank_ms, grace_ms=grace_ms),
            tournament_id=spec.tournament_id or "",
        )
        sides = tuple(game.side_of(seat) for seat in range(game.num_players))
        self._matches[spec.match_id] = _Watched(admin_pb.SpectatorMessage(start=start), sides)

    def step(self, match_id: str, entry: LogEntry, scores: Sequence[int], deal: int) -> None:
        """One step was applied (``entry`` as the engine logged it; the hub hides what it must).

        ``scores`` are the totals per side after it, ``deal`` the deal number after it.
        """
        self._add(match_id, _StepItem(public_entry(entry, SPECTATOR), tuple(scores), deal))

    def hand_end(self, match_id: str, hand: HandResult, scores: Sequence[int]) -> None:
        """A hand was scored; ``scores`` are the totals per side after it."""
        self._add(match_id, _HandItem(hand, tuple(scores)))

    def ended(self, match_id: str, result: MatchResult) -> None:
        """The match is over (normally, by forfeit, void or aborted): tell its spectators."""
        watched = self._matches.pop(match_id, None)
        if watched is None:
            return
        self._ended[match_id] = None
        while len(self._ended) > REMEMBERED_ENDS:
            self._ended.popitem(last=False)
        end = admin_pb.SpectatorMessage(
            match_end=pb.MatchEnd(match_id=match_id, result=result_to_proto(result, watched.sides))
        )
        for subscription in watched.subscribers:
            subscription.put(end)

    def on_step(self, match_id: str) -> Callable[[Step], None]:
        """Return an ``on_step`` callback for :func:`~.referee.play_match` that feeds the hub
        every step of ``match_id`` and every hand it ends."""

        def feed(step: Step) -> None:
            after = step.after
            self.step(match_id, LogEntry(step.seat, step.action), after.scores, after.deal_number)
            for hand in after.hand_results[len(step.before.hand_results) :]:
                self.hand_end(match_id, hand, after.scores)

        return feed

    def _add(self, match_id: str, item: _StepItem | _HandItem) -> None:
        watched = self._matches.get(match_id)
        if watched is None:
            LOG.debug("spectators: a step of match %s, which is not watchable", match_id)
            return
        watched.history.append(item)
        if watched.subscribers:
            message = _message(match_id, item)
            for subscription in tuple(watched.subscribers):
                if not subscription.put(message):
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
        backlog = [watched.start, *(_message(match_id, item) for item in watched.history)]
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

    def watchers(self, match_id: str) -> int:
        """How many spectators watch ``match_id`` now."""
        watched = self._matches.get(match_id)
        return 0 if watched is None else len(watched.subscribers)


def _message(match_id: str, item: _StepItem | _HandItem) -> admin_pb.SpectatorMessage:
    if isinstance(item, _StepItem):
        return admin_pb.SpectatorMessage(
            event=pb.Event(
                match_id=match_id,
                step=step_to_proto(item.entry),
                scores=item.scores,
                deal=item.deal,
            )
        )
    return admin_pb.SpectatorMessage(
        hand_end=hand_result_to_proto(item.hand, item.scores, match_id)
    )


# -- the gRPC side ------------------------------------------------------------------------------


class MatchLookup(Protocol):
    """What the spectator service asks the storage: is there such a match (over)?"""

    def match(self, match_id: str) -> StoredMatch | None: ...


class SpectatorServicer(admin_pb_grpc.SpectatorServiceServicer):
    """``Watch``: stream a running match's public messages until it ends. No token needed."""

    def __init__(self, hub: SpectatorHub, storage: MatchLookup) -> None:
        self.hub = hub
        self.storage = storage

    async def Watch(  # type: ignore[override]  # noqa: N802
        self,
        request: admin_pb.WatchRequest,
        context: grpc.aio.ServicerContext[admin_pb.WatchRequest, admin_pb.SpectatorMessage],
    ) -> None:
        match_id = request.match_id
        if not match_id:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, "match_id: missing; expected a match id"
            )
        try:
            subscription = self.hub.subscribe(match_id)
        except NotWatchableError:
            over = self.hub.ended_recently(match_id)
            if not over:
                over = await asyncio.to_thread(self.storage.match, match_id) is not None
            if over:
                await context.abort(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    f"match {match_id} is over: get its record with "
                    f"'domino-arena record {match_id}'",
                )
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no match has id '{match_id}'")
        try:
            while True:
                item = await subscription.get()
                if isinstance(item, Dropped):
                    await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, item.reason)
                await context.write(item)
                if item.WhichOneof("message") == "match_end":
                    return
        finally:
            self.hub.unsubscribe(subscription)

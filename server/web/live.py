"""The web face's window on a referee: its lobby (cached) and its running matches (bounded).

:class:`LiveSource` follows one referee through the SDK's :class:`Spectator` (public
information only: the referee sends a spectator no hand, boneyard or widow, and the SDK's strict
decoding refuses a table that carried one). It gives the live pages three things:

- :meth:`LiveSource.lobby`: the referee's ``ListLive``, kept for :data:`LOBBY_SECONDS` so a flood
  of page loads costs the referee one call a second;
- :meth:`LiveSource.snapshot`: where one match stands now (its latest public table), for the
  page drawn on the server;
- :meth:`LiveSource.stream`: one match's events for one browser, at most :data:`MAX_STREAMS` at
  once, each with a queue of at most :data:`QUEUE_BOUND` events: a browser that reads slower is
  cut and told why, and the match never waits for it.

Every event is plain JSON-ready data (:func:`event_of`); the table in it is
:func:`~domino_arena.server.web.table.draw_public` of the referee's spectator view.
The gRPC channel belongs to an event loop, so it is made on first use in the running loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any, Final, cast
from urllib.parse import quote

from domino_arena.sdk.client.organizer import Organizer
from domino_arena.sdk.client.spectator import (
    Lobby,
    Spectator,
    WatchedEnd,
    WatchedHandEnd,
    WatchedStep,
    WatchError,
    WatchItem,
    WatchStarted,
)
from domino_arena.sdk.client.tls import ClientTls
from domino_arena.sdk.rules import CHANCE, DEAL, Game
from domino_arena.sdk.wire import ConversionError
from domino_arena.server.web.params import MAX_TEXT, WebError, not_found
from domino_arena.server.web.table import draw_public

MAX_STREAMS: Final = 200
"""Event streams open at once, over all browsers; one more is a 503."""
QUEUE_BOUND: Final = 256
"""Events waiting for one browser; a browser further behind is cut (it may reload)."""
HEARTBEAT_SECONDS: Final = 15.0
"""An SSE comment after this long without an event, so proxies keep the stream open."""
LOBBY_SECONDS: Final = 1.0
"""How long one ``ListLive`` answer serves every page."""
SNAPSHOT_SECONDS: Final = 2.0
"""How long the server-drawn page waits for a match's latest table (the referee sends it at
once, with the backlog, unless the match has no step yet, which the lobby tells)."""

GONE: Final = 410


class StreamCutError(Exception):
    """The stream of one browser ended early; ``reason`` says why (sent as a ``cut`` event)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def replay_url(match_id: str) -> str:
    """The replay page of a match (stored once it is over)."""
    return f"/matches/{quote(match_id, safe='')}"


def result_text(game: Game, players: tuple[str, ...], end: WatchedEnd) -> str:
    """One line on how a watched match ended: who won with which scores, or why nobody did."""
    scores = "-".join(str(s) for s in end.scores)
    if end.winner is None:
        why = f" ({end.detail})" if end.detail else ""
        return f"no winner: {end.termination.value}{why}, scores {scores}"
    names = ", ".join(players[seat] for seat in game.sides[end.winner] if seat < len(players))
    return f"side {end.winner} ({names}) wins{end.termination.how_won}, scores {scores}"


@dataclass
class Follower:
    """Turns one watch's items into events: counts the steps, remembers the game and players."""

    match_id: str
    game: Game | None = None
    players: tuple[str, ...] = ()
    steps: int = 0

    def event(self, item: WatchItem) -> tuple[str, dict[str, Any]]:
        """The event of ``item``: its name (``start``, ``step``, ``hand``, ``end``) and data."""
        if isinstance(item, WatchStarted):
            self.game, self.players = item.game, item.players
            return "start", {
                "match_id": item.match_id,
                "game": item.game.name,
                "title": item.game.describe(),
                "players": list(item.players),
                "sides": [list(side) for side in item.game.sides],
                "side_of_seat": [item.game.side_of(s) for s in range(item.game.num_players)],
                "tournament_id": item.tournament_id,
            }
        if isinstance(item, WatchedStep):
            self.steps += 1
            entry = item.entry
            return "step", {
                "step": self.steps,
                "seat": None if entry.seat == CHANCE else entry.seat,
                "action": "the deal" if entry.action == DEAL else str(entry.action),
                "deal": item.deal,
                "scores": list(item.scores),
                "table": None if item.table is None else draw_public(item.table),
            }
        if isinstance(item, WatchedHandEnd):
            hand = item.hand
            return "hand", {
                "deal": hand.deal,
                "end": hand.end.value,
                "points": list(hand.points),
                "detail": hand.detail,
                "scores": list(item.scores),
            }
        assert self.game is not None, "the start comes first"
        return "end", {
            "termination": item.termination.value,
            "winner": item.winner,
            "scores": list(item.scores),
            "detail": item.detail,
            "result": result_text(self.game, self.players, item),
            "replay": replay_url(self.match_id),
        }


def _watch(spectator: Spectator, match_id: str) -> AsyncGenerator[WatchItem, None]:
    """The SDK's watch, as the async generator it is (so it can be closed)."""
    return cast(AsyncGenerator[WatchItem, None], spectator.watch(match_id))


@dataclass
class Snapshot:
    """Where a match stands: its start, the steps so far, the latest table, or its end."""

    start: dict[str, Any]
    steps: int = 0
    last: dict[str, Any] | None = None
    """The latest ``step`` event with a table (None before the first deal)."""
    end: dict[str, Any] | None = None


@dataclass
class _Channel:
    """The loop-bound part: the spectator client and the lobby's lock, made in their loop."""

    loop: asyncio.AbstractEventLoop
    spectator: Spectator
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    organizer: Organizer | None = None
    """The admin API's client, made on the first organizer's call (most web faces make none)."""


class LiveSource:
    """Live matches of the referee at ``server``, for the web face (see the module)."""

    def __init__(
        self,
        server: str,
        *,
        tls: ClientTls | None = None,
        max_streams: int = MAX_STREAMS,
        queue_bound: int = QUEUE_BOUND,
        heartbeat_seconds: float = HEARTBEAT_SECONDS,
        lobby_seconds: float = LOBBY_SECONDS,
        snapshot_seconds: float = SNAPSHOT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_streams < 1 or queue_bound < 1:
            raise ValueError(
                f"max_streams and queue_bound: expected at least 1, got {max_streams} and "
                f"{queue_bound}"
            )
        self.server = server
        self.tls = tls
        self.max_streams = max_streams
        self.queue_bound = queue_bound
        self.heartbeat_seconds = heartbeat_seconds
        self.lobby_seconds = lobby_seconds
        self.snapshot_seconds = snapshot_seconds
        self.clock = clock
        self.open_streams: set[StreamEvents] = set()
        """The event streams open now (at most ``max_streams``)."""
        self.lobby_calls = 0
        """``ListLive`` calls made so far (the cache's test reads it)."""
        self._channel: _Channel | None = None
        self._lobby: tuple[float, Lobby | WebError] | None = None

    @property
    def streams(self) -> int:
        """How many event streams are open now."""
        return len(self.open_streams)

    def _current(self) -> _Channel:
        loop = asyncio.get_running_loop()
        if self._channel is None or self._channel.loop is not loop:
            self._channel = _Channel(loop, Spectator(self.server, tls=self.tls))
        return self._channel

    def unreachable(self, error: WatchError) -> WebError:
        """The 503 of a referee that cannot be reached or failed."""
        words = f": {error.message}" if error.message else ""
        return WebError(
            503, f"the referee at {self.server} cannot be reached ({error.code}{words})"
        )

    async def close(self) -> None:
        """Close the channel (every open watch ends)."""
        channel, self._channel = self._channel, None
        if channel is not None and channel.loop is asyncio.get_running_loop():
            await channel.spectator.close()
            if channel.organizer is not None:
                await channel.organizer.close()

    async def set_owner_enabled(self, token: str, course: str, owner: str, enabled: bool) -> None:
        """Enable or disable ``owner`` of ``course`` through the referee's admin API with the
        signed-in organizer's ``token`` (:mod:`.owner_switch`): the web face's one way to act
        on the referee.

        Raises:
            OrganizerError: the referee refused the call or cannot be reached.
        """
        channel = self._current()
        if channel.organizer is None:
            channel.organizer = Organizer(self.server, tls=self.tls)
        await channel.organizer.set_owner_enabled(token, course, owner, enabled=enabled)

    # -- the lobby ------------------------------------------------------------------------------

    async def lobby(self) -> Lobby:
        """The referee's live matches and connected bots, at most :data:`LOBBY_SECONDS` old
        (a failure too is kept that long, so a flood of pages never floods the referee).

        Raises:
            WebError: 503, the referee cannot be reached; 502, its answer is malformed.
        """
        channel = self._current()
        async with channel.lock:  # concurrent pages share one call
            cached = self._lobby
            if cached is None or self.clock() - cached[0] >= self.lobby_seconds:
                self.lobby_calls += 1
                answer: Lobby | WebError
                try:
                    answer = await channel.spectator.lobby()
                except WatchError as exc:
                    answer = self.unreachable(exc)
                except ConversionError as exc:
                    answer = WebError(502, f"the referee sent a malformed lobby: {exc}")
                cached = self._lobby = (self.clock(), answer)
        if isinstance(cached[1], WebError):  # a failure is kept as long: no flood either
            raise WebError(cached[1].status, cached[1].message)
        return cached[1]

    # -- one match ------------------------------------------------------------------------------

    def _refusal(self, match_id: str, error: WatchError) -> WebError:
        if error.code == "NOT_FOUND":
            return not_found(f"no live match has id {match_id!r} at the referee {self.server}")
        if error.code == "FAILED_PRECONDITION":
            return WebError(
                GONE, f"match {match_id} is over: its replay is at {replay_url(match_id)}"
            )
        if error.code == "INVALID_ARGUMENT":
            return WebError(400, f"match id: {error.message}")
        return self.unreachable(error)

    @staticmethod
    def check_id(match_id: str) -> None:
        if not match_id or len(match_id) > MAX_TEXT:
            raise WebError(400, f"match id: 1 to {MAX_TEXT} characters, got {len(match_id)}")

    async def snapshot(self, match_id: str) -> Snapshot:
        """Where ``match_id`` stands now: its backlog read up to the latest table, then closed.

        Raises:
            WebError: 404 unknown, 410 over (:data:`GONE`), 503 referee unreachable.
        """
        self.check_id(match_id)
        follower = Follower(match_id)
        listed = [m for m in (await self.lobby()).matches if m.match_id == match_id]
        not_dealt = bool(listed) and listed[0].steps == 0  # then no table is coming at once
        watch = _watch(self._current().spectator, match_id)
        snapshot: Snapshot | None = None
        try:
            async with contextlib.aclosing(watch):
                async with asyncio.timeout(self.snapshot_seconds):
                    async for item in watch:
                        name, data = follower.event(item)
                        if name == "start":
                            snapshot = Snapshot(data)
                            if not_dealt:
                                break
                            continue
                        assert snapshot is not None
                        snapshot.steps = follower.steps
                        if name == "step" and data["table"] is not None:
                            snapshot.last = data
                            break
                        if name == "end":
                            snapshot.end = data
                            break
        except WatchError as exc:
            raise self._refusal(match_id, exc) from None
        except ConversionError as exc:
            raise WebError(502, f"the referee sent a malformed message: {exc}") from None
        except TimeoutError:
            pass  # no table yet: the page says so, and its script follows the match
        if snapshot is None:
            raise WebError(503, f"the referee at {self.server} sent nothing for {match_id}")
        return snapshot

    async def open(self, match_id: str) -> StreamEvents:
        """Take one of the :data:`MAX_STREAMS` slots and start following ``match_id``; the
        caller ends it with :meth:`StreamEvents.stop` (which frees the slot).

        The first item (the start) is read before this returns, so a refusal is an HTTP error
        and not a broken stream.

        Raises:
            WebError: 503 every slot is taken or the referee cannot be reached; 404 unknown
                match; 410 over.
        """
        self.check_id(match_id)
        if self.streams >= self.max_streams:
            raise WebError(
                503,
                f"too many live streams: {self.max_streams} are open, the most this web face "
                "serves; try again later",
            )
        events = StreamEvents(self, match_id)
        self.open_streams.add(events)
        try:
            await events.begin()
        except BaseException:
            await events.stop()
            raise
        return events


class StreamEvents:
    """One browser's events of one match: a pump from the watch into a bounded queue."""

    def __init__(self, source: LiveSource, match_id: str) -> None:
        self.source = source
        self.match_id = match_id
        self.follower = Follower(match_id)
        self.first: tuple[str, dict[str, Any]] | None = None
        self._watch = _watch(source._current().spectator, match_id)
        self._queue: asyncio.Queue[tuple[str, dict[str, Any]] | StreamCutError | None] = (
            asyncio.Queue()
        )
        self._pump: asyncio.Task[None] | None = None
        self._stopped = False

    async def begin(self) -> None:
        try:
            item = await anext(self._watch)
        except WatchError as exc:
            raise self.source._refusal(self.match_id, exc) from None
        except ConversionError as exc:
            raise WebError(502, f"the referee sent a malformed message: {exc}") from None
        except StopAsyncIteration:  # pragma: no cover - watch always starts or raises
            raise self.source.unreachable(WatchError("UNAVAILABLE", "empty stream")) from None
        self.first = self.follower.event(item)
        self._pump = asyncio.create_task(self._run())

    async def _run(self) -> None:
        try:
            async with contextlib.aclosing(self._watch):
                async for item in self._watch:
                    if self._queue.qsize() >= self.source.queue_bound:
                        self._queue.put_nowait(
                            StreamCutError(
                                f"cut: {self._queue.qsize()} events of match {self.match_id} "
                                "were waiting for this browser; reload to watch again"
                            )
                        )
                        return
                    self._queue.put_nowait(self.follower.event(item))
            self._queue.put_nowait(None)
        except WatchError as exc:
            reason = {
                "RESOURCE_EXHAUSTED": "cut: the referee dropped this watcher, which fell behind",
            }.get(exc.code, f"the referee's stream ended: {exc.code} {exc.message}".strip())
            self._queue.put_nowait(StreamCutError(reason + "; reload to watch again"))
        except ConversionError as exc:
            self._queue.put_nowait(StreamCutError(f"the referee sent a malformed message: {exc}"))

    async def next(self) -> tuple[str, dict[str, Any]] | None:
        """The next event; None after the last (the end); a heartbeat timeout raises
        ``TimeoutError``.

        Raises:
            StreamCutError: the browser fell behind, or the referee's stream failed.
        """
        if self.first is not None:
            first, self.first = self.first, None
            return first
        async with asyncio.timeout(self.source.heartbeat_seconds):
            item = await self._queue.get()
        if isinstance(item, StreamCutError):
            raise item
        return item

    async def stop(self) -> None:
        """End the watch (the gRPC stream is cancelled) and free the slot; idempotent."""
        if self._stopped:
            return
        self._stopped = True
        self.source.open_streams.discard(self)
        if self._pump is not None:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pump
        else:
            await self._watch.aclose()

    @property
    def pump(self) -> asyncio.Task[None] | None:
        """The task moving the watch's items into the queue (done once it stopped)."""
        return self._pump

"""One referee watch per live match, shared by every browser that follows it (issue 29).

A crowd on a live page used to cost the referee one ``Watch`` per browser: each step was
serialized, sent and decoded once per browser, and 1,000 browsers slowed every match of the
referee. A :class:`MatchFeed` reads the referee's watch of one match once, turns each item into
its event once (:class:`Follower`), and encodes that event's server-sent-event bytes once
(:data:`Encode`: the names scrubbed, the table drawn as HTML) into a shared, bounded
:class:`~domino_arena.server.feed.Feed` (the referee's own fan-out, keeping the last events
only). Each browser is a :class:`Reader`: a cursor into that feed, woken when the log grows, writing
everything it has not had as one chunk (a slow browser makes one large write, not many small
ones). A browser that falls more than the log's bound behind is cut (a ``cut`` event says so),
and the match, the referee and the other browsers never wait for it.

The referee's ``watchers`` of a match then counts this web face once, whatever its crowd;
:attr:`MatchFeed.readers` is the web face's own count. Hidden information stays hidden by the
same construction as before: every event is made from the SDK's strictly decoded spectator
items (a table that carried a hand never decodes).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import anyio
from starlette.types import Receive, Send

from domino_arena.sdk.client.spectator import (
    WatchedEnd,
    WatchedHandEnd,
    WatchedStep,
    WatchError,
    WatchItem,
    WatchStarted,
)
from domino_arena.sdk.rules import CHANCE, DEAL, Game
from domino_arena.sdk.wire import ConversionError
from domino_arena.server.feed import Cursor, Dropped, Feed
from domino_arena.server.web.table import draw_public


async def stream_until_gone(
    receive: Receive,
    send: Send,
    headers: list[tuple[bytes, bytes]],
    body: Callable[[], Awaitable[None]],
) -> None:
    """Send an event stream's head, then ``body`` until it ends or the browser goes away,
    whichever comes first (a browser gone mid-write is no error). The live page's stream and
    the person's table's stream both end so."""
    try:
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        async with anyio.create_task_group() as group:

            async def run_body() -> None:
                await body()
                group.cancel_scope.cancel()

            async def gone() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                group.cancel_scope.cancel()

            group.start_soon(run_body)
            group.start_soon(gone)
    except OSError:
        pass  # the browser went away mid-write


def replay_url(match_id: str) -> str:
    """The replay page of a match (stored once it is over)."""
    return f"/matches/{quote(match_id, safe='')}"


def sse_json(data: Any) -> str:
    """``data`` as one line of JSON that holds no raw ``<``, ``>`` or ``&``."""
    text = json.dumps(data, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def sse_event(name: str, data: Any) -> bytes:
    """One server-sent event: ``event: NAME`` and one ``data:`` line (:func:`sse_json`)."""
    return f"event: {name}\ndata: {sse_json(data)}\n\n".encode()


def cut_event(reason: str) -> bytes:
    return sse_event("cut", {"reason": reason})


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


Encode = Callable[[str, dict[str, Any]], bytes]
"""Turns one event (its name and data) into the bytes every browser is sent."""
MakeEncode = Callable[[dict[str, Any]], Awaitable[Encode]]
"""Makes a match's :data:`Encode` from its ``start`` event's data (read once per match: the
live pages read the public names then, so the aliases of a match's players are fixed)."""


async def plain_encode(start: dict[str, Any]) -> Encode:
    """The events as they are (no names hidden, no HTML): a live source without pages."""
    return sse_event


@dataclass(frozen=True, slots=True)
class FeedEvent:
    """One event of a match: its name, its data (the names as the referee sent them, for the
    page drawn on the server) and the bytes every browser is sent."""

    name: str
    data: dict[str, Any]
    text: bytes


class MatchFeed:
    """One match's events from one referee watch, for every browser of this web face.

    ``bound`` events are kept (a browser joining later gets them after the start); a reader
    further behind than that is cut. The feed ends with the match, when the referee's stream
    fails (every reader is cut with the reason), or ``linger_seconds`` after its last holder
    let go (so a reload does not open a new watch at the referee).
    """

    def __init__(
        self,
        match_id: str,
        watch: AsyncGenerator[WatchItem, None],
        *,
        bound: int,
        linger_seconds: float,
        make_encode: MakeEncode,
        on_done: Callable[[MatchFeed], None],
    ) -> None:
        self.match_id = match_id
        self.bound = bound
        self.linger_seconds = linger_seconds
        self.follower = Follower(match_id)
        self.started: WatchStarted | None = None
        self.start: FeedEvent | None = None
        self.events: Feed[FeedEvent] = Feed(keep=bound)
        """The events after the start (the last ``bound`` kept), read by every browser."""
        self.latest: FeedEvent | None = None
        """The latest ``step`` with a table (None before the first deal)."""
        self.end: FeedEvent | None = None
        self.done = False
        self.reason = f"the referee's stream of match {match_id} ended early; reload to watch again"
        """What a reader is told when the feed is done without an end."""
        self.holders = 0
        """Readers and page loads using the feed now."""
        self.readers = 0
        """Browsers following it now."""
        self._watch = watch
        self._make_encode = make_encode
        self._on_done = on_done
        self._idle = 0
        """Counts holds and releases: a linger timer closes the feed only if it is the same
        when the timer fires as when it was set."""
        self._pump: asyncio.Task[None] | None = None
        self.ready: asyncio.Future[None] = asyncio.ensure_future(self._begin())
        """Done once the start is read (it raises the referee's refusal, as ``WatchError``)."""

    @property
    def total(self) -> int:
        """Events appended so far."""
        return self.events.total

    async def _begin(self) -> None:
        try:
            item = await anext(self._watch, None)
            if item is None:  # pragma: no cover - the SDK's watch starts or raises
                raise WatchError("UNAVAILABLE", "empty stream")
            name, data = self.follower.event(item)
            assert isinstance(item, WatchStarted), "the start comes first"
            encode = await self._make_encode(data)
        except BaseException:
            await self._watch.aclose()
            self._finish()
            raise
        self.started = item
        self.start = FeedEvent(name, data, encode(name, data))
        self._pump = asyncio.create_task(self._run(encode))

    async def _run(self, encode: Encode) -> None:
        try:
            async with contextlib.aclosing(self._watch):
                async for item in self._watch:
                    name, data = self.follower.event(item)
                    self._append(FeedEvent(name, data, encode(name, data)))
        except WatchError as exc:
            self.reason = {
                "RESOURCE_EXHAUSTED": "cut: the referee dropped this web face, which fell behind",
            }.get(exc.code, f"the referee's stream ended: {exc.code} {exc.message}".strip())
            self.reason += "; reload to watch again"
        except ConversionError as exc:
            self.reason = f"the referee sent a malformed message: {exc}"
        except asyncio.CancelledError:
            self.reason = (
                f"cut: this web face stopped following match {self.match_id}; reload to watch again"
            )
            raise
        finally:
            self._finish()

    def _finish(self) -> None:
        if not self.done:
            self.done = True
            self._on_done(self)
            self.events.close()

    def _append(self, event: FeedEvent) -> None:
        if event.name == "step" and event.data["table"] is not None:
            self.latest = event
        elif event.name == "end":
            self.end = event
        self.events.post(event)

    async def grown(self, since: int) -> None:
        """Return once the feed holds more than ``since`` events or is done."""
        while self.total <= since and not self.done:
            await self.events.grown()

    # -- who holds it -------------------------------------------------------------------------

    def hold(self) -> None:
        self.holders += 1
        self._idle += 1

    def release(self) -> None:
        """Let go; the last holder's release closes the feed after ``linger_seconds`` unless
        someone holds it again by then."""
        self.holders -= 1
        if self.holders > 0 or self.done:
            return
        self._idle += 1
        idle = self._idle
        loop = asyncio.get_running_loop()
        loop.call_later(self.linger_seconds, self._linger_over, idle)

    def _linger_over(self, idle: int) -> None:
        if idle == self._idle and self.holders == 0:
            self.stop()

    def stop(self) -> None:
        """End the feed now (the watch at the referee is cancelled)."""
        if self._pump is not None:
            self._pump.cancel()
        elif not self.ready.done():
            self.ready.cancel()

    async def stopped(self) -> None:
        """Stop, and wait until the watch is closed."""
        self.stop()
        for task in (self.ready, self._pump):
            if task is not None:
                # What ended it was told to its readers already (the refusal, the reason).
                with contextlib.suppress(asyncio.CancelledError, WatchError, ConversionError):
                    await task


class Reader:
    """One browser's place in a feed (a :class:`~domino_arena.server.feed.Cursor`): what
    it has been sent, and what it has not yet."""

    def __init__(self, feed: MatchFeed, on_close: Callable[[], None]) -> None:
        self.feed = feed
        events = feed.events
        # Join with half the kept window, so one more event does not cut a new browser.
        joined = max(events.base, events.total - max(1, feed.bound // 2))
        self.cursor = Cursor(events, f"match {feed.match_id}", feed.bound, start=joined)
        self._started = False
        self._on_close = on_close
        self._closed = False
        feed.hold()
        feed.readers += 1

    def pending(self) -> tuple[bytes, bool]:
        """Everything this browser has not had, as one chunk, and whether that is the last
        (the end, a cut, or the feed's failure)."""
        feed = self.feed
        assert feed.start is not None, "a reader joins a started feed"
        parts: list[bytes] = []
        if not self._started:
            self._started = True
            parts.append(feed.start.text)
        waiting = self.cursor.pending
        batch = self.cursor.take()
        if isinstance(batch, Dropped):
            parts.append(
                cut_event(
                    f"cut: {waiting} events of match {feed.match_id} were waiting for this "
                    f"browser (at most {feed.bound} may); reload to watch again"
                )
            )
            return b"".join(parts), True
        parts.extend(event.text for event in batch or ())
        if feed.done:
            if feed.end is None:
                parts.append(cut_event(feed.reason))
            return b"".join(parts), True
        return b"".join(parts), False

    async def wait(self, timeout: float) -> bool:
        """Wait until there is something to send; False after ``timeout`` seconds of nothing."""
        try:
            async with asyncio.timeout(timeout):
                await self.cursor.wait()
        except TimeoutError:
            return False
        return True

    def close(self) -> None:
        """Leave the feed (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self.feed.readers -= 1
        self.feed.release()
        self._on_close()

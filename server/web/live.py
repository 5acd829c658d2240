"""The web face's window on a referee: its lobby (cached) and its running matches (shared).

:class:`LiveSource` follows one referee through the SDK's :class:`Spectator` (public
information only: the referee sends a spectator no hand, boneyard or widow, and the SDK's strict
decoding refuses a table that carried one). It gives the live pages three things:

- :meth:`LiveSource.lobby`: the referee's ``ListLive``, kept for :data:`LOBBY_SECONDS` so a flood
  of page loads costs the referee one call a second;
- :meth:`LiveSource.snapshot`: where one match stands now (its latest public table), for the
  page drawn on the server;
- :meth:`LiveSource.open`: one match's events for one browser.

Both of the last two read the match's one :class:`~.live_feed.MatchFeed`: one referee watch per
match, however many browsers follow it (issue 29: a watch per browser let a crowd slow every
match of the referee). Streams are bounded per web face (:data:`MAX_STREAMS`) and per client
address (:data:`MAX_STREAMS_PER_CLIENT`), so one client cannot take every stream.

With the referee's relay token (``domino-arena web --relay-token-file``) the referee also lists
and streams the matches whose live view is ``signed-in``; the caller says per request which of
them a browser may see (:data:`Allowed`), and to any other browser such a match does not exist.
The gRPC channel belongs to an event loop, so it is made on first use in the running loop.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final, cast

from domino_arena.sdk.client.organizer import Organizer
from domino_arena.sdk.client.spectator import LiveView, Lobby, Spectator, WatchError, WatchItem
from domino_arena.sdk.client.tls import ClientTls
from domino_arena.sdk.wire import ConversionError
from domino_arena.server.recent import Recent
from domino_arena.server.web.live_feed import (
    MakeEncode,
    MatchFeed,
    Reader,
    plain_encode,
    replay_url,
)
from domino_arena.server.web.params import MAX_TEXT, WebError, not_found

MAX_STREAMS: Final = 2000
"""Event streams open at once, over all browsers; one more is a 503. A stream costs the
referee nothing now (a match's browsers share one watch) and this process a socket and a
cursor, so the bound is the web face's own sockets (uvicorn's and the system's file limit)."""
MAX_STREAMS_PER_CLIENT: Final = 64
"""Event streams one client address may hold; one more is a 503, so one client cannot lock
everyone else out of the live pages (issue 29), while a classroom behind one NAT address (40
students, a tab or two each) still watches."""
QUEUE_BOUND: Final = 256
"""Events kept per match; a browser further behind is cut (it may reload)."""
LINGER_SECONDS: Final = 5.0
"""How long a match's watch outlives its last browser, so a reload does not churn the referee."""
HEARTBEAT_SECONDS: Final = 15.0
"""An SSE comment after this long without an event, so proxies keep the stream open."""
LOBBY_SECONDS: Final = 1.0
"""How long one ``ListLive`` answer serves every page."""
SNAPSHOT_SECONDS: Final = 2.0
"""How long the server-drawn page waits for a match's latest table (the referee sends it at
once, with the backlog, unless the match has no step yet, which the lobby tells)."""

GONE: Final = 410
ENDED_SECONDS: Final = 10.0
"""How long a match seen to end (or refused: unknown, over) is answered without asking the
referee again: browsers that reload a finished game would each open a watch there."""
ENDED_KEPT: Final = 1024
"""The most such matches remembered."""
OVER: Final = WatchError("FAILED_PRECONDITION", "the match is over")
"""What the referee would answer for a match this web face saw end."""

Allowed = Callable[[str, LiveView], Awaitable[bool]]
"""Whether the browser asking may see a match of this course with this live view."""


async def public_only(course: str, view: LiveView) -> bool:
    """A browser signed in nowhere: the public matches only."""
    return view is LiveView.PUBLIC


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
    """The loop-bound part: the spectator client, the lobby's lock and the matches followed,
    made in their loop."""

    loop: asyncio.AbstractEventLoop
    spectator: Spectator
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    organizer: Organizer | None = None
    """The admin API's client, made on the first organizer's call (most web faces make none)."""
    feeds: dict[str, MatchFeed] = field(default_factory=dict)
    """The one feed of each match followed now."""


class LiveSource:
    """Live matches of the referee at ``server``, for the web face (see the module).

    ``relay_token`` (the referee's ``serve --relay-token-file``) is sent with every call, so the
    referee lists and streams the signed-in matches too; ``max_streams`` and
    ``max_streams_per_client`` bound the event streams; ``queue_bound`` is the events a match
    keeps and how far behind a browser may fall; ``linger_seconds`` how long a match's watch
    outlives its last browser.
    """

    def __init__(
        self,
        server: str,
        *,
        tls: ClientTls | None = None,
        relay_token: str | None = None,
        max_streams: int = MAX_STREAMS,
        max_streams_per_client: int = MAX_STREAMS_PER_CLIENT,
        queue_bound: int = QUEUE_BOUND,
        linger_seconds: float = LINGER_SECONDS,
        heartbeat_seconds: float = HEARTBEAT_SECONDS,
        lobby_seconds: float = LOBBY_SECONDS,
        snapshot_seconds: float = SNAPSHOT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_streams < 1 or max_streams_per_client < 1 or queue_bound < 1:
            raise ValueError(
                "max_streams, max_streams_per_client and queue_bound: expected at least 1, got "
                f"{max_streams}, {max_streams_per_client} and {queue_bound}"
            )
        if linger_seconds < 0:
            raise ValueError(f"linger_seconds: expected at least 0, got {linger_seconds}")
        self.server = server
        self.tls = tls
        self.relay_token = relay_token
        self.max_streams = max_streams
        self.max_streams_per_client = max_streams_per_client
        self.queue_bound = queue_bound
        self.linger_seconds = linger_seconds
        self.heartbeat_seconds = heartbeat_seconds
        self.lobby_seconds = lobby_seconds
        self.snapshot_seconds = snapshot_seconds
        self.clock = clock
        self.ended: Recent[str, WebError] = Recent(ENDED_SECONDS, ENDED_KEPT, clock)
        """Matches that ended or were refused lately, and the answer to give
        (:data:`ENDED_SECONDS`)."""
        self.streams_of: dict[str, int] = {}
        """The event streams open now per client address (only addresses with one)."""
        self.lobby_calls = 0
        """``ListLive`` calls made so far (the cache's test reads it)."""
        self._channel: _Channel | None = None
        self._lobby: tuple[float, Lobby | WebError] | None = None

    @property
    def streams(self) -> int:
        """How many event streams are open now."""
        return sum(self.streams_of.values())

    def feed_of(self, match_id: str) -> MatchFeed | None:
        """The feed of ``match_id`` followed now, if any (in this loop)."""
        channel = self._channel
        return None if channel is None else channel.feeds.get(match_id)

    def browsers(self, match_id: str) -> int:
        """How many browsers of this web face follow ``match_id`` now."""
        feed = self.feed_of(match_id)
        return 0 if feed is None else feed.readers

    def _current(self) -> _Channel:
        loop = asyncio.get_running_loop()
        if self._channel is None or self._channel.loop is not loop:
            spectator = Spectator(self.server, tls=self.tls, token=self.relay_token)
            self._channel = _Channel(loop, spectator)
        return self._channel

    def unreachable(self, error: WatchError) -> WebError:
        """The 503 of a referee that cannot be reached or failed."""
        words = f": {error.message}" if error.message else ""
        return WebError(
            503, f"the referee at {self.server} cannot be reached ({error.code}{words})"
        )

    async def close(self) -> None:
        """Stop following every match and close the channel."""
        channel, self._channel = self._channel, None
        if channel is not None and channel.loop is asyncio.get_running_loop():
            for feed in list(channel.feeds.values()):
                await feed.stopped()
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
        With the relay token it holds the signed-in matches too: the caller filters them.

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
        # A match this web face may not watch (a live view of none, or signed-in without the
        # relay token) is not to be told apart from one that does not exist; a relay token
        # the referee refuses is the operator's to fix, so it says so.
        hidden = ("NOT_FOUND", "PERMISSION_DENIED")
        if error.code in hidden or (error.code == "UNAUTHENTICATED" and self.relay_token is None):
            return self.unknown(match_id)
        if error.code == "FAILED_PRECONDITION":
            return WebError(
                GONE, f"match {match_id} is over: its replay is at {replay_url(match_id)}"
            )
        if error.code == "INVALID_ARGUMENT":
            return WebError(400, f"match id: {error.message}")
        return self.unreachable(error)

    def unknown(self, match_id: str) -> WebError:
        """The 404 of a match that is not live here, or that this browser may not see."""
        return not_found(f"no live match has id {match_id!r} at the referee {self.server}")

    @staticmethod
    def check_id(match_id: str) -> None:
        if not match_id or len(match_id) > MAX_TEXT:
            raise WebError(400, f"match id: 1 to {MAX_TEXT} characters, got {len(match_id)}")

    async def _follow(self, match_id: str, allowed: Allowed, make_encode: MakeEncode) -> MatchFeed:
        """The feed of ``match_id`` (opened, with one watch at the referee, unless another
        browser's is open), held for the caller, who releases it.

        Raises:
            WebError: 404 unknown or not for this browser, 410 over, 503 referee unreachable,
                502 malformed.
        """
        self.check_id(match_id)
        channel = self._current()
        feed = channel.feeds.get(match_id)
        if feed is None:
            kept = self.ended.get(match_id)
            if kept is not None:
                raise WebError(kept.status, kept.message)

            def done(ended: MatchFeed) -> None:
                if channel.feeds.get(match_id) is ended:
                    del channel.feeds[match_id]
                if ended.end is not None:
                    self.ended.put(match_id, self._refusal(match_id, OVER))

            feed = MatchFeed(
                match_id,
                _watch(channel.spectator, match_id),
                bound=self.queue_bound,
                linger_seconds=self.linger_seconds,
                make_encode=make_encode,
                on_done=done,
            )
            channel.feeds[match_id] = feed
        feed.hold()
        try:
            await asyncio.shield(feed.ready)
            started = feed.started
            assert started is not None
            if started.live_view is LiveView.NONE or not await allowed(
                started.course, started.live_view
            ):
                raise self.unknown(match_id)
        except WatchError as exc:
            feed.release()
            refusal = self._refusal(match_id, exc)
            if exc.code in ("NOT_FOUND", "FAILED_PRECONDITION"):
                self.ended.put(match_id, refusal)
            raise refusal from None
        except ConversionError as exc:
            feed.release()
            raise WebError(502, f"the referee sent a malformed message: {exc}") from None
        except BaseException:
            feed.release()
            raise
        return feed

    async def snapshot(
        self,
        match_id: str,
        allowed: Allowed = public_only,
        make_encode: MakeEncode = plain_encode,
    ) -> Snapshot:
        """Where ``match_id`` stands now, from its feed (the latest table, or the end).

        Raises:
            WebError: 404 unknown or not for this browser, 410 over (:data:`GONE`), 503
                referee unreachable.
        """
        self.check_id(match_id)
        listed = [m for m in (await self.lobby()).matches if m.match_id == match_id]
        not_dealt = bool(listed) and listed[0].steps == 0  # then no table is coming at once
        feed = await self._follow(match_id, allowed, make_encode)
        try:
            if not not_dealt:
                async with asyncio.timeout(self.snapshot_seconds):
                    while feed.latest is None and feed.end is None and not feed.done:
                        await feed.grown(feed.total)
        except TimeoutError:
            pass  # no table yet: the page says so, and its script follows the match
        finally:
            feed.release()
        assert feed.start is not None
        return Snapshot(
            feed.start.data,
            steps=feed.follower.steps,
            last=None if feed.latest is None else feed.latest.data,
            end=None if feed.end is None else feed.end.data,
        )

    async def open(
        self,
        match_id: str,
        client: str,
        allowed: Allowed = public_only,
        make_encode: MakeEncode = plain_encode,
    ) -> Reader:
        """Take one of the stream slots for ``client`` (an address) and join ``match_id``'s
        feed; the caller ends it with :meth:`Reader.close` (which frees the slot).

        The start is read before this returns, so a refusal is an HTTP error and not a broken
        stream.

        Raises:
            WebError: 503 every slot, or every slot of this client, is taken, or the referee
                cannot be reached; 404 unknown match (or not for this browser); 410 over.
        """
        self.check_id(match_id)
        if self.streams >= self.max_streams:
            raise WebError(
                503,
                f"too many live streams: {self.max_streams} are open, the most this web face "
                "serves; try again later",
            )
        held = self.streams_of.get(client, 0)
        if held >= self.max_streams_per_client:
            raise WebError(
                503,
                f"too many live streams from your address: {held} are open, the most one "
                "client may hold; close one to open another",
            )
        self.streams_of[client] = held + 1

        def free() -> None:
            left = self.streams_of[client] - 1
            if left:
                self.streams_of[client] = left
            else:
                del self.streams_of[client]

        try:
            feed = await self._follow(match_id, allowed, make_encode)
        except BaseException:
            free()
            raise
        reader = Reader(feed, free)
        feed.release()  # the reader holds it now
        return reader

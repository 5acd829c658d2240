"""A spectator relay: the ``SpectatorService`` for a crowd, in a process apart from the referee.

Lichess splits its game server from lila-ws, which holds the crowd's sockets; this is ours for
gRPC spectators (docs/spectators.md, "Relays"). The referee serves a few watchers itself, within
its bounds (:mod:`.watch_limits`), because each costs a write per step on the thread its
matches run on. A relay follows the referee with ONE watch per match, whatever the number of
its own watchers: it posts each message's bytes, as the referee made them, once to a
:class:`~domino_arena.server.feed.Feed`, and every watcher of that match reads the feed
with its own cursor. Its watchers are bounded by its own limits, with the same refusals.

A relay holds the referee's relay token, so the referee counts its watches apart from the crowd
(the relays' bound per match), and says it relays to the public, so the referee shows it what
the public sees: the PUBLIC matches only (it checks no course tokens: a course's signed-in
matches are watched at the referee with the course's token, or on the web face signed in), an
anonymous course's bots by their aliases.
A match is followed from a watcher's first ``Watch`` until it ends or its last watcher leaves;
the watcher that starts it gets the referee's own refusal (unknown, over, malformed) as is.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any, Final

import grpc

from domino_arena.server.feed import Cursor, Dropped
from domino_arena.server.net.live_access import AUDIENCE_KEY, PUBLIC_AUDIENCE
from domino_arena.server.net.spectators import (
    SPECTATOR_SERVICE,
    Followed,
    admit,
    check_match_id,
)
from domino_arena.server.net.watch_limits import (
    WatcherCounts,
    WatchLimits,
)
from domino_arena.server.play.spectators import MAX_PENDING
from domino_arena.server.recent import Recent
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc

LOBBY_SECONDS: Final = 1.0
"""How long one ``ListLive`` answer of the referee serves every caller of the relay."""
ENDED_SECONDS: Final = 10.0
"""How long the relay answers a match it saw end (or refused) itself, without asking the
referee again: a crowd leaving a finished game for the next retries it for a while."""
ENDED_KEPT: Final = 1024
"""The most ended matches remembered."""
FINAL_REFUSALS: Final = frozenset({grpc.StatusCode.NOT_FOUND, grpc.StatusCode.FAILED_PRECONDITION})
"""The referee's refusals that hold for a while (unknown, over), so they are remembered."""
RELAY_LIMITS: Final = WatchLimits(
    server=10_000, per_match=10_000, per_address=64, relays_per_match=0
)
"""A relay's own bounds: its work is its own process's, so they are wide, but one address still
cannot take them all."""


class RelayServicer(admin_pb_grpc.SpectatorServiceServicer):
    """The relay's ``SpectatorService`` over the referee reached through ``channel``."""

    def __init__(
        self,
        channel: grpc.aio.Channel,
        *,
        token: str = "",
        limits: WatchLimits = RELAY_LIMITS,
        max_pending: int = MAX_PENDING,
        lobby_seconds: float = LOBBY_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._watch = channel.unary_stream(
            f"/{SPECTATOR_SERVICE}/Watch",
            request_serializer=admin_pb.WatchRequest.SerializeToString,
            response_deserializer=bytes,  # posted as they came, parsed only to follow the match
        )
        self._stub = admin_pb_grpc.SpectatorServiceStub(channel)
        # The relay token, for the relays' bound; a public audience, for what the public sees.
        self._metadata = (
            (("authorization", f"Bearer {token}"), (AUDIENCE_KEY, PUBLIC_AUDIENCE))
            if token
            else None
        )
        self.counts = WatcherCounts(limits)
        self.max_pending = max_pending
        self.lobby_seconds = lobby_seconds
        self.clock = clock
        self.followed: dict[str, Followed] = {}
        """The matches followed now, by id."""
        self.upstream_watches = 0
        """Watches opened at the referee so far (one per match followed)."""
        self._lobby: tuple[float, admin_pb.ListLiveResponse] | None = None
        self._lobby_lock = asyncio.Lock()
        self._ended: Recent[str, tuple[grpc.StatusCode, str]] = Recent(
            ENDED_SECONDS, ENDED_KEPT, clock
        )
        """Matches that ended or were refused lately, and the refusal to give."""

    # -- following the referee ------------------------------------------------------------------

    async def _follow(self, match_id: str, followed: Followed) -> None:
        """Post every message of the referee's watch of ``match_id`` to the match's feed."""
        self.upstream_watches += 1
        call = self._watch(admin_pb.WatchRequest(match_id=match_id), metadata=self._metadata)
        try:
            async for raw in call:
                data: bytes = raw
                if followed.start is None:
                    message = admin_pb.SpectatorMessage.FromString(data)
                    followed.start = message.start
                    followed.started.set()
                followed.feed.post(data)
            over = f"match {match_id} is over: get its record with 'domino-arena record {match_id}'"
            self._ended.put(match_id, (grpc.StatusCode.FAILED_PRECONDITION, over))
        except grpc.aio.AioRpcError as exc:
            followed.refusal = (exc.code(), exc.details() or "")
            if followed.start is None and exc.code() in FINAL_REFUSALS:
                self._ended.put(match_id, followed.refusal)
        except Exception as exc:  # a malformed start: say so rather than end silently
            followed.refusal = (grpc.StatusCode.UNAVAILABLE, f"the referee sent: {exc}")
        finally:
            followed.started.set()
            followed.feed.close()
            if self.followed.get(match_id) is followed:
                del self.followed[match_id]

    async def close(self) -> None:
        """End every watch of the referee."""
        tasks = [f.task for f in self.followed.values() if f.task is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # -- the relay's own callers ----------------------------------------------------------------

    async def ListLive(  # noqa: N802
        self,
        request: admin_pb.ListLiveRequest,
        context: grpc.aio.ServicerContext[admin_pb.ListLiveRequest, admin_pb.ListLiveResponse],
    ) -> admin_pb.ListLiveResponse:
        async with self._lobby_lock:  # a crowd of callers costs the referee a call a second
            kept = self._lobby
            if kept is None or self.clock() - kept[0] >= self.lobby_seconds:
                try:
                    answer = await self._stub.ListLive(
                        admin_pb.ListLiveRequest(), metadata=self._metadata
                    )
                except grpc.aio.AioRpcError as exc:
                    await context.abort(
                        grpc.StatusCode.UNAVAILABLE,
                        f"the referee cannot be reached: {exc.code().name} {exc.details()}",
                    )
                kept = self._lobby = (self.clock(), answer)
        return kept[1]  # what the referee shows the public: it filtered it for this relay

    async def Watch(  # type: ignore[override]  # noqa: N802
        self,
        request: admin_pb.WatchRequest,
        context: grpc.aio.ServicerContext[admin_pb.WatchRequest, Any],
    ) -> None:
        match_id = request.match_id
        await check_match_id(context, match_id)
        ended = self._ended.get(match_id) if match_id not in self.followed else None
        if ended is not None:
            await context.abort(*ended)
        seat = await admit(self.counts, context, match_id, relay=False)
        try:
            followed = Followed.join(self.followed, match_id, self._follow)
            try:
                await followed.started.wait()
                await self._serve(context, match_id, followed)
            finally:
                followed.leave()  # the last reader's: the referee's watch ends too
        finally:
            self.counts.release(seat)

    async def _serve(
        self,
        context: grpc.aio.ServicerContext[admin_pb.WatchRequest, Any],
        match_id: str,
        followed: Followed,
    ) -> None:
        """Write the match's feed to one watcher from its start."""
        start = followed.start
        if start is None:
            code, details = followed.refusal or (grpc.StatusCode.UNAVAILABLE, "no start")
            await context.abort(code, details)
        feed = followed.feed
        cursor = Cursor(feed, f"match {match_id}", self.max_pending, list(feed.log))
        async for batch in cursor.batches():
            if isinstance(batch, Dropped):
                await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, batch.reason)
            for data in batch:
                await context.write(data)
        if followed.refusal is not None:  # the referee's watch failed mid-match
            code, details = followed.refusal
            await context.abort(
                grpc.StatusCode.UNAVAILABLE,
                f"the referee's watch of {match_id} ended: {code.name} {details}; watch again",
            )

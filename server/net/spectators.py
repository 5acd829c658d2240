"""``SpectatorService``: ``Watch`` streams a running match's public messages until it ends;
``ListLive`` lists the matches that can be watched and the bots connected now.

The hub (:class:`~domino_arena.server.play.spectators.SpectatorHub`) keeps who watches what and
queues only public items; this servicer turns each into its message
(:func:`~domino_arena.server.net.wire.spectator_message`) as it writes it. No token is needed:
a spectator sees nothing a seat could not.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any, NoReturn, Protocol

import grpc

from domino_arena.server.net.admin_answers import LadderView, live_ladder_message
from domino_arena.server.net.live_wire import connected_bots, live_match_to_proto, spectator_message
from domino_arena.server.play.roster import Roster
from domino_arena.server.play.spectators import (
    Dropped,
    NotWatchableError,
    SpectatorHub,
    WatchEnd,
)
from domino_arena.server.store.matches import StoredMatch
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc


class MatchLookup(Protocol):
    """What the spectator service asks the storage: is there such a match (over)?"""

    def match(self, match_id: str) -> StoredMatch | None: ...


def live_response(
    hub: SpectatorHub, roster: Roster, ladders: Callable[[], Mapping[Any, LadderView]]
) -> admin_pb.ListLiveResponse:
    """``ListLive``'s answer: the watchable matches, the bots connected, the running ladders."""
    return admin_pb.ListLiveResponse(
        matches=[live_match_to_proto(live) for live in hub.live()],
        connected=connected_bots(roster),
        ladders=[live_ladder_message(ladder) for _, ladder in sorted(ladders().items())],
    )


async def not_watchable(
    context: grpc.aio.ServicerContext[Any, Any], match_id: str, over: bool, storage: MatchLookup
) -> NoReturn:
    """End a ``Watch`` of a match that runs nowhere: FAILED_PRECONDITION if it is over (it
    ended lately, ``over``, or it is stored), else NOT_FOUND."""
    if not over:
        over = await asyncio.to_thread(storage.match, match_id) is not None
    if over:
        await context.abort(
            grpc.StatusCode.FAILED_PRECONDITION,
            f"match {match_id} is over: get its record with 'domino-arena record {match_id}'",
        )
    await context.abort(grpc.StatusCode.NOT_FOUND, f"no match has id '{match_id}'")


class SpectatorServicer(admin_pb_grpc.SpectatorServiceServicer):
    """``Watch`` and ``ListLive``: public information only, so no token is needed."""

    def __init__(
        self,
        hub: SpectatorHub,
        storage: MatchLookup,
        roster: Roster,
        ladders: Callable[[], Mapping[Any, LadderView]] = dict,
    ) -> None:
        self.hub = hub
        self.storage = storage
        self.roster = roster
        self.ladders = ladders
        """The running ladders by (course, game name), read at each ``ListLive``."""

    async def ListLive(  # noqa: N802
        self,
        request: admin_pb.ListLiveRequest,
        context: grpc.aio.ServicerContext[admin_pb.ListLiveRequest, admin_pb.ListLiveResponse],
    ) -> admin_pb.ListLiveResponse:
        return live_response(self.hub, self.roster, self.ladders)

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
            await not_watchable(context, match_id, over, self.storage)
        try:
            while True:
                item = await subscription.get()
                if isinstance(item, Dropped):
                    await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, item.reason)
                await context.write(spectator_message(match_id, item))
                if isinstance(item, WatchEnd):
                    return
        finally:
            self.hub.unsubscribe(subscription)

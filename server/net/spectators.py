"""``SpectatorService``: ``Watch`` streams a running match's public messages until it ends;
``ListLive`` lists the matches that can be watched and the bots connected now.

The hub (:class:`~domino_arena.server.play.spectators.SpectatorHub`) keeps one feed per match,
shared by every watcher of it; this servicer writes each posted item as its message, made once
for all the watchers (:func:`wire_of`), so ``Watch`` writes bytes (:func:`add_spectator_service`
registers the service with a serializer that passes them through). Who may watch what is
:mod:`.live_access` (the live view of the match's course or tournament, and the caller's token:
none is needed for a public match); how many may watch is :mod:`.watch_limits`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn, Protocol

import grpc
from google.protobuf.message import Message

from domino_arena.server.feed import Dropped, Feed
from domino_arena.server.net.admin_answers import LadderView, live_ladder_message
from domino_arena.server.net.admin_requests import MAX_ID_LENGTH, RequestError
from domino_arena.server.net.limits import echo, peer_host
from domino_arena.server.net.live_access import (
    ANYONE,
    LiveAccess,
    LiveStorage,
    Viewer,
)
from domino_arena.server.net.live_wire import connected_bots, live_match_to_proto, spectator_message
from domino_arena.server.net.watch_limits import (
    DEFAULT_WATCH_LIMITS,
    Seat,
    WatcherCounts,
    WatchLimits,
    WatchRefusedError,
)
from domino_arena.server.play.match_spec import MatchSpec
from domino_arena.server.play.roster import Roster
from domino_arena.server.play.spectators import (
    NotWatchableError,
    Posted,
    SpectatorHub,
    WatchStart,
)
from domino_arena.server.store.live_views import LIVE_VIEW_NONE
from domino_arena.server.store.matches import StoredMatch
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc

SPECTATOR_SERVICE = "domino_arena.v1.SpectatorService"


def _serialized(message: bytes | Message) -> bytes:
    """A response as it goes on the wire: bytes made once for every watcher pass through."""
    return message if isinstance(message, bytes) else message.SerializeToString()


def add_spectator_service(
    servicer: admin_pb_grpc.SpectatorServiceServicer, server: grpc.aio.Server
) -> None:
    """Serve ``servicer`` as the ``SpectatorService`` (the generated registration, but for a
    ``Watch`` that may write a message's bytes)."""
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {
        "Watch": grpc.unary_stream_rpc_method_handler(
            servicer.Watch,
            request_deserializer=admin_pb.WatchRequest.FromString,
            response_serializer=_serialized,
        ),
        "ListLive": grpc.unary_unary_rpc_method_handler(
            servicer.ListLive,
            request_deserializer=admin_pb.ListLiveRequest.FromString,
            response_serializer=admin_pb.ListLiveResponse.SerializeToString,
        ),
    }
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(SPECTATOR_SERVICE, handlers),)
    )
    server.add_registered_method_handlers(SPECTATOR_SERVICE, handlers)


@dataclass
class Followed:
    """A match followed from upstream for every watcher here (a relay: from the referee; a
    cluster's gateway: from the match's host): its messages' bytes as they came, in a
    :class:`~domino_arena.server.feed.Feed` each watcher reads with its own cursor."""

    feed: Feed[bytes] = field(default_factory=Feed)
    started: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the start (or the refusal) came."""
    start: admin_pb.WatchStart | None = None
    refusal: tuple[grpc.StatusCode, str] | None = None
    """The upstream's status and details when its watch failed (before or after the start)."""
    readers: int = 0
    task: asyncio.Task[None] | None = None
    """What posts the upstream's messages to the feed."""

    @staticmethod
    def join(
        followed: dict[str, Followed],
        match_id: str,
        pump: Callable[[str, Followed], Coroutine[Any, Any, None]],
    ) -> Followed:
        """The match's :class:`Followed` in ``followed``, with one more reader; the first
        reader starts ``pump(match_id, it)``, which removes it from ``followed`` when done."""
        found = followed.get(match_id)
        if found is None:
            found = followed[match_id] = Followed()
            found.task = asyncio.get_running_loop().create_task(pump(match_id, found))
        found.readers += 1
        return found

    def leave(self) -> None:
        """One reader less; with none left the upstream watch ends (its task is cancelled)."""
        self.readers -= 1
        if self.readers == 0 and self.task is not None and not self.task.done():
            self.task.cancel()


def wire_of(match_id: str, posted: Posted, with_table: bool) -> bytes:
    """The bytes of ``posted`` as a watcher of ``match_id`` is sent it (with its table or not),
    made by the first watcher that writes it and kept for the others."""
    wire = posted.wires.get(with_table)
    if wire is None:
        item = posted.sent(with_table)
        assert not isinstance(item, WatchStart), "each watcher's start says its live view"
        wire = spectator_message(match_id, item).SerializeToString()
        posted.wires[with_table] = wire
    return wire


class MatchLookup(Protocol):
    """What the spectator service asks the storage: is there such a match (over)?"""

    def match(self, match_id: str) -> StoredMatch | None: ...


async def live_response(
    hub: SpectatorHub,
    roster: Roster,
    ladders: Callable[[], Mapping[tuple[str, str], LadderView]],
    access: LiveAccess,
    viewer: Viewer,
) -> admin_pb.ListLiveResponse:
    """``ListLive``'s answer for ``viewer``: the matches it may watch, the connected bots and
    running ladders of the courses it may watch, each bot of an anonymous course by its alias
    unless the viewer is of the course (:class:`~.live_access.CourseFace`)."""
    matches = []
    for live in hub.live():
        spec = live.spec
        view = await access.view_of(spec)
        if viewer.sees(spec.course, view):
            message = live_match_to_proto(live, view)
            face = await access.face_of(spec.course)
            message.ClearField("players")
            message.players.extend(face.name(bot, viewer, spec.course) for bot in spec.bots)
            matches.append(message)
    connected = []
    for bot in connected_bots(roster):
        course = await access.course_of_bot(bot.name)
        face = await access.face_of(course)
        if viewer.sees(course, face.live_view):
            bot.name = face.name(bot.name, viewer, course)
            connected.append(bot)
    running = []
    for (course, _), ladder in sorted(ladders().items()):
        if viewer.sees(course, (await access.face_of(course)).live_view):
            running.append(live_ladder_message(ladder))
    return admin_pb.ListLiveResponse(matches=matches, connected=connected, ladders=running)


async def start_message(
    spec: MatchSpec, view: str, access: LiveAccess, viewer: Viewer
) -> admin_pb.SpectatorMessage:
    """The first message of a watch of ``spec`` (live ``view``) for ``viewer``: the bots by
    their aliases in an anonymous course the viewer is not of."""
    message = spectator_message(spec.match_id, WatchStart(spec), live_view=view)
    face = await access.face_of(spec.course)
    message.start.ClearField("players")
    message.start.players.extend(face.name(bot, viewer, spec.course) for bot in spec.bots)
    return message


async def unwatchable(
    match_id: str, over: bool, storage: MatchLookup
) -> tuple[grpc.StatusCode, str]:
    """The refusal of a ``Watch`` of a match that runs nowhere: FAILED_PRECONDITION if it is
    over (it ended lately, ``over``, or it is stored), else NOT_FOUND."""
    if not over:
        over = await asyncio.to_thread(storage.match, match_id) is not None
    if over:
        return (
            grpc.StatusCode.FAILED_PRECONDITION,
            f"match {match_id} is over: get its record with 'domino-arena record {match_id}'",
        )
    return grpc.StatusCode.NOT_FOUND, f"no match has id {echo(match_id)}"


async def not_watchable(
    context: grpc.aio.ServicerContext[Any, Any], match_id: str, over: bool, storage: MatchLookup
) -> NoReturn:
    """End a ``Watch`` of a match that runs nowhere (:func:`unwatchable`)."""
    await context.abort(*await unwatchable(match_id, over, storage))


async def check_match_id(context: grpc.aio.ServicerContext[Any, Any], match_id: str) -> None:
    """End a ``Watch`` INVALID_ARGUMENT for a missing or over-long match id (never echoed)."""
    if not match_id:
        await context.abort(
            grpc.StatusCode.INVALID_ARGUMENT, "match_id: missing; expected a match id"
        )
    if len(match_id) > MAX_ID_LENGTH:
        await context.abort(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"match_id: at most {MAX_ID_LENGTH} characters, got {len(match_id)}",
        )


async def caller(access: LiveAccess, context: grpc.aio.ServicerContext[Any, Any]) -> Viewer:
    """Who calls, by the call's token; a token that is none of the referee's ends the call."""
    try:
        return await access.viewer(context.invocation_metadata())
    except RequestError as exc:
        await context.abort(exc.status, str(exc))


async def admit(
    counts: WatcherCounts,
    context: grpc.aio.ServicerContext[Any, Any],
    match_id: str,
    *,
    relay: bool,
) -> Seat:
    """Count one more watch of ``match_id`` from the caller's address, or end the call
    RESOURCE_EXHAUSTED naming the bound it is past."""
    try:
        return counts.admit(match_id, peer_host(context.peer() or ""), relay=relay)
    except WatchRefusedError as exc:
        await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))


async def refuse_unseen(
    context: grpc.aio.ServicerContext[Any, Any],
    match_id: str,
    course: str,
    view: str,
    viewer: Viewer,
) -> NoReturn:
    """End a ``Watch`` of a match of ``course`` whose live ``view`` ``viewer`` may not see,
    saying why."""
    if view == LIVE_VIEW_NONE:
        await context.abort(
            grpc.StatusCode.PERMISSION_DENIED,
            f"match {match_id}: course '{course}' shows no live view of it (live view: none); "
            f"its record is there once it is over",
        )
    if viewer is ANYONE:
        await context.abort(
            grpc.StatusCode.UNAUTHENTICATED,
            f"match {match_id} is shown to course '{course}' only (live view: signed-in): send "
            "call metadata 'authorization: Bearer <token>' with an organizer's or an owner's "
            "token of the course",
        )
    await context.abort(
        grpc.StatusCode.PERMISSION_DENIED,
        f"match {match_id} is shown to course '{course}' only (live view: signed-in), and this "
        "token is not of that course",
    )


class SpectatorServicer(admin_pb_grpc.SpectatorServiceServicer):
    """``Watch`` and ``ListLive``: public information only; a token only for what a course
    shows signed in (:mod:`.live_access`), and bounded watchers (:mod:`.watch_limits`)."""

    def __init__(
        self,
        hub: SpectatorHub,
        storage: LiveStorage,
        roster: Roster,
        ladders: Callable[[], Mapping[tuple[str, str], LadderView]] = dict,
        *,
        access: LiveAccess | None = None,
        limits: WatchLimits = DEFAULT_WATCH_LIMITS,
    ) -> None:
        self.hub = hub
        self.storage = storage
        self.roster = roster
        self.ladders = ladders
        """The running ladders by (course, game name), read at each ``ListLive``."""
        self.access = LiveAccess(storage) if access is None else access
        self.counts = WatcherCounts(limits)
        """The watches open now, by match and address."""

    async def ListLive(  # noqa: N802
        self,
        request: admin_pb.ListLiveRequest,
        context: grpc.aio.ServicerContext[admin_pb.ListLiveRequest, admin_pb.ListLiveResponse],
    ) -> admin_pb.ListLiveResponse:
        viewer = await caller(self.access, context)
        return await live_response(self.hub, self.roster, self.ladders, self.access, viewer)

    async def Watch(  # type: ignore[override]  # noqa: N802
        self,
        request: admin_pb.WatchRequest,
        context: grpc.aio.ServicerContext[admin_pb.WatchRequest, admin_pb.SpectatorMessage],
    ) -> None:
        match_id = request.match_id
        await check_match_id(context, match_id)
        viewer = await caller(self.access, context)
        spec = self.hub.spec(match_id)
        if spec is None:
            await not_watchable(context, match_id, self.hub.ended_recently(match_id), self.storage)
        view = await self.access.view_of(spec)
        if not viewer.sees(spec.course, view):
            await refuse_unseen(context, match_id, spec.course, view, viewer)
        seat = await admit(self.counts, context, match_id, relay=viewer.relay)
        try:
            try:
                subscription = self.hub.subscribe(match_id)
            except NotWatchableError:  # it ended while the view was read
                await not_watchable(context, match_id, True, self.storage)
            try:
                start = await start_message(spec, view, self.access, viewer)
                await context.write(start.SerializeToString())  # type: ignore[arg-type]
                async for batch in subscription.batches():
                    if isinstance(batch, Dropped):
                        await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, batch.reason)
                    for posted, with_table in batch:
                        if not isinstance(posted.item, WatchStart):
                            await context.write(wire_of(match_id, posted, with_table))  # type: ignore[arg-type]
            finally:
                self.hub.unsubscribe(subscription)
        finally:
            self.counts.release(seat)

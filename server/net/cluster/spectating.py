"""Spectators on a cluster: a gateway serves ``Watch`` and ``ListLive`` for every host's matches.

A match's public items live in the spectator hub of the host that runs it
(:class:`~domino_arena.server.play.spectators.SpectatorHub`); a spectator connects to any
gateway (the same address as the bots, and the web face's live pages). So:

- ``Watch``: the gateway asks every host, on ``<cluster>.watch``, for the match, naming a new
  inbox subject for the items. The host that runs it answers ``ok``, subscribes to its hub as a
  local spectator would and publishes each item there as the very ``SpectatorMessage`` a local
  spectator gets (built by the same function, so hidden information stays out by the same
  construction), then a keepalive every :data:`KEEPALIVE_SECONDS` while the match is quiet;
  a host that has seen the match end lately answers ``over``; the others stay silent. No
  answer within :data:`ASK_SECONDS`: the match runs nowhere (over, if it is stored; else
  unknown), as on one referee. The gateway ends the watch if its host falls silent for
  :data:`SILENT_SECONDS` (it died; the watcher may watch the replayed game), and tells the
  host when its last spectator of the match leaves (``<cluster>.watch.stop``), so the host
  stops publishing. A gateway asks once per match, as every course, for all its watchers of
  it: the host's bytes go to a :class:`~domino_arena.server.feed.Feed` that each watcher reads
  with its own cursor, after a start made for it (whether it may see the match, and an
  anonymous course's aliases unless it is of the course).
- ``ListLive``: the gateway asks every host and merges what those answering within
  :data:`GATHER_SECONDS` say: their matches and ladders, and the connected bots (every host
  sees them all; each listed once, with the matches it is seated in on every host).

The bounds of one referee hold: the host's hub drops a spectator that lets
:data:`~domino_arena.server.play.spectators.MAX_PENDING` items pile up, and the gateway keeps
at most that many per watcher too.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Mapping
from typing import Any, Final

import grpc
from nats.aio.msg import Msg

from domino_arena.server.feed import Cursor, Dropped
from domino_arena.server.logs import quote
from domino_arena.server.net.admin_answers import LadderView
from domino_arena.server.net.cluster.broker import Broker
from domino_arena.server.net.live_access import LiveAccess, LiveStorage, Viewer
from domino_arena.server.net.live_wire import live_view_of_proto
from domino_arena.server.net.spectators import (
    Followed,
    admit,
    caller,
    check_match_id,
    live_response,
    refuse_unseen,
    start_message,
    unwatchable,
    wire_of,
)
from domino_arena.server.net.watch_limits import (
    DEFAULT_WATCH_LIMITS,
    WatcherCounts,
    WatchLimits,
)
from domino_arena.server.play.roster import Roster
from domino_arena.server.play.spectators import (
    MAX_PENDING,
    NotWatchableError,
    SpectatorHub,
    Subscription,
    WatchStart,
)
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc

LOG: Final = logging.getLogger("domino_arena.server.cluster")

ASK_SECONDS: Final = 1.0
"""How long a gateway waits for the host of a match to answer a ``Watch``."""
GATHER_SECONDS: Final = 0.25
"""How long a gateway collects the hosts' answers to a ``ListLive``."""
KEEPALIVE_SECONDS: Final = 5.0
"""How often a host tells a watcher of a quiet match that it is still there."""
SILENT_SECONDS: Final = 3 * KEEPALIVE_SECONDS
"""How long a gateway waits for a word from the host of a watched match before it gives up."""

OK: Final = b"ok"
OVER: Final = b"over"
KEEPALIVE: Final = b""
DROPPED: Final = "Da-Dropped"
"""Header of a host's last message to a watcher it dropped (the value says why)."""


def courses_of(viewer: Viewer) -> list[str] | None:
    """The courses a gateway's caller is of, as the hosts are told them (None: every one)."""
    return None if viewer.courses is None else sorted(viewer.courses)


def viewer_of(data: bytes) -> Viewer:
    """The caller a gateway asks for (its courses, :func:`courses_of`); the public when the
    request says none or cannot be read."""
    try:
        courses = json.loads(data or b"{}").get("courses", [])
    except (ValueError, AttributeError):
        courses = []
    if courses is None:
        return Viewer(None)
    return Viewer(frozenset(str(c) for c in courses if isinstance(c, str)))


class WatchHost:
    """A host's side: answers the gateways' ``Watch`` and ``ListLive`` from its own hub."""

    def __init__(
        self,
        hub: SpectatorHub,
        broker: Broker,
        roster: Roster,
        ladders: Callable[[], Mapping[Any, LadderView]],
        access: LiveAccess,
    ) -> None:
        self.hub = hub
        self.broker = broker
        self.roster = roster
        self.ladders = ladders
        self.access = access
        """The live views of this host's matches (the gateway checks its callers' tokens)."""
        self._pumps: dict[str, asyncio.Task[None]] = {}
        """The watcher's inbox subject -> the task publishing to it."""

    async def start(self) -> None:
        subjects = self.broker.subjects
        await self.broker.subscribe(subjects.watch, self._on_watch)
        await self.broker.subscribe(subjects.watch_stop, self._on_stop)
        await self.broker.subscribe(subjects.live, self._on_live)

    async def close(self) -> None:
        for task in self._pumps.values():
            task.cancel()

    async def _on_live(self, msg: Msg) -> None:
        if msg.reply:  # what the gateway's caller may see (its courses, in the request)
            answer = await live_response(
                self.hub, self.roster, self.ladders, self.access, viewer_of(msg.data)
            )
            self.broker.post(msg.reply, answer.SerializeToString())

    async def _on_watch(self, msg: Msg) -> None:
        try:
            value = json.loads(msg.data)
            match_id, inbox = str(value["match_id"]), str(value["to"])
        except (ValueError, KeyError, TypeError) as exc:
            LOG.warning("a watch request ignored: %s", exc)
            return
        viewer = viewer_of(msg.data)
        spec = self.hub.spec(match_id)
        if spec is None:
            if self.hub.ended_recently(match_id) and msg.reply:
                self.broker.post(msg.reply, OVER)
            return  # another host runs it, or none
        view = await self.access.view_of(spec)
        try:
            subscription = self.hub.subscribe(match_id)
        except NotWatchableError:  # it ended while the view was read
            if msg.reply:
                self.broker.post(msg.reply, OVER)
            return
        if msg.reply:
            self.broker.post(msg.reply, OK)
        start = await start_message(spec, view, self.access, viewer)
        self.broker.post(inbox, start.SerializeToString())
        task = asyncio.get_running_loop().create_task(self._pump(subscription, inbox))
        self._pumps[inbox] = task

    async def _on_stop(self, msg: Msg) -> None:
        task = self._pumps.pop(msg.data.decode(errors="replace"), None)
        if task is not None:
            task.cancel()

    async def _pump(self, subscription: Subscription, inbox: str) -> None:
        """Publish the match's feed for one remote watcher until the match ends (each item's
        bytes made once for every watcher, local or remote: :func:`wire_of`)."""
        match_id = subscription.match_id
        try:
            while (batch := subscription.take()) is not None:
                if isinstance(batch, Dropped):
                    self.broker.post(inbox, KEEPALIVE, {DROPPED: batch.reason})
                    return
                for posted, with_table in batch:
                    if not isinstance(posted.item, WatchStart):  # sent first, with its view
                        self.broker.post(inbox, wire_of(match_id, posted, with_table))
                if not batch:
                    try:
                        await asyncio.wait_for(subscription.wait(), KEEPALIVE_SECONDS)
                    except TimeoutError:
                        self.broker.post(inbox, KEEPALIVE)
        finally:
            self.hub.unsubscribe(subscription)
            self._pumps.pop(inbox, None)


class ClusterSpectators(admin_pb_grpc.SpectatorServiceServicer):
    """A gateway's ``SpectatorService``: every host's matches (see the module's docstring)."""

    def __init__(
        self,
        broker: Broker,
        storage: LiveStorage,
        *,
        access: LiveAccess | None = None,
        limits: WatchLimits = DEFAULT_WATCH_LIMITS,
    ) -> None:
        self.broker = broker
        self.storage = storage
        self.access = LiveAccess(storage) if access is None else access
        """The callers' tokens (the hosts say each match's course and live view)."""
        self.counts = WatcherCounts(limits)
        """This gateway's watches, bounded as on one referee (:mod:`..watch_limits`)."""
        self.followed: dict[str, Followed] = {}
        """The matches this gateway follows now: one host subscription each, for all its
        watchers."""

    async def ListLive(  # noqa: N802
        self,
        request: admin_pb.ListLiveRequest,
        context: grpc.aio.ServicerContext[admin_pb.ListLiveRequest, admin_pb.ListLiveResponse],
    ) -> admin_pb.ListLiveResponse:
        viewer = await caller(self.access, context)
        merged = admin_pb.ListLiveResponse()
        bots: dict[str, admin_pb.ConnectedBot] = {}
        asked = json.dumps({"courses": courses_of(viewer)}).encode()
        answers = await self.broker.gather(self.broker.subjects.live, asked, GATHER_SECONDS)
        for data in answers:
            try:
                answer = admin_pb.ListLiveResponse.FromString(data)
            except Exception as exc:  # a host's bug must not fail the listing
                LOG.warning("a host's live list ignored: %s", exc)
                continue
            merged.matches.extend(answer.matches)  # the host showed what this caller may see
            merged.ladders.extend(answer.ladders)
            for bot in answer.connected:  # every host sees every bot, seated in its own
                known = bots.setdefault(bot.name, bot)
                if known is not bot:
                    known.matches += bot.matches
        merged.matches.sort(key=lambda m: m.match_id)
        merged.connected.extend(bots[name] for name in sorted(bots))
        return merged

    async def Watch(  # type: ignore[override]  # noqa: N802
        self,
        request: admin_pb.WatchRequest,
        context: grpc.aio.ServicerContext[admin_pb.WatchRequest, admin_pb.SpectatorMessage],
    ) -> None:
        match_id = request.match_id
        await check_match_id(context, match_id)
        viewer = await caller(self.access, context)
        seat = await admit(self.counts, context, match_id, relay=viewer.relay)
        try:
            await self._follow(context, match_id, viewer)
        finally:
            self.counts.release(seat)

    async def _follow(
        self,
        context: grpc.aio.ServicerContext[admin_pb.WatchRequest, admin_pb.SpectatorMessage],
        match_id: str,
        viewer: Viewer,
    ) -> None:
        """Write the match's shared feed to one watcher, after a start made for it (the
        watcher may see the match; an anonymous course's aliases unless it is of the course)."""
        followed = Followed.join(self.followed, match_id, self._from_host)
        try:
            await followed.started.wait()
            start = followed.start
            if start is None:
                code, details = followed.refusal or (grpc.StatusCode.UNAVAILABLE, "no start")
                await context.abort(code, details)
            view = live_view_of_proto(start.live_view)
            if not viewer.sees(start.course, view):
                await refuse_unseen(context, match_id, start.course, view, viewer)
            face = await self.access.face_of(start.course)
            mine = admin_pb.SpectatorMessage()
            mine.start.CopyFrom(start)
            mine.start.ClearField("players")
            mine.start.players.extend(face.name(bot, viewer, start.course) for bot in start.players)
            await context.write(mine.SerializeToString())  # type: ignore[arg-type]
            feed = followed.feed
            cursor = Cursor(feed, f"match {match_id}", MAX_PENDING, list(feed.log)[1:])
            async for batch in cursor.batches():
                if isinstance(batch, Dropped):
                    await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, batch.reason)
                for data in batch:
                    await context.write(data)  # type: ignore[arg-type]  # the host's bytes
            if followed.refusal is not None:  # the host's stream failed mid-match
                await context.abort(*followed.refusal)
        finally:
            followed.leave()  # the last reader's: the host stops publishing

    async def _from_host(self, match_id: str, followed: Followed) -> None:
        """Post the host's messages of ``match_id`` to the match's feed on this gateway, asking
        as every course (each watcher's start is then made for it: :meth:`_follow`)."""
        items: asyncio.Queue[Msg] = asyncio.Queue(MAX_PENDING)
        dropped: list[str] = []

        async def take(msg: Msg) -> None:
            if items.full():
                dropped.append(f"dropped: {MAX_PENDING} messages of match {match_id} waited")
                items.get_nowait()
            items.put_nowait(msg)

        broker, subjects = self.broker, self.broker.subjects
        inbox = broker.new_inbox()
        subscription = await broker.subscribe(inbox, take)
        try:
            ask = json.dumps({"match_id": match_id, "to": inbox, "courses": None}).encode()
            answer = await broker.request(subjects.watch, ask, ASK_SECONDS)
            if answer != OK:
                followed.refusal = await unwatchable(match_id, answer == OVER, self.storage)
                return
            while True:
                try:
                    msg = await asyncio.wait_for(items.get(), SILENT_SECONDS)
                except TimeoutError:
                    followed.refusal = (
                        grpc.StatusCode.UNAVAILABLE,
                        f"the host of match {match_id} fell silent: watch it again",
                    )
                    return
                reason = (msg.headers or {}).get(DROPPED)
                if dropped or reason is not None:
                    why = reason if reason is not None else dropped[0]
                    followed.refusal = (grpc.StatusCode.RESOURCE_EXHAUSTED, why)
                    return
                if msg.data == KEEPALIVE:
                    continue
                message = admin_pb.SpectatorMessage.FromString(msg.data)  # once per gateway
                if message.HasField("start"):
                    followed.start = message.start
                    followed.started.set()
                followed.feed.post(msg.data)
                if message.HasField("match_end"):
                    return
        finally:
            followed.started.set()
            followed.feed.close()
            if self.followed.get(match_id) is followed:
                del self.followed[match_id]
            await subscription.unsubscribe()
            broker.post(subjects.watch_stop, inbox.encode())
            LOG.debug("watch of %s ended", quote(match_id))

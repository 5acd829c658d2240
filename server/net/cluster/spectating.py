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
  host when its spectator leaves (``<cluster>.watch.stop``), so the host stops publishing.
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

from domino_arena.server.logs import quote
from domino_arena.server.net.admin_answers import LadderView
from domino_arena.server.net.cluster.broker import Broker
from domino_arena.server.net.live_wire import spectator_message
from domino_arena.server.net.spectators import MatchLookup, live_response, not_watchable
from domino_arena.server.play.roster import Roster
from domino_arena.server.play.spectators import (
    MAX_PENDING,
    Dropped,
    NotWatchableError,
    SpectatorHub,
    Subscription,
    WatchEnd,
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


class WatchHost:
    """A host's side: answers the gateways' ``Watch`` and ``ListLive`` from its own hub."""

    def __init__(
        self,
        hub: SpectatorHub,
        broker: Broker,
        roster: Roster,
        ladders: Callable[[], Mapping[Any, LadderView]],
    ) -> None:
        self.hub = hub
        self.broker = broker
        self.roster = roster
        self.ladders = ladders
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
        if msg.reply:
            answer = live_response(self.hub, self.roster, self.ladders)
            self.broker.post(msg.reply, answer.SerializeToString())

    async def _on_watch(self, msg: Msg) -> None:
        try:
            value = json.loads(msg.data)
            match_id, inbox = str(value["match_id"]), str(value["to"])
        except (ValueError, KeyError, TypeError) as exc:
            LOG.warning("a watch request ignored: %s", exc)
            return
        try:
            subscription = self.hub.subscribe(match_id)
        except NotWatchableError:
            if self.hub.ended_recently(match_id) and msg.reply:
                self.broker.post(msg.reply, OVER)
            return  # another host runs it, or none
        if msg.reply:
            self.broker.post(msg.reply, OK)
        task = asyncio.get_running_loop().create_task(self._pump(subscription, inbox))
        self._pumps[inbox] = task

    async def _on_stop(self, msg: Msg) -> None:
        task = self._pumps.pop(msg.data.decode(errors="replace"), None)
        if task is not None:
            task.cancel()

    async def _pump(self, subscription: Subscription, inbox: str) -> None:
        """Publish the hub's items for one remote watcher until the match ends."""
        try:
            while True:
                try:
                    item = await asyncio.wait_for(subscription.get(), KEEPALIVE_SECONDS)
                except TimeoutError:
                    self.broker.post(inbox, KEEPALIVE)
                    continue
                if isinstance(item, Dropped):
                    self.broker.post(inbox, KEEPALIVE, {DROPPED: item.reason})
                    return
                message = spectator_message(subscription.match_id, item)
                self.broker.post(inbox, message.SerializeToString())
                if isinstance(item, WatchEnd):
                    return
        finally:
            self.hub.unsubscribe(subscription)
            self._pumps.pop(inbox, None)


class ClusterSpectators(admin_pb_grpc.SpectatorServiceServicer):
    """A gateway's ``SpectatorService``: every host's matches (see the module's docstring)."""

    def __init__(self, broker: Broker, storage: MatchLookup) -> None:
        self.broker = broker
        self.storage = storage

    async def ListLive(  # noqa: N802
        self,
        request: admin_pb.ListLiveRequest,
        context: grpc.aio.ServicerContext[admin_pb.ListLiveRequest, admin_pb.ListLiveResponse],
    ) -> admin_pb.ListLiveResponse:
        merged = admin_pb.ListLiveResponse()
        bots: dict[str, admin_pb.ConnectedBot] = {}
        answers = await self.broker.gather(self.broker.subjects.live, b"", GATHER_SECONDS)
        for data in answers:
            try:
                answer = admin_pb.ListLiveResponse.FromString(data)
            except Exception as exc:  # a host's bug must not fail the listing
                LOG.warning("a host's live list ignored: %s", exc)
                continue
            merged.matches.extend(answer.matches)
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
        if not match_id:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, "match_id: missing; expected a match id"
            )
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
            ask = json.dumps({"match_id": match_id, "to": inbox}).encode()
            answer = await broker.request(subjects.watch, ask, ASK_SECONDS)
            if answer != OK:
                await not_watchable(context, match_id, answer == OVER, self.storage)
            while True:
                try:
                    msg = await asyncio.wait_for(items.get(), SILENT_SECONDS)
                except TimeoutError:
                    await context.abort(
                        grpc.StatusCode.UNAVAILABLE,
                        f"the host of match {match_id} fell silent: watch it again",
                    )
                reason = (msg.headers or {}).get(DROPPED)
                if dropped or reason is not None:
                    why = reason if reason is not None else dropped[0]
                    await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, why)
                if msg.data == KEEPALIVE:
                    continue
                message = admin_pb.SpectatorMessage.FromString(msg.data)
                await context.write(message)
                if message.HasField("match_end"):
                    return
        finally:
            await subscription.unsubscribe()
            broker.post(subjects.watch_stop, inbox.encode())
            LOG.debug("watch of %s ended", quote(match_id))

"""A match host's view of the cluster's bots: the roster its arena plays from, and the links its
remote seats write to.

On a single referee, a :class:`~domino_arena.server.net.remote.RemoteSeat` writes to the bot's
:class:`~domino_arena.server.net.lobby.Connection` and the lobby is the arena's roster. On a
match host, :class:`BrokerLobby` is both: it keeps the presence :class:`~.presence.Board` up to
date from the gateways' news and heartbeats, and gives each bot stream a :class:`BrokerLink`
with the calls of a connection. So the seats, the referee, the tournaments and the ladders run
unchanged; only where a message goes differs:

- what a seat sends is queued on its link; the links with something queued are written once
  the current burst of trio work ends (``loop.call_soon``), each as one broker message on the
  stream's subject (a ``RefereeBatch`` when there are several), which names the stream's id
  and this host's node (:meth:`.subjects.Subjects.to_stream`);
- the bots' replies come back on this host's match subjects (one wildcard subscription), whose
  last token is the stream's id, a ``ReplyBatch`` per stream and turn of the gateway's loop,
  and are routed as the gRPC handler routes them on one
  referee;
- a stream that goes down, is replaced by a newer one, or whose gateway falls silent closes its
  link: the seats see a lost connection and wait for the bot within their reconnect grace,
  wherever it reconnects (:meth:`BrokerLobby.wait_connected`).

While this host's own broker connection is away it does not take the gateways' silence for
their death (:meth:`~.presence.Board.refresh`), and it asks for every gateway's list again
when it is back.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import time
from collections.abc import Callable, Iterable
from typing import Final

import trio
from google.protobuf.message import DecodeError
from nats.aio.msg import Msg

from domino_arena.server.logs import quote
from domino_arena.server.net.cluster import subjects
from domino_arena.server.net.cluster.broker import Broker
from domino_arena.server.net.cluster.presence import (
    GATEWAY_TIMEOUT,
    HEARTBEAT_SECONDS,
    Board,
    PresenceError,
    Stream,
    decode_change,
    decode_heartbeat,
)
from domino_arena.server.net.lobby import Link, Route
from domino_arena.v1 import referee_pb2 as pb

LOG: Final = logging.getLogger("domino_arena.server.cluster")


class BrokerLink:
    """A bot stream some gateway holds, as a remote seat on this host writes to it."""

    __slots__ = ("_lobby", "closed", "pending", "routes", "stream", "subject", "token")

    def __init__(self, lobby: BrokerLobby, stream: Stream) -> None:
        self.stream = stream
        self.token = subjects.token(stream.id)
        """The stream's id as a subject token: the last token of its replies' subject."""
        self.subject = lobby.subjects.to_stream(stream.name, stream.id, lobby.node)
        """Where what this host sends the stream goes (built once: a name's token is not free)."""
        self.closed = False
        self.routes: dict[str, Route] = {}
        """The match id -> the seat this stream plays in it (on this host)."""
        self.pending: list[pb.RefereeMessage] = []
        """What waits to be published, oldest first."""
        self._lobby = lobby

    @property
    def name(self) -> str:
        return self.stream.name

    @property
    def games(self) -> tuple[str, ...]:
        return self.stream.games

    @property
    def gateway(self) -> str:
        return self.stream.gateway

    def send(self, message: pb.RefereeMessage) -> bool:
        if self.closed:
            return False
        if not self.pending:
            self._lobby.ready(self)
        self.pending.append(message)
        return True

    def bind(self, match_id: str, route: Route) -> None:
        self.routes[match_id] = route

    def unbind(self, match_id: str, route: Route) -> None:
        if self.routes.get(match_id) is route:
            del self.routes[match_id]

    def cut(self, reason: str, limit: str) -> None:
        """Ask the gateway holding the stream to cut it off (it sends the bot the Error)."""
        LOG.warning("bot cut off: name=%s limit=%s reason=%s", self.name, limit, reason)
        cut = self._lobby.subjects.to_stream(
            self.name, self.stream.id, self._lobby.node, subjects.CUT
        )
        self._lobby.broker.post(cut, f"{limit} {reason}".encode())
        self.close()

    def route(self, reply: pb.ActionReply) -> bool:
        seat = self.routes.get(reply.match_id)
        if seat is None:
            return False
        seat.deliver(self, reply)
        return True

    def close(self) -> None:
        """The stream is gone: every seat bound to it sees a lost connection."""
        if self.closed:
            return
        self.closed = True
        self.pending.clear()
        routes, self.routes = list(self.routes.values()), {}
        for seat in routes:
            seat.connection_lost(self)

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<BrokerLink {self.name} {self.stream.id} {state}>"


class BrokerLobby:
    """The bots connected to any gateway of the cluster, as a match host's roster (the calls
    of :class:`~domino_arena.server.play.roster.Roster` and of the lobby its seats use)."""

    def __init__(self, broker: Broker, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.broker = broker
        self.node = broker.node
        self.subjects = broker.subjects
        self.board = Board()
        self.seated: collections.Counter[str] = collections.Counter()
        self.closing = False
        self.stray = 0
        """Replies for a stream or a match this host does not know (late, or after a drop)."""
        self._clock = clock
        self._links: dict[str, BrokerLink] = {}
        """The bot name -> the link of its stream now."""
        self._by_id: dict[str, BrokerLink] = {}
        """The stream's id as a subject token -> its link."""
        self._waiters: dict[str, set[trio.Event]] = collections.defaultdict(set)
        self._ready: list[BrokerLink] = []
        self._expiry: asyncio.Task[None] | None = None
        self.watchers: list[Callable[[], None]] = []
        """Called (plain, on the loop) after every change of who is connected: what waits for
        the roster outside trio (a test, a readiness check) waits on this instead of polling."""

    async def start(self) -> None:
        """Subscribe to the presence news and this host's match subjects; ask every gateway for
        its list."""
        broker = self.broker
        await broker.subscribe(self.subjects.presence, self._on_presence)
        await broker.subscribe(self.subjects.heartbeat, self._on_heartbeat)
        await broker.subscribe(self.subjects.host_matches(self.node), self._on_reply)
        broker.post(self.subjects.sync, b"")
        self._expiry = asyncio.create_task(self._expire(), name="presence expiry")

    def broker_state(self, up: bool) -> None:
        """The broker connection went down (``up`` False) or came back.

        Down: every link is closed, so each seat waiting for a reply sees a lost connection
        and its reconnect grace runs instead of its move clock (an outage of ours is not the
        bot's timeout); the board is kept, and the gateways' silence meanwhile is no sign of
        their death. Back: a link for every stream on the board (the seats resume on it with a
        snapshot), and every gateway is asked for its list, which corrects the board.
        """
        self.board.refresh(self._clock())
        if not up:
            for link in list(self._links.values()):
                self._drop(link.stream)
            if self.watchers:
                for watcher in self.watchers:
                    watcher()
            return
        self._apply(list(self.board.streams.values()), [])
        self.broker.post(self.subjects.sync, b"")

    async def close(self) -> None:
        if self._expiry is not None:
            self._expiry.cancel()

    # -- the roster --------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._links)

    def get(self, name: str) -> BrokerLink | None:
        link = self._links.get(name)
        return link if link is not None and not link.closed else None

    def connections(self) -> list[BrokerLink]:
        return [link for _, link in sorted(self._links.items()) if not link.closed]

    def seat(self, names: Iterable[str]) -> None:
        self.seated.update(names)

    def unseat(self, names: Iterable[str]) -> None:
        for name in names:
            self.seated[name] -= 1
            if self.seated[name] <= 0:
                del self.seated[name]

    async def wait_connected(self, name: str, *, other_than: Link | None = None) -> None:
        while True:
            link = self.get(name)
            if link is not None and link is not other_than:
                return
            event = trio.Event()
            self._waiters[name].add(event)
            try:
                await event.wait()
            finally:
                waiters = self._waiters.get(name)
                if waiters is not None:
                    waiters.discard(event)
                    if not waiters:
                        del self._waiters[name]

    def revoke(self, name: str, reason: str) -> bool:
        """Tell every gateway to close the bot's stream (its token was withdrawn)."""
        self.broker.post(
            self.subjects.revoke, json.dumps({"name": name, "reason": reason}).encode()
        )
        link = self.get(name)
        if link is None:
            return False
        self._drop(link.stream)
        return True

    # -- writing ------------------------------------------------------------------------------

    def ready(self, link: BrokerLink) -> None:
        """``link`` has something to publish: write it once the current burst ends."""
        if not self._ready:
            asyncio.get_running_loop().call_soon(self._flush)
        self._ready.append(link)

    def _flush(self) -> None:
        ready, self._ready = self._ready, []
        for link in ready:
            messages, link.pending = link.pending, []
            if not messages:
                continue
            if len(messages) == 1:
                payload = messages[0].SerializeToString()
            else:
                payload = pb.RefereeMessage(
                    batch=pb.RefereeBatch(messages=messages)
                ).SerializeToString()
            self.broker.post(link.subject, payload)

    # -- reading ------------------------------------------------------------------------------

    async def _on_reply(self, msg: Msg) -> None:
        self.broker.received += 1
        link = self._by_id.get(msg.subject.rpartition(".")[2])
        if link is None or link.closed:
            self.stray += 1
            return
        try:
            replies = pb.ReplyBatch.FromString(msg.data).replies
        except DecodeError as exc:
            LOG.error("a reply relayed by %s does not decode: %s", quote(link.gateway), exc)
            return
        for reply in replies:
            if link.closed or not link.route(reply):
                self.stray += 1

    async def _on_presence(self, msg: Msg) -> None:
        try:
            kind, stream = decode_change(msg.data)
        except PresenceError as exc:
            LOG.warning("a presence message ignored: %s", exc)
            return
        now = self._clock()
        change = self.board.up(stream, now) if kind == "up" else self.board.down(stream, now)
        self._apply(*change)

    async def _on_heartbeat(self, msg: Msg) -> None:
        try:
            gateway, streams, back = decode_heartbeat(msg.data)
        except PresenceError as exc:
            LOG.warning("a heartbeat ignored: %s", exc)
            return
        self._apply(*self.board.heartbeat(gateway, streams, self._clock()))
        if back:  # what this host sent its bots meanwhile was lost: their seats resume
            again = [s for s in self.board.streams.values() if s.gateway == gateway]
            if again:
                LOG.info(
                    "gateway %s back on the broker: %d bots' seats resume",
                    quote(gateway),
                    len(again),
                )
            self._apply(again, again)

    async def _expire(self) -> None:
        """Every :data:`HEARTBEAT_SECONDS`: say this host is alive, forget silent gateways."""
        while True:
            self.broker.post(self.subjects.host_heartbeat, self.node.encode())
            await asyncio.sleep(HEARTBEAT_SECONDS)
            if not self.broker.connected:
                continue
            gone = self.board.expire(self._clock(), GATEWAY_TIMEOUT)
            for gateway in sorted({s.gateway for s in gone}):
                LOG.warning(
                    "gateway %s silent for %.0f s: its bots count as disconnected",
                    quote(gateway),
                    GATEWAY_TIMEOUT,
                )
            self._apply([], gone)

    def _apply(self, appeared: list[Stream], gone: list[Stream]) -> None:
        if not (appeared or gone):
            return
        for stream in gone:
            self._drop(stream)
        for stream in appeared:
            old = self._links.get(stream.name)
            if old is not None:
                self._drop(old.stream)
            link = BrokerLink(self, stream)
            self._links[stream.name] = link
            self._by_id[link.token] = link
            LOG.info(
                "bot connected: name=%s games=%s gateway=%s",
                stream.name,
                ",".join(stream.games),
                quote(stream.gateway),
            )
            for event in self._waiters.pop(stream.name, set()):
                event.set()
        for watcher in self.watchers:
            watcher()

    def _drop(self, stream: Stream) -> None:
        link = self._by_id.pop(subjects.token(stream.id), None)
        if link is None:
            return
        if self._links.get(stream.name) is link:
            del self._links[stream.name]
            LOG.info("bot disconnected: name=%s gateway=%s", stream.name, quote(stream.gateway))
        link.close()

"""The gateway's relay: its lobby's bot streams on one side, the broker on the other.

A gateway is the bot service and the lobby of a single referee (authentication, limits,
batching, takeover: :mod:`~domino_arena.server.net.service`, :mod:`~domino_arena.server.net.lobby`)
without matches. The :class:`Relay` is the lobby's listener:

- for each stream it admits, it subscribes to the bot's subjects (:meth:`.subjects.Subjects.bot`)
  and then announces the stream (``<cluster>.presence``); for each it drops, it says so;
- what a host publishes for a bot is written to the bot's stream if it is meant for that very
  stream (the stream's id is a token of the subject: :meth:`.subjects.Subjects.to_stream`),
  else dropped; a MatchStart binds the match to a :class:`_Forward`, which publishes the bot's
  replies for that match to the host's subject for the stream (those due in one turn of the
  loop as one ``ReplyBatch``: :meth:`Relay.due`), and a MatchEnd unbinds it (a
  reply for a match the stream does not play gets ``UNKNOWN_MATCH`` from the bot service, as on
  a single referee);
- a newer stream of one of its bots on another gateway closes the one here, as a takeover on
  one referee does (the bot reconnected elsewhere), and a host's revocation closes it;
- every :data:`~.presence.HEARTBEAT_SECONDS` it publishes its whole list (and at once when a
  host asks, or when its broker connection comes back);
- a host that falls silent (each publishes a heartbeat) died: its matches end ABORTED for the
  bots here, and a game played again from its start under the same id first ends the old one
  for the bot, so its client never mixes the two.

Everything here runs on the asyncio loop; the lobby's calls are plain and never block.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import json
import logging
import time
import uuid
from typing import Final

import grpc
from google.protobuf.message import DecodeError
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from domino_arena.server.logs import quote
from domino_arena.server.net.cluster import subjects
from domino_arena.server.net.cluster.broker import Broker
from domino_arena.server.net.cluster.presence import (
    GATEWAY_TIMEOUT,
    HEARTBEAT_SECONDS,
    PresenceError,
    Stream,
    decode_change,
    encode_change,
    encode_heartbeat,
)
from domino_arena.server.net.lobby import Connection, Link, Lobby
from domino_arena.v1 import referee_pb2 as pb

LOG: Final = logging.getLogger("domino_arena.server.cluster")


class _Forward:
    """The route of one match on a gateway's stream: the bot's replies go to its host."""

    __slots__ = ("host", "relay", "subject")

    def __init__(self, relay: Relay, host: str, subject: str) -> None:
        self.relay = relay
        self.host = host
        self.subject = subject

    def deliver(self, connection: Link, reply: pb.ActionReply) -> None:
        self.relay.due(self.subject, reply)

    def connection_lost(self, connection: Link) -> None:
        """Nothing to do: the stream's "down" tells every host."""


class Relay:
    """The lobby's listener on a gateway named ``node`` (see the module's docstring)."""

    def __init__(self, lobby: Lobby, broker: Broker) -> None:
        self.lobby = lobby
        self.broker = broker
        self.node = broker.node
        self.subjects = broker.subjects
        self.relayed = 0
        """Messages from hosts written to bot streams."""
        self.refused = 0
        """Messages from hosts dropped: for a stream that is gone, or undecodable."""
        self._streams: dict[str, tuple[Connection, Stream]] = {}
        """The bot name -> its stream here and how it was announced."""
        self._tokens: dict[str, str] = {}
        """The bot name -> its stream's id here as a subject token (what a host's subject for
        that stream holds)."""
        self._subscriptions: dict[str, Subscription] = {}
        self._ids = itertools.count(1)
        self._run = uuid.uuid4().hex[:12]
        """This run of the gateway: a node name comes back after a restart (a pod's name, or
        pid 1 in a container), and its new streams must not take the old ones' ids."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._heartbeat: asyncio.Task[None] | None = None
        self._hosts: dict[str, float] = {}
        """The match hosts heard from, and when (the monotonic clock)."""
        self._due: dict[str, list[pb.ActionReply]] = {}
        """The replies to publish at the end of this turn of the loop, by subject (a host and
        a stream: :meth:`.subjects.Subjects.reply`), in order."""
        lobby.listener = self

    async def start(self) -> None:
        """Subscribe to the cluster's subjects and start the heartbeat."""
        await self.broker.subscribe(self.subjects.presence, self._on_presence)
        await self.broker.subscribe(self.subjects.sync, self._on_sync)
        await self.broker.subscribe(self.subjects.revoke, self._on_revoke)
        await self.broker.subscribe(self.subjects.host_heartbeat, self._on_host)
        self._heartbeat = asyncio.create_task(self._beat(), name="gateway heartbeat")
        self.beat()

    async def close(self) -> None:
        """Stop the heartbeat and say every stream here is gone (a clean shutdown)."""
        if self._heartbeat is not None:
            self._heartbeat.cancel()
        for _, stream in list(self._streams.values()):
            self.broker.post(self.subjects.presence, encode_change("down", stream))
        self._streams.clear()
        self.broker.post(self.subjects.heartbeat, encode_heartbeat(self.node, ()))

    # -- the lobby's listener (plain calls from the bot service) --------------------------------

    def connected(self, connection: Connection) -> None:
        stream = Stream(
            name=connection.name,
            games=connection.games,
            gateway=self.node,
            id=f"{self.node}/{self._run}/{next(self._ids)}",
            since=time.time(),
        )
        self._streams[connection.name] = (connection, stream)
        self._tokens[connection.name] = subjects.token(stream.id)
        self._spawn(self._announce(stream))

    def disconnected(self, connection: Connection) -> None:
        held = self._streams.get(connection.name)
        if held is None or held[0] is not connection:
            return
        del self._streams[connection.name]
        del self._tokens[connection.name]
        self._flush()  # its last replies reach the hosts before its "down"
        self.broker.post(self.subjects.presence, encode_change("down", held[1]))
        self._spawn(self._unsubscribe(connection.name))

    async def _announce(self, stream: Stream) -> None:
        """Subscribe to the bot's subject, then say the stream is up: a host writes to the
        bot only after the "up", which the broker delivers after the subscription."""
        name = stream.name
        if name not in self._subscriptions:
            self._subscriptions[name] = await self.broker.subscribe(
                self.subjects.bot(name), functools.partial(self._on_bot_message, name)
            )
        held = self._streams.get(name)
        if held is not None and held[1] is stream:
            self.broker.post(self.subjects.presence, encode_change("up", stream))

    async def _unsubscribe(self, name: str) -> None:
        subscription = self._subscriptions.get(name)
        if subscription is None or name in self._streams:
            return
        del self._subscriptions[name]
        await subscription.unsubscribe()

    def _spawn(self, job: object) -> None:
        assert asyncio.iscoroutine(job)
        task = asyncio.get_running_loop().create_task(job)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def stream_of(self, name: str) -> Stream | None:
        """How the bot's stream here was announced (None: no stream of it here)."""
        held = self._streams.get(name)
        return None if held is None else held[1]

    # -- what hosts send --------------------------------------------------------------------

    async def _on_bot_message(self, name: str, msg: Msg) -> None:
        self.broker.received += 1
        tokens = subjects.parts(msg.subject)  # cluster, "bot", bot, stream, host, kind
        held = self._streams.get(name)
        if held is None or len(tokens) != 6 or tokens[3] != self._tokens.get(name):
            self.refused += 1  # for a stream that is gone: the host learns it from "down"
            return
        connection, host, kind = held[0], tokens[4], tokens[5]
        if kind == subjects.CUT:
            limit, _, reason = msg.data.decode(errors="replace").partition(" ")
            connection.cut(reason, limit)
            return
        try:
            message = pb.RefereeMessage.FromString(msg.data)
        except DecodeError as exc:
            self.refused += 1
            LOG.error("a host's message for bot %s does not decode: %s", quote(name), exc)
            return
        messages = message.batch.messages if message.HasField("batch") else (message,)
        for one in messages:
            self._bind(connection, one, host)
            connection.send(one)
            self.relayed += 1

    def _bind(self, connection: Connection, message: pb.RefereeMessage, host: str) -> None:
        """Bind or unbind the match a host (its node name as a subject token) starts or ends."""
        kind = message.WhichOneof("message")
        if kind == "match_start":
            match_id = message.match_start.match_id
            old = connection.routes.get(match_id)
            if isinstance(old, _Forward) and not message.match_start.resumed:
                # Played again from its start (its first host died): the bot's client must
                # close the first before it opens the new one under the same id.
                _abort(connection, match_id, f"its match host {old.host} stopped")
            stream = self._streams[connection.name][1].id
            reply = self.subjects.reply(host, stream)
            forward = _Forward(self, subjects.untoken(host), reply)
            connection.bind(match_id, forward)
        elif kind == "match_end":
            match_id = message.match_end.match_id
            route = connection.routes.get(match_id)
            if route is not None:
                connection.unbind(match_id, route)

    def due(self, subject: str, reply: pb.ActionReply) -> None:
        """Publish ``reply`` on ``subject`` once the current burst of work ends, with the other
        replies of that stream to that host meanwhile: one broker message (a ``ReplyBatch``)
        per stream and host and turn of the loop, whatever the bot batched."""
        waiting = self._due.get(subject)
        if waiting is None:
            if not self._due:
                asyncio.get_running_loop().call_soon(self._flush)
            self._due[subject] = [reply]
        else:
            waiting.append(reply)

    def _flush(self) -> None:
        due, self._due = self._due, {}
        post = self.broker.post
        for subject, replies in due.items():
            post(subject, pb.ReplyBatch(replies=replies).SerializeToString())

    async def _on_presence(self, msg: Msg) -> None:
        """A newer stream of a bot held here, on another gateway, closes the one here."""
        try:
            kind, stream = decode_change(msg.data)
        except PresenceError as exc:
            LOG.warning("a presence message ignored: %s", exc)
            return
        held = self._streams.get(stream.name)
        if kind != "up" or held is None or stream.gateway == self.node:
            return
        connection, mine = held
        if not stream.newer_than(mine):
            return
        LOG.info(
            "bot %s reconnected through gateway %s: its stream here is closed",
            quote(stream.name),
            quote(stream.gateway),
        )
        connection.close(
            grpc.StatusCode.ABORTED,
            f"another stream of bot '{stream.name}' took over",
            pb.Error(
                code=pb.ERROR_CODE_ALREADY_CONNECTED,
                message=f"another stream of bot '{stream.name}' took over its seats",
            ),
        )
        self.lobby.disconnect(connection)

    async def _on_sync(self, msg: Msg) -> None:
        self.beat()

    async def _on_revoke(self, msg: Msg) -> None:
        try:
            value = json.loads(msg.data)
            name, reason = str(value["name"]), str(value["reason"])
        except (ValueError, KeyError, TypeError) as exc:
            LOG.warning("a revocation ignored: %s", exc)
            return
        self.lobby.revoke(name, reason)

    # -- the heartbeat ----------------------------------------------------------------------

    def beat(self, *, back: bool = False) -> None:
        """Publish the whole list of streams here now (``back``: after this gateway's outage)."""
        streams = [stream for _, stream in self._streams.values()]
        self.broker.post(self.subjects.heartbeat, encode_heartbeat(self.node, streams, back=back))

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_SECONDS)
            self.beat()
            if self.broker.connected:
                self._expire_hosts(time.monotonic())

    async def _on_host(self, msg: Msg) -> None:
        self._hosts[msg.data.decode(errors="replace")[:200]] = time.monotonic()

    def _expire_hosts(self, now: float) -> None:
        """End, for its bots, every match of a host silent for :data:`GATEWAY_TIMEOUT`: it
        died, so no MatchEnd will come from it (its tournament games are played again by the
        host that takes its tournaments over)."""
        dead = {host for host, heard in self._hosts.items() if now - heard > GATEWAY_TIMEOUT}
        if not dead:
            return
        for host in sorted(dead):
            del self._hosts[host]
            LOG.warning("match host %s silent: its matches end for their bots", quote(host))
        for connection, _ in list(self._streams.values()):
            for match_id, route in list(connection.routes.items()):
                if isinstance(route, _Forward) and route.host in dead:
                    _abort(connection, match_id, f"its match host {route.host} stopped")
                    connection.unbind(match_id, route)

    def broker_state(self, up: bool) -> None:
        """Back on the broker: count every host as heard from now (its silence meanwhile was
        this gateway's own outage), and tell the hosts the list of streams, as one back from
        an outage: what they sent its bots meanwhile was lost, so they resume those bots'
        seats (nats-py sends this connection's subscriptions again before anything it
        publishes, so the resumed seats' messages find them)."""
        if up:
            now = time.monotonic()
            for host in self._hosts:
                self._hosts[host] = now
            self.beat(back=True)


def _abort(connection: Connection, match_id: str, why: str) -> None:
    """Tell the bot its match ``match_id`` ended ABORTED (not played to its end, not rated)."""
    result = pb.MatchResult(
        termination=pb.TERMINATION_ABORTED, winner=-1, faulted_seat=-1, detail=f"aborted: {why}"
    )
    connection.send(pb.RefereeMessage(match_end=pb.MatchEnd(match_id=match_id, result=result)))

"""A gateway's bookkeeping of the matches its bots play on hosts (server/net/cluster/gateway.py),
driven by hand: the host's messages handed to the relay as the broker would, no broker needed
(an unconnected one only queues what the relay publishes)."""

from __future__ import annotations

import asyncio

from nats.aio.client import Client
from nats.aio.msg import Msg

from domino_arena.server.net.cluster import subjects
from domino_arena.server.net.cluster.broker import Broker
from domino_arena.server.net.cluster.gateway import Relay
from domino_arena.server.net.cluster.presence import GATEWAY_TIMEOUT
from domino_arena.server.net.lobby import Connection, Lobby
from domino_arena.v1 import referee_pb2 as pb


def host_message(
    relay: Relay, bot: str, host: str, message: pb.RefereeMessage, stream_id: str = ""
) -> Msg:
    """What the host ``host`` publishes for ``bot``'s stream here (or ``stream_id``)."""
    stream = relay.stream_of(bot)
    assert stream is not None
    subject = relay.subjects.to_stream(bot, stream_id or stream.id, host)
    return Msg(Client(), subject, "", message.SerializeToString())


def start(match_id: str, resumed: bool = False) -> pb.RefereeMessage:
    return pb.RefereeMessage(match_start=pb.MatchStart(match_id=match_id, resumed=resumed))


def kinds(connection: Connection) -> list[str]:
    out = []
    while not connection.outbox.empty():
        item = connection.outbox.get_nowait()
        if isinstance(item, pb.RefereeMessage):
            kind = item.WhichOneof("message")
            detail = item.match_end.result.detail if kind == "match_end" else ""
            out.append(f"{kind} {detail}".strip())
    return out


def test_a_silent_hosts_matches_end_for_their_bots_and_a_replay_closes_the_old_first() -> None:
    async def main() -> None:
        lobby = Lobby()
        relay = Relay(lobby, Broker("nats://unused", "gw-a"))
        alice = Connection("alice", ["passing"])
        lobby.connect(alice)
        await relay._on_host(Msg(Client(), data=b"host-a"))
        await relay._on_host(Msg(Client(), data=b"host-b"))
        await relay._on_bot_message("alice", host_message(relay, "alice", "host-a", start("m1")))
        await relay._on_bot_message("alice", host_message(relay, "alice", "host-b", start("m2")))
        assert kinds(alice) == ["match_start", "match_start"]
        # host-a falls silent; host-b is heard from again.
        now = relay._hosts["host-b"] + GATEWAY_TIMEOUT + 1.0
        relay._hosts["host-b"] = now
        relay._expire_hosts(now)
        assert kinds(alice) == ["match_end aborted: its match host host-a stopped"]
        assert set(alice.routes) == {"m2"}
        # m2 played again from its start by another host: the old one ends first.
        await relay._on_bot_message("alice", host_message(relay, "alice", "host-c", start("m2")))
        assert kinds(alice) == ["match_end aborted: its match host host-b stopped", "match_start"]
        # A resumed seat (the same game going on) closes nothing.
        resumed = start("m2", resumed=True)
        await relay._on_bot_message("alice", host_message(relay, "alice", "host-c", resumed))
        assert kinds(alice) == ["match_start"]
        # A message for another stream of the bot is dropped.
        other = host_message(relay, "alice", "host-c", start("m3"), "gw-a/old/1")
        await relay._on_bot_message("alice", other)
        assert kinds(alice) == [] and relay.refused == 1

    asyncio.run(main())


def test_a_streams_replies_to_a_host_go_as_one_batch_per_turn_and_before_its_down() -> None:
    """Two replies of alice's stream for host-a's matches in one turn of the loop are one
    broker message (a ReplyBatch, on host-a's subject for that stream, no headers); a reply
    due when the stream goes down is published before the "down"."""

    async def main() -> None:
        lobby = Lobby()
        broker = Broker("nats://unused", "gw-a")
        relay = Relay(lobby, broker)
        alice = Connection("alice", ["passing"])
        lobby.connect(alice)
        for match_id in ("m1", "m2"):
            start_message = host_message(relay, "alice", "host.a", start(match_id))
            await relay._on_bot_message("alice", start_message)
        stream = relay.stream_of("alice")
        assert stream is not None
        subject = relay.subjects.reply(subjects.token("host.a"), stream.id)
        broker._queue.clear()
        for match_id in ("m1", "m2"):
            alice.routes[match_id].deliver(alice, pb.ActionReply(match_id=match_id, turn=1))
        assert list(broker._queue) == []  # at the end of the turn, not at once
        await asyncio.sleep(0)
        ((to, payload, headers),) = list(broker._queue)
        assert (to, headers) == (subject, None)
        assert [r.match_id for r in pb.ReplyBatch.FromString(payload).replies] == ["m1", "m2"]
        assert alice.routes["m1"].host == "host.a"  # type: ignore[attr-defined]
        broker._queue.clear()
        alice.routes["m1"].deliver(alice, pb.ActionReply(match_id="m1", turn=2))
        lobby.disconnect(alice)
        sent = [to for to, _, _ in broker._queue]
        assert sent == [subject, relay.subjects.presence], sent

    asyncio.run(main())

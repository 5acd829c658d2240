"""Withdrawing a bot's token in the lobby and the bot service, without gRPC.

:meth:`Lobby.revoke` closes the bot's stream (the Error, then the UNAUTHENTICATED status) and
its seats see a lost connection; a Hello whose token check ran across a revocation is checked
again, so a withdrawn token never connects behind the revocation.
"""

from __future__ import annotations

import asyncio
import threading

import grpc

from domino_arena.server.metrics import Metrics
from domino_arena.server.net.lobby import Close, Connection, Link, Lobby
from domino_arena.server.net.service import BotServicer
from domino_arena.server.store.bots import BotCheck
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.referee_server import WAIT


class Seat:
    """A route that records what the connection tells it."""

    def __init__(self) -> None:
        self.lost: list[Link] = []

    def deliver(self, connection: Link, reply: pb.ActionReply) -> None:
        raise AssertionError("no reply is routed here")

    def connection_lost(self, connection: Link) -> None:
        self.lost.append(connection)


def test_revoke_closes_the_stream_with_the_reason_and_tells_its_seats() -> None:
    async def main() -> tuple[bool, bool, list[pb.RefereeMessage | Close], Seat, Lobby]:
        lobby = Lobby()
        connection = Connection("alice", ["moon"])
        seat = Seat()
        connection.routes["m1"] = seat
        lobby.connect(connection)
        other = Connection("bob", ["moon"])
        lobby.connect(other)
        first = lobby.revoke("alice", "token rotated: because")
        again = lobby.revoke("alice", "token rotated: because")
        items = [connection.outbox.get_nowait() for _ in range(connection.outbox.qsize())]
        assert not other.closed and other.outbox.empty()
        return first, again, items, seat, lobby

    first, again, items, seat, lobby = asyncio.run(main())
    assert (first, again) == (True, False)
    error, end = items
    assert isinstance(error, pb.RefereeMessage)
    assert error.error == pb.Error(
        code=pb.ERROR_CODE_UNAUTHENTICATED, message="token rotated: because"
    )
    assert end == Close(grpc.StatusCode.UNAUTHENTICATED, "token rotated: because")
    assert [c.name for c in seat.lost if isinstance(c, Connection)] == ["alice"]
    assert len(seat.lost) == 1
    assert lobby.get("alice") is None and [c.name for c in lobby.connections()] == ["bob"]
    assert (lobby.revocations("alice"), lobby.revocations("bob")) == (2, 0)


class RevokedDuringTheCheck:
    """A token check that reads the old token (OK) while an admin withdraws it (on the loop),
    then, asked again, reads the new state."""

    def __init__(self, loop: asyncio.AbstractEventLoop, lobby: Lobby) -> None:
        self.loop = loop
        self.lobby = lobby
        self.calls = 0

    def check_bot(self, name: str, token: str) -> BotCheck:
        self.calls += 1
        if self.calls > 1:
            return BotCheck.WRONG_TOKEN
        revoked = threading.Event()

        def revoke() -> None:
            self.lobby.revoke(name, "token rotated")
            revoked.set()

        self.loop.call_soon_threadsafe(revoke)
        assert revoked.wait(WAIT)
        return BotCheck.OK  # what the database said before the rotation was written


def test_a_token_check_across_a_revocation_is_made_again() -> None:
    async def main() -> tuple[BotCheck, int]:
        lobby = Lobby()
        storage = RevokedDuringTheCheck(asyncio.get_running_loop(), lobby)
        service = BotServicer(lobby, storage, Metrics())
        hello = pb.Hello(name="alice", token="old", games=["moon"], protocol_version=2)
        check = await service.check_credentials(hello)
        return check, storage.calls

    assert asyncio.run(main()) == (BotCheck.WRONG_TOKEN, 2)

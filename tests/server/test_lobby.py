"""What a connection's writer takes from its outbox: the Welcome alone, then batches.

:meth:`~domino_arena.server.net.lobby.Connection.next_write` is what the ``Play`` handler writes;
these tests drive it without gRPC.
"""

from __future__ import annotations

import asyncio

import grpc

from domino_arena.server.net.lobby import Close, Connection
from domino_arena.v1 import referee_pb2 as pb


def error(text: str) -> pb.RefereeMessage:
    return pb.RefereeMessage(error=pb.Error(message=text))


def test_the_welcome_goes_alone_then_everything_waiting_goes_as_one_batch() -> None:
    async def main() -> list[pb.RefereeMessage | Close]:
        connection = Connection("alice", ["moon"])
        welcome = pb.RefereeMessage(welcome=pb.Welcome(name="alice"))
        for message in (welcome, error("a"), error("b")):
            connection.send(message)
        first, second = await connection.next_write(), await connection.next_write()
        connection.send(error("c"))
        third = await connection.next_write()
        return [first, second, third]

    first, second, third = asyncio.run(main())
    assert isinstance(first, pb.RefereeMessage) and first.WhichOneof("message") == "welcome"
    assert isinstance(second, pb.RefereeMessage) and second.WhichOneof("message") == "batch"
    assert [m.error.message for m in second.batch.messages] == ["a", "b"]
    assert third == error("c"), "one message waiting is written as it is, not as a batch"


def test_a_close_found_while_batching_comes_after_the_batch_and_ends_the_writes() -> None:
    async def main() -> list[pb.RefereeMessage | Close]:
        connection = Connection("alice", ["moon"])
        connection.send(pb.RefereeMessage(welcome=pb.Welcome(name="alice")))
        await connection.next_write()
        connection.send(error("a"))
        connection.send(error("b"))
        connection.close(grpc.StatusCode.ABORTED, "taken over", pb.Error(message="c"))
        assert not connection.send(error("after the close"))
        return [await connection.next_write(), await connection.next_write()]

    batch, close = asyncio.run(main())
    assert isinstance(batch, pb.RefereeMessage)
    assert [m.error.message for m in batch.batch.messages] == ["a", "b", "c"]
    assert close == Close(grpc.StatusCode.ABORTED, "taken over")


def test_the_writer_waits_for_the_outbox_and_wakes_at_the_first_message() -> None:
    async def main() -> tuple[bool, pb.RefereeMessage | Close]:
        connection = Connection("alice", ["moon"])
        writer = asyncio.ensure_future(connection.next_write())
        await asyncio.sleep(0)  # the writer now waits on an empty outbox
        waited = not writer.done()
        connection.send(pb.RefereeMessage(welcome=pb.Welcome(name="alice")))
        return waited, await writer

    waited, first = asyncio.run(main())
    assert waited
    assert isinstance(first, pb.RefereeMessage) and first.WhichOneof("message") == "welcome"


def test_a_writer_cancelled_while_waiting_leaves_the_outbox_usable() -> None:
    async def main() -> pb.RefereeMessage | Close:
        connection = Connection("alice", ["moon"])
        writer = asyncio.ensure_future(connection.next_write())
        await asyncio.sleep(0)
        writer.cancel()
        await asyncio.gather(writer, return_exceptions=True)
        connection.send(error("a"))
        return await connection.next_write()

    assert asyncio.run(main()) == error("a")


def test_a_cut_drops_what_waits_and_wakes_whoever_waits_for_it() -> None:
    async def main() -> tuple[bool, list[pb.RefereeMessage | Close]]:
        connection = Connection("alice", ["moon"], outbox_limit=2)
        assert not connection.was_cut.is_set()
        watcher = asyncio.ensure_future(connection.was_cut.wait())
        await asyncio.sleep(0)
        for text in ("a", "b", "c"):  # the third is one more than the outbox holds
            connection.send(error(text))
        await asyncio.wait_for(watcher, 1.0)
        return connection.was_cut.is_set(), [await connection.next_write() for _ in range(2)]

    was_cut, (first, close) = asyncio.run(main())
    assert was_cut
    assert isinstance(first, pb.RefereeMessage) and first.error.field == "limits.outbox_messages"
    assert close == Close(grpc.StatusCode.RESOURCE_EXHAUSTED, first.error.message)

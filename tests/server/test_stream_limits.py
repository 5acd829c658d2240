"""The bounds of a bot stream, against hostile clients written from the proto over real gRPC.

Each test serves the bot service alone (its :class:`StreamLimits` small, its clock frozen) on
127.0.0.1:0 in a background thread, and asserts the in-band Error and the final status. No
test sleeps: every wait is on a stream or a condition with a timeout only a failure reaches.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import grpc
import pytest

from domino_arena.server.metrics import Metrics
from domino_arena.server.net import limits
from domino_arena.server.net.limits import SEAT_INBOX_REPLIES, StreamLimits, echo
from domino_arena.server.net.lobby import Close, Connection, Lobby
from domino_arena.server.net.remote import RemoteSeat
from domino_arena.server.net.service import BotServicer
from domino_arena.server.store.bots import BotCheck
from domino_arena.v1 import referee_pb2 as pb
from domino_arena.v1 import referee_pb2_grpc as pb_grpc
from tests.fakes.referee_server import WAIT, Ended, RawBot, unbatched

PLAY: Final = "/domino_arena.v1.BotService/Play"
TOKEN: Final = "secret"
HELLO: Final = pb.BotMessage(
    hello=pb.Hello(name="eve", token=TOKEN, games=["straight"], protocol_version=2)
)


class Tokens:
    def check_bot(self, name: str, token: str) -> BotCheck:
        return BotCheck.OK if (name, token) == ("eve", TOKEN) else BotCheck.UNKNOWN


class Recording(Lobby):
    """A lobby that keeps every connection it admitted (to read their outbox's peak)."""

    def __init__(self) -> None:
        super().__init__()
        self.admitted: list[Connection] = []

    def connect(self, connection: Connection) -> Connection | None:
        self.admitted.append(connection)
        return super().connect(connection)


class Server:
    """The bot service alone, with ``limits``, on 127.0.0.1:0 in a thread with its own loop."""

    def __init__(self, limits: StreamLimits) -> None:
        self.lobby = Recording()
        self.servicer = BotServicer(self.lobby, Tokens(), Metrics(), limits)
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self.port = 0
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)
        self._thread.start()
        assert self._ready.wait(WAIT)
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.port}")

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        server = grpc.aio.server()
        pb_grpc.add_BotServiceServicer_to_server(self.servicer, server)
        self.port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        self._ready.set()
        await self._stop.wait()
        await server.stop(0)

    def close(self) -> None:
        self.channel.close()
        assert self._loop is not None and self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(WAIT)

    def raw(self, chunks: Iterator[bytes]) -> tuple[list[pb.RefereeMessage], Ended]:
        """Send ``chunks`` as they are; return every message received and the end."""
        method: grpc.StreamStreamMultiCallable[bytes, bytes] = self.channel.stream_stream(
            PLAY, request_serializer=None, response_deserializer=None
        )
        call = method(chunks, timeout=WAIT)
        received: list[pb.RefereeMessage] = []
        try:
            for data in call:
                received.extend(unbatched(pb.RefereeMessage.FromString(data)))
        except grpc.RpcError as exc:
            return received, Ended(exc.code(), exc.details() or "")
        return received, Ended(call.code(), call.details() or "")


def make_server(**values: float) -> Iterator[Server]:
    server = Server(StreamLimits(clock=lambda: 0.0, close_grace=WAIT, **values))  # type: ignore[arg-type]
    yield server
    server.close()


def errors(received: list[pb.RefereeMessage]) -> list[pb.Error]:
    return [m.error for m in received if m.WhichOneof("message") == "error"]


def unknown_replies(count: int) -> pb.BotMessage:
    return pb.BotMessage(
        replies=pb.ReplyBatch(
            replies=[pb.ActionReply(match_id="m" * 200, turn=1) for _ in range(count)]
        )
    )


@pytest.fixture
def flood_server() -> Iterator[Server]:
    yield from make_server(outbox_messages=100, reply_burst=10**9, replies_per_second=1e9)


def test_a_client_that_never_reads_is_cut_off_at_the_outbox_limit(flood_server: Server) -> None:
    def flood() -> Iterator[bytes]:
        yield HELLO.SerializeToString()
        batch = unknown_replies(1000).SerializeToString()
        for _ in range(200):  # 200,000 errors: far more than the transport buffers
            yield batch

    received, end = flood_server.raw(flood())  # reads only after sending everything
    assert end.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "(the outbox limit)" in end.details
    last = errors(received)[-1]
    assert last.field == "limits.outbox_messages"
    assert last.message.startswith("more than 100 messages wait to be written")
    (connection,) = flood_server.lobby.admitted
    assert connection.peak <= 100, "the outbox grew past its bound"
    assert connection.closed and flood_server.lobby.get("eve") is None
    assert len(errors(received)) <= 100


@pytest.fixture
def rate_server() -> Iterator[Server]:
    yield from make_server(replies_per_second=1.0, reply_burst=5)


def test_replies_past_the_rate_limit_close_the_stream(
    rate_server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="domino_arena.server")
    bot = RawBot(rate_server.channel)
    bot.send(HELLO)
    bot.wait_kind("welcome")
    bot.send(unknown_replies(6))  # the frozen clock adds no token: the 6th is one too many
    end = bot.wait_end()
    assert end.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    got = [m.error for m in bot.messages("error")]
    assert [e.code for e in got[:5]] == [pb.ERROR_CODE_UNKNOWN_MATCH] * 5
    assert got[5].field == "limits.replies_per_second"
    assert got[5].message == (
        "more than 1 replies a second (bursts of 5) on this stream (the reply rate limit)"
    )
    assert len(got) == 6
    # the echoed match id is cut: an error cannot grow with what the bot sent
    assert len(got[0].match_id) == 64 and echo("m" * 200) in got[0].message
    bot.close()
    (cut,) = [r.getMessage() for r in caplog.records if "cut off" in r.getMessage()]
    assert cut.startswith("bot cut off: name=eve ") and "limit=limits.replies_per_second" in cut


@pytest.fixture
def slow_hello_server() -> Iterator[Server]:
    yield from make_server(hello_timeout=0.05)


def test_a_stream_without_a_hello_is_closed_at_the_deadline(slow_hello_server: Server) -> None:
    bot = RawBot(slow_hello_server.channel)  # says nothing
    end = bot.wait_end()
    assert end.code == grpc.StatusCode.DEADLINE_EXCEEDED
    (error,) = [m.error for m in bot.messages("error")]
    assert error.code == pb.ERROR_CODE_BAD_HELLO and error.field == "hello"
    assert error.message == "no Hello within 0.05 s of the stream's start (the Hello deadline)"
    assert end.details == error.message
    bot.close()


@pytest.fixture
def server() -> Iterator[Server]:
    yield from make_server()


GARBAGE: Final = b"\xff\xff\xff\xff\xff"


def test_undecodable_bytes_before_the_hello_are_named(server: Server) -> None:
    received, end = server.raw(iter([GARBAGE]))
    assert end.code == grpc.StatusCode.INVALID_ARGUMENT
    (error,) = errors(received)
    assert error.code == pb.ERROR_CODE_MALFORMED and error.field == "hello"
    assert error.message == (
        "the first message does not decode as a BotMessage: a Hello is expected"
    )
    assert "DecodeError" not in end.details


def test_undecodable_bytes_after_the_hello_are_named(server: Server) -> None:
    received, end = server.raw(iter([HELLO.SerializeToString(), GARBAGE]))
    assert end.code == grpc.StatusCode.INVALID_ARGUMENT
    assert received[0].WhichOneof("message") == "welcome"
    (error,) = errors(received)
    assert error.code == pb.ERROR_CODE_MALFORMED and error.field == "message"
    assert error.message.startswith("a message does not decode as a BotMessage")
    assert server.lobby.get("eve") is None


def test_a_seat_inbox_past_its_bound_cuts_the_stream_and_the_seat_sees_it_gone() -> None:
    lobby = Lobby()
    connection = Connection("eve", ["straight"])
    lobby.connect(connection)
    seat = RemoteSeat(lobby, "eve", "m1")
    connection.routes["m1"] = seat
    for turn in range(SEAT_INBOX_REPLIES + 1):
        connection.route(pb.ActionReply(match_id="m1", turn=turn))
    assert connection.closed and connection.routes == {}
    assert connection.ending == Close(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        f"more than {SEAT_INBOX_REPLIES} replies wait for match 'm1' (the seat inbox limit): "
        "one reply per request is expected",
    )
    error = connection.outbox.get_nowait()
    assert isinstance(error, pb.RefereeMessage)
    assert error.error.field == "limits.seat_inbox_replies"
    assert isinstance(connection.outbox.get_nowait(), Close)
    # the seat was told of the disconnection, as when a stream ends: the fault policy takes over
    assert len(seat._inbox) == SEAT_INBOX_REPLIES + 1


def test_the_docs_and_the_proto_state_the_limits_in_force() -> None:
    root = Path(__file__).resolve().parents[2]
    docs = (root / "docs" / "referee.md").read_text(encoding="utf-8")
    proto = (root / "proto" / "domino_arena" / "v1" / "referee.proto").read_text(encoding="utf-8")
    stated = {
        f"{limits.HELLO_TIMEOUT:g} s",
        f"{limits.REPLIES_PER_SECOND:,.0f} replies",
        f"{limits.REPLY_BURST:,}",
        f"{limits.OUTBOX_MESSAGES:,}",
        f"{limits.SEAT_INBOX_REPLIES}",
        f"{limits.ECHO_CHARS} characters",
        f"{limits.MAX_MESSAGE_BYTES // 2**20} MiB",
    }
    for text in stated:
        assert text in docs, text
        assert text in proto.replace("\n// ", " "), text
    assert f"{limits.CLOSE_GRACE:g} s to read the last Error" in docs

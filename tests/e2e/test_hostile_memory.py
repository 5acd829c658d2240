"""Hostile clients against a real referee process, and its memory (issue 9, findings 2, 3, 6).

Each test starts ``domino-arena serve --port 0`` on a fresh SQLite file as a subprocess and
reads its resident memory from ``/proc/PID/status`` (``VmRSS`` before, the peak ``VmHWM``
after), while raw clients written from the proto (the ``domino_arena.v1`` stubs, no SDK) attack
it: a bot that floods replies for matches it does not play and never reads what it is sent,
2,000 streams that never say Hello, and Hellos with 3 MB names. Every attack must be refused
with its in-band error and status, and the referee's growth stay under the attack's bound
(the finding before the limits: 600,000 unread replies grew it by 487 MB; now 14 MiB).

The waits are on the referee's log lines and on the streams' ends, each bounded by a deadline
that only a failure reaches. One condition has no line to wait for (a stream cut for a limit
is not logged): that the flooding bot is gone is asked of the admin API every 0.05 s.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import grpc
import pytest

from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.logs import LOG_BURST
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc
from domino_arena.v1 import referee_pb2 as pb
from domino_arena.v1 import referee_pb2_grpc as pb_grpc
from tests.fakes.processes import Process, command, memory, served_port

MIB: Final = 1024 * 1024
FLOOD_BOUND: Final = 64 * MIB
"""The most the flood may grow the referee (peak RSS over the RSS before it; measured: 14 MiB)."""
OPEN_STREAMS_BOUND: Final = 96 * MIB
"""The most 2,000 streams open at once may grow it: about 27 KiB each while they wait, gRPC's
and the handler's (measured: 53 MiB)."""
BIG_NAMES_BOUND: Final = 48 * MIB
"""The most 25 3 MB Hellos, one after another, may grow it (measured: 25 MiB). Each message must
be freed when its refusal is sent: while the refusal's exception kept it, it waited for a rare
cyclic collection and 25 of them grew the referee 93 MiB."""
WAIT: Final = 60.0
"""Seconds one step may take before the test fails (never reached when it passes)."""
ADMIN_TOKEN: Final = "hostile-admin-token"
PLAY: Final = "/domino_arena.v1.BotService/Play"
FLOOD_REPLIES: Final = 600_000
"""Replies the flooding bot offers: the finding's count."""
BATCH: Final = 1_000
HELLO_LESS_STREAMS: Final = 2_000
CHANNELS: Final = 10
"""Connections the Hello-less streams are spread over."""
HELLO_TIMEOUT: Final = 1.0
POLL: Final = 0.05
"""Seconds between two questions of a condition no log line announces."""
BIG_NAMES: Final = 25
"""Hellos with a 3 MB name, one after another (each name one letter repeated: a to y)."""


@dataclass
class Served:
    """A referee process serving on ``address``, with one bot, ``eve``."""

    process: Process
    address: str
    token: str

    @property
    def pid(self) -> int:
        return self.process.popen.pid

    def rss(self) -> int:
        return memory(self.pid)["VmRSS"]

    def peak(self) -> int:
        return memory(self.pid)["VmHWM"]

    def log_size(self) -> int:
        """Characters the referee has logged so far (its log is its standard output)."""
        return sum(len(line) + 1 for line in self.process.lines)

    def connected(self) -> list[str]:
        with grpc.insecure_channel(self.address) as channel:
            admin = admin_pb_grpc.AdminServiceStub(channel)
            response = admin.ListConnected(
                admin_pb.ListConnectedRequest(),
                metadata=(("authorization", f"Bearer {ADMIN_TOKEN}"),),
                timeout=WAIT,
            )
        return [bot.name for bot in response.bots]


def serve(folder: Path, *options: str) -> Iterator[Served]:
    url = f"sqlite:///{folder / 'hostile.db'}"
    storage = RatedStorage(url)
    storage.open()
    token = storage.add_bot("eve")
    storage.close()
    args = command("serve", "--port", "0", "--db", url, "--admin-token", ADMIN_TOKEN, *options)
    process = Process(args, folder, wait=WAIT)
    try:
        port = served_port(process)
        yield Served(process, f"127.0.0.1:{port}", token)
    finally:
        process.stop()


def wait_until(condition: Callable[[], bool], what: str) -> None:
    """Return once ``condition()`` holds, asking again every :data:`POLL` s; fail at WAIT s."""
    deadline = time.monotonic() + WAIT
    pause = threading.Event()  # never set: its timed wait is the pause between two questions
    while not condition():
        assert time.monotonic() < deadline, f"no {what} within {WAIT:g} s"
        pause.wait(POLL)


def hello(name: str, token: str) -> pb.BotMessage:
    return pb.BotMessage(
        hello=pb.Hello(name=name, token=token, games=["passing"], protocol_version=2)
    )


def raw_play(channel: grpc.Channel) -> grpc.StreamStreamMultiCallable[bytes, bytes]:
    """The ``Play`` method with bytes both ways: the client sends what it likes, undecoded."""
    return channel.stream_stream(PLAY, request_serializer=None, response_deserializer=None)


def errors(call: Iterator[bytes]) -> tuple[list[pb.Error], grpc.StatusCode, str]:
    """Read a stream to its end: the in-band errors, the final status and its details."""
    found = []
    try:
        for data in call:
            message = pb.RefereeMessage.FromString(data)
            inner = message.batch.messages if message.HasField("batch") else [message]
            found += [m.error for m in inner if m.HasField("error")]
    except grpc.RpcError as exc:
        return found, exc.code(), exc.details() or ""
    raise AssertionError("the stream ended without an error status")


# -- (a) a bot that floods and never reads (finding 2) -------------------------------------------


@pytest.fixture
def unlimited_rate(tmp_path: Path) -> Iterator[Served]:
    """The reply rate limit lifted, so that the outbox bound alone must hold the flood."""
    yield from serve(tmp_path, "--max-replies-per-second", "1e9")


def test_a_flood_of_unread_errors_is_cut_at_the_outbox_and_memory_stays_bounded(
    unlimited_rate: Served,
) -> None:
    referee = unlimited_rate
    before = referee.rss()
    offered = threading.Event()

    def flood() -> Iterator[bytes]:
        yield hello("eve", referee.token).SerializeToString()
        batch = pb.BotMessage(
            replies=pb.ReplyBatch(
                replies=[
                    pb.ActionReply(match_id=f"no-such-match-{i}", turn=1) for i in range(BATCH)
                ]
            )
        ).SerializeToString()
        for _ in range(FLOOD_REPLIES // BATCH):
            yield batch
        offered.set()

    with grpc.insecure_channel(referee.address) as channel:
        call = raw_play(channel)(flood(), timeout=WAIT)
        referee.process.wait_line("bot connected: name=eve")
        # Nothing is read until the referee has let the bot go (a cut stream is not logged,
        # so the admin API is asked).
        wait_until(lambda: referee.connected() == [], "the flooding bot cut off")
        grown = referee.peak() - before
        assert not offered.is_set(), "the referee took every reply before it cut the bot off"
        found, code, details = errors(call)
    grown = max(grown, referee.peak() - before)
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED, details
    assert "(the outbox limit)" in details
    assert found and found[-1].field == "limits.outbox_messages"
    # What the bot gets at last: the errors gRPC's buffers took before writes blocked, then up
    # to a full outbox (10,000), then the limit's Error; a small part of what it offered.
    assert len(found) < FLOOD_REPLIES // 10, f"{len(found)} errors for the unread replies"
    assert grown < FLOOD_BOUND, f"the referee grew {grown / MIB:.1f} MiB"


# -- (b) streams that never say Hello (finding 6) ------------------------------------------------


@pytest.fixture
def short_hello(tmp_path: Path) -> Iterator[Served]:
    yield from serve(tmp_path, "--hello-timeout", f"{HELLO_TIMEOUT:g}")


async def silent_streams(address: str, count: int) -> list[tuple[grpc.StatusCode, list[pb.Error]]]:
    """Open ``count`` Play streams that send nothing; return how each ended, and its errors."""
    channels = [
        grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
        for _ in range(CHANNELS)
    ]
    stubs = [pb_grpc.BotServiceStub(channel) for channel in channels]

    async def one(index: int) -> tuple[grpc.StatusCode, list[pb.Error]]:
        call = stubs[index % CHANNELS].Play(timeout=WAIT)
        found = []
        try:
            async for message in call:
                found.append(message.error)
        except grpc.aio.AioRpcError as exc:
            return exc.code(), found
        return await call.code(), found

    try:
        return await asyncio.gather(*(one(i) for i in range(count)))
    finally:
        for channel in channels:
            await channel.close()


def test_streams_that_never_say_hello_are_closed_at_the_deadline_and_memory_stays_bounded(
    short_hello: Served,
) -> None:
    referee = short_hello
    before = referee.rss()
    ends = asyncio.run(silent_streams(referee.address, HELLO_LESS_STREAMS))
    grown = referee.peak() - before
    expected = f"no Hello within {HELLO_TIMEOUT:g} s of the stream's start (the Hello deadline)"
    assert len(ends) == HELLO_LESS_STREAMS  # every stream ended
    # When 2,000 streams wait at once, gRPC cancels some of them (about 1 in 10 here, none of
    # 200; the same with the referee in-process) before the deadline: their clients see
    # CANCELLED, and the referee logs no refusal for them. Every other one gets the Error and
    # DEADLINE_EXCEEDED, and the referee logs its refusal.
    assert {code for code, _ in ends} <= {
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.CANCELLED,
    }
    told = [found for code, found in ends if code == grpc.StatusCode.DEADLINE_EXCEEDED]
    assert len(told) > HELLO_LESS_STREAMS // 2
    for found in told:
        assert [(e.code, e.field, e.message) for e in found] == [
            (pb.ERROR_CODE_BAD_HELLO, "hello", expected)
        ]
    # One address: its first refusals are logged, the rest held back (logs.LogBudget).
    for _ in told[:LOG_BURST]:
        assert expected in referee.process.wait_line("hello refused: ")
    assert grown < OPEN_STREAMS_BOUND, f"the referee grew {grown / MIB:.1f} MiB"
    assert referee.connected() == []


# -- (c) Hellos with 3 MB names (finding 3) ------------------------------------------------------


@pytest.fixture
def referee(tmp_path: Path) -> Iterator[Served]:
    yield from serve(tmp_path)


def test_hellos_with_3_mb_names_are_refused_and_the_log_stays_small(referee: Served) -> None:
    before, logged = referee.rss(), referee.log_size()
    with grpc.insecure_channel(referee.address) as channel:
        play = raw_play(channel)
        for index in range(BIG_NAMES):
            name = chr(ord("a") + index) * 3_000_000
            call = play(iter([hello(name, referee.token).SerializeToString()]), timeout=WAIT)
            found, code, details = errors(call)
            assert code == grpc.StatusCode.UNAUTHENTICATED, details
            assert [e.field for e in found] == ["hello.name"]
            assert len(found[0].message) < 400 and len(details) < 400
            if index < LOG_BURST:  # then one a minute from this address (logs.LogBudget)
                referee.process.wait_line("hello refused")
    grown = referee.peak() - before
    added = referee.log_size() - logged
    assert added < BIG_NAMES * 400, f"{added} characters logged for {BIG_NAMES} refusals"
    assert grown < BIG_NAMES_BOUND, f"the referee grew {grown / MIB:.1f} MiB"
    assert referee.connected() == []

"""The pieces of the live pages' tests: a real referee with raw bots held at a gate, a server-sent
events reader, and a driver that calls the ASGI app directly (a slow or vanishing browser).

:class:`Gate` holds a match at its first action request, so a watcher joins before anything but
the deal has happened, then lets the bots play on (first legal action) when opened. Every wait is
on an event with :data:`WAIT` as its timeout, which only matters when a test fails.
"""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

import pytest
from starlette.types import ASGIApp, Message

from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.web.app import create_app
from domino_arena.server.web.live import LiveSource
from domino_arena.v1 import referee_pb2 as pb
from tests.browser.harness import serve
from tests.fakes.referee_server import WAIT, RawBot, Referee, first_legal

BOTS: Final = ("alice", "bob", "carol")
"""The bots connected to :func:`arena`'s referee (enough for every game's default)."""
DIRECT: Final = urllib.request.build_opener(urllib.request.ProxyHandler({}))
"""A URL opener that never goes through a proxy (the servers are on loopback)."""


@dataclass(frozen=True)
class SseEvent:
    """One server-sent event: its name, its data line as sent, and that data parsed."""

    name: str
    raw: str
    data: Any


@dataclass
class SseStream:
    """What an event stream carried: its events in order, and how many comments (heartbeats)."""

    events: list[SseEvent] = field(default_factory=list)
    comments: int = 0
    retry: int | None = None


def parse_sse(text: str) -> SseStream:
    """Parse a whole ``text/event-stream`` body (each event: ``event:`` then one ``data:``)."""
    stream = SseStream()
    for block in text.split("\n\n"):
        name, data = "message", None
        for line in block.split("\n"):
            if line.startswith(":"):
                stream.comments += 1
            elif line.startswith("retry: "):
                stream.retry = int(line.removeprefix("retry: "))
            elif line.startswith("event: "):
                name = line.removeprefix("event: ")
            elif line.startswith("data: "):
                assert data is None, f"one data line per event: {block!r}"
                data = line.removeprefix("data: ")
        if data is not None:
            stream.events.append(SseEvent(name, data, json.loads(data)))
    return stream


def get(url: str) -> tuple[int, str, dict[str, str]]:
    """GET ``url``: the status, the body and the headers (an HTTP error too)."""
    try:
        with DIRECT.open(url, timeout=WAIT) as response:
            return response.status, response.read().decode(), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(), dict(exc.headers)


class Gate:
    """A raw bot policy that holds a match at its ``hold_at``-th action request (by then the
    deal and the first replies are steps the spectators have) until :meth:`open`."""

    def __init__(self, hold_at: int = 2) -> None:
        self._open = threading.Event()
        self.waiting = threading.Event()
        self.match_id = ""
        self.hold_at = hold_at
        self.requests = 0

    def policy(self, bot: RawBot, request: pb.ActionRequest) -> None:
        self.requests += 1
        if self.requests >= self.hold_at and not self._open.is_set():
            self.match_id = request.match_id
            self.waiting.set()
            assert self._open.wait(WAIT), "the gate was never opened"
        first_legal(bot, request)

    def held(self) -> str:
        """Wait until a match is held; return its id."""
        assert self.waiting.wait(WAIT), "no match reached the gate"
        return self.match_id

    def open(self) -> None:
        self._open.set()


class AsgiCall:
    """One request (a GET unless told) of an ASGI app, driven by hand in the running loop: the
    browser reads its body only while :attr:`reading` is set, and goes away when
    :meth:`disconnect` is called. ``client`` is the browser's address (as uvicorn sets it)."""

    def __init__(
        self,
        app: ASGIApp,
        path: str,
        method: str = "GET",
        client: str = "127.0.0.1",
        cookies: str = "",
    ) -> None:
        self.app = app
        self.path = path
        self.method = method
        self.client = client
        self.cookies = cookies
        self.status: int | None = None
        self.headers: dict[str, str] = {}
        self.body = bytearray()
        self.chunks: list[bytes] = []
        """Each body write, as the app made it (a coalesced write is one chunk)."""
        self.reading = asyncio.Event()
        self.reading.set()
        self.received = asyncio.Event()
        """Set whenever a body chunk arrives (cleared by :meth:`wait_for`)."""
        self.started = asyncio.Event()
        self._gone = asyncio.Event()
        self.task: asyncio.Future[None] | None = None

    def start(self) -> AsgiCall:
        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": self.method,
            "scheme": "http",
            "path": self.path,
            "raw_path": self.path.encode(),
            "root_path": "",
            "query_string": b"",
            "headers": [
                (b"host", b"testserver"),
                (b"accept", b"text/event-stream"),
                *([(b"cookie", self.cookies.encode())] if self.cookies else []),
            ],
            "client": (self.client, 50000),
            "server": ("testserver", 80),
        }
        self.task = asyncio.ensure_future(self.app(scope, self._receive, self._send))
        return self

    async def _receive(self) -> Message:
        await self._gone.wait()
        return {"type": "http.disconnect"}

    async def _send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.headers = {k.decode(): v.decode() for k, v in message["headers"]}
            self.started.set()
            return
        await self.reading.wait()
        chunk = message.get("body", b"")
        if chunk:
            self.chunks.append(chunk)
        self.body += chunk
        self.received.set()

    async def wait_started(self) -> int:
        await asyncio.wait_for(self.started.wait(), WAIT)
        assert self.status is not None
        return self.status

    async def wait_for(self, text: str) -> None:
        """Wait until the body holds ``text``."""
        async with asyncio.timeout(WAIT):
            while text.encode() not in self.body:
                self.received.clear()
                await self.received.wait()

    def disconnect(self) -> None:
        self._gone.set()

    async def finished(self) -> str:
        """Wait for the app to finish the response; return the body."""
        assert self.task is not None
        await asyncio.wait_for(self.task, WAIT)
        return self.body.decode()


@dataclass
class Arena:
    """A real referee with :data:`BOTS` connected (no policy until a test sets one), and the
    web face following it, served by uvicorn at ``url``."""

    referee: Referee
    bots: list[RawBot]
    url: str
    live: LiveSource

    def hold(self, gate: Gate) -> None:
        """Let every bot play through ``gate``."""
        for bot in self.bots:
            bot.policy = gate.policy


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arena]:
    """One referee and web face per module (hashing the bots' tokens is slow)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('live') / 'arena.db'}"
    storage = RatedStorage(url)
    storage.open()
    tokens = {name: storage.add_bot(name) for name in BOTS}
    referee = Referee(storage)
    bots = [referee.connect(name, tokens[name], policy=None) for name in BOTS]
    web_storage = RatedStorage(url)
    web_storage.open()
    # Fresh lobbies (each test asks for its own match), and room for a whole match's events.
    live = LiveSource(referee.address, queue_bound=100_000, lobby_seconds=0.0)
    try:
        with serve(create_app(web_storage, live=live)) as base:
            yield Arena(referee, bots, base, live)
    finally:
        referee.close()
        web_storage.close()
        storage.close()


def events_of(stream: SseStream, name: str) -> Iterator[SseEvent]:
    return (e for e in stream.events if e.name == name)

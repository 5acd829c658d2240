"""A referee over real gRPC for tests: the whole :class:`App` on port 0, and raw bots.

:class:`Referee` serves an :class:`App` on 127.0.0.1:0 in a background thread with its own
loop. The bots are raw gRPC clients (:class:`RawBot`, no SDK): each sends exactly the messages
a test wants, so refusals, malformed and late replies, unknown matches and reconnections are
exercised at the wire. A raw bot answers requests from a background thread with a *policy* (a
function of the request), so a whole match runs while the test thread waits on ``RunMatch``.
Every wait is on a queue or condition with a timeout that only matters if the test fails.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import grpc

from domino_arena.sdk.rules import make_game
from domino_arena.sdk.wire import game_to_proto
from domino_arena.server.app import ROLE_GATEWAY, App, Config
from domino_arena.server.app_gateway import Gateway
from domino_arena.server.hosting.runner import Hosting
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.net.grpc_server import ServerTls
from domino_arena.server.net.limits import DEFAULT_LIMITS, StreamLimits
from domino_arena.server.play.people import DEFAULT_PEOPLE, PeopleBounds
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc
from domino_arena.v1 import games_pb2
from domino_arena.v1 import referee_pb2 as pb
from domino_arena.v1 import referee_pb2_grpc as pb_grpc

WAIT: Final = 20.0
"""Seconds any single wait may take before the test fails (never reached when it passes)."""

ADMIN_TOKEN: Final = "test-admin-token"
ADMIN_METADATA: Final = (("authorization", f"Bearer {ADMIN_TOKEN}"),)
ALL_GAMES: Final = ("doubles", "moon", "passing", "straight")
SLOW: Final = pb.TimeControl(move_ms=600_000, bank_ms=0, grace_ms=0)
"""No move can time out while a test looks: a fault in such a match is never the clock's."""


def passing_match(*bots: str, policy: pb.FaultPolicy.ValueType) -> admin_pb.RunMatchRequest:
    """A RunMatch of Passing between ``bots`` on seed 11 under :data:`SLOW` and ``policy``."""
    return admin_pb.RunMatchRequest(
        game=game_to_proto(make_game("passing")),
        bots=bots,
        has_seed=True,
        seed=11,
        time_control=SLOW,
        fault_policy=policy,
    )


@dataclass(frozen=True, slots=True)
class Ended:
    """The end of a stream as the bot saw it: the gRPC status and its details."""

    code: grpc.StatusCode
    details: str


Policy = Callable[["RawBot", pb.ActionRequest], None]
"""What a raw bot does with a request (usually: send one reply)."""


CARRIERS: Final = ("request", "hand_end", "fault", "match_end")
"""The messages whose ``events`` field carries the steps since the last one (protocol 2)."""


def unbatched(message: pb.RefereeMessage) -> list[pb.RefereeMessage]:
    """The messages ``message`` delivers: those of a RefereeBatch (never nested), or itself."""
    if message.WhichOneof("message") != "batch":
        return [message]
    inner = list(message.batch.messages)
    assert len(inner) > 1, f"a batch of {len(inner)}"
    assert all(m.WhichOneof("message") not in ("batch", "welcome") for m in inner), inner
    return inner


def carried_events(message: pb.RefereeMessage) -> list[pb.Event]:
    """The events ``message`` delivers, in order: its ``events``, or itself if an Event."""
    kind = message.WhichOneof("message")
    if kind == "event":
        return [message.event]
    if kind in CARRIERS:
        return list(getattr(message, kind).events)
    return []


def first_legal(bot: RawBot, request: pb.ActionRequest) -> None:
    """Answer with the first legal action, echoing the match and the turn."""
    bot.reply(request, request.observation.legal_actions[0])


class RawBot:
    """A bot speaking the protocol by hand over one ``Play`` stream.

    Every message received is kept in ``received`` (in order); requests are answered by
    ``policy`` on the reader thread unless it is None.
    """

    def __init__(self, channel: grpc.Channel, policy: Policy | None = None) -> None:
        self.policy = policy
        self.received: list[pb.RefereeMessage | Ended] = []
        self._outgoing: queue.Queue[pb.BotMessage | None] = queue.Queue()
        self._changed = threading.Condition()
        stub = pb_grpc.BotServiceStub(channel)
        self.call = stub.Play(iter(self._outgoing.get, None))
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        try:
            for received in self.call:
                for message in unbatched(received):
                    if message.WhichOneof("message") == "request" and self.policy is not None:
                        self.policy(self, message.request)
                    self._add(message)
            end = Ended(self.call.code(), self.call.details() or "")
        except grpc.RpcError as exc:
            end = Ended(exc.code(), exc.details() or "")
        self._add(end)

    def _add(self, item: pb.RefereeMessage | Ended) -> None:
        with self._changed:
            self.received.append(item)
            self._changed.notify_all()

    def send(self, message: pb.BotMessage) -> None:
        self._outgoing.put(message)

    def hello(self, name: str, token: str, games: tuple[str, ...] = ALL_GAMES) -> None:
        self.send(
            pb.BotMessage(hello=pb.Hello(name=name, token=token, games=games, protocol_version=2))
        )

    def reply(self, request: pb.ActionRequest, action: games_pb2.Action, turn: int = -1) -> None:
        self.send(
            pb.BotMessage(
                reply=pb.ActionReply(
                    match_id=request.match_id,
                    turn=request.turn if turn < 0 else turn,
                    action=action,
                )
            )
        )

    def wait_for(
        self, predicate: Callable[[pb.RefereeMessage | Ended], bool], what: str
    ) -> pb.RefereeMessage | Ended:
        """Return the first message received (so far or later) that ``predicate`` accepts."""
        with self._changed:
            found: list[pb.RefereeMessage | Ended] = []

            def seen() -> bool:
                found[:] = [m for m in self.received if predicate(m)]
                return bool(found)

            if not self._changed.wait_for(seen, timeout=WAIT):
                raise AssertionError(f"no {what} within {WAIT} s; got {self.received}")
            return found[0]

    def wait_kind(self, kind: str) -> pb.RefereeMessage:
        message = self.wait_for(
            lambda m: isinstance(m, pb.RefereeMessage) and m.WhichOneof("message") == kind, kind
        )
        assert isinstance(message, pb.RefereeMessage)
        return message

    def wait_end(self) -> Ended:
        end = self.wait_for(lambda m: isinstance(m, Ended), "end of stream")
        assert isinstance(end, Ended)
        return end

    def messages(self, kind: str) -> list[pb.RefereeMessage]:
        with self._changed:
            return [
                m
                for m in self.received
                if isinstance(m, pb.RefereeMessage) and m.WhichOneof("message") == kind
            ]

    def events(self) -> list[pb.Event]:
        """Every event received so far, in order, from the messages that carry them."""
        with self._changed:
            return [
                event
                for m in self.received
                if isinstance(m, pb.RefereeMessage)
                for event in carried_events(m)
            ]

    def ended(self) -> bool:
        with self._changed:
            return any(isinstance(m, Ended) for m in self.received)

    def close(self) -> None:
        self.call.cancel()
        self._reader.join(WAIT)


class _CallDetails(
    collections.namedtuple(
        "_CallDetails",
        ("method", "timeout", "metadata", "credentials", "wait_for_ready", "compression"),
    ),
    grpc.ClientCallDetails,
):
    pass


class BearerToken(grpc.UnaryUnaryClientInterceptor):
    """Send the admin token with every call, as the CLI does."""

    def __init__(self, token: str) -> None:
        self.metadata = (("authorization", f"Bearer {token}"),)

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        with_token = _CallDetails(
            details.method,
            details.timeout,
            (*(details.metadata or ()), *self.metadata),
            details.credentials,
            details.wait_for_ready,
            details.compression,
        )
        return continuation(with_token, request)


@dataclass(frozen=True)
class Cluster:
    """One role of a cluster for :class:`Referee`: ``role`` (gateway or host), the broker's
    URL, the node's and the cluster's names."""

    role: str
    name: str
    node: str
    nats: str = "nats://127.0.0.1:4222"
    lease_seconds: float = 30.0


class Referee:
    """An :class:`App` (or a cluster's gateway) serving on 127.0.0.1:0 in a background
    thread, with its own loop."""

    def __init__(
        self,
        storage: RatedStorage,
        reconnect_grace: float = 10.0,
        tls: ServerTls | None = None,
        credentials: grpc.ChannelCredentials | None = None,
        limits: StreamLimits = DEFAULT_LIMITS,
        *,
        cluster: Cluster | None = None,
        hosting: Hosting | None = None,
        relay_token: str = "",
        people: PeopleBounds = DEFAULT_PEOPLE,
        on_analysed: Callable[[str, str | None], None] | None = None,
    ) -> None:
        """``tls``: serve TLS only; then ``credentials`` are the test's own channel's.
        ``limits``: the bounds of the bot streams (as ``serve``'s limit options set them).
        ``cluster``: serve one role of a cluster instead of a whole referee.
        ``hosting``: run hosted bots in it (its own runner, tests/fakes/hosted.py).
        ``relay_token``, ``people``: the web face's token and the bounds of people's matches
        (docs/people.md). ``on_analysed``: told each analysis its workers end (server/app.py)."""
        config = Config(
            port=0,
            reconnect_grace=reconnect_grace,
            admin_token=ADMIN_TOKEN,
            tls=tls,
            limits=limits,
            hosting=hosting,
            relay_token=relay_token,
            people=people,
            on_analysed=on_analysed,
        )
        if cluster is not None:
            config = dataclasses.replace(
                config,
                role=cluster.role,
                nats=cluster.nats,
                node=cluster.node,
                cluster=cluster.name,
                lease_seconds=cluster.lease_seconds,
            )
        self.config = config
        self.served: App | Gateway = (
            Gateway(config, storage) if config.role == ROLE_GATEWAY else App(config, storage)
        )
        self.port = 0
        self.error: BaseException | None = None
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._main, daemon=True)
        self._thread.start()
        assert self._ready.wait(WAIT), "the referee did not start"
        if self.error is not None:
            raise self.error
        if tls is None:
            self.channel = grpc.insecure_channel(self.address)
        else:
            assert credentials is not None, "a TLS referee needs the test channel's credentials"
            self.channel = grpc.secure_channel(self.address, credentials)
        self.admin = admin_pb_grpc.AdminServiceStub(
            grpc.intercept_channel(self.channel, BearerToken(ADMIN_TOKEN))
        )
        self.bots: list[RawBot] = []

    def _main(self) -> None:
        async def body() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            await self.served.serve(self._stop, self._on_ready)

        try:
            asyncio.run(body())
        except BaseException as exc:
            self.error = exc
        finally:
            self._ready.set()

    @property
    def app(self) -> App:
        """The referee (a single one, or a cluster's match host)."""
        assert isinstance(self.served, App), "a gateway has no arena"
        return self.served

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _on_ready(self, port: int) -> None:
        self.port = port
        self._ready.set()

    def bot(self, policy: Policy | None = None) -> RawBot:
        bot = RawBot(self.channel, policy)
        self.bots.append(bot)
        return bot

    def connect(
        self,
        name: str,
        token: str,
        policy: Policy | None = first_legal,
        games: tuple[str, ...] = ALL_GAMES,
    ) -> RawBot:
        """Return a raw bot that is welcomed as ``name``."""
        bot = self.bot(policy)
        bot.hello(name, token, games)
        bot.wait_kind("welcome")
        return bot

    def connected(self) -> dict[str, tuple[tuple[str, ...], int]]:
        response = self.admin.ListConnected(admin_pb.ListConnectedRequest(), timeout=WAIT)
        return {b.name: (tuple(b.games), b.matches) for b in response.bots}

    def stop(self) -> None:
        """Shut the referee down the way SIGTERM does, and wait for its thread."""
        if self._thread.is_alive():
            assert self._loop is not None and self._stop is not None
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(WAIT)
            assert not self._thread.is_alive(), "the referee did not stop"
        if self.error is not None:
            raise self.error

    def close(self) -> None:
        for bot in self.bots:
            bot.call.cancel()
        self.stop()
        self.channel.close()

"""One stream to the referee: dial, hello and welcome, then read, route and write.

The reader never blocks: each message goes to its match's queue (:mod:`.matches`) and the
matches' replies are gathered into as few writes as possible.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, NoReturn

import grpc

from domino_arena.sdk.rules import GAMES
from domino_arena.v1 import referee_pb2, referee_pb2_grpc

from .errors import (
    ConnectionLostError,
    ProtocolError,
    RefereeError,
    TakenOverError,
    error_from_message,
    error_from_status,
)
from .matches import Match
from .players import Players
from .tls import ClientTls, TlsHandshakeError, handshake_error

logger: Final = logging.getLogger(__package__)

PROTOCOL_VERSION: Final = 2
"""The version of ``referee.proto`` this client speaks (``Hello.protocol_version``)."""


def _client_name() -> str:
    try:
        version = importlib.metadata.version("domino-arena")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    return f"domino-arena-sdk/{version}"


CLIENT: Final = _client_name()
"""``Hello.client``: which SDK and version is talking."""


def check_games(games: Sequence[str] | None) -> tuple[str, ...]:
    """Return the games to announce in the hello: ``games``, or every registered game.

    Raises:
        ValueError: an empty list, or a name the SDK does not know.
    """
    chosen = tuple(sorted(GAMES)) if games is None else tuple(games)
    unknown = [game for game in chosen if game not in GAMES]
    if unknown or not chosen:
        raise ValueError(
            f"unknown game(s) {', '.join(unknown) or '(none given)'}: "
            f"expected some of {', '.join(sorted(GAMES))}"
        )
    return chosen


@dataclass(frozen=True, slots=True)
class Welcome:
    """The referee accepted the bot."""

    name: str
    protocol_version: int
    games: tuple[str, ...]
    """The games the referee will seat the bot in."""


class Connection:
    """One stream to the referee: hello, welcome, then every match seated on it.

    ``await Connection(Players(MyBot), server=..., name=..., token=...).serve()`` returns only
    by raising; :func:`~domino_arena.sdk.runner.run_async` is the loop that reconnects.
    """

    def __init__(
        self,
        players: Players,
        *,
        server: str,
        name: str,
        token: str,
        games: Sequence[str] | None = None,
        channel_options: Sequence[tuple[str, int | str]] = (),
        tls: ClientTls | None = None,
    ) -> None:
        """Prepare a connection; nothing is dialled until :meth:`serve`.

        ``tls``: dial with TLS (see :func:`~.tls.client_tls`); None: plaintext.

        Raises:
            ValueError: a game name the SDK does not know.
        """
        self.players = players
        self.server = server
        self.name = name
        self.games = check_games(games)
        self.welcome: Welcome | None = None
        """Set once the referee welcomed the bot."""
        self._token = token
        self._channel_options = tuple(channel_options)
        self._tls = tls
        self._matches: dict[str, Match] = {}
        self._fatal: RefereeError | None = None
        self._call: grpc.aio.StreamStreamCall[referee_pb2.BotMessage, referee_pb2.RefereeMessage]
        self._replies: list[referee_pb2.ActionReply] = []
        """Replies waiting to be written, oldest first."""
        self._writing = False

    async def serve(self) -> NoReturn:
        """Dial, authenticate and serve until the stream ends, then raise.

        Raises:
            AuthenticationError: the referee does not know this name and token, or the bot is
                disabled or deleted, or an admin withdrew the token while it was connected
                (the message says which: "token rotated", "bot disabled", "bot deleted").
            ProtocolError: the referee refused the hello for another lasting reason.
            TakenOverError: another stream of this bot took over its seats.
            ConnectionLostError: the referee could not be reached, or the stream ended.
            TlsHandshakeError: the TLS handshake failed (a wrong CA, a plaintext referee).
            RefereeError: another refusal from the referee (retryable).
        """
        if self._tls is None:
            channel = grpc.aio.insecure_channel(self.server, options=self._channel_options)
        else:
            channel = grpc.aio.secure_channel(
                self.server, self._tls.credentials(), options=self._channel_options
            )
        async with channel as ch:
            stub = referee_pb2_grpc.BotServiceStub(ch)
            self._call = stub.Play()
            try:
                await self._hello()
                while self._fatal is None:
                    message = await self._read()
                    self._dispatch(message, time.monotonic())
                raise self._fatal
            finally:
                self._call.cancel()
                await self._stop_matches()

    # -- the stream ---------------------------------------------------------------------------

    async def _hello(self) -> None:
        hello = referee_pb2.Hello(
            name=self.name,
            token=self._token,
            games=self.games,
            protocol_version=PROTOCOL_VERSION,
            client=CLIENT,
        )
        logger.info(
            "connecting to %s as '%s' (games: %s)", self.server, self.name, ", ".join(self.games)
        )
        await self._send(referee_pb2.BotMessage(hello=hello))
        first = await self._read()
        kind = first.WhichOneof("message")
        if kind == "error":
            raise error_from_message(first.error)
        if kind != "welcome":
            raise ProtocolError("UNEXPECTED", f"expected Welcome after Hello, got {kind}")
        welcome = first.welcome
        self.welcome = Welcome(welcome.name, welcome.protocol_version, tuple(welcome.games))
        logger.info(
            "welcomed by %s as '%s' (protocol %d, games: %s)",
            self.server,
            welcome.name,
            welcome.protocol_version,
            ", ".join(welcome.games),
        )

    async def _read(self) -> referee_pb2.RefereeMessage:
        try:
            message = await self._call.read()
        except grpc.aio.AioRpcError as exc:
            raise self._status_error(exc.code(), exc.details() or "") from None
        if message is grpc.aio.EOF:
            raise ConnectionLostError("CLOSED", "the referee closed the stream")
        assert isinstance(message, referee_pb2.RefereeMessage)
        return message

    async def _send(self, message: referee_pb2.BotMessage) -> None:
        """Write one message (the hello, then only :meth:`_queue_reply` writes)."""
        try:
            await self._call.write(message)
        except grpc.aio.AioRpcError as exc:
            raise self._status_error(exc.code(), exc.details() or "") from None
        except asyncio.InvalidStateError:
            code = await self._call.code()
            raise self._status_error(code, await self._call.details()) from None

    def _status_error(self, code: grpc.StatusCode, details: str) -> RefereeError:
        """The error of a failed call: a failed TLS handshake in its own words, else by status."""
        if code is grpc.StatusCode.UNAVAILABLE and self.welcome is None:
            tls_message = handshake_error(self.server, self._tls, details)
            if tls_message is not None:
                return TlsHandshakeError("TLS_HANDSHAKE", tls_message)
        return error_from_status(code, details)

    async def _queue_reply(self, reply: referee_pb2.ActionReply) -> None:
        """Send ``reply``: soon if nothing is being written, else with the write after this one.

        The first match to reply while the stream is idle writes, and goes on writing what the
        other matches queued meanwhile, all in one message (a ReplyBatch when there are more
        than one), so a bot busy in many matches pays for fewer writes. It first lets the
        event loop run once, so the matches answering requests that arrived together (a
        RefereeBatch) join its first write; an idle bot waits for nothing else.

        Raises:
            RefereeError: the stream is gone (the reader ends the connection).
        """
        self._replies.append(reply)
        if self._writing:
            return
        self._writing = True
        try:
            await asyncio.sleep(0)
            while self._replies:
                replies, self._replies = self._replies, []
                if len(replies) == 1:
                    message = referee_pb2.BotMessage(reply=replies[0])
                else:
                    batch = referee_pb2.ReplyBatch(replies=replies)
                    message = referee_pb2.BotMessage(replies=batch)
                await self._send(message)
        finally:
            self._writing = False

    def _dispatch(
        self, message: referee_pb2.RefereeMessage, received: float, *, batched: bool = False
    ) -> None:
        """Route one message to its match's queue (never blocks: the reader must keep reading)."""
        kind = message.WhichOneof("message")
        if kind == "batch" and not batched:
            for inner in message.batch.messages:
                self._dispatch(inner, received, batched=True)
            return
        if kind == "error":
            error = error_from_message(message.error)
            if message.error.code == referee_pb2.ERROR_CODE_ALREADY_CONNECTED:
                self._fatal = TakenOverError(error.code, error.message)
                return
            if message.error.code == referee_pb2.ERROR_CODE_UNAUTHENTICATED:
                # an admin withdrew the token (rotated, disabled, deleted): the stream ends
                self._fatal = error
                return
            where = f"match {error.match_id}: " if error.match_id else ""
            logger.warning("%s%s", where, error)
            return
        if kind is None or kind == "welcome" or kind == "batch":
            what = "batch in a batch" if kind == "batch" else kind or "empty"
            logger.warning("ignored an unexpected %s message from the referee", what)
            return
        body = getattr(message, kind)
        match_id: str = body.match_id
        match = self._matches.get(match_id)
        if match is None:
            match = self._open_match(match_id, kind)
            if match is None:
                return
        if kind == "request":
            match.latest_turn = max(match.latest_turn, body.turn)
        match.inbox.put_nowait((message, received))
        if kind == "match_end":
            match.ended = True
            del self._matches[match_id]

    def _open_match(self, match_id: str, kind: str) -> Match | None:
        if kind in ("match_start", "request"):
            if kind == "request":
                logger.warning("match %s: a request before its MatchStart; answering it", match_id)
            try:
                player = self.players.for_match(match_id)
            except Exception:
                logger.exception("match %s: could not make a bot for it", match_id)
                return None
        else:
            found = self.players.existing(match_id)
            if found is None or kind != "match_end":
                logger.debug("match %s: dropped %s for a match not played here", match_id, kind)
                return None
            player = found
        match = Match(match_id, player, self.players, self._queue_reply)
        match.task = asyncio.create_task(match.serve(), name=f"match {match_id}")
        self._matches[match_id] = match
        return match

    async def _stop_matches(self) -> None:
        tasks = [match.task for match in self._matches.values() if match.task is not None]
        self._matches.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.players.connection_lost(welcomed=self.welcome is not None)

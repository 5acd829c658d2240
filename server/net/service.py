"""The bots' ``Play`` stream: authenticate, then bridge the stream to the bot's seats.

It runs in asyncio (grpc.aio); matches run in trio (:mod:`.arena`). The two meet only through
plain calls on one thread: the handler reads the stream and routes each reply to its seat (the
seat's inbox, which wakes the match's trio task); what the seats queue in the connection's
outbox is written by a :class:`~.stream_writer.StreamWriter`, all that waits in one write, with
no task of its own while nothing waits. A gRPC read is never cancelled by a deadline: the
referee's deadlines act on the seat's inbox; only the stream's end stops it.

The first message must be a Hello with a known, enabled bot's name, its token, and games the
referee knows (or a person's seat name ``person:NAME#N`` and its one-time seat token, checked
against the people's tickets and never the bots' table: docs/people.md); otherwise the bot
gets an in-band :class:`Error` and the stream ends with UNAUTHENTICATED or INVALID_ARGUMENT, and
nothing changes (another stream of that bot keeps its
seats). A second authenticated stream of a connected bot takes over its seats (see
:mod:`.lobby`).

Every stream is bounded (:mod:`.limits`): the Hello must come within
:data:`~.limits.HELLO_TIMEOUT` (else DEADLINE_EXCEEDED), replies are limited to
:data:`~.limits.REPLIES_PER_SECOND` (a token bucket), and the outbox and the seats' inboxes are
bounded; past a bound the bot gets an in-band Error naming it and the stream ends with
RESOURCE_EXHAUSTED. A message whose bytes do not decode gets an in-band MALFORMED Error and
ends the stream with INVALID_ARGUMENT, before or after the Hello.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Final, Protocol

import grpc
from google.protobuf.message import DecodeError

from domino_arena.sdk.rules import GAMES
from domino_arena.server.logs import LogBudget, quote
from domino_arena.server.metrics import Metrics
from domino_arena.server.names import PERSON_SEAT, is_person
from domino_arena.server.net.limits import (
    DEFAULT_LIMITS,
    ECHO_CHARS,
    StreamLimits,
    TokenBucket,
    echo,
    peer_host,
)
from domino_arena.server.net.lobby import Connection, Lobby
from domino_arena.server.net.stream_writer import StreamWriter
from domino_arena.server.play.arena import LOG, SHUTTING_DOWN
from domino_arena.server.store.bots import NAME_PATTERN, BotCheck
from domino_arena.v1 import referee_pb2 as pb
from domino_arena.v1 import referee_pb2_grpc as pb_grpc

PROTOCOL_VERSION: Final = 2

_Context = grpc.aio.ServicerContext[pb.BotMessage, pb.RefereeMessage]


class HelloError(Exception):
    """A first message the referee refuses: the in-band error and the stream's final status."""

    def __init__(
        self, code: pb.ErrorCode.ValueType, message: str, field: str, status: grpc.StatusCode
    ) -> None:
        super().__init__(message)
        self.error = pb.Error(code=code, message=message, field=field)
        self.status = status


def check_hello(message: object) -> pb.Hello:
    """Return the Hello in ``message`` if its shape is right (credentials are checked later).

    Raises:
        HelloError: not a Hello, or a field is missing or wrong; it names the field.
    """
    bad = pb.ERROR_CODE_BAD_HELLO
    invalid = grpc.StatusCode.INVALID_ARGUMENT
    if not isinstance(message, pb.BotMessage):
        raise HelloError(bad, "the stream ended before a Hello", "hello", invalid)
    kind = message.WhichOneof("message")
    if kind != "hello":
        raise HelloError(
            bad, f"the first message must be a Hello, got {kind or 'nothing'}", "hello", invalid
        )
    hello = message.hello
    if hello.protocol_version != PROTOCOL_VERSION:
        raise HelloError(
            bad,
            f"protocol version {hello.protocol_version} is not supported "
            f"(this referee speaks version {PROTOCOL_VERSION})",
            "hello.protocol_version",
            invalid,
        )
    if not hello.name:
        raise HelloError(bad, "the bot name is empty", "hello.name", invalid)
    if is_person(hello.name):
        if not PERSON_SEAT.fullmatch(hello.name):
            raise HelloError(
                pb.ERROR_CODE_UNAUTHENTICATED,
                f"bad person seat name {quote(hello.name[:80])} ({len(hello.name)} characters): "
                "a person's seat is person:NAME#N, as TableService.SeatPerson named it",
                "hello.name",
                grpc.StatusCode.UNAUTHENTICATED,
            )
    elif not NAME_PATTERN.match(hello.name):  # checked before the name is echoed or logged
        raise HelloError(
            pb.ERROR_CODE_UNAUTHENTICATED,
            f"bad bot name {quote(hello.name)} ({len(hello.name)} characters): a bot name is "
            "1-64 letters, digits, '_', '.' or '-', starting with a letter or digit",
            "hello.name",
            grpc.StatusCode.UNAUTHENTICATED,
        )
    if not hello.token:
        raise HelloError(bad, "the token is empty", "hello.token", invalid)
    return hello


def check_games(hello: pb.Hello) -> tuple[str, ...]:
    """Return the games of ``hello``, sorted; every one must be a game the referee knows."""
    known = ", ".join(sorted(GAMES))
    if not hello.games:
        raise HelloError(
            pb.ERROR_CODE_UNKNOWN_GAME,
            f"no games listed: name at least one of {known}",
            "hello.games",
            grpc.StatusCode.INVALID_ARGUMENT,
        )
    for name in hello.games:
        if name not in GAMES:
            raise HelloError(
                pb.ERROR_CODE_UNKNOWN_GAME,
                f"unknown game {quote(name)}: expected one of {known}",
                "hello.games",
                grpc.StatusCode.INVALID_ARGUMENT,
            )
    return tuple(sorted(set(hello.games)))


_REFUSALS: Final[dict[BotCheck, tuple[str, str]]] = {
    BotCheck.UNKNOWN: (
        "unknown bot '{name}' (an admin creates it with 'domino-arena bot create {name}')",
        "hello.name",
    ),
    BotCheck.WRONG_TOKEN: ("wrong token for bot '{name}'", "hello.token"),
    BotCheck.DISABLED: (
        "bot '{name}' is disabled (an admin enables it with 'domino-arena bot enable {name}')",
        "hello.name",
    ),
    BotCheck.DELETED: ("bot '{name}' was deleted: its name cannot connect again", "hello.name"),
    BotCheck.OWNER_DISABLED: (
        "the owner of bot '{name}' is disabled by the course's organizer: its bots may connect "
        "again once the owner is enabled",
        "hello.name",
    ),
}
"""Why a token check refuses a bot: the message (of its name) and the field it concerns."""


def refuse_credentials(name: str, check: BotCheck) -> None:
    """Raise the UNAUTHENTICATED :class:`HelloError` of ``check``, unless it is OK.

    A wrong token is "wrong token" whatever the bot's state: only the right token learns that
    its bot is disabled (server/store/bots.py).
    """
    if check is BotCheck.OK:
        return
    message, field = _REFUSALS[check]
    raise HelloError(
        pb.ERROR_CODE_UNAUTHENTICATED,
        message.format(name=name),
        field,
        grpc.StatusCode.UNAUTHENTICATED,
    )


class TokenCheck(Protocol):
    """What the bot service asks the storage: is this the bot's token (blocking)?"""

    def check_bot(self, name: str, token: str) -> BotCheck: ...


class SeatTickets(Protocol):
    """What the bot service asks of people's seats (``server/play/people.py``'s ``Table``):
    admit the stream ``seat_name`` with ``token`` once; None if admitted, else why not."""

    def admit(self, seat_name: str, token: str) -> str | None: ...


def admit_person(tickets: SeatTickets | None, hello: pb.Hello) -> None:
    """Admit a person's seat by its ticket, never the bots' table (docs/people.md).

    Raises:
        HelloError: UNAUTHENTICATED, saying why (no people on this referee, a wrong or used
            token, an expired or unknown seat).
    """
    why = (
        "this referee seats no people"
        if tickets is None
        else tickets.admit(hello.name, hello.token)
    )
    if why is not None:
        raise HelloError(
            pb.ERROR_CODE_UNAUTHENTICATED, why, "hello.token", grpc.StatusCode.UNAUTHENTICATED
        )


class BotServicer(pb_grpc.BotServiceServicer):
    """``Play``: authenticate, then bridge the stream to the bot's seats until it ends.

    ``lobby`` admits the authenticated streams, ``storage`` checks the tokens, ``metrics``
    times the checks and ``limits`` bound every stream.
    """

    def __init__(
        self,
        lobby: Lobby,
        storage: TokenCheck,
        metrics: Metrics,
        limits: StreamLimits = DEFAULT_LIMITS,
        tickets: SeatTickets | None = None,
    ) -> None:
        self.lobby = lobby
        self.tickets = tickets
        """People's seats (None: a person's Hello is refused)."""
        self.storage = storage
        self.metrics = metrics
        self.limits = limits
        self.refusals_logged = LogBudget()
        """Refused Hellos logged per client address: 5, then one a minute."""

    async def Play(  # type: ignore[override]  # noqa: N802
        self, request_iterator: AsyncIterator[pb.BotMessage], context: _Context
    ) -> None:
        connection = await self._authenticate(context)
        if connection is None:
            return
        handler = asyncio.current_task()
        assert handler is not None
        # One task per stream, this one, which reads; the writes run only while something
        # waits to be written (server/net/stream_writer.py).
        writer = StreamWriter(connection, context, handler, self.limits.close_grace)
        try:
            writer.reading(True)
            try:
                await self._read(connection, context)
            except asyncio.CancelledError:
                if not writer.interrupted() or handler.uncancel() > 0:
                    raise
            finally:
                writer.reading(False)
            end = await writer.ended()
            if end.status is not None:
                await context.abort(end.status, end.details)
        finally:
            writer.stop()
            self.lobby.disconnect(connection)

    async def _first(self, context: _Context) -> object:
        """Return the first message; a late or undecodable one raises :class:`HelloError`."""
        timeout = self.limits.hello_timeout
        try:
            return await asyncio.wait_for(context.read(), timeout)
        except TimeoutError:
            raise HelloError(
                pb.ERROR_CODE_BAD_HELLO,
                f"no Hello within {timeout:g} s of the stream's start (the Hello deadline)",
                "hello",
                grpc.StatusCode.DEADLINE_EXCEEDED,
            ) from None
        except DecodeError:
            raise HelloError(
                pb.ERROR_CODE_MALFORMED,
                "the first message does not decode as a BotMessage: a Hello is expected",
                "hello",
                grpc.StatusCode.INVALID_ARGUMENT,
            ) from None

    async def _authenticate(self, context: _Context) -> Connection | None:
        """Read the Hello and admit the bot; on refusal send the Error and end the stream."""
        lobby = self.lobby
        first: object = None
        refusal: tuple[pb.Error, grpc.StatusCode, str] | None = None
        try:
            first = await self._first(context)
            if lobby.closing:
                raise HelloError(
                    pb.ERROR_CODE_SHUTTING_DOWN, SHUTTING_DOWN, "", grpc.StatusCode.UNAVAILABLE
                )
            hello = check_hello(first)
            if is_person(hello.name):
                games = check_games(hello)
                admit_person(self.tickets, hello)  # last: a ticket admits once
            else:
                refuse_credentials(hello.name, await self.check_credentials(hello))
                games = check_games(hello)
            if lobby.closing:  # shutdown began during the token check
                raise HelloError(
                    pb.ERROR_CODE_SHUTTING_DOWN, SHUTTING_DOWN, "", grpc.StatusCode.UNAVAILABLE
                )
        except HelloError as exc:
            # Only the refusal's fields leave this block: the exception's traceback holds the
            # frames that hold the message (a Hello may be megabytes), and an exception kept
            # alive through the abort below is freed only by a (rare: app.py) cyclic collection.
            refusal = (exc.error, exc.status, str(exc))
        if refusal is not None:
            first = None
            error, status, reason = refusal
            peer = context.peer() or ""
            log, held = self.refusals_logged.allow(peer_host(peer))
            if log:
                more = f" ({held} more from this address not logged)" if held else ""
                LOG.info("hello refused: peer=%s reason=%s%s", peer, reason, more)
            await context.write(pb.RefereeMessage(error=error))
            await context.abort(status, reason)
        connection = Connection(
            hello.name,
            games,
            peer=context.peer(),
            client=hello.client,
            outbox_limit=self.limits.outbox_messages,
        )
        connection.send(
            pb.RefereeMessage(
                welcome=pb.Welcome(
                    name=hello.name, protocol_version=PROTOCOL_VERSION, games=connection.games
                )
            )
        )
        old = lobby.connect(connection)
        if old is not None:
            old.close(
                grpc.StatusCode.ABORTED,
                f"another stream of bot '{hello.name}' took over",
                pb.Error(
                    code=pb.ERROR_CODE_ALREADY_CONNECTED,
                    message=f"another stream of bot '{hello.name}' took over its seats",
                ),
            )
        return connection

    async def check_credentials(self, hello: pb.Hello) -> BotCheck:
        """Ask the storage whether the Hello's token admits its bot (in a worker thread).

        Checked again if the bot's token was withdrawn while the check ran (the lobby's
        revocation count moved), so a rotated token cannot connect after its streams were
        closed.
        """
        while True:
            seen = self.lobby.revocations(hello.name)
            try:
                with self.metrics.storage("check_bot"):
                    check = await asyncio.to_thread(self.storage.check_bot, hello.name, hello.token)
            except Exception as exc:  # the database is down: a failure of ours, worth a retry
                LOG.exception("token check failed: name=%s", hello.name)
                raise HelloError(
                    pb.ERROR_CODE_UNSPECIFIED,
                    f"the referee cannot check tokens now ({type(exc).__name__}); retry later",
                    "",
                    grpc.StatusCode.UNAVAILABLE,
                ) from None
            if self.lobby.revocations(hello.name) == seen:
                return check

    async def _read(self, connection: Connection, context: _Context) -> None:
        """Route what the bot sends until its stream ends; never cancelled by a deadline."""
        limits = self.limits
        bucket = TokenBucket(limits.replies_per_second, limits.reply_burst, limits.clock)
        try:
            while not connection.closed:
                try:
                    message: object = await context.read()
                except DecodeError:
                    connection.cut(
                        "a message does not decode as a BotMessage (its bytes are corrupt "
                        "or of another type)",
                        "message",
                        grpc.StatusCode.INVALID_ARGUMENT,
                        pb.ERROR_CODE_MALFORMED,
                    )
                    break
                if not isinstance(message, pb.BotMessage):
                    break  # the bot closed its side: treated as a disconnection
                self._on_message(connection, message, bucket)
        except Exception as exc:  # the RPC ended under the read; the handler's finally cleans up
            LOG.debug("stream read ended: %r (%s)", connection, type(exc).__name__)
        finally:
            connection.close()

    def _on_message(
        self, connection: Connection, message: pb.BotMessage, bucket: TokenBucket
    ) -> None:
        kind = message.WhichOneof("message")
        if kind == "reply":
            self._on_reply(connection, message.reply, "reply", bucket)
            return
        if kind == "replies":
            for index, reply in enumerate(message.replies.replies):
                if connection.closed:
                    return
                self._on_reply(connection, reply, f"replies.replies[{index}]", bucket)
            return
        what = "a second Hello" if kind == "hello" else "an empty message"
        connection.send(
            pb.RefereeMessage(
                error=pb.Error(
                    code=pb.ERROR_CODE_MALFORMED,
                    message=f"{what}: after the Hello only replies are expected",
                    field="message",
                )
            )
        )

    def _on_reply(
        self, connection: Connection, reply: pb.ActionReply, where: str, bucket: TokenBucket
    ) -> None:
        if not bucket.take():
            limits = self.limits
            connection.cut(
                f"more than {limits.replies_per_second:g} replies a second (bursts of "
                f"{limits.reply_burst}) on this stream (the reply rate limit)",
                "limits.replies_per_second",
            )
            return
        if not connection.route(reply):
            connection.send(
                pb.RefereeMessage(
                    error=pb.Error(
                        code=pb.ERROR_CODE_UNKNOWN_MATCH,
                        message=f"bot '{connection.name}' plays no match "
                        f"{echo(reply.match_id)} on this stream",
                        field=f"{where}.match_id",
                        match_id=reply.match_id[:ECHO_CHARS],
                    )
                )
            )

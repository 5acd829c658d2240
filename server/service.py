"""The gRPC servicers: the bots' ``Play`` stream and the admin API (RunMatch, ListConnected).

Both run in asyncio (grpc.aio); matches run in trio, in the nursery the app gives the
:class:`Arena` (DESIGN.md decision 10). The two meet only through plain calls on one thread:
the ``Play`` handler reads the stream and routes each reply to its seat (the seat's inbox, which
wakes the match's trio task), and writes what the seats queue in the connection's
``asyncio.Queue``, all that waits in one write. A gRPC read is never cancelled by a deadline:
the referee's deadlines act on the seat's inbox.

``Play``: the first message must be a Hello with a known bot name, its token, and games the
referee knows; otherwise the bot gets an in-band :class:`Error` and the stream ends with
UNAUTHENTICATED or INVALID_ARGUMENT, and nothing changes (another stream of that bot keeps its
seats). A second authenticated stream of a connected bot takes over its seats (see
:mod:`.lobby`).

``RunMatch`` starts one match between connected bots and answers when it ends, with the result
and the JSON Lines record; the match is stored before the answer. A match does not depend on
the admin call that started it: if the caller goes away, the match still ends and is stored.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import secrets
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Final

import grpc
import trio

from domino_arena.sdk.convert import ConversionError, game_from_proto
from domino_arena.sdk.records import record_lines
from domino_arena.sdk.rules import GAMES, Game
from domino_arena.v1 import referee_pb2 as pb
from domino_arena.v1 import referee_pb2_grpc as pb_grpc

from .lobby import Close, Connection, Lobby
from .referee import play_match
from .remote import RemoteSeat, result_to_proto
from .seats import FaultPolicy, MatchResult, Termination
from .storage import MAX_SEED, BotCheck, Storage, StoredMatch
from .timecontrol import TimeControl

LOG: Final = logging.getLogger("domino_arena.server")

PROTOCOL_VERSION: Final = 2
DEFAULT_MAX_STRIKES: Final = 3
SHUTTING_DOWN: Final = "referee shutting down"

_Context = grpc.aio.ServicerContext[pb.BotMessage, pb.RefereeMessage]


class NotAcceptingError(Exception):
    """The arena is starting or shutting down: no match can start."""


class MatchAbortedError(Exception):
    """The referee shut down while the match was running."""


@dataclass(frozen=True, slots=True)
class MatchSpec:
    """One match to run: the game, a connected bot per seat, the seed and the policies."""

    game: Game
    bots: tuple[str, ...]
    seed: int
    time_control: TimeControl = field(default_factory=TimeControl)
    fault_policy: FaultPolicy = FaultPolicy.SUBSTITUTE
    max_strikes: int = DEFAULT_MAX_STRIKES
    match_id: str = field(default_factory=lambda: uuid.uuid4().hex)


@dataclass(frozen=True, slots=True)
class FinishedMatch:
    """What :meth:`Arena.run_match` returns: the stored row's content."""

    spec: MatchSpec
    result: MatchResult
    record: str | None


@dataclass
class Arena:
    """What the servicers share: the lobby, the storage and the trio nursery of the matches."""

    storage: Storage
    reconnect_grace: float = 10.0
    lobby: Lobby = field(default_factory=Lobby)
    nursery: trio.Nursery | None = None
    """Set by the app while trio runs; None before and after."""
    shutting_down: bool = False
    running: dict[str, list[RemoteSeat]] = field(default_factory=dict)
    """The match id -> its seats, while it runs."""

    async def run_match(self, spec: MatchSpec) -> FinishedMatch:
        """Run ``spec`` in the trio nursery and return once it is over and stored (asyncio side).

        Raises:
            NotAcceptingError: the arena is not running.
            MatchAbortedError: the referee shut down during the match.
        """
        if self.nursery is None or self.shutting_down:
            raise NotAcceptingError(SHUTTING_DOWN if self.shutting_down else "referee starting")
        done: asyncio.Future[FinishedMatch] = asyncio.get_running_loop().create_future()
        self.nursery.start_soon(self._match_task, spec, done, name=f"match {spec.match_id}")
        # The match owns itself: cancelling this call (the admin went away) does not stop it.
        return await asyncio.shield(done)

    async def _match_task(self, spec: MatchSpec, done: asyncio.Future[FinishedMatch]) -> None:
        """Play one match with its own error boundary: nothing it raises reaches the nursery."""
        seats = [RemoteSeat(self.lobby, name, spec.match_id) for name in spec.bots]
        self.running[spec.match_id] = seats
        self.lobby.seated.update(spec.bots)
        LOG.info(
            "match started: id=%s game=%s bots=%s seed=%d",
            spec.match_id,
            spec.game.describe(),
            ",".join(spec.bots),
            spec.seed,
        )
        finished: FinishedMatch | None = None
        try:
            report = await play_match(
                spec.game,
                seats,
                match_id=spec.match_id,
                seed=spec.seed,
                time_control=spec.time_control,
                fault_policy=spec.fault_policy,
                max_strikes=spec.max_strikes,
                reconnect_grace=self.reconnect_grace,
            )
            record = "".join(line + "\n" for line in record_lines(report.record))
            finished = FinishedMatch(spec, report.result, record)
        except Exception as exc:  # our failure: the match is void, never charged to a bot
            LOG.exception("match failed: id=%s", spec.match_id)
            void = MatchResult(
                Termination.VOID,
                None,
                (0,) * len(spec.game.sides),
                detail=f"the referee failed: {type(exc).__name__}: {exc}",
            )
            finished = FinishedMatch(spec, void, None)
        except BaseException:  # cancelled: the referee is shutting down
            aborted = MatchResult(
                Termination.ABORTED,
                None,
                (0,) * len(spec.game.sides),
                detail=SHUTTING_DOWN,
            )
            for seat in seats:
                seat.end(aborted)
            _settle(
                done, error=MatchAbortedError(f"match {spec.match_id} aborted: {SHUTTING_DOWN}")
            )
            LOG.info("match aborted: id=%s", spec.match_id)
            raise
        finally:
            for seat in seats:
                if finished is not None:
                    seat.end(finished.result)
                seat.close()
            del self.running[spec.match_id]
            self.lobby.unseat(spec.bots)
        try:
            # A finished match is written whole even if shutdown begins meanwhile.
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(self.storage.save_match, _row(finished))
        except Exception as exc:
            LOG.exception("match not stored: id=%s", spec.match_id)
            _settle(done, error=exc)
            return
        LOG.info(
            "match ended: id=%s termination=%s winner=%s scores=%s%s",
            spec.match_id,
            finished.result.termination.value,
            finished.result.winner,
            "/".join(str(s) for s in finished.result.scores),
            f" detail={finished.result.detail!r}" if finished.result.detail else "",
        )
        _settle(done, result=finished)


def _settle(
    future: asyncio.Future[FinishedMatch],
    *,
    result: FinishedMatch | None = None,
    error: BaseException | None = None,
) -> None:
    if future.done():  # the loop is closing, or nobody waits any more
        return
    if error is not None:
        future.set_exception(error)
    else:
        assert result is not None
        future.set_result(result)


def _row(finished: FinishedMatch) -> StoredMatch:
    spec, result = finished.spec, finished.result
    return StoredMatch(
        id=spec.match_id,
        game=spec.game.name,
        options=spec.game.options(),
        seats=spec.bots,
        seed=spec.seed,
        termination=result.termination.value,
        winner=result.winner,
        scores=result.scores,
        faulted_seat=result.faulted_seat,
        fault=None if result.fault is None else result.fault.value,
        detail=result.detail,
        record=finished.record,
        created=dt.datetime.now(dt.UTC),
    )


# -- the bot stream -----------------------------------------------------------------------------


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
                f"unknown game '{name}': expected one of {known}",
                "hello.games",
                grpc.StatusCode.INVALID_ARGUMENT,
            )
    return tuple(sorted(set(hello.games)))


class BotServicer(pb_grpc.BotServiceServicer):
    """``Play``: authenticate, then bridge the stream to the bot's seats until it ends."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena

    async def Play(  # type: ignore[override]  # noqa: N802
        self, request_iterator: AsyncIterator[pb.BotMessage], context: _Context
    ) -> None:
        connection = await self._authenticate(context)
        if connection is None:
            return
        reader = asyncio.create_task(self._read(connection, context))
        try:
            while True:
                item = await connection.next_write()
                if isinstance(item, Close):
                    if item.status is not None:
                        await context.abort(item.status, item.details)
                    return
                await context.write(item)
        finally:
            reader.cancel()
            self.arena.lobby.disconnect(connection)

    async def _authenticate(self, context: _Context) -> Connection | None:
        """Read the Hello and admit the bot; on refusal send the Error and end the stream."""
        lobby = self.arena.lobby
        first: object = await context.read()
        try:
            if lobby.closing:
                raise HelloError(
                    pb.ERROR_CODE_SHUTTING_DOWN, SHUTTING_DOWN, "", grpc.StatusCode.UNAVAILABLE
                )
            hello = check_hello(first)
            try:
                check = await asyncio.to_thread(
                    self.arena.storage.check_bot, hello.name, hello.token
                )
            except Exception as exc:  # the database is down: a failure of ours, worth a retry
                LOG.exception("token check failed: name=%s", hello.name)
                raise HelloError(
                    pb.ERROR_CODE_UNSPECIFIED,
                    f"the referee cannot check tokens now ({type(exc).__name__}); retry later",
                    "",
                    grpc.StatusCode.UNAVAILABLE,
                ) from None
            if check is BotCheck.UNKNOWN:
                raise HelloError(
                    pb.ERROR_CODE_UNAUTHENTICATED,
                    f"unknown bot '{hello.name}' (an admin creates it with "
                    f"'domino-arena bot add {hello.name}')",
                    "hello.name",
                    grpc.StatusCode.UNAUTHENTICATED,
                )
            if check is BotCheck.WRONG_TOKEN:
                raise HelloError(
                    pb.ERROR_CODE_UNAUTHENTICATED,
                    f"wrong token for bot '{hello.name}'",
                    "hello.token",
                    grpc.StatusCode.UNAUTHENTICATED,
                )
            games = check_games(hello)
            if lobby.closing:  # shutdown began during the token check
                raise HelloError(
                    pb.ERROR_CODE_SHUTTING_DOWN, SHUTTING_DOWN, "", grpc.StatusCode.UNAVAILABLE
                )
        except HelloError as exc:
            LOG.info("hello refused: peer=%s reason=%s", context.peer(), exc)
            await context.write(pb.RefereeMessage(error=exc.error))
            await context.abort(exc.status, str(exc))
        connection = Connection(hello.name, games, peer=context.peer(), client=hello.client)
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

    async def _read(self, connection: Connection, context: _Context) -> None:
        """Route what the bot sends until its stream ends; never cancelled by a deadline."""
        try:
            while True:
                message: object = await context.read()
                if not isinstance(message, pb.BotMessage):
                    break  # the bot closed its side: treated as a disconnection
                self._on_message(connection, message)
        except Exception as exc:  # the RPC ended under the read; the handler's finally cleans up
            LOG.debug("stream read ended: %r (%s)", connection, type(exc).__name__)
        finally:
            connection.close()

    def _on_message(self, connection: Connection, message: pb.BotMessage) -> None:
        kind = message.WhichOneof("message")
        if kind == "reply":
            self._on_reply(connection, message.reply, "reply")
            return
        if kind == "replies":
            for index, reply in enumerate(message.replies.replies):
                self._on_reply(connection, reply, f"replies.replies[{index}]")
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

    def _on_reply(self, connection: Connection, reply: pb.ActionReply, where: str) -> None:
        if not connection.route(reply):
            connection.send(
                pb.RefereeMessage(
                    error=pb.Error(
                        code=pb.ERROR_CODE_UNKNOWN_MATCH,
                        message=f"bot '{connection.name}' plays no match '{reply.match_id}' "
                        "on this stream",
                        field=f"{where}.match_id",
                        match_id=reply.match_id,
                    )
                )
            )


# -- the admin API ------------------------------------------------------------------------------


FAULT_POLICY_FROM_PROTO: Final[dict[pb.FaultPolicy.ValueType, FaultPolicy]] = {
    pb.FAULT_POLICY_UNSPECIFIED: FaultPolicy.SUBSTITUTE,
    pb.FAULT_POLICY_FORFEIT: FaultPolicy.FORFEIT,
    pb.FAULT_POLICY_SUBSTITUTE: FaultPolicy.SUBSTITUTE,
}


class RequestError(Exception):
    """An admin request the referee refuses, with the status to answer."""

    def __init__(self, status: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.status = status


def match_spec(request: pb.RunMatchRequest, lobby: Lobby) -> MatchSpec:
    """Check ``request`` against the game and the lobby and return the match to run.

    Raises:
        RequestError: INVALID_ARGUMENT for a bad game, seat count, seed, time control or
            policy; FAILED_PRECONDITION for a bot that is not connected or does not play it.
    """
    invalid = grpc.StatusCode.INVALID_ARGUMENT
    if not request.HasField("game"):
        raise RequestError(invalid, "game: missing")
    try:
        game = game_from_proto(request.game)
    except (ConversionError, ValueError) as exc:
        raise RequestError(invalid, f"game: {exc}") from None
    bots = tuple(request.bots)
    if len(bots) != game.num_players:
        raise RequestError(
            invalid,
            f"bots: {game.describe()} needs {game.num_players} bots, one per seat, got {len(bots)}",
        )
    twice = sorted({b for b in bots if bots.count(b) > 1})
    if twice:
        raise RequestError(
            invalid, f"bots: {', '.join(twice)} listed twice: a bot plays one seat per match"
        )
    for name in bots:
        connection = lobby.get(name)
        if connection is None:
            raise RequestError(
                grpc.StatusCode.FAILED_PRECONDITION, f"bot '{name}' is not connected"
            )
        if game.name not in connection.games:
            raise RequestError(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"bot '{name}' does not play {game.name} (it plays {', '.join(connection.games)})",
            )
    if request.has_seed:
        if request.seed > MAX_SEED:
            raise RequestError(invalid, f"seed: must be at most {MAX_SEED}, got {request.seed}")
        seed = request.seed
    else:
        seed = secrets.randbelow(10**9)
    tc = request.time_control
    try:
        time_control = TimeControl.from_ms(tc.move_ms, tc.bank_ms, tc.grace_ms)
    except ValueError as exc:
        raise RequestError(invalid, f"time_control: {exc}") from None
    policy = FAULT_POLICY_FROM_PROTO.get(request.fault_policy)
    if policy is None:
        raise RequestError(invalid, f"fault_policy: unknown value {request.fault_policy}")
    return MatchSpec(
        game=game,
        bots=bots,
        seed=seed,
        time_control=time_control,
        fault_policy=policy,
        max_strikes=request.max_strikes or DEFAULT_MAX_STRIKES,
    )


class AdminServicer(pb_grpc.AdminServiceServicer):
    """``RunMatch`` and ``ListConnected``."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena

    async def RunMatch(  # noqa: N802
        self,
        request: pb.RunMatchRequest,
        context: grpc.aio.ServicerContext[pb.RunMatchRequest, pb.RunMatchResponse],
    ) -> pb.RunMatchResponse:
        try:
            spec = match_spec(request, self.arena.lobby)
            finished = await self.arena.run_match(spec)
        except RequestError as exc:
            await context.abort(exc.status, str(exc))
        except (NotAcceptingError, MatchAbortedError) as exc:
            await context.abort(grpc.StatusCode.UNAVAILABLE, str(exc))
        except Exception as exc:  # e.g. the database refused the finished match
            await context.abort(
                grpc.StatusCode.INTERNAL,
                f"the match was played but not stored: {type(exc).__name__}: {exc}",
            )
        game = spec.game
        sides = tuple(game.side_of(s) for s in range(game.num_players))
        return pb.RunMatchResponse(
            match_id=spec.match_id,
            result=result_to_proto(finished.result, sides),
            record=finished.record or "",
        )

    async def ListConnected(  # noqa: N802
        self,
        request: pb.ListConnectedRequest,
        context: grpc.aio.ServicerContext[pb.ListConnectedRequest, pb.ListConnectedResponse],
    ) -> pb.ListConnectedResponse:
        lobby = self.arena.lobby
        return pb.ListConnectedResponse(
            bots=[
                pb.ConnectedBot(name=c.name, games=c.games, matches=lobby.seated[c.name])
                for c in lobby.connections()
            ]
        )


SERVICE_NAMES: Final[Sequence[str]] = (
    pb.DESCRIPTOR.services_by_name["BotService"].full_name,
    pb.DESCRIPTOR.services_by_name["AdminService"].full_name,
)
"""The full names of the services defined here (for health checking and reflection)."""

"""The bot's side of the protocol: one gRPC stream to the referee, every match seated on it.

A :class:`Connection` dials the referee (``grpc.aio``), sends ``Hello`` (name, token, the games
the bot plays) and waits for ``Welcome``; an in-band ``Error`` or a refusing gRPC status becomes
a typed exception (:class:`AuthenticationError`, :class:`ProtocolError`, or their base
:class:`RefereeError`, with the referee's code and words). Then it serves the stream:

- ``MatchStart`` picks the bot object for the match (see :class:`Players`) and calls its
  ``on_match_start`` hook;
- ``ActionRequest`` turns the observation into the rules library's own type
  (:mod:`.convert`), calls ``choose`` and replies with an ``ActionReply`` that echoes the match
  id and the turn. A :class:`~.bot.Bot`'s ``choose`` runs in a worker thread, so the stream
  keeps serving the bot's other matches while it thinks; an :class:`~.bot.AsyncBot` is awaited;
- ``HandEnd``, ``Fault`` and ``MatchEnd`` go to the matching hooks;
- the events every one of these messages carries (protocol version 2: the public steps since
  the referee's last message about the match) go to ``on_event`` first, and the client keeps
  the current deal's steps from them: a request's observation comes without its history, and
  the bot gets it whole, exactly as if it had been sent.

Each match has its own task and queue, so its messages reach the bot in order and never
overlap; different matches run concurrently. When ``choose`` raises or returns something that
is not an action, the traceback is logged and the request is answered with an *empty* reply:
the referee faults it as malformed at once, instead of letting the clock run out and drain the
bot's bank. Everything is reported through :mod:`logging` (logger ``domino_arena.sdk.client``).

A connection serves until its stream ends and then raises; :func:`~.runner.run` reconnects.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import importlib.metadata
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Final, NoReturn, TypeAlias

import grpc

from domino_arena.v1 import games_pb2, referee_pb2, referee_pb2_grpc

from .bot import (
    AnyBot,
    AsyncBot,
    Bot,
    Clock,
    FaultInfo,
    HandEndInfo,
    MatchEndInfo,
    MatchEvent,
    MatchStartInfo,
    TimeLimits,
    set_current_clock,
)
from .match.results import FaultKind, FaultPolicy, Termination
from .rules import (
    CHANCE,
    GAMES,
    Action,
    Bid,
    Deal,
    Discard,
    Draw,
    Game,
    LogEntry,
    Observation,
    Pass,
    Play,
    Trump,
)
from .wire import convert

logger = logging.getLogger(__name__)

PROTOCOL_VERSION: Final = 2
"""The version of ``referee.proto`` this client speaks (``Hello.protocol_version``)."""

_ACTION_TYPES: Final = (Play, Draw, Pass, Bid, Discard, Trump, Deal)

WORKER_THREADS: Final = 32
"""Threads that run synchronous bots' ``choose``: as many matches can think at once."""


def _client_name() -> str:
    try:
        version = importlib.metadata.version("domino-arena")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    return f"domino-arena-sdk/{version}"


CLIENT: Final = _client_name()
"""``Hello.client``: which SDK and version is talking."""


# -- errors ---------------------------------------------------------------------------------------


class RefereeError(Exception):
    """The referee refused or ended the connection.

    Attributes:
        code: the referee's code: an ``ErrorCode`` name without its prefix for an in-band
            error (``"UNAUTHENTICATED"``), or a gRPC status name (``"UNAVAILABLE"``).
        message: the referee's own words.
        field: the field of our message it objected to, if it said.
        match_id: the match it concerns, if any.
    """

    retryable: bool = True
    """Whether :func:`~.runner.run` reconnects after this error (with backoff)."""

    def __init__(self, code: str, message: str, *, field: str = "", match_id: str = "") -> None:
        self.code = code
        self.message = message
        self.field = field
        self.match_id = match_id
        where = f" (field '{field}')" if field else ""
        super().__init__(f"referee: {code}: {message or 'no details'}{where}")


class AuthenticationError(RefereeError):
    """Unknown bot name or wrong token. Never retried: register the bot or fix the token."""

    retryable = False


class ProtocolError(RefereeError):
    """The two sides disagree about the protocol (a bad hello, an unknown game, a server that is
    not a Domino Arena referee). Never retried: the same hello would fail the same way."""

    retryable = False


class ConnectionLostError(RefereeError):
    """The stream could not be opened or it ended (referee down, network, shutdown)."""


class TakenOverError(RefereeError):
    """Another stream of this bot authenticated and took over its seats (``ALREADY_CONNECTED``).

    Not retried: the other stream is another process running the same bot, and two processes
    reconnecting in turn would take the seats from each other for ever.
    """

    retryable = False


_IN_BAND: Final[dict[int, type[RefereeError]]] = {
    referee_pb2.ERROR_CODE_UNAUTHENTICATED: AuthenticationError,
    referee_pb2.ERROR_CODE_BAD_HELLO: ProtocolError,
    referee_pb2.ERROR_CODE_UNKNOWN_GAME: ProtocolError,
    referee_pb2.ERROR_CODE_MALFORMED: ProtocolError,
}
"""In-band error codes that end the hello for good; every other code may be retried."""

_STATUS: Final[dict[grpc.StatusCode, type[RefereeError]]] = {
    grpc.StatusCode.UNAUTHENTICATED: AuthenticationError,
    grpc.StatusCode.PERMISSION_DENIED: AuthenticationError,
    grpc.StatusCode.INVALID_ARGUMENT: ProtocolError,
    grpc.StatusCode.UNIMPLEMENTED: ProtocolError,
    grpc.StatusCode.FAILED_PRECONDITION: ProtocolError,
    grpc.StatusCode.ALREADY_EXISTS: RefereeError,
    grpc.StatusCode.ABORTED: TakenOverError,
}
"""gRPC statuses that are the referee's answer; every other one is a lost connection.

The referee ends a stream that another stream of the same bot took over with an in-band
``ALREADY_CONNECTED`` error and then ABORTED; the status alone may arrive first (gRPC reports a
finished call's status before any message still buffered), so ABORTED means a takeover too.
"""


def error_from_message(error: referee_pb2.Error) -> RefereeError:
    """Return the exception for an in-band ``Error`` message."""
    name = referee_pb2.ErrorCode.Name(error.code).removeprefix("ERROR_CODE_")
    cls = _IN_BAND.get(error.code, RefereeError)
    return cls(name, error.message, field=error.field, match_id=error.match_id)


def error_from_status(code: grpc.StatusCode, details: str) -> RefereeError:
    """Return the exception for a stream that ended with gRPC status ``code``."""
    cls = _STATUS.get(code, ConnectionLostError)
    return cls(code.name, details)


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


# -- which bot plays which match ------------------------------------------------------------------

BotFactory: TypeAlias = Callable[[], AnyBot]
BotSource: TypeAlias = AnyBot | BotFactory
"""What :func:`~.runner.run` accepts: a bot object, or a factory (e.g. the bot's class)."""


@dataclass(slots=True)
class _Player:
    """A bot object and the lock that keeps its synchronous calls one at a time."""

    bot: AnyBot
    lock: asyncio.Lock


class Players:
    """Which bot object plays each match, across reconnections.

    - A bot *object* plays every match of the connection. Its calls are made one at a time (a
      lock), so it needs no thread safety, but a slow ``choose`` in one match delays the others.
      Its hooks tell the matches apart by ``match_id``.
    - A *factory* (any callable returning a bot, such as the bot's class) makes a new bot for
      each match, and the matches think in parallel. This is the recommended form for bots
      that keep state about their game.

    A match that resumes after a reconnection gets its old bot object back, hooks and all.
    """

    def __init__(self, source: BotSource) -> None:
        if isinstance(source, Bot | AsyncBot):
            self._shared: _Player | None = _Player(source, asyncio.Lock())
            self._factory: BotFactory | None = None
        elif callable(source):
            self._shared = None
            self._factory = source
        else:
            raise TypeError(
                f"expected a Bot, an AsyncBot or a callable returning one, got {source!r}"
            )
        self._live: dict[str, _Player] = {}
        self._unclaimed: set[str] = set()
        self._threads: ThreadPoolExecutor | None = None

    async def in_thread(
        self, player: _Player, function: Callable[[Observation], object], observation: Observation
    ) -> object:
        """Run ``function(observation)`` in a worker thread, holding the player's lock.

        The lock is let go when the thread is done, not when the caller stops waiting: a call
        cancelled mid-think (its match ended, the connection dropped) still keeps the next
        call to that bot waiting, so a shared bot is never called from two threads at once.
        """
        if self._threads is None:
            self._threads = ThreadPoolExecutor(WORKER_THREADS, thread_name_prefix="bot")
        loop = asyncio.get_running_loop()
        await player.lock.acquire()
        try:
            context = contextvars.copy_context()
            future = self._threads.submit(context.run, function, observation)
        except BaseException:
            player.lock.release()
            raise

        def release(_: object) -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed while the bot thought
                loop.call_soon_threadsafe(player.lock.release)

        future.add_done_callback(release)
        return await asyncio.wrap_future(future)

    def close(self) -> None:
        """Let the worker threads go once they finish what they are doing."""
        if self._threads is not None:
            self._threads.shutdown(wait=False, cancel_futures=True)
            self._threads = None

    def for_match(self, match_id: str) -> _Player:
        """Return the bot for ``match_id``: its own if it had one, else a new (or the shared) one.

        Raises:
            TypeError: the factory returned something that is not a bot.
        """
        if self._shared is not None:
            return self._shared
        self._unclaimed.discard(match_id)
        player = self._live.get(match_id)
        if player is None:
            assert self._factory is not None
            bot = self._factory()
            if not isinstance(bot, Bot | AsyncBot):
                raise TypeError(f"the bot factory returned {bot!r}, not a Bot or an AsyncBot")
            player = self._live[match_id] = _Player(bot, asyncio.Lock())
        return player

    def existing(self, match_id: str) -> _Player | None:
        """Return the bot already playing ``match_id``, if any (never makes one)."""
        return self._shared or self._live.get(match_id)

    def release(self, match_id: str) -> None:
        """Forget the bot of a match that ended."""
        self._live.pop(match_id, None)
        self._unclaimed.discard(match_id)

    def connection_lost(self, *, welcomed: bool) -> None:
        """Keep the bots of unfinished matches for the next welcomed connection.

        A match the referee did not resume during a whole welcomed connection is not coming
        back; attempts that were refused before the welcome do not count.
        """
        if not welcomed:
            return
        for match_id in self._unclaimed:
            self._live.pop(match_id, None)
        self._unclaimed = set(self._live)


# -- one connection -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Welcome:
    """The referee accepted the bot."""

    name: str
    protocol_version: int
    games: tuple[str, ...]
    """The games the referee will seat the bot in."""


_Inbox: TypeAlias = asyncio.Queue[tuple[referee_pb2.RefereeMessage, float]]


class _Match:
    """One match on the connection: its bot, its queue of messages and the task serving it."""

    __slots__ = (
        "ended",
        "game",
        "history",
        "inbox",
        "latest_turn",
        "match_id",
        "player",
        "seat",
        "task",
    )

    def __init__(self, match_id: str, player: _Player) -> None:
        self.match_id = match_id
        self.player = player
        self.inbox: _Inbox = asyncio.Queue()
        self.latest_turn = 0
        """The newest turn the referee asked about; older requests are answered too late."""
        self.ended = False
        """The referee ended the match (its MatchEnd is queued)."""
        self.seat = -1
        self.game: Game | None = None
        self.task: asyncio.Task[None] | None = None
        self.history: list[LogEntry] = []
        """The public steps of the current deal, from the events (a request's observation
        comes without them)."""


class Connection:
    """One stream to the referee: hello, welcome, then every match seated on it.

    ``await Connection(Players(MyBot), server=..., name=..., token=...).serve()`` returns only
    by raising; :func:`~.runner.run_async` is the loop that reconnects.
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
    ) -> None:
        """Prepare a connection; nothing is dialled until :meth:`serve`.

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
        self._matches: dict[str, _Match] = {}
        self._fatal: RefereeError | None = None
        self._call: grpc.aio.StreamStreamCall[referee_pb2.BotMessage, referee_pb2.RefereeMessage]
        self._replies: list[referee_pb2.ActionReply] = []
        """Replies waiting to be written, oldest first."""
        self._writing = False

    async def serve(self) -> NoReturn:
        """Dial, authenticate and serve until the stream ends, then raise.

        Raises:
            AuthenticationError: the referee does not know this name and token.
            ProtocolError: the referee refused the hello for another lasting reason.
            TakenOverError: another stream of this bot took over its seats.
            ConnectionLostError: the referee could not be reached, or the stream ended.
            RefereeError: another refusal from the referee (retryable).
        """
        async with grpc.aio.insecure_channel(self.server, options=self._channel_options) as ch:
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
            raise error_from_status(exc.code(), exc.details() or "") from None
        if message is grpc.aio.EOF:
            raise ConnectionLostError("CLOSED", "the referee closed the stream")
        assert isinstance(message, referee_pb2.RefereeMessage)
        return message

    async def _send(self, message: referee_pb2.BotMessage) -> None:
        """Write one message (the hello, then only :meth:`_queue_reply` writes)."""
        try:
            await self._call.write(message)
        except grpc.aio.AioRpcError as exc:
            raise error_from_status(exc.code(), exc.details() or "") from None
        except asyncio.InvalidStateError:
            code = await self._call.code()
            raise error_from_status(code, await self._call.details()) from None

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

    def _open_match(self, match_id: str, kind: str) -> _Match | None:
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
        match = _Match(match_id, player)
        match.task = asyncio.create_task(self._serve_match(match), name=f"match {match_id}")
        self._matches[match_id] = match
        return match

    async def _stop_matches(self) -> None:
        tasks = [match.task for match in self._matches.values() if match.task is not None]
        self._matches.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.players.connection_lost(welcomed=self.welcome is not None)

    # -- one match ----------------------------------------------------------------------------

    async def _serve_match(self, match: _Match) -> None:
        """Deliver a match's messages to its bot, in order, until the match ends."""
        while True:
            message, received = await match.inbox.get()
            kind = message.WhichOneof("message")
            try:
                if kind == "request":
                    await self._events(match, message.request.events, "request")
                    await self._answer(match, message.request, received)
                elif kind == "match_start":
                    await self._start(match, message.match_start)
                elif kind == "event":
                    await self._events(match, (message.event,), "")
                elif kind == "hand_end":
                    hand = message.hand_end
                    await self._events(match, hand.events, "hand_end")
                    info = HandEndInfo(
                        hand.match_id, convert.hand_result_from_proto(hand), tuple(hand.scores)
                    )
                    await self._hook(match, "on_hand_end", info)
                elif kind == "fault":
                    await self._events(match, message.fault.events, "fault")
                    await self._fault(match, message.fault)
                elif kind == "match_end":
                    await self._events(match, message.match_end.events, "match_end")
                    await self._end(match, message.match_end)
                    return
            except RefereeError as exc:  # the stream is gone; the reader ends the connection
                logger.debug("match %s: could not send: %s", match.match_id, exc)
            except convert.ConversionError as exc:
                logger.error(
                    "match %s: unreadable %s from the referee: %s", match.match_id, kind, exc
                )
            except Exception:  # a bug of ours must not silence the match for good
                logger.exception("match %s: failed to handle %s", match.match_id, kind)

    async def _start(self, match: _Match, start: referee_pb2.MatchStart) -> None:
        game = convert.game_from_proto(start.game, "match_start.game")
        snapshot = None
        if start.HasField("snapshot"):
            snapshot = convert.observation_from_proto(start.snapshot, "match_start.snapshot")
            match.history = list(snapshot.history)
        match.seat = start.seat
        match.game = game
        tc = start.time_control
        policy = (
            FaultPolicy.FORFEIT
            if start.fault_policy == referee_pb2.FAULT_POLICY_FORFEIT
            else FaultPolicy.SUBSTITUTE
        )
        info = MatchStartInfo(
            match_id=start.match_id,
            game=game,
            seat=start.seat,
            partners=tuple(start.partners),
            players=tuple(start.players),
            time_limits=TimeLimits(tc.move_ms, tc.bank_ms, tc.grace_ms),
            fault_policy=policy,
            max_strikes=start.max_strikes,
            resumed=start.resumed,
            snapshot=snapshot,
        )
        logger.info(
            "match %s %s: %s, seat %d of %s",
            start.match_id,
            "resumed" if start.resumed else "started",
            game.describe(),
            start.seat,
            ", ".join(start.players),
        )
        await self._hook(match, "on_match_start", info)

    async def _events(
        self, match: _Match, events: Sequence[referee_pb2.Event], holder: str
    ) -> None:
        """Add the steps of ``events`` to the match's history and pass each to ``on_event``.

        ``holder`` names the message that carried them (for errors); "" for an ``Event`` sent
        on its own.
        """
        if not events:
            return
        bot = match.player.bot
        default = AsyncBot.on_event if isinstance(bot, AsyncBot) else Bot.on_event
        listens = getattr(type(bot), "on_event", default) is not default
        history = match.history
        for index, event in enumerate(events):
            where = f"{holder}.events[{index}].step" if holder else "event.step"
            step = convert.step_from_proto(event.step, where)
            if step.seat == CHANCE:
                history.clear()  # a deal starts a new history
            else:
                history.append(step)
            if listens:
                info = MatchEvent(match.match_id, step, tuple(event.scores), event.deal)
                await self._hook(match, "on_event", info)

    async def _fault(self, match: _Match, fault: referee_pb2.Fault) -> None:
        info = FaultInfo(
            match_id=fault.match_id,
            turn=fault.turn,
            kind=_fault_kind(fault.kind),
            reason=fault.reason,
            strikes=fault.strikes,
            forfeited=fault.forfeited,
        )
        logger.warning(
            "match %s turn %d: fault %s charged (%s); strikes %d%s",
            info.match_id,
            info.turn,
            info.kind,
            info.reason,
            info.strikes,
            ", forfeited" if info.forfeited else "",
        )
        await self._hook(match, "on_fault", info)

    async def _end(self, match: _Match, end: referee_pb2.MatchEnd) -> None:
        self.players.release(match.match_id)
        result = end.result
        termination = _termination(result.termination)
        outcome = None
        if match.game is not None and termination in ("normal", "forfeit"):
            outcome = convert.outcome_from_proto(result, match.game)
        info = MatchEndInfo(
            match_id=end.match_id,
            seat=match.seat,
            termination=termination,
            winner=result.winner if result.winner >= 0 else None,
            scores=tuple(result.scores),
            side_of_seat=tuple(result.side_of_seat),
            faulted_seat=result.faulted_seat if result.faulted_seat >= 0 else None,
            fault=_fault_kind(result.fault),
            detail=result.detail,
            outcome=outcome,
        )
        logger.info(
            "match %s ended: %s, winner %s, scores %s%s",
            info.match_id,
            termination,
            "none" if info.winner is None else f"side {info.winner}",
            "/".join(str(s) for s in info.scores),
            f" ({info.detail})" if info.detail else "",
        )
        await self._hook(match, "on_match_end", info)

    async def _hook(self, match: _Match, hook: str, info: object) -> None:
        """Call one of the bot's hooks; a hook that raises is logged and play goes on."""
        player = match.player
        try:
            if isinstance(player.bot, AsyncBot):
                await getattr(player.bot, hook)(info)
            else:
                async with player.lock:
                    getattr(player.bot, hook)(info)
        except Exception:
            logger.exception("match %s: the bot's %s hook raised", match.match_id, hook)

    async def _answer(
        self, match: _Match, request: referee_pb2.ActionRequest, received: float
    ) -> None:
        if request.turn < match.latest_turn:
            logger.debug("match %s: skipped stale turn %d", match.match_id, request.turn)
            return
        reply = referee_pb2.ActionReply(match_id=request.match_id, turn=request.turn)
        action = await self._choose(match, request, received)
        if match.ended or request.turn < match.latest_turn:
            logger.info(
                "match %s: turn %d was answered after the referee moved on; reply dropped",
                match.match_id,
                request.turn,
            )
            return
        if action is not None:
            reply.action.CopyFrom(action)
        await self._queue_reply(reply)

    async def _choose(
        self, match: _Match, request: referee_pb2.ActionRequest, received: float
    ) -> games_pb2.Action | None:
        """Ask the bot; None when it failed (logged), which is sent as an empty reply."""
        where = f"match {request.match_id} turn {request.turn}"
        try:
            observation = convert.observation_from_proto(
                request.observation, "request.observation", history=tuple(match.history)
            )
        except convert.ConversionError as exc:
            logger.error("%s: unreadable observation from the referee: %s", where, exc)
            return None
        player = match.player
        set_current_clock(Clock(request.clock.move_ms, request.clock.bank_ms, received))
        try:
            if isinstance(player.bot, AsyncBot):
                action: object = await player.bot.choose(observation)
            elif player.bot.threaded:
                action = await self.players.in_thread(player, player.bot.choose, observation)
            else:
                async with player.lock:
                    action = player.bot.choose(observation)
        except Exception:
            logger.exception("%s: choose raised; sending an empty reply", where)
            return None
        finally:
            set_current_clock(None)
        return _encode(action, observation, where)


def _encode(action: object, observation: Observation, where: str) -> games_pb2.Action | None:
    if not isinstance(action, _ACTION_TYPES):
        logger.error(
            "%s: choose returned %r, not an action; sending an empty reply "
            "(return one of observation.legal_actions)",
            where,
            action,
        )
        return None
    if action not in observation.legal_actions:
        shown = ", ".join(str(a) for a in observation.legal_actions)
        logger.warning(
            "%s: choose returned '%s', which is not legal (legal: %s)", where, action, shown
        )
    chosen: Action = action
    try:
        return convert.action_to_proto(chosen)
    except convert.ConversionError as exc:
        logger.error("%s: cannot send '%s': %s; sending an empty reply", where, chosen, exc)
        return None


def _fault_kind(value: int) -> FaultKind | None:
    kinds: dict[int, FaultKind] = {
        referee_pb2.FAULT_KIND_TIMEOUT: FaultKind.TIMEOUT,
        referee_pb2.FAULT_KIND_ILLEGAL: FaultKind.ILLEGAL,
        referee_pb2.FAULT_KIND_MALFORMED: FaultKind.MALFORMED,
        referee_pb2.FAULT_KIND_DISCONNECTED: FaultKind.DISCONNECTED,
    }
    return kinds.get(value)


def _termination(value: int) -> Termination | None:
    names: dict[int, Termination] = {
        referee_pb2.TERMINATION_NORMAL: Termination.NORMAL,
        referee_pb2.TERMINATION_FORFEIT: Termination.FORFEIT,
        referee_pb2.TERMINATION_VOID: Termination.VOID,
        referee_pb2.TERMINATION_ABORTED: Termination.ABORTED,
    }
    return names.get(value)

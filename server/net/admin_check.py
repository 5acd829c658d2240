"""The admin API's ``CheckBot`` and ``PracticeMatch``: a connected bot checked for compliance,
or matched against house bots the referee hosts, without a tournament.

``CheckBot`` runs :mod:`domino_arena.server.play.checking` (sdk/testing.py's check through the
real protocol) in the arena's trio nursery and answers with the report, structured and as the
text the local check prints. ``PracticeMatch`` runs one unrated match through the arena like
``RunMatch``, with ``house:NAME`` seats the arena hosts in-process; it is stored unrated.

Every field is checked first (INVALID_ARGUMENT naming it); a bot that is not connected or does
not play the game is FAILED_PRECONDITION, as for ``RunMatch``. An organizer may check and
practise only its own course's bots: another course's bot is NOT_FOUND, as a bot that does not
exist, and that is decided before the lobby is asked (so it tells nothing of who is connected).
A practice match is stored in its bot's course.
"""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, Protocol, TypeVar, runtime_checkable

import grpc

from domino_arena.sdk.bot import Bot
from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import GAMES, configurations
from domino_arena.sdk.testing import DEFAULT_POSITIONS, ComplianceReport
from domino_arena.server.logs import quote
from domino_arena.server.net.admin_requests import (
    RequestError,
    bot_name_of,
    game_name,
    game_of,
    in_range,
    invalid,
    not_found,
    not_now,
    played,
    seed_of,
    time_control_of,
)
from domino_arena.server.net.admin_scope import caller
from domino_arena.server.net.admin_serving import Context, Serving
from domino_arena.server.play.arena import MatchAbortedError, NotAcceptingError
from domino_arena.server.play.checking import CHECK_OPPONENT, CheckPlan, SeatOf, check_connected
from domino_arena.server.play.match_spec import DEFAULT_MAX_DEALS, FinishedMatch, MatchSpec
from domino_arena.server.play.roster import Present, Roster
from domino_arena.server.store.bots import StoredBot
from domino_arena.server.store.tables import HOUSE_PREFIX
from domino_arena.v1 import admin_pb2 as admin_pb

MAX_POSITIONS: Final = 200
"""The most positions per configuration one CheckBot may ask for."""
MAX_TIME_LIMIT_MS: Final = 600_000
"""The longest time limit (ms) one CheckBot may set: the longest move time of a match."""
DEFAULT_TIME_LIMIT_MS: Final = 1000
PRACTICE_OPPONENT: Final = "greedy"
"""The house bot in every other seat of a practice match that names none."""

T = TypeVar("T")


class BotLookup(Protocol):
    def bot(self, name: str) -> StoredBot | None: ...


@runtime_checkable
class StoredArena(Protocol):
    """An arena with a storage in which bots are looked up (their courses)."""

    @property
    def storage(self) -> BotLookup: ...


@runtime_checkable
class HostingArena(Protocol):
    """What the two RPCs need of the arena (``server/play/arena.py``'s ``Arena``)."""

    @property
    def lobby(self) -> Roster: ...
    @property
    def house(self) -> Mapping[str, Callable[[int], Bot]]: ...
    @property
    def reconnect_grace(self) -> float: ...

    def seat(self, name: str, match_id: str, seed: int, index: int) -> Any: ...
    async def in_trio(self, job: Callable[[], Awaitable[T]]) -> T: ...
    async def run_match(self, spec: MatchSpec) -> FinishedMatch: ...


def _at_most(value: int, field: str, high: int) -> int:
    """``value`` if it is at most ``high``, else INVALID_ARGUMENT in the LIMITS wording."""
    if value > high:
        raise invalid(f"{field}: must be at most {high}, got {value} (the range is 0-{high})")
    return value


def _connected(lobby: Roster, name: str, field: str = "bot") -> Present:
    bot_name_of(name, field)
    present = lobby.get(name)
    if present is None:
        raise not_now(f"bot {quote(name)} is not connected")
    return present


def _hosting(arena: object) -> HostingArena:
    if not isinstance(arena, HostingArena):
        raise RequestError(
            grpc.StatusCode.UNIMPLEMENTED, "this referee cannot host house bots or check bots"
        )
    return arena


def check_plan(request: admin_pb.CheckBotRequest, arena: HostingArena) -> tuple[str, CheckPlan]:
    """Check a CheckBot request; return the bot and what to check.

    Raises:
        RequestError: INVALID_ARGUMENT naming the field; FAILED_PRECONDITION for a bot that is
            not connected or does not play a game named, or a referee with no house bot to
            play the whole games against.
    """
    present = _connected(arena.lobby, request.bot)
    names: list[str] = []
    for index, name in enumerate(request.games):
        game_name(name, f"games[{index}]")
        if name in names:
            raise invalid(f"games[{index}]: {name} listed twice")
        names.append(name)
    for index, name in enumerate(names):
        if name not in present.games:
            raise not_now(
                f"games[{index}]: bot '{present.name}' does not play {name} "
                f"(it plays {', '.join(present.games)})"
            )
    if not names:
        names = [name for name in sorted(GAMES) if name in present.games]
    positions = _at_most(request.positions, "positions", MAX_POSITIONS) or DEFAULT_POSITIONS
    limit_ms = (
        _at_most(request.time_limit_ms, "time_limit_ms", MAX_TIME_LIMIT_MS) or DEFAULT_TIME_LIMIT_MS
    )
    seed = seed_of(request.seed)
    if not request.no_games and CHECK_OPPONENT not in arena.house:
        raise not_now(
            f"no_games: this referee hosts no {CHECK_OPPONENT} house bot to play the whole "
            "games against; set no_games to check positions only"
        )
    plan = CheckPlan(
        configurations=tuple(configurations(names)),
        positions=positions,
        time_limit=limit_ms / 1000,
        seed=seed,
        full_games=not request.no_games,
        reconnect_grace=arena.reconnect_grace,
    )
    return present.name, plan


def report_message(report: ComplianceReport) -> admin_pb.CheckBotResponse:
    """The CheckBot answer of ``report``: its fields, and its text."""
    return admin_pb.CheckBotResponse(
        bot=report.bot,
        configurations=report.configurations,
        positions=report.positions,
        games=report.games,
        time_limit_ms=round(report.time_limit * 1000),
        slowest=report.slowest,
        failures=[
            admin_pb.CheckFailure(
                game=f.game,
                position=f.position,
                problem=f.problem,
                message=f.message,
                returned=f.returned,
                legal=f.legal,
                has_seconds=f.seconds is not None,
                seconds=f.seconds or 0.0,
            )
            for f in report.failures
        ],
        passed=report.passed,
        report=str(report),
        stopped=report.stopped,
    )


def practice_spec(request: admin_pb.PracticeMatchRequest, arena: HostingArena) -> MatchSpec:
    """Check a PracticeMatch request; return the unrated match to run.

    Raises:
        RequestError: INVALID_ARGUMENT naming the field; FAILED_PRECONDITION for a bot that is
            not connected or does not play the game, or a referee that hosts no house bots.
    """
    bot_name_of(request.bot, "bot")
    game = game_of(request)
    if request.seat >= game.num_players:
        raise invalid(
            f"seat: {game.describe()} has seats 0-{game.num_players - 1}, got {request.seat}"
        )
    house = arena.house
    if not house:
        raise not_now("opponents: this referee hosts no house bots")
    others = game.num_players - 1
    opponents = list(request.opponents) or [PRACTICE_OPPONENT] * others
    if len(opponents) != others:
        raise invalid(
            f"opponents: {game.describe()} needs {others} house bots, one per other seat, "
            f"got {len(opponents)}"
        )
    for index, name in enumerate(opponents):
        if name not in house:
            raise invalid(
                f"opponents[{index}]: unknown house bot {quote(name)}; expected one of "
                f"{', '.join(sorted(house))}"
            )
    seed = seed_of(request.seed) if request.has_seed else secrets.randbelow(10**9)
    max_deals = in_range(request.max_deals, "max_deals") or DEFAULT_MAX_DEALS
    time_control = time_control_of(request.time_control)
    present = _connected(arena.lobby, request.bot)
    if game.name not in present.games:
        raise not_now(
            f"bot '{present.name}' does not play {game.name} (it plays {', '.join(present.games)})"
        )
    bots = [f"{HOUSE_PREFIX}{name}" for name in opponents]
    bots.insert(request.seat, present.name)
    return MatchSpec(
        game=game,
        bots=tuple(bots),
        seed=seed,
        time_control=time_control,
        fault_policy=FaultPolicy.SUBSTITUTE,
        max_deals=max_deals,
        rated=False,
    )


async def scoped_bot(arena: object, name: str) -> StoredBot:
    """The stored bot ``name`` if the caller sees its course; else NOT_FOUND (``bot``).
    Asked first, before anything tells whether the referee hosts house bots or the bot is
    connected."""
    bot_name_of(name, "bot")
    if not isinstance(arena, StoredArena):
        raise RequestError(grpc.StatusCode.UNIMPLEMENTED, "this referee keeps no bots")
    bot = await asyncio.to_thread(arena.storage.bot, name)
    if bot is None or not caller().sees(bot.course):
        raise not_found(f"bot: no bot is named '{name}'")
    return bot


class CheckAdmin:
    """The two RPCs' work over the arena."""

    def __init__(self, arena: object, handed_out: Callable[[str | None], str]) -> None:
        self.arena = arena
        self.handed_out = handed_out
        """How a record is handed out (``AdminServicer._handed_out``: signed with a key)."""

    async def check(self, request: admin_pb.CheckBotRequest) -> admin_pb.CheckBotResponse:
        await scoped_bot(self.arena, request.bot)
        arena = _hosting(self.arena)
        bot, plan = check_plan(request, arena)
        seat_of: SeatOf = arena.seat
        try:
            report = await arena.in_trio(lambda: check_connected(bot, plan, seat_of))
        except (NotAcceptingError, MatchAbortedError) as exc:
            raise RequestError(grpc.StatusCode.UNAVAILABLE, str(exc)) from None
        return report_message(report)

    async def practice(
        self, request: admin_pb.PracticeMatchRequest
    ) -> admin_pb.PracticeMatchResponse:
        stored = await scoped_bot(self.arena, request.bot)
        arena = _hosting(self.arena)
        spec = dataclasses.replace(practice_spec(request, arena), course=stored.course)
        finished, result = await played(arena.run_match, spec)
        return admin_pb.PracticeMatchResponse(
            match_id=spec.match_id,
            result=result,
            record=self.handed_out(finished.record),
            bots=spec.bots,
        )


# -- the RPCs, mixed into AdminServicer ---------------------------------------------------------


class CheckRpcs:
    """``CheckBot`` and ``PracticeMatch``: the admin token first, then :class:`CheckAdmin`."""

    async def CheckBot(  # noqa: N802
        self: Serving, request: admin_pb.CheckBotRequest, context: Context
    ) -> admin_pb.CheckBotResponse:
        return await self._serve(context, CheckAdmin(self.arena, self._handed_out).check, request)

    async def PracticeMatch(  # noqa: N802
        self: Serving, request: admin_pb.PracticeMatchRequest, context: Context
    ) -> admin_pb.PracticeMatchResponse:
        work = CheckAdmin(self.arena, self._handed_out)
        return await self._serve(context, work.practice, request)

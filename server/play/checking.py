"""The compliance check of a connected bot, run by the referee (``CheckBot``, ``domino-arena
check``): sdk/testing.py's check, through the real protocol, for a bot in any language.

Positions: :func:`domino_arena.sdk.positions.sample_positions` gives the same seeded positions
as the local check. Each is presented to the bot as a match that resumes there: the referee
builds the bot's seat as for any match (the arena's seat factory: a ``RemoteSeat`` over its
stream), sends ``MatchStart`` with ``resumed`` set and the position as the snapshot (exactly
what a bot that reconnects mid-match gets), one ``ActionRequest``, and ``MatchEnd`` (aborted).
The match core is not used for these: it can only start a match from a deal, not from an
arbitrary position, so the check plays the referee's part of one decision itself, with the
referee's deadline (the time limit and the network grace) and the referee's judgement of the
reply (malformed, illegal, timeout; a bot error, its ``choose`` raised, is the local check's
"raised").

Whole games: one per configuration through :func:`~.referee.play_match` (the referee's own
match loop), the bot in one seat (chosen by the game's seed) and house bots hosted in-process
in the others, under the forfeit policy (the first fault ends the game, as the local check
stops at the first fault), capped at :data:`~domino_arena.sdk.testing.CHECK_MAX_DEALS`. Each
fault the core charges the bot becomes a :class:`~domino_arena.sdk.testing.Failure` with what
the bot answered and the legal set of that request. Nothing is stored or rated.

The report is sdk.testing's :class:`~domino_arena.sdk.testing.ComplianceReport`, so it reads
as the local check's does; as the local check, it stops early when the bot fails the same way
again and again (:class:`~domino_arena.sdk.compliance.Streak`) and says so in one line.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

import trio

from domino_arena.sdk.compliance import Streak
from domino_arena.sdk.match.bot_errors import BotError
from domino_arena.sdk.match.notices import FaultNotice, Step
from domino_arena.sdk.match.results import FaultKind, FaultPolicy, MatchResult, Termination
from domino_arena.sdk.match.seeds import bot_seed
from domino_arena.sdk.positions import Position, label, sample_positions
from domino_arena.sdk.rules import (
    Action,
    Game,
    GameState,
    HandEnd,
    HandResult,
    IllegalActionError,
    LogEntry,
    Observation,
    configurations,
)
from domino_arena.sdk.testing import CHECK_MAX_DEALS, ComplianceReport, Failure, Problem
from domino_arena.server.play.referee import play_match
from domino_arena.server.play.roster import HostedSeat
from domino_arena.server.play.seats import Malformed, MatchInfo, Reply, SeatGoneError
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store.tables import HOUSE_PREFIX

CHECK_OPPONENT: Final = "greedy"
"""The house bot in the other seats of the check's whole games."""
CHECK_GRACE: Final = 0.05
"""Seconds of network grace on top of the time limit, as the referee's default time control."""

SeatOf = Callable[[str, str, int, int], HostedSeat]
"""The arena's seat factory: (seat name, match id, match seed, seat index) -> the seat."""

_KINDS: Final[dict[str, Problem]] = {
    "timeout": "timeout",
    "illegal": "illegal",
    "malformed": "malformed",
    "disconnected": "disconnected",
    "bot_error": "raised",
}


@dataclass(frozen=True, slots=True)
class CheckPlan:
    """What to check: the configurations, positions per configuration, the time limit."""

    configurations: tuple[Game, ...]
    positions: int
    time_limit: float
    seed: int = 0
    full_games: bool = True
    opponent: str = CHECK_OPPONENT
    reconnect_grace: float = 0.0
    """Seconds the bot has to come back if it drops during a whole game."""

    @property
    def time_control(self) -> TimeControl:
        return TimeControl(move=self.time_limit, bank=0.0, grace=CHECK_GRACE)


async def check_connected(bot: str, plan: CheckPlan, seat_of: SeatOf) -> ComplianceReport:
    """Run ``plan`` against the connected bot ``bot`` (trio); return the report.

    A bot that is gone (its stream dropped) is reported once as disconnected, and nothing more
    is asked of it.
    """
    check = _Check(bot, plan, seat_of)
    streak = Streak()
    stopped = ""
    for game in plan.configurations:
        if stopped:
            break
        check.names.append(game.describe())
        for position in sample_positions(game, plan.positions, plan.seed):
            if check.gone:
                break
            check.asked += 1
            found = await check.position(game, position)
            check.failures += found
            if stopped := streak.add(found):
                break
        if plan.full_games and not check.gone and not stopped:
            found, finished = await check.game(game)
            check.failures += found
            check.played += finished
            stopped = streak.add(found)
    return ComplianceReport(
        bot=f"connected bot '{bot}'",
        configurations=tuple(check.names),
        positions=check.asked,
        games=check.played,
        time_limit=plan.time_limit,
        slowest=check.slowest,
        failures=tuple(check.failures),
        stopped=stopped,
    )


@dataclass
class _Check:
    bot: str
    plan: CheckPlan
    seat_of: SeatOf
    run: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    names: list[str] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    asked: int = 0
    played: int = 0
    slowest: float = 0.0
    gone: bool = False

    async def position(self, game: Game, position: Position) -> list[Failure]:
        """Present one position as a resumed match, ask for an action, judge the answer."""
        state = position.state
        seat_index = state.current_seat
        observation = state.observe(seat_index)
        legal = tuple(str(a) for a in observation.legal_actions)
        described, where = game.describe(), position.describe()
        match_id = f"check-{self.run}-{position.id}"
        players = tuple(
            self.bot if s == seat_index else f"{HOUSE_PREFIX}seat{s}"
            for s in range(game.num_players)
        )
        clock = self.plan.time_control
        info = MatchInfo(
            match_id,
            game,
            seat_index,
            players,
            clock,
            FaultPolicy.SUBSTITUTE,
            max_strikes=3,
            bot_seed=bot_seed(position.seed, seat_index),
        )
        seat = self.seat_of(self.bot, match_id, position.seed, seat_index)
        reply: Reply | None = None
        try:
            await seat.start(info, observation)
            sent = trio.current_time()
            with trio.move_on_after(clock.deadline(0.0)):
                reply = await seat.request(1, observation, clock.move, 0.0)
            seconds = trio.current_time() - sent
        except SeatGoneError as exc:
            self.gone = True
            return [Failure(described, where, "disconnected", str(exc), legal=legal)]
        finally:
            stopped = MatchResult(
                Termination.ABORTED,
                None,
                state.scores,
                detail="compliance check: one position only",
            )
            seat.end(stopped)
            seat.close()
        self.slowest = max(self.slowest, seconds)
        return [
            failure
            for failure in [
                _judged(
                    reply, seconds, state, clock=clock, game=described, where=where, legal=legal
                )
            ]
            if failure is not None
        ]

    async def game(self, game: Game) -> tuple[list[Failure], bool]:
        """Play one whole game, the bot in one seat and house bots in the others."""
        seed = random.Random(f"domino-arena/check-game/{label(game)}/{self.plan.seed}")
        game_seed = seed.getrandbits(32)
        bot_seat = game_seed % game.num_players
        match_id = f"check-{self.run}-{label(game)}-game"
        names = [
            self.bot if s == bot_seat else f"{HOUSE_PREFIX}{self.plan.opponent}"
            for s in range(game.num_players)
        ]
        watched = _Watched(self.seat_of(self.bot, match_id, game_seed, bot_seat))
        seats: list[HostedSeat] = [
            watched if s == bot_seat else self.seat_of(names[s], match_id, game_seed, s)
            for s in range(game.num_players)
        ]
        place = (
            f"whole game against house bots ({self.plan.opponent}; game seed {game_seed}, "
            f"the bot in seat {bot_seat})"
        )
        last: list[GameState] = []

        def on_step(step: Step) -> None:
            last[:] = [step.after]

        try:
            report = await play_match(
                game,
                seats,
                match_id=match_id,
                seed=game_seed,
                time_control=self.plan.time_control,
                fault_policy=FaultPolicy.FORFEIT,
                max_strikes=1,
                reconnect_grace=self.plan.reconnect_grace,
                on_step=on_step,
                max_deals=CHECK_MAX_DEALS,
            )
        finally:
            for seat in seats:
                seat.close()
        self.slowest = max(self.slowest, watched.slowest)
        described = game.describe()
        failures: list[Failure] = []
        for fault in report.faults:
            if fault.seat != bot_seat:
                continue
            legal, returned, seconds = watched.turns.get(fault.turn, ((), "", None))
            problem = _KINDS.get(fault.kind.value, "malformed")
            if problem == "disconnected":
                self.gone = True
            failures.append(
                Failure(
                    described,
                    f"{place}, turn {fault.turn}",
                    problem,
                    _said(fault.kind, fault.rule or fault.reason),
                    returned,
                    legal,
                    seconds,
                )
            )
        result = report.result
        if result.termination is Termination.VOID:
            failures.append(Failure(described, place, "unfinished", result.detail))
            return failures, False
        if result.termination is Termination.FORFEIT:
            return failures, False
        hands = last[0].hand_results if last else ()
        stalled = result.termination is Termination.ADJUDICATED and all(
            hand.end is HandEnd.VOID for hand in hands
        )
        if stalled:
            message = (
                f"no deal was played in {len(hands)} deals: every one was void (every seat "
                f"passed); the referee adjudicated the game at its cap on deals ({result.detail})"
            )
            failures.append(Failure(described, place, "unfinished", message))
        return failures, not stalled


def _judged(
    reply: Reply | None,
    seconds: float,
    state: GameState,
    *,
    clock: TimeControl,
    game: str,
    where: str,
    legal: tuple[str, ...],
) -> Failure | None:
    """The referee's judgement of one reply (None: no answer by the deadline)."""
    if reply is None:
        return Failure(
            game,
            where,
            "timeout",
            f"no answer within {clock.deadline(0.0):g} s (the {clock.move:g} s limit and "
            f"{clock.grace * 1000:g} ms of network grace)",
            "",
            legal,
            seconds,
        )
    if isinstance(reply, Malformed):
        return Failure(game, where, "malformed", reply.reason, "", legal, seconds)
    if isinstance(reply, BotError):
        return Failure(game, where, "raised", f"choose raised {reply.reason}", "", legal, seconds)
    try:
        state.apply(reply)
    except IllegalActionError as exc:
        return Failure(game, where, "illegal", exc.rule, f"'{reply}'", legal, seconds)
    return None


def _said(kind: FaultKind, reason: str) -> str:
    """A fault's words as the check reports them (a bot error in the local check's words)."""
    return f"choose raised {reason}" if kind is FaultKind.BOT_ERROR else reason


class _Watched:
    """The bot's seat in a whole game, keeping per turn the legal set, the answer and its time,
    so a fault the core charges names them."""

    def __init__(self, inner: HostedSeat) -> None:
        self.inner = inner
        self.name = inner.name
        self.turns: dict[int, tuple[tuple[str, ...], str, float | None]] = {}
        self.slowest = 0.0

    async def start(self, info: MatchInfo, snapshot: Observation | None) -> None:
        await self.inner.start(info, snapshot)

    async def request(self, turn: int, observation: Observation, move: float, bank: float) -> Reply:
        legal = tuple(str(a) for a in observation.legal_actions)
        sent = trio.current_time()
        returned = ""
        try:
            reply = await self.inner.request(turn, observation, move, bank)
            if isinstance(reply, Action):
                returned = f"'{reply}'"
            return reply
        finally:
            seconds = trio.current_time() - sent
            self.slowest = max(self.slowest, seconds)
            self.turns[turn] = (legal, returned, seconds)

    async def event(self, step: LogEntry, scores: tuple[int, ...], deal: int) -> None:
        await self.inner.event(step, scores, deal)

    async def hand_end(self, result: HandResult, scores: tuple[int, ...]) -> None:
        await self.inner.hand_end(result, scores)

    async def fault(self, notice: FaultNotice) -> None:
        await self.inner.fault(notice)

    async def finish(self, result: MatchResult) -> None:
        await self.inner.finish(result)

    async def reconnected(self) -> None:
        await self.inner.reconnected()

    def end(self, result: MatchResult) -> None:
        self.inner.end(result)

    def close(self) -> None:
        self.inner.close()


def configurations_of(games: Sequence[str]) -> tuple[Game, ...]:
    """Every configuration of the games named (sdk.rules.configurations, in its order)."""
    return tuple(configurations(list(games)))

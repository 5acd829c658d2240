"""Play one match over :class:`~.seats.Seat` objects: the clock, the fault policy, the record.

The referee deals with the pure rules engine, and for each decision sends the mover its
observation under a deadline, validates the reply with the same engine and tells every seat the
public part of what happened (DESIGN.md decisions 7-9). It never trusts a seat: a reply that is
not an action, an illegal action, silence past the deadline or a dropped connection is a fault,
and the fault policy says what it costs.

Time is kept from send to receive with ``trio.current_time()``, so tests drive it with
``trio.testing.MockClock`` and never sleep. A decision's time accumulates over the requests
it takes (a seat that drops and comes back does not get a fresh move time); the wait for a
reconnection is never charged. The deadline of a request is that of one cancel scope per
stretch of play, moved before each request and lifted after it, rather than a new scope per
request (entering and leaving one costs about as much as the rest of a move's bookkeeping); a
deadline that passes ends the stretch, the timeout is charged, and the next stretch begins.

Faults (DESIGN.md decision 9):

* ``forfeit``: the first fault ends the match; the faulting seat's side loses.
* ``substitute``: the referee plays a seeded random legal move for the seat, records a strike
  and tells the bot; the ``max_strikes``-th strike forfeits the seat as above.

A forfeit's winner is the other side with two sides; with three or more it is the side with the
highest score among the others, the lowest side index breaking a tie
(:func:`~domino_arena.sdk.records.forfeit_winner`).

The error boundary is this function: any exception that is not a seat's fault is a failure of
ours and voids the match (it is logged and charged to nobody); it never escapes to cancel other
matches in the same nursery. Cancellation (shutdown) does escape, after every seat has been told
the match was aborted, on a best-effort basis bounded by :data:`NOTICE_TIMEOUT`.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Callable, Collection, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

import trio

from domino_arena.sdk.local import DEFAULT_MAX_DEALS, Step
from domino_arena.sdk.match.results import FaultKind, FaultPolicy, Termination
from domino_arena.sdk.records import MatchRecord, RecordFault, forfeit_winner, record_from_state
from domino_arena.sdk.rules import (
    DEAL,
    Action,
    Bid,
    Deal,
    Discard,
    Draw,
    Game,
    GameState,
    IllegalActionError,
    LogEntry,
    Pass,
    Play,
    Trump,
)
from domino_arena.sdk.rules.dealing import first_seat as random_first_seat
from domino_arena.sdk.rules.state import public_entry
from domino_arena.server.play.seats import (
    FaultNotice,
    Malformed,
    MatchInfo,
    MatchResult,
    Seat,
    SeatGoneError,
)
from domino_arena.server.play.timecontrol import TimeControl

log = logging.getLogger(__name__)

NOTICE_TIMEOUT: Final = 1.0
"""Seconds the referee spends telling the seats a match ended, at most (all seats at once)."""

MAX_RECONNECTS: Final = 10
"""Reconnections one decision may take; a seat that keeps dropping is then disconnected."""

_ACTION_TYPES: Final = (Play, Draw, Pass, Bid, Discard, Trump, Deal)


@dataclass(frozen=True, slots=True)
class Fault:
    """A fault charged to a seat: what it did, when, and what the policy did about it."""

    seat: int
    turn: int
    """The request it belongs to (a disconnection before any request gets a turn of its own)."""
    step: int
    """Index of the step that was due."""
    kind: FaultKind
    reason: str
    strikes: int
    """Faults charged to this seat so far, this one included."""
    forfeited: bool
    """This fault lost the seat the match."""

    def to_record(self) -> RecordFault:
        return RecordFault(
            self.seat,
            self.turn,
            self.step,
            self.kind.value,
            self.reason,
            self.strikes,
            self.forfeited,
        )


class _Waiting(NamedTuple):
    """The request a seat is answering, for the timeout if its deadline passes."""

    seat: int
    turn: int
    sent: float
    used: float
    """Seconds of this decision used before this request."""
    bank: float
    """The seat's bank when the decision began."""
    move_left: float
    bank_left: float
    limit: float


@dataclass(frozen=True, slots=True)
class MatchReport:
    """What a match leaves behind: its result, its record and every fault charged."""

    result: MatchResult
    record: MatchRecord
    faults: tuple[Fault, ...]


async def play_match(
    game: Game,
    seats: Sequence[Seat],
    *,
    match_id: str,
    seed: int,
    time_control: TimeControl,
    fault_policy: FaultPolicy,
    max_strikes: int = 3,
    reconnect_grace: float = 10.0,
    absent: Collection[int] = (),
    first_seat: int | None = None,
    on_step: Callable[[Step], object] | None = None,
    max_deals: int | None = DEFAULT_MAX_DEALS,
) -> MatchReport:
    """Play one match of ``game`` between ``seats`` (seat 0 first) and return its report.

    Args:
        match_id: told to every seat and written into the record.
        seed: fixes every deal, the first starter when ``first_seat`` is None, and the moves
            the referee substitutes.
        time_control: per-move time, bank and network grace (DESIGN.md decision 8).
        fault_policy, max_strikes: what a fault costs (DESIGN.md decision 9).
        reconnect_grace: seconds a disconnected seat has to come back, counted from when the
            referee needs it, for each decision.
        absent: seats whose bot was not connected when the match was due and was waited for
            already (a tournament's wait): they get no reconnect grace until they connect.
        on_step: called after every applied step, deals and substituted moves included.
        max_deals: a game with no winner after this many deals is void (None: no limit).

    Returns:
        The report; ``result.termination`` is NORMAL, FORFEIT or VOID.

    Raises:
        ValueError: the arguments do not fit the game (before anything is sent).
        trio.Cancelled: the caller cancelled; every seat was told ABORTED first.
    """
    if len(seats) != game.num_players:
        raise ValueError(f"{game.describe()} needs {game.num_players} seats, got {len(seats)}")
    if max_strikes < 1:
        raise ValueError(f"max_strikes must be 1 or more, got {max_strikes}")
    if reconnect_grace < 0:
        raise ValueError(f"reconnect_grace must not be negative, got {reconnect_grace}")
    start = random_first_seat(seed, game.num_players) if first_seat is None else first_seat
    if not 0 <= start < game.num_players:
        raise ValueError(f"first_seat {start} is not a seat of a {game.num_players}-player game")
    match = _Match(
        game,
        seats,
        match_id=match_id,
        seed=seed,
        first_seat=start,
        time_control=time_control,
        fault_policy=fault_policy,
        max_strikes=max_strikes,
        reconnect_grace=reconnect_grace,
        absent=absent,
        on_step=on_step,
        max_deals=max_deals,
    )
    try:
        result = await match.run()
    except Exception as exc:
        log.exception("match %s: referee failure, the match is void", match_id)
        result = match.stopped(
            Termination.VOID, f"void: the referee failed ({type(exc).__name__}: {exc})"
        )
    except BaseException:
        aborted = match.stopped(
            Termination.ABORTED, "aborted: the referee stopped the match before its end"
        )
        await match.tell_finish(aborted, shield=True)
        raise
    await match.tell_finish(result, shield=False)
    return MatchReport(result, match.record(result), tuple(match.faults))


class _Match:
    """The mutable side of one match; :func:`play_match` is its only user."""

    def __init__(
        self,
        game: Game,
        seats: Sequence[Seat],
        *,
        match_id: str,
        seed: int,
        first_seat: int,
        time_control: TimeControl,
        fault_policy: FaultPolicy,
        max_strikes: int,
        reconnect_grace: float,
        absent: Collection[int],
        on_step: Callable[[Step], object] | None,
        max_deals: int | None,
    ) -> None:
        self.game = game
        self.seats = tuple(seats)
        self.names = tuple(seat.name for seat in seats)
        self.match_id = match_id
        self.seed = seed
        self.first_seat = first_seat
        self.clock = time_control
        self.policy = fault_policy
        self.max_strikes = max_strikes
        self.reconnect_grace = reconnect_grace
        self.absent = set(absent)
        """Seats with no reconnect grace: absent when the match was due, not back since."""
        self.on_step = on_step
        self.max_deals = max_deals
        self.state: GameState = game.new_game(seed, first_seat=first_seat)
        self.think_ms: list[float | None] = []
        """One entry per step of ``state.history``."""
        self.substituted: list[int] = []
        self.faults: list[Fault] = []
        self.banks = [time_control.bank] * game.num_players
        self.strikes = [0] * game.num_players
        self.gone = [False] * game.num_players
        """The seat raised SeatGoneError and has not been restarted since."""
        self.missed: list[list[FaultNotice]] = [[] for _ in seats]
        """Fault notices a seat was away for; it gets them when it is back."""
        self.turn = 0
        self.timer = trio.CancelScope()
        """The scope of the current stretch of play; its deadline is the pending request's."""
        self.waiting: _Waiting | None = None

    # -- the match ----------------------------------------------------------------------------

    async def run(self) -> MatchResult:
        for seat, player in enumerate(self.seats):
            await self._tell(seat, player.start(self._info(seat), None))
        self.absent = {seat for seat in self.absent if self.gone[seat]}
        while True:
            with trio.CancelScope() as self.timer:
                result = await self._play()
            if not self.timer.cancelled_caught:
                return result
            forfeit = await self._timed_out()
            if forfeit is not None:
                return self._forfeit_result(forfeit)

    async def _timed_out(self) -> Fault | None:
        """Charge the timeout of the request whose deadline ended the last stretch of play."""
        waiting = self.waiting
        assert waiting is not None
        self.waiting = None
        used = waiting.used + trio.current_time() - waiting.sent
        self.banks[waiting.seat] = self.clock.charge(waiting.bank, used)
        reason = (
            f"no reply within {waiting.limit:g} s (move {waiting.move_left:g} s + bank "
            f"{waiting.bank_left:g} s + grace {self.clock.grace:g} s)"
        )
        return await self._fault(waiting.seat, waiting.turn, FaultKind.TIMEOUT, reason, used)

    async def _play(self) -> MatchResult:
        """Play until the end, a forfeit, or a deadline that passes (it cancels ``timer``)."""
        while not self.state.is_terminal():
            if self.state.is_chance():
                if self.max_deals is not None and self.state.deal_number >= self.max_deals:
                    return self.stopped(
                        Termination.VOID,
                        f"void: no winner after {self.max_deals} deals "
                        f"(scores {'/'.join(str(s) for s in self.state.scores)})",
                    )
                await self._advance(DEAL, None)
                continue
            forfeit = await self._decide(self.state.current_seat)
            if forfeit is not None:
                return self._forfeit_result(forfeit)
        outcome = self.state.outcome()
        assert outcome is not None
        return MatchResult(
            Termination.NORMAL,
            outcome.winner,
            outcome.scores,
            detail=outcome.detail,
            outcome=outcome,
        )

    async def _decide(self, seat: int) -> Fault | None:
        """Get the decision of ``seat`` and apply it (or a substitute); return a forfeit."""
        player = self.seats[seat]
        observation = self.state.observe(seat)
        bank = self.banks[seat]
        used = 0.0  # seconds on the clock for this decision, over every request it took
        grace = 0.0 if seat in self.absent else self.reconnect_grace
        grace_left = grace
        reconnects = 0
        turn: int | None = None
        while True:
            if self.gone[seat]:
                if reconnects == MAX_RECONNECTS:
                    kind, reason = (
                        FaultKind.DISCONNECTED,
                        f"dropped {reconnects + 1} times during one decision",
                    )
                    break
                reconnects += 1
                waited_from = trio.current_time()
                back = False
                with trio.move_on_after(grace_left):
                    await player.reconnected()
                    back = True
                grace_left -= trio.current_time() - waited_from
                if not back:
                    kind, reason = (
                        FaultKind.DISCONNECTED,
                        f"disconnected, and not back within {grace:g} s",
                    )
                    break
                try:
                    await player.start(self._info(seat), observation)
                except SeatGoneError:
                    continue
                self.gone[seat] = False
                self.absent.discard(seat)
                missed, self.missed[seat] = self.missed[seat], []
                for notice in missed:
                    await self._tell_fault(seat, notice)
            turn = self._next_turn()
            move_left = max(0.0, self.clock.move - used)
            bank_left = self.clock.charge(bank, used)
            limit = move_left + bank_left + self.clock.grace
            sent = trio.current_time()
            reply: object = None
            self.waiting = _Waiting(seat, turn, sent, used, bank, move_left, bank_left, limit)
            timer = self.timer
            timer.deadline = sent + limit
            try:
                reply = await player.request(turn, observation, move_left, bank_left)
            except SeatGoneError:
                self.gone[seat] = True
            timer.deadline = math.inf
            if timer.cancel_called:  # the deadline passed as the reply came: it is late
                await trio.lowlevel.checkpoint()  # raises Cancelled, caught by ``run``
            self.waiting = None
            used += trio.current_time() - sent
            if self.gone[seat]:
                continue
            if isinstance(reply, Malformed):
                kind, reason = FaultKind.MALFORMED, reply.reason
                break
            if not isinstance(reply, _ACTION_TYPES):
                kind, reason = FaultKind.MALFORMED, f"not an action: {reply!r}"
                break
            try:
                after = self.state.apply(reply)
            except IllegalActionError as exc:
                kind, reason = FaultKind.ILLEGAL, str(exc)
                break
            self.banks[seat] = self.clock.charge(bank, used)
            await self._advance(reply, _ms(used), after)
            return None
        self.banks[seat] = self.clock.charge(bank, used)
        if turn is None:
            turn = self._next_turn()
        return await self._fault(seat, turn, kind, reason, used)

    async def _fault(
        self, seat: int, turn: int, kind: FaultKind, reason: str, used: float
    ) -> Fault | None:
        """Charge a fault, tell the bot, and apply the policy; return the fault if it forfeits."""
        self.strikes[seat] += 1
        strikes = self.strikes[seat]
        forfeited = self.policy is FaultPolicy.FORFEIT or strikes >= self.max_strikes
        fault = Fault(seat, turn, len(self.think_ms), kind, reason, strikes, forfeited)
        self.faults.append(fault)
        log.info(
            "match %s: seat %d (%s) %s at turn %d (strike %d%s): %s",
            self.match_id,
            seat,
            self.names[seat],
            kind.value,
            turn,
            strikes,
            ", forfeited" if forfeited else "",
            reason,
        )
        await self._tell_fault(seat, FaultNotice(turn, kind, reason, strikes, forfeited))
        if forfeited:
            return fault
        self.substituted.append(len(self.think_ms))
        await self._advance(substitute_action(self.state, self.seed, turn), _ms(used))
        return None

    async def _advance(
        self, action: Action, think_ms: float | None, after: GameState | None = None
    ) -> None:
        """Apply ``action`` and tell every seat what it may see of the step.

        ``after``: the state after ``action`` when the caller has it already (validating a
        reply computes it), so the engine does not apply the action twice.
        """
        before = self.state
        if after is None:
            after = before.apply(action)
        entry = LogEntry(before.current_seat, action)
        self.state = after
        self.think_ms.append(think_ms)
        index = len(self.think_ms) - 1
        scores, deal = after.scores, after.deal_number
        for seat, player in enumerate(self.seats):
            await self._tell(seat, player.event(public_entry(entry, seat), scores, deal))
        for hand in after.hand_results[len(before.hand_results) :]:
            for seat, player in enumerate(self.seats):
                await self._tell(seat, player.hand_end(hand, scores))
        if self.on_step is not None:
            self.on_step(Step(index, entry.seat, action, think_ms, before, after))

    async def _tell(self, seat: int, notice: Coroutine[Any, Any, None]) -> None:
        """Await a notice to ``seat``; a seat that is gone misses it (it gets a snapshot later)."""
        if self.gone[seat]:
            notice.close()
            return
        try:
            await notice
        except SeatGoneError:
            self.gone[seat] = True

    async def _tell_fault(self, seat: int, notice: FaultNotice) -> None:
        """Tell ``seat`` of a fault now, or when it is back if it is away."""
        await self._tell(seat, self.seats[seat].fault(notice))
        if self.gone[seat]:
            self.missed[seat].append(notice)

    def _info(self, seat: int) -> MatchInfo:
        return MatchInfo(
            self.match_id,
            self.game,
            seat,
            self.names,
            self.clock,
            self.policy,
            self.max_strikes,
        )

    def _next_turn(self) -> int:
        self.turn += 1
        return self.turn

    # -- the end ------------------------------------------------------------------------------

    def _forfeit_result(self, fault: Fault) -> MatchResult:
        scores = self.state.scores
        winner = forfeit_winner(scores, self.game.side_of(fault.seat))
        return MatchResult(
            Termination.FORFEIT,
            winner,
            scores,
            faulted_seat=fault.seat,
            fault=fault.kind,
            detail=(
                f"seat {fault.seat} ({self.names[fault.seat]}) forfeits"
                f"{f' after {fault.strikes} faults' if fault.strikes > 1 else ''}: "
                f"{fault.kind.value} at turn {fault.turn}: {fault.reason}"
            ),
        )

    def stopped(self, termination: Termination, detail: str) -> MatchResult:
        """Return the result of a match stopped without a winner (void or aborted)."""
        return MatchResult(termination, None, self.state.scores, detail=detail)

    async def tell_finish(self, result: MatchResult, *, shield: bool) -> None:
        """Tell every seat the match ended, all at once, for at most :data:`NOTICE_TIMEOUT`.

        Best effort: a seat that is gone, fails or blocks is logged and skipped, because the
        result stands whatever a seat does with the news.
        """

        async def tell(seat: int) -> None:
            try:
                await self.seats[seat].finish(result)
            except SeatGoneError:
                pass
            except Exception:
                log.exception("match %s: telling seat %d the end failed", self.match_id, seat)

        with trio.move_on_after(NOTICE_TIMEOUT, shield=shield) as scope:
            async with trio.open_nursery() as nursery:
                for seat in range(len(self.seats)):
                    nursery.start_soon(tell, seat)
        if scope.cancelled_caught:
            log.warning(
                "match %s: a seat did not take the end within %gs", self.match_id, NOTICE_TIMEOUT
            )

    def record(self, result: MatchResult) -> MatchRecord:
        termination = result.termination.value
        normal = result.termination is Termination.NORMAL
        return record_from_state(
            self.state,
            self.names,
            self.seed,
            self.first_seat,
            think_ms=self.think_ms,
            time_control=dict(
                zip(("move_ms", "bank_ms", "grace_ms"), self.clock.to_ms(), strict=True)
            ),
            termination=termination,
            winner=None if normal else result.winner,
            detail=None if normal else result.detail,
            faults=[fault.to_record() for fault in self.faults],
            substituted=self.substituted,
            match_id=self.match_id,
            fault_policy={"policy": self.policy.value, "max_strikes": self.max_strikes},
        )


def substitute_action(state: GameState, seed: int, turn: int) -> Action:
    """Return the move the referee plays for a faulting seat: random, legal, and the same
    whenever the match is replayed with the same seed.
    """
    rng = random.Random(f"domino-arena/substitute/{seed}/{turn}")
    return rng.choice(state.legal_actions())


def _ms(seconds: float) -> float:
    """Return ``seconds`` in milliseconds, to the microsecond (what a record keeps)."""
    return round(seconds * 1000.0, 3)

"""The match core: one match's progress as a pure state machine (h11's lesson, docs/decisions.md).

:class:`MatchCore` owns everything a match decides: it deals (chance steps are its own), says
which seat's decision is due and what that seat sees, numbers the requests, validates a reply
with the rules engine, charges the bank with the time it is *told* a request took, applies the
fault policy (docs/decisions.md: decision 9), adjudicates a game that reaches the cap on deals, and
writes the record. It reads no clock and does no I/O: a driver does the talking and the timing
and reports back.
Two drivers exist: :mod:`domino_arena.sdk.local` (synchronous, in-process bots) and the trio
referee (``domino_arena.server.play.referee``: remote seats, real deadlines, reconnections).

A driver's loop::

    core = MatchCore(game, names, seed=seed, ...)
    while (decision := core.next_decision()) is not None:
        deliver(core.take())             # the deals and substitutes just applied
        request = core.request()         # a new turn for decision.seat, with its time limits
        ...send it, wait up to request.limit...
        core.reply(request.turn, answer, seconds)  # or malformed / bot_error / timeout / dropped
        deliver(core.take())
    deliver(core.take())
    core.result, core.record()

The core applies what needs no bot (a deal, the move substituted for a fault) only when the
driver asks :meth:`~MatchCore.next_decision`, so a driver that fails while delivering the
notices of one step has not let the match run ahead of what the seats were told.

Faults: a reply that is not an action is ``malformed`` (so is a reply the driver could not
parse), an action the engine refuses is ``illegal`` with the engine's reason, silence past the
limit is a ``timeout``, a seat that does not come back is ``disconnected``, and a bot whose
``choose`` raised (it says so, :class:`~.bot_errors.BotError`) has a ``bot_error`` whose reason
is the exception's type and message. Under ``forfeit`` the
first fault ends the match; under ``substitute`` the core plays :func:`substitute_action` for the
seat and strikes it, and the ``max_strikes``-th strike forfeits. With no policy at all (local
play's strict mode) a fault forfeits and the record names no policy.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..rules import (
    DEAL,
    Action,
    Game,
    GameState,
    IllegalActionError,
    LogEntry,
)
from ..rules.dealing import first_seat as random_first_seat
from ..rules.state import public_entry
from .bot_errors import BotError
from .decision import Decision, Request, TimeRules
from .faults import Fault
from .notices import HandEndNotice, Item, Outgoing, Step, StepNotice
from .records import MatchRecord, adjudicated_winner, forfeit_winner, record_from_state
from .results import FaultKind, FaultPolicy, MatchResult, Termination


class TurnError(ValueError):
    """A driver reported on a turn that is not the open request (a stale or unknown turn)."""


@dataclass(slots=True)
class _Pending:
    """The decision due and what its requests used so far."""

    decision: Decision
    bank: float
    """The seat's bank when the decision began."""
    used: float = 0.0
    """Seconds on the clock for this decision, over every request it took."""
    timed: bool = True
    """False once a request was reported without its time (untimed local play)."""
    last_turn: int | None = None
    open: Request | None = None
    """The request sent and not yet reported on."""


class MatchCore:
    """One match of ``game`` between the players ``names`` (seat 0 first), from ``seed``.

    Args:
        seed: fixes every deal, the first starter when ``first_seat`` is None, and the moves
            substituted for faults.
        first_seat: the first starter (first bidder in Moon); the record holds the seat used.
        time_control: the clock's rules; None plays untimed (every limit is ``inf``).
        seat_clocks: seats that play on another clock than ``time_control`` (a person's seat
            on the referee: docs/people.md), by seat.
        fault_policy, max_strikes: what a fault costs; None is strict local play (see above).
        max_deals: the referee's cap on deals (void deals count): a game nobody has won after
            this many ends ADJUDICATED, ranked by its scores (None: no cap).
        match_id: written into the record.

    Raises:
        ValueError: the arguments do not fit the game.
    """

    def __init__(
        self,
        game: Game,
        names: Sequence[str],
        *,
        seed: int,
        first_seat: int | None = None,
        time_control: TimeRules | None = None,
        fault_policy: FaultPolicy | None = None,
        max_strikes: int = 3,
        max_deals: int | None,
        match_id: str | None = None,
        seat_clocks: Mapping[int, TimeRules] | None = None,
    ) -> None:
        players = game.num_players
        if len(names) != players:
            raise ValueError(f"expected {players} names, one per seat, got {len(names)}")
        if max_strikes < 1:
            raise ValueError(f"max_strikes must be 1 or more, got {max_strikes}")
        start = random_first_seat(seed, players) if first_seat is None else first_seat
        if not 0 <= start < players:
            raise ValueError(f"first_seat {start} is not a seat of a {players}-player game")
        self.game = game
        self.names = tuple(names)
        self.seed = seed
        self.first_seat = start
        self.time_control = time_control
        self.fault_policy = fault_policy
        self.max_strikes = max_strikes
        self.max_deals = max_deals
        self.match_id = match_id
        self.state: GameState = game.new_game(seed, first_seat=start)
        self.clocks: tuple[TimeRules | None, ...] = tuple(
            (seat_clocks or {}).get(seat, time_control) for seat in range(players)
        )
        """Each seat's clock: ``time_control`` unless ``seat_clocks`` gives it another."""
        self.banks = [math.inf if clock is None else clock.bank for clock in self.clocks]
        """Each seat's bank, in seconds."""
        self.strikes = [0] * players
        self.result: MatchResult | None = None
        """Set once the match is over."""
        self._faults: list[Fault] = []
        self._think_ms: list[float | None] = []
        """One entry per step of ``state.history``."""
        self._substituted: list[int] = []
        self._turn = 0
        self._pending: _Pending | None = None
        self._substitute: tuple[int, float | None] | None = None
        """(turn, think time) of a move to substitute for a fault, applied on the next ask."""
        self._out: list[Item] = []

    @property
    def faults(self) -> tuple[Fault, ...]:
        """Every fault charged so far, in order."""
        return tuple(self._faults)

    @property
    def turn(self) -> int:
        """The number of the last request (0 before the first)."""
        return self._turn

    def take(self) -> list[Item]:
        """Return the notices and steps queued since the last call, in order, and forget them."""
        out, self._out = self._out, []
        return out

    # -- progress -----------------------------------------------------------------------------

    def next_decision(self) -> Decision | None:
        """Play what needs no bot, then return the decision due; None once the match is over.

        Asking again before the decision is answered returns the same decision.
        """
        if self.result is not None:
            return None
        if self._pending is not None:
            return self._pending.decision
        if self._substitute is not None:
            turn, think_ms = self._substitute
            self._substitute = None
            self._advance(substitute_action(self.state, self.seed, turn), think_ms)
        state = self.state
        while not state.is_terminal():
            if not state.is_chance():
                seat = state.current_seat
                decision = Decision(seat, len(self._think_ms), state.observe(seat))
                self._pending = _Pending(decision, self.banks[seat])
                return decision
            if self.max_deals is not None and state.deal_number >= self.max_deals:
                self.result = self._adjudicated(self.max_deals)
                return None
            self._advance(DEAL, None)
            state = self.state
        outcome = state.outcome()
        assert outcome is not None
        self.result = MatchResult(
            Termination.NORMAL,
            outcome.winner,
            outcome.scores,
            detail=outcome.detail,
            outcome=outcome,
        )
        return None

    def request(self) -> Request:
        """Open a request for the decision due: a new turn, with the time it allows."""
        pending = self._due()
        if pending.open is not None:
            raise TurnError(f"turn {pending.open.turn} is still open")
        self._turn += 1
        turn = pending.last_turn = self._turn
        decision = pending.decision
        clock = self.clocks[decision.seat]
        if clock is None:
            move_left = bank_left = limit = math.inf
            grace = 0.0
        else:
            move_left = max(0.0, clock.move - pending.used)
            bank_left = clock.charge(pending.bank, pending.used)
            grace = clock.grace
            limit = move_left + bank_left + grace
        request = Request(
            decision.seat,
            turn,
            decision.step,
            decision.observation,
            move_left,
            bank_left,
            grace,
            limit,
        )
        pending.open = request
        return request

    def reply(self, turn: int, answer: object, seconds: float | None) -> Fault | None:
        """Take the answer to request ``turn``, which took ``seconds`` (None: untimed).

        Returns the fault charged, or None when the answer was legal and played.

        Raises:
            TurnError: ``turn`` is not the open request.
        """
        pending, _ = self._close(turn, seconds)
        if not isinstance(answer, Action):
            return self._fault(pending, FaultKind.MALFORMED, f"not an action: {answer!r}")
        try:
            after = self.state.apply(answer)
        except IllegalActionError as exc:
            return self._fault(pending, FaultKind.ILLEGAL, str(exc), rule=exc.rule)
        self._charge(pending)
        self._pending = None
        self._advance(answer, self._ms(pending), after)
        return None

    def malformed(self, turn: int, reason: str, seconds: float | None) -> Fault:
        """Request ``turn`` was answered with something the driver could not read."""
        pending, _ = self._close(turn, seconds)
        return self._fault(pending, FaultKind.MALFORMED, reason)

    def bot_error(self, turn: int, error: BotError, seconds: float | None) -> Fault:
        """Request ``turn`` was answered with the bot's own error (its ``choose`` raised): a
        ``bot_error`` fault whose reason is the error's escaped, bounded text."""
        pending, _ = self._close(turn, seconds)
        return self._fault(pending, FaultKind.BOT_ERROR, error.reason)

    def timeout(self, turn: int, seconds: float) -> Fault:
        """Request ``turn`` got no reply within its limit; ``seconds`` is the time it ran."""
        pending, request = self._close(turn, seconds)
        reason = (
            f"no reply within {request.limit:g} s (move {request.move_left:g} s + bank "
            f"{request.bank_left:g} s + grace {request.grace:g} s)"
        )
        return self._fault(pending, FaultKind.TIMEOUT, reason)

    def dropped(self, turn: int, seconds: float | None) -> None:
        """The seat went away during request ``turn``: its time counts, the decision stays due.

        The driver waits for the seat (that wait is never charged) and opens a new request,
        or reports :meth:`disconnected`.
        """
        self._close(turn, seconds)

    def disconnected(self, reason: str) -> Fault:
        """The seat of the decision due is gone for good (no request may be open)."""
        pending = self._due()
        if pending.open is not None:
            raise TurnError(f"turn {pending.open.turn} is still open")
        return self._fault(pending, FaultKind.DISCONNECTED, reason)

    def stop(self, termination: Termination, detail: str) -> MatchResult:
        """End the match with nobody winning (void or aborted), wherever it is."""
        self._pending = None
        self._substitute = None
        self.result = MatchResult(termination, None, self.state.scores, detail=detail)
        return self.result

    # -- the end ------------------------------------------------------------------------------

    def record(
        self, *, time_control: dict[str, Any] | None = None, created: str | None = None
    ) -> MatchRecord:
        """Return the record of the finished match (``time_control``, ``created``: header)."""
        result = self.result
        if result is None:
            raise ValueError("the match is not over")
        normal = result.termination is Termination.NORMAL
        policy = self.fault_policy
        return record_from_state(
            self.state,
            self.names,
            self.seed,
            self.first_seat,
            think_ms=self._think_ms,
            time_control=time_control,
            created=created,
            termination=result.termination,
            winner=None if normal else result.winner,
            detail=None if normal else result.detail,
            faults=[fault.to_record() for fault in self._faults],
            substituted=self._substituted,
            match_id=self.match_id,
            fault_policy=None
            if policy is None
            else {"policy": policy.value, "max_strikes": self.max_strikes},
        )

    # -- inside -------------------------------------------------------------------------------

    def _due(self) -> _Pending:
        if self._pending is None:
            raise TurnError("no decision is due (ask next_decision first)")
        return self._pending

    def _close(self, turn: int, seconds: float | None) -> tuple[_Pending, Request]:
        pending = self._due()
        request = pending.open
        if request is None or request.turn != turn:
            open_turn = "none" if request is None else f"turn {request.turn}"
            raise TurnError(f"turn {turn} is not the open request ({open_turn})")
        pending.open = None
        if seconds is None:
            pending.timed = False
        else:
            pending.used += seconds
        return pending, request

    def _charge(self, pending: _Pending) -> None:
        seat = pending.decision.seat
        clock = self.clocks[seat]
        if clock is not None:
            self.banks[seat] = clock.charge(pending.bank, pending.used)

    def _fault(self, pending: _Pending, kind: FaultKind, reason: str, rule: str = "") -> Fault:
        """Charge a fault for the decision due, tell its seat, and apply the policy."""
        self._charge(pending)
        self._pending = None
        seat = pending.decision.seat
        if pending.last_turn is None:
            self._turn += 1
            pending.last_turn = self._turn
        turn = pending.last_turn
        self.strikes[seat] += 1
        strikes = self.strikes[seat]
        forfeited = self.fault_policy is not FaultPolicy.SUBSTITUTE or strikes >= self.max_strikes
        fault = Fault(seat, turn, len(self._think_ms), kind, reason, strikes, forfeited, rule)
        self._faults.append(fault)
        self._out.append(Outgoing(seat, fault.notice()))
        if forfeited:
            self.result = self._forfeit_result(fault)
        else:
            self._substituted.append(len(self._think_ms))
            self._substitute = (turn, self._ms(pending))
        return fault

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
                f"{fault.kind.label} at turn {fault.turn}: {fault.reason}"
            ),
        )

    def _adjudicated(self, deals: int) -> MatchResult:
        state = self.state
        scores = state.scores
        winner = adjudicated_winner(scores)
        if winner is None:
            top = max(scores)
            level = [self._side_name(side) for side, score in enumerate(scores) if score == top]
            verdict = f"{' and '.join(level)} share the highest score, a draw between them"
        else:
            verdict = f"{self._side_name(winner)} has the highest score and wins"
        shown = "/".join(str(score) for score in scores)
        return MatchResult(
            Termination.ADJUDICATED,
            winner,
            scores,
            detail=(
                f"adjudicated: no winner by the rules after {deals} "
                f"deal{'' if deals == 1 else 's'}, the referee's cap (max_deals); "
                f"scores {shown}: {verdict}"
            ),
        )

    def _side_name(self, side: int) -> str:
        seats = self.game.sides[side]
        return " & ".join(f"seat {seat} ({self.names[seat]})" for seat in seats)

    def _advance(
        self, action: Action, think_ms: float | None, after: GameState | None = None
    ) -> None:
        """Apply ``action`` and queue what every seat may see of it, then the step itself.

        ``after``: the state after ``action`` when the caller has it already (validating a
        reply computes it), so the engine does not apply the action twice.
        """
        before = self.state
        if after is None:
            after = before.apply(action)
        entry = LogEntry(before.current_seat, action)
        self.state = after
        self._think_ms.append(think_ms)
        scores, deal = after.scores, after.deal_number
        out = self._out
        seats = range(self.game.num_players)
        for seat in seats:
            out.append(Outgoing(seat, StepNotice(public_entry(entry, seat), scores, deal)))
        for hand in after.hand_results[len(before.hand_results) :]:
            for seat in seats:
                out.append(Outgoing(seat, HandEndNotice(hand, scores)))
        out.append(Step(len(self._think_ms) - 1, entry.seat, action, think_ms, before, after))

    @staticmethod
    def _ms(pending: _Pending) -> float | None:
        """The decision's think time in milliseconds, to the microsecond (what a record keeps)."""
        return round(pending.used * 1000.0, 3) if pending.timed else None


def substitute_action(state: GameState, seed: int, turn: int) -> Action:
    """Return the move played for a faulting seat: random, legal, and the same whenever the
    match is replayed with the same seed.
    """
    rng = random.Random(f"domino-arena/substitute/{seed}/{turn}")
    return rng.choice(state.legal_actions())

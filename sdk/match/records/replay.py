"""Replaying a record through the engine, and naming the first place where they differ."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass

from ...rules import CHANCE, GameOverError, GameState, IllegalActionError, RulesError, make_game
from ..results import Termination
from .model import MatchRecord, RecordResult, adjudicated_winner, forfeit_winner
from .writing import hand_json


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """What :func:`replay` found: all steps and the result agree, or the first difference."""

    steps: int
    """Number of steps in the record."""
    applied: int
    """Steps the engine accepted before the first difference (all of them when ok)."""
    error: str | None
    """The first difference, naming the step and its line; None when the record is sound."""
    failed_step: int | None
    """Index of the first step that differs; None when ok or when only the result differs."""
    state: GameState | None
    """The engine's state after the accepted steps; None if the game could not be built."""

    @property
    def ok(self) -> bool:
        return self.error is None

    def __str__(self) -> str:
        if self.error is None:
            return f"OK: {self.steps} steps, result matches"
        return self.error


def replay(record: MatchRecord) -> ReplayReport:
    """Re-run ``record`` through the engine and check every step and the result.

    The game is rebuilt as ``make_game(game, **options).new_game(seed, first_seat=...)``; each
    step must be taken by the seat to move and be legal, and at the end the engine's outcome
    and hand results must equal the result line.

    A match the referee stopped (format 2: ``forfeit``, ``adjudicated``, ``void``, ``aborted``)
    is checked the same way up to where it stopped: the scores and hands must be the engine's at
    that point, a forfeit must leave the game unfinished and name the winner
    :func:`forfeit_winner` gives, an adjudication must stop where a deal is due and name the
    winner :func:`adjudicated_winner` gives.
    Each fault must be charged to the seat that was to move at its step, and the substituted
    steps must be exactly the steps of faults that did not forfeit.
    """
    total = len(record.steps)
    result_line = total + len(record.faults) + 2

    def fail(message: str, applied: int, step: int | None, state: GameState | None) -> ReplayReport:
        return ReplayReport(total, applied, message, step, state)

    try:
        game = make_game(record.game, **record.options)
        state: GameState = game.new_game(record.seed, first_seat=record.first_seat)
    except RulesError as exc:
        return fail(f"header (line 1): {exc}", 0, None, None)
    if len(record.seats) != game.num_players:
        return fail(
            f"header (line 1): {len(record.seats)} seat names for a {game.num_players}-player game",
            0,
            None,
            state,
        )
    movers: list[int] = []
    for index, step in enumerate(record.steps):
        where = f"step {index} (line {index + 2})"
        to_move = state.current_seat
        movers.append(to_move)
        if state.is_terminal():
            return fail(
                f"{where}: the game is already over, but the record goes on with "
                f"{_who(step.seat)}: {step.action}",
                index,
                index,
                state,
            )
        if step.seat != to_move:
            return fail(
                f"{where}: the record has {_who(step.seat)} acting ('{step.action}'), "
                f"but {_who(to_move)} is to move",
                index,
                index,
                state,
            )
        try:
            state = state.apply(step.action)
        except (IllegalActionError, GameOverError) as exc:
            return fail(f"{where}: {_who(step.seat)}: {exc}", index, index, state)
    movers.append(state.current_seat)
    fault_error = _fault_difference(record, movers)
    if fault_error is not None:
        return fail(fault_error, total, None, state)
    where = f"result (line {result_line})"
    termination = record.result.termination
    if termination is Termination.NORMAL or (
        termination in (Termination.VOID, Termination.ABORTED) and state.is_terminal()
    ):
        if not state.is_terminal():
            return fail(
                f"{where}: the record ends after {total} steps but the game is not over "
                f"({_who(state.current_seat)} to move)",
                total,
                None,
                state,
            )
        expected = RecordResult.from_state(state)
        if termination is not Termination.NORMAL:
            # A match voided or aborted after the last step: the engine's outcome stands
            # beside it, but nobody won.
            expected = dataclasses.replace(
                expected, winner=None, detail=record.result.detail, termination=termination
            )
    else:
        if state.is_terminal():
            return fail(
                f"{where}: the record says '{termination}', but its steps end the game",
                total,
                None,
                state,
            )
        winner = None
        if termination is Termination.ADJUDICATED:
            if not state.is_chance():
                return fail(
                    f"{where}: an adjudicated game ends where a deal is due (the referee's "
                    f"cap on deals), but {_who(state.current_seat)} is to move",
                    total,
                    None,
                    state,
                )
            winner = adjudicated_winner(state.scores)
        if termination is Termination.FORFEIT:
            forfeits = [f for f in record.faults if f.forfeited]
            if not forfeits:
                return fail(f"{where}: a forfeit without a forfeiting fault", total, None, state)
            loser = game.side_of(forfeits[-1].seat)
            winner = forfeit_winner(state.scores, loser)
        expected = RecordResult(
            winner,
            state.scores,
            game.sides,
            state.hand_results,
            record.result.detail,
            termination,
        )
    difference = _result_difference(record.result, expected)
    if difference is not None:
        return fail(f"{where}: {difference}", total, None, state)
    return ReplayReport(total, total, None, None, state)


def _fault_difference(record: MatchRecord, movers: Sequence[int]) -> str | None:
    """Check the fault lines against who was to move at each step (``movers``, one per step
    and one for the position after the last).
    """
    total = len(record.steps)
    substituted = {i for i, step in enumerate(record.steps) if step.substituted}
    charged: set[int] = set()
    for k, fault in enumerate(record.faults):
        where = f"fault (line {total + k + 2})"
        to_move = movers[fault.step]
        if fault.seat != to_move:
            return (
                f"{where}: charged to seat {fault.seat} at step {fault.step}, "
                f"but {_who(to_move)} was to move"
            )
        if fault.forfeited:
            if fault.step != total or k != len(record.faults) - 1:
                return f"{where}: a forfeit must be the last fault, after the last step"
        elif fault.step not in substituted:
            return (
                f"{where}: seat {fault.seat} kept its seat, so the referee played step "
                f"{fault.step} for it, but that step is not marked substituted"
            )
        else:
            charged.add(fault.step)
    for index in sorted(substituted - charged):
        return f"step {index} (line {index + 2}): substituted, but no fault is charged there"
    if record.result.termination is Termination.NORMAL and any(f.forfeited for f in record.faults):
        return f"result (line {total + len(record.faults) + 2}): a forfeit ended a normal match?"
    return None


def _result_difference(recorded: RecordResult, engine: RecordResult) -> str | None:
    """Name the first field where the recorded result differs from the engine's."""
    if recorded.termination != engine.termination:
        return (
            f"'termination' differs: the record has {_json(recorded.termination)}, "
            f"the replay has {_json(engine.termination)}"
        )
    for key in ("winner", "scores", "sides"):
        mine, theirs = getattr(recorded, key), getattr(engine, key)
        if mine != theirs:
            return f"'{key}' differs: the record has {_json(mine)}, the engine has {_json(theirs)}"
    for i, (mine_hand, their_hand) in enumerate(zip(recorded.hands, engine.hands, strict=False)):
        if mine_hand != their_hand:
            return (
                f"hands[{i}] differs: the record has {_json(hand_json(mine_hand))}, "
                f"the engine has {_json(hand_json(their_hand))}"
            )
    if len(recorded.hands) != len(engine.hands):
        return (
            f"'hands' differs: the record has {len(recorded.hands)} hands, "
            f"the engine has {len(engine.hands)}"
        )
    if recorded.detail != engine.detail:
        return (
            f"'detail' differs: the record has {_json(recorded.detail)}, "
            f"the engine has {_json(engine.detail)}"
        )
    return None


def _json(value: object) -> str:
    def plain(v: object) -> object:
        if isinstance(v, tuple | list):
            return [plain(x) for x in v]
        return v

    return json.dumps(plain(value), ensure_ascii=False)


def _who(seat: int) -> str:
    return "chance (the deal)" if seat == CHANCE else f"seat {seat}"

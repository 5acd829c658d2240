"""The record types, and building the record of a game from its last state.

The words of a result (termination, fault kind) are the enums of :mod:`..match.results`; they
are :class:`enum.StrEnum` values, so a record's JSON holds the same words as ever.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ...rules import Action, GameState, HandResult
from ..results import FaultKind, Termination

FORMAT_VERSION: Final = 2
"""Version of the record layout written by :func:`write_record`."""

READABLE_FORMATS: Final = (1, 2)
"""Record layouts :func:`read_record` and :func:`replay` accept."""

RULES_VERSION: Final = "1"
"""Version of docs/rules.md the engines implement."""


class RecordError(ValueError):
    """A record that cannot be read: the message names the line and what is wrong there."""


@dataclass(frozen=True, slots=True)
class RecordStep:
    """One step of a match: who acted (-1 for the ``deal`` chance step) and what they did."""

    seat: int
    action: Action
    think_ms: float | None = None
    """Time the bot took to answer, in milliseconds; None for chance steps or when not timed."""
    substituted: bool = False
    """The referee played this step for a faulting seat (format 2)."""


@dataclass(frozen=True, slots=True)
class RecordFault:
    """A fault charged to a seat (format 2): what it did, and what the policy did about it."""

    seat: int
    turn: int
    """The request the fault belongs to (numbered from 1 through the match)."""
    step: int
    """Index of the step that was due; equal to the number of steps when the seat forfeited."""
    kind: FaultKind
    reason: str
    strikes: int
    """Faults charged to this seat so far in the match, this one included."""
    forfeited: bool
    """This fault lost the seat the match."""


@dataclass(frozen=True, slots=True)
class RecordResult:
    """The result line: the engine's outcome (or how the referee ended the match) and hands."""

    winner: int | None
    """The winning side; None only for a ``void`` or ``aborted`` match."""
    scores: tuple[int, ...]
    """Final score of each side."""
    sides: tuple[tuple[int, ...], ...]
    """The seats of each side."""
    hands: tuple[HandResult, ...]
    """Every deal of the game, void deals included."""
    detail: str
    termination: Termination = Termination.NORMAL
    """Format 2; anything but ``normal`` means play stopped early."""

    @classmethod
    def from_state(cls, state: GameState) -> RecordResult:
        """Return the result of the finished game ``state``.

        Raises:
            ValueError: the game is not over.
        """
        outcome = state.outcome()
        if outcome is None:
            raise ValueError(f"the game is not over ({state})")
        return cls(
            winner=outcome.winner,
            scores=outcome.scores,
            sides=outcome.sides,
            hands=state.hand_results,
            detail=outcome.detail,
        )


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """A whole match: header fields, steps in order and the result."""

    game: str
    """Registry name of the game."""
    options: dict[str, Any]
    """Options that recreate the game through ``make_game(game, **options)``."""
    seats: tuple[str, ...]
    """The name of the player in each seat."""
    seed: int
    first_seat: int
    steps: tuple[RecordStep, ...]
    result: RecordResult
    time_control: dict[str, Any] | None = None
    created: str | None = None
    """When the match was played (any text, e.g. ISO 8601); None keeps records reproducible."""
    rules_version: str = RULES_VERSION
    format_version: int = FORMAT_VERSION
    faults: tuple[RecordFault, ...] = ()
    """Every fault charged to a seat, in order (format 2)."""
    match_id: str | None = None
    fault_policy: dict[str, Any] | None = None
    """The referee's fault policy, e.g. ``{"policy": "substitute", "max_strikes": 3}``."""
    referee: dict[str, Any] | None = None
    """Which processes of a cluster handled the match: ``{"host": NODE, "gateways": [[NODE,
    ...], ...]}``, the match host and, for each seat, the gateways its bot's stream went
    through, in order (a bot that reconnected elsewhere has two). None on a single referee."""

    def without_think_times(self) -> MatchRecord:
        """This record with every think time left out (``null``): what is left depends on the
        seed and the moves alone, so a match played alike writes the same bytes (the referee's
        ``think_times=False``, docs/referee.md)."""
        steps = tuple(dataclasses.replace(step, think_ms=None) for step in self.steps)
        return dataclasses.replace(self, steps=steps)


def forfeit_winner(scores: Sequence[int], loser: int) -> int:
    """Return the side that wins when side ``loser`` forfeits.

    With two sides it is the other one. With three or more, it is the side with the highest
    score among the others, the lowest side index breaking a tie: the forfeit ends the game,
    so the game's own "most points wins" order decides between those still in it.
    """
    others = [side for side in range(len(scores)) if side != loser]
    if not others:
        raise ValueError("a forfeit needs at least two sides")
    return max(others, key=lambda side: (scores[side], -side))


def adjudicated_winner(scores: Sequence[int]) -> int | None:
    """Return the side alone at the highest score, or None when two or more share it: the
    result of a game the referee's cap on deals ended (:attr:`Termination.ADJUDICATED`).

    >>> adjudicated_winner((12, -3, 7)), adjudicated_winner((5, 5, -2))
    (0, None)
    """
    top = max(scores)
    return scores.index(top) if list(scores).count(top) == 1 else None


def record_from_state(
    final_state: GameState,
    seats: Sequence[str],
    seed: int,
    first_seat: int,
    *,
    think_ms: Sequence[float | None] | None = None,
    time_control: dict[str, Any] | None = None,
    created: str | None = None,
    termination: Termination = Termination.NORMAL,
    winner: int | None = None,
    detail: str | None = None,
    faults: Sequence[RecordFault] = (),
    substituted: Iterable[int] = (),
    match_id: str | None = None,
    fault_policy: dict[str, Any] | None = None,
) -> MatchRecord:
    """Build the record of a game from its last state (the log is ``state.history``).

    Args:
        final_state: the state at the end of the game, or where the referee stopped it.
        seats: the name of the player in each seat.
        seed, first_seat: the arguments the game was started with (``first_seat`` resolved:
            pass the seat that actually started, not None).
        think_ms: one entry per step of ``final_state.history``, or None for untimed play.
        termination: ``normal`` takes the result from the engine's outcome, the others from
            ``winner`` and ``detail``.
        winner, detail: the result of a match that did not end by the rules (``winner`` must
            be None for ``void`` and ``aborted``).
        faults, substituted: the faults charged, and the indices of the steps the referee
            played for a faulting seat.

    Raises:
        ValueError: a normal game is not over, or an argument does not fit the others.
    """
    game = final_state.game
    history = final_state.history
    if len(seats) != game.num_players:
        raise ValueError(f"expected {game.num_players} seat names, got {len(seats)}")
    if think_ms is None:
        times: Sequence[float | None] = [None] * len(history)
    elif len(think_ms) != len(history):
        raise ValueError(f"expected {len(history)} think times, one per step, got {len(think_ms)}")
    else:
        times = think_ms
    if termination is Termination.NORMAL:
        if winner is not None or detail is not None:
            raise ValueError("a normal result comes from the engine: pass no winner or detail")
        result = RecordResult.from_state(final_state)
    else:
        if termination is Termination.ADJUDICATED:
            if winner != adjudicated_winner(final_state.scores):
                raise ValueError(
                    f"an adjudicated result's winner is the side alone at the top of the "
                    f"scores {final_state.scores}, not {winner}"
                )
        elif (winner is None) != (termination is not Termination.FORFEIT):
            raise ValueError(
                f"a {termination} result needs {'a' if winner is None else 'no'} winner"
            )
        result = RecordResult(
            winner=winner,
            scores=final_state.scores,
            sides=game.sides,
            hands=final_state.hand_results,
            detail=detail or termination,
            termination=termination,
        )
    played_for = set(substituted)
    return MatchRecord(
        game=game.name,
        options=game.options(),
        seats=tuple(seats),
        seed=seed,
        first_seat=first_seat,
        steps=tuple(
            RecordStep(entry.seat, entry.action, ms, index in played_for)
            for index, (entry, ms) in enumerate(zip(history, times, strict=True))
        ),
        result=result,
        time_control=time_control,
        created=created,
        faults=tuple(faults),
        match_id=match_id,
        fault_policy=fault_policy,
    )

"""What the match core tells the seats, and the steps it reports, in the order they happen.

The core (:mod:`.core`) queues these as play goes on and a driver takes them with
:meth:`~.core.MatchCore.take`: each :class:`Outgoing` is one notice for one seat (already as that
seat may see it), each :class:`Step` one applied step for the driver's own ``on_step`` listener.
A driver delivers them in the order taken, so every seat hears of a step before the next
request and a fault before the move substituted for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, TypeAlias

from ..rules import Action, GameState, HandResult, LogEntry
from .results import FaultKind


@dataclass(frozen=True, slots=True)
class Step:
    """One step as it happened, reported after it was applied (deals and substitutes too)."""

    index: int
    seat: int
    """The acting seat, ``CHANCE`` (-1) for the deal."""
    action: Action
    think_ms: float | None
    before: GameState
    after: GameState


@dataclass(frozen=True, slots=True)
class StepNotice:
    """A step happened: ``step`` is as the receiving seat may see it (Moon discards hidden)."""

    step: LogEntry
    scores: tuple[int, ...]
    """Every side's score after the step."""
    deal: int


@dataclass(frozen=True, slots=True)
class HandEndNotice:
    """A hand was scored."""

    result: HandResult
    scores: tuple[int, ...]
    """Every side's score after the hand."""


@dataclass(frozen=True, slots=True)
class FaultNotice:
    """A fault charged to a seat, as the seat is told of it."""

    turn: int
    kind: FaultKind
    reason: str
    strikes: int
    forfeited: bool


Notice: TypeAlias = StepNotice | HandEndNotice | FaultNotice
"""What one seat is told during play (the end is told apart, with the match's result)."""


class Outgoing(NamedTuple):
    """One notice for one seat."""

    seat: int
    notice: Notice


Item: TypeAlias = Outgoing | Step
"""What :meth:`~.core.MatchCore.take` returns: notices for the seats and steps for the driver."""

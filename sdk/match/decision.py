"""The decision the match core waits for, the request that asks for it, and the clock's rules.

A decision is due from one seat at a time; it may take several requests (a seat that drops and
comes back is asked again, under a new turn number), and the time used accumulates over them:
a seat that reconnects does not get a fresh move time (docs/referee.md: time control).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..rules import Observation


class TimeRules(Protocol):
    """What the core needs of a time control: per-move time, bank, grace, and the bank charge.

    ``domino_arena.server.play.timecontrol.TimeControl`` is one; the core keeps no copy of its
    arithmetic, it calls :meth:`charge`.
    """

    @property
    def move(self) -> float: ...

    @property
    def bank(self) -> float: ...

    @property
    def grace(self) -> float: ...

    def charge(self, bank: float, elapsed: float) -> float:
        """Return the bank left after a move that took ``elapsed`` seconds (never below 0)."""
        ...


@dataclass(frozen=True, slots=True)
class Decision:
    """A decision due: which seat must act, at which step, seeing what."""

    seat: int
    step: int
    """Index of the step the decision makes."""
    observation: Observation


@dataclass(frozen=True, slots=True)
class Request:
    """One request for the decision due, with the time it allows (seconds; ``inf`` untimed).

    A driver sends it and reports back under ``turn``: a reply, a malformed reply, a timeout at
    ``limit`` seconds, or that the seat dropped.
    """

    seat: int
    turn: int
    """Numbered from 1 through the match; a reply echoes it."""
    step: int
    observation: Observation
    move_left: float
    """Free time left for this decision (its earlier requests used the rest)."""
    bank_left: float
    """The seat's bank, less what this decision drew from it already."""
    grace: float
    """The network's allowance, never charged."""
    limit: float
    """``move_left + bank_left + grace``: a reply later than this is a timeout."""

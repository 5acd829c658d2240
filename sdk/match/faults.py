"""A fault as the match core charges it: to whom, at which turn and step, and what it cost."""

from __future__ import annotations

from dataclasses import dataclass

from .notices import FaultNotice
from .records import RecordFault
from .results import FaultKind


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
    rule: str = ""
    """For an illegal action, the rule it broke (``IllegalActionError.rule``); else empty.
    Local play quotes it when it stops a game on a bot's illegal answer."""

    def to_record(self) -> RecordFault:
        return RecordFault(
            self.seat, self.turn, self.step, self.kind, self.reason, self.strikes, self.forfeited
        )

    def notice(self) -> FaultNotice:
        """The fault as the seat is told of it."""
        return FaultNotice(self.turn, self.kind, self.reason, self.strikes, self.forfeited)

"""Time control: a time per move, a bank for the match and a grace for the network.

The referee times each decision from the moment it sends the request to the moment the reply
arrives (docs/referee.md: time control). A move may take ``move`` seconds for free; time beyond that
is drawn from the bank; ``grace`` absorbs network delay and is never charged. A reply later
than move + bank + grace is a timeout.

>>> tc = TimeControl.parse("1s+10s/50ms")
>>> tc.deadline(bank=10.0), tc.charge(bank=10.0, elapsed=1.5)
(11.05, 9.5)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

_NUMBER: Final = r"([\d.]+)(ms|s)?"
_PATTERN: Final = re.compile(rf"^\s*{_NUMBER}\s*(?:\+\s*{_NUMBER})?\s*(?:/\s*{_NUMBER})?\s*$")


@dataclass(frozen=True, slots=True)
class TimeControl:
    """Seconds per move, seconds of bank per seat per match, seconds of network grace."""

    move: float = 1.0
    bank: float = 10.0
    grace: float = 0.05

    def __post_init__(self) -> None:
        for name in ("move", "bank", "grace"):
            value = getattr(self, name)
            if value < 0:
                raise ValueError(f"time control: {name} must not be negative, got {value}")
        if self.move <= 0:
            raise ValueError(f"time control: move must be positive, got {self.move}")

    def deadline(self, bank: float) -> float:
        """Return the seconds a seat with ``bank`` left may take before it times out."""
        return self.move + bank + self.grace

    def charge(self, bank: float, elapsed: float) -> float:
        """Return the bank left after a move that took ``elapsed`` seconds (never below 0)."""
        return max(0.0, bank - max(0.0, elapsed - self.move))

    @classmethod
    def from_ms(cls, move_ms: int, bank_ms: int, grace_ms: int) -> TimeControl:
        """Build from milliseconds; zeros take the defaults (the protocol's convention)."""
        default = cls()
        return cls(
            move=move_ms / 1000 if move_ms else default.move,
            bank=bank_ms / 1000 if bank_ms else default.bank,
            grace=grace_ms / 1000 if grace_ms else default.grace,
        )

    def to_ms(self) -> tuple[int, int, int]:
        return (round(self.move * 1000), round(self.bank * 1000), round(self.grace * 1000))

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """Parse ``MOVE[+BANK][/GRACE]`` with units s or ms, e.g. ``"1s+10s/50ms"``."""
        match = _PATTERN.match(text)
        if not match:
            raise ValueError(
                f"bad time control '{text}': expected MOVE[+BANK][/GRACE], e.g. '1s+10s/50ms'"
            )
        values = []
        for number, unit in (match.group(1, 2), match.group(3, 4), match.group(5, 6)):
            values.append(None if number is None else float(number) / (1000 if unit == "ms" else 1))
        default = cls()
        return cls(
            move=values[0] if values[0] is not None else default.move,
            bank=values[1] if values[1] is not None else default.bank,
            grace=values[2] if values[2] is not None else default.grace,
        )

    def __str__(self) -> str:
        return f"{self.move:g}s+{self.bank:g}s/{self.grace * 1000:g}ms"

"""Chains of laid tiles: the snaking line of the line games and the arms of a spinner.

A chain is laid by a :class:`Walker` from an open end in a direction (E, S, W, N): each tile
lies along it with its inner number towards where it came from; a double lies crosswise
(docs/rules.md 5.2 P12 and 5.3 S14: a double lies crosswise). A chain turns a corner the way players
turn one at the table's edge: the next tile lies across the end of the last one, flush with its
side, and the chain goes on from its far end.

:func:`snake` lays a whole line in a fixed width, turning down at each edge and coming back the
other way, so a long line fits a phone's width; :func:`pinwheel` lays one arm of a spinner
straight for a while, then turns it clockwise once, so four arms never cross.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from .tiles import SHORT, Spot

Pair = tuple[int, int]
"""A laid tile as its two numbers in the order the chain reads them (inner, outer)."""

STEP: Final = {"E": (1, 0), "S": (0, 1), "W": (-1, 0), "N": (0, -1)}
ANGLE: Final = {"E": 0, "S": 90, "W": 180, "N": 270}
CLOCKWISE: Final = {"E": "S", "S": "W", "W": "N", "N": "E"}
END_WORDS: Final = {"W": "west", "E": "east", "N": "north", "S": "south"}


@dataclass(frozen=True, slots=True)
class Laid:
    """A tile of a chain: its numbers as they lie and where it lies."""

    pair: Pair
    spot: Spot


@dataclass(slots=True)
class Walker:
    """Lays tiles one after another from an open end (``x``, ``y``) going ``direction``."""

    x: float
    y: float
    direction: str
    short: float = SHORT
    across: float = SHORT / 2
    """Half the width, across the chain, of what lies last (for a corner to sit flush)."""
    length: float = 0.0
    """How far the chain has gone since its last turn."""
    laid: list[Laid] = field(default_factory=list)

    def along(self, pair: Pair) -> float:
        """How far ``pair`` would reach along the chain: a double lies across, so less."""
        return self.short if pair[0] == pair[1] else 2 * self.short

    def spot(self, pair: Pair) -> tuple[Spot, float, float]:
        """Where ``pair`` would lie next, and the open end it would leave."""
        dx, dy = STEP[self.direction]
        reach = self.along(pair)
        angle = ANGLE[self.direction] + (90 if pair[0] == pair[1] else 0)
        spot = Spot(self.x + dx * reach / 2, self.y + dy * reach / 2, angle, self.short)
        return spot, self.x + dx * reach, self.y + dy * reach

    def place(self, pair: Pair) -> Laid:
        spot, self.x, self.y = self.spot(pair)
        self.across = self.short if pair[0] == pair[1] else self.short / 2
        self.length += self.along(pair)
        laid = Laid(pair, spot)
        self.laid.append(laid)
        return laid

    def turn(self, direction: str) -> None:
        """Turn the corner: the next tile lies across the end, flush with the last one's side."""
        dx, dy = STEP[self.direction]
        ex, ey = STEP[direction]
        self.x += dx * self.short / 2 - ex * self.across
        self.y += dy * self.short / 2 - ey * self.across
        self.direction = direction
        self.length = 0.0

    def copy(self) -> Walker:
        return replace(self, laid=[])


def snake(pairs: Sequence[Pair], width: float, short: float = SHORT) -> tuple[Walker, Walker]:
    """Lay a line (``pairs`` from its west end to its east end) within ``width``.

    Returns the walker that laid it (its position is the east end) and one standing at the west
    end, facing west. One row is centred; a longer line runs east, turns down at the right
    edge, comes back west, and so on; a double never turns a corner (it lies across).
    """
    margin = 2 * short
    walker = Walker(0.0, 0.0, "E", short)
    total = sum(walker.along(p) for p in pairs)
    start = (width - total) / 2 if total <= width - 2 * margin else margin
    walker.x = start
    west = Walker(start, 0.0, "W", short)
    row = "E"
    for pair in pairs:
        if walker.direction in ("E", "W") and pair[0] != pair[1]:
            dx = STEP[walker.direction][0]
            far = walker.x + dx * walker.along(pair)
            if not margin <= far <= width - margin:
                walker.turn("S")
                row = "W" if row == "E" else "E"
        elif walker.direction == "S" and walker.length >= 2 * short and pair[0] != pair[1]:
            walker.turn(row)
        walker.place(pair)
    return walker, west


def pinwheel(walker: Walker, pairs: Sequence[Pair], run: float) -> Walker:
    """Lay an arm from ``walker``: straight for ``run`` units, then turned clockwise once."""
    turned = False
    for pair in pairs:
        if not turned and pair[0] != pair[1] and walker.length + walker.along(pair) > run:
            walker.turn(CLOCKWISE[walker.direction])
            turned = True
        walker.place(pair)
    return walker

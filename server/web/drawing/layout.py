"""What each game's layout module hands the table: its drawing and its words.

Shared by the layout modules (straight.py, doubles.py, passing.py, moon.py) so the table can
place any of them the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .line import Laid, Pair
from .svg import Box, Drawing, extent
from .tiles import tile

EMPTY: Box = Box(-40.0, -20.0, 40.0, 20.0)
"""The extent of an empty table's middle."""


@dataclass(frozen=True, slots=True)
class Layout:
    """A game's middle of the table: the drawing, and sentences about it (the status lines
    drawn above it and read by screen readers)."""

    drawing: Drawing
    notes: Sequence[str] = field(default_factory=tuple)


def pairs(laid: Iterable[Mapping[str, Any]]) -> list[Pair]:
    """The ``shown`` text of laid tiles (``"4-6"``) as pairs, in the order they lie."""
    found = []
    for item in laid:
        a, b = str(item["shown"]).split("-")
        found.append((int(a), int(b)))
    return found


def tile_pair(text: str) -> Pair:
    """A tile's name (``"6-4"``) as its two numbers."""
    a, b = text.split("-")
    return int(a), int(b)


def draw_laid(laid: Iterable[Laid], last: str | None) -> list[Drawing]:
    """The tiles of a chain, the one named ``last`` outlined."""
    drawings = []
    for item in laid:
        a, b = item.pair
        name = f"{max(a, b)}-{min(a, b)}"
        drawings.append(tile(a, b, item.spot, last=name == last))
    return drawings


def combine(drawings: Iterable[Drawing]) -> Drawing:
    """Drawings in one coordinate system, as one (in the order given)."""
    items = list(drawings)
    box = extent(d.box for d in items) or EMPTY
    return Drawing("".join(d.svg for d in items), box)

"""The Passing Game's table: one line, doubles crosswise, snaking within the width
(docs/rules.md section 2)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .layout import Layout, combine, draw_laid, pairs
from .line import snake
from .marks import Move, end_ghosts, opening_ghosts
from .svg import Drawing
from .tiles import SHORT


def passing_layout(
    table: Mapping[str, Any], plays: Sequence[Move], last: str | None, width: float
) -> Layout:
    """Draw the line of ``table`` (its ``line`` and ``ends``)."""
    line = pairs(table["line"])
    drawings: list[Drawing] = []
    if not line:
        drawings += opening_ghosts([m for m in plays if m.end is None], SHORT)
        return Layout(combine(drawings), ("Nothing is laid yet.",))
    east, west = snake(line, width)
    drawings += draw_laid(east.laid, last)
    drawings += end_ghosts(west, line[0][0], [m for m in plays if m.end == "W"])
    drawings += end_ghosts(east, line[-1][1], [m for m in plays if m.end == "E"])
    west_end, east_end = line[0][0], line[-1][1]
    notes = (
        f"{len(line)} tiles in the line; its ends show {west_end} (west) and {east_end} (east).",
    )
    return Layout(combine(drawings), notes)

"""Straight Dominoes' table: the line, then the spinner with its four arms as a cross
(docs/rules.md 3.4), and the open-end count (3.5).

The spinner lies across the W-E line; arms W and E leave its long sides, N and S its short
ends. Each arm runs straight, then turns clockwise (line.pinwheel), so a long arm stays near the
middle and no two arms cross.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from .layout import Layout, combine, draw_laid, pairs, tile_pair
from .line import END_WORDS, Walker, pinwheel, snake
from .marks import Move, end_ghosts, opening_ghosts
from .svg import Drawing
from .tiles import SHORT, Spot, tile

RUNS: Final = {"W": 8 * SHORT, "E": 8 * SHORT, "N": 4 * SHORT, "S": 4 * SHORT}
"""How far each arm runs from the spinner before it turns."""


def straight_layout(
    layout: Mapping[str, Any], plays: Sequence[Move], last: str | None, width: float
) -> Layout:
    """Draw ``layout`` (the ``layout`` key of the table data)."""
    drawings: list[Drawing] = []
    count = int(layout["count"])
    line = pairs(layout["line"])
    spinner = layout["spinner"]
    if spinner is None:
        if not line:
            drawings += opening_ghosts([m for m in plays if m.end is None], SHORT)
            return Layout(combine(drawings), ("Nothing is laid yet.",))
        east, west = snake(line, width)
        drawings += draw_laid(east.laid, last)
        drawings += end_ghosts(west, line[0][0], [m for m in plays if m.end == "W"])
        drawings += end_ghosts(east, line[-1][1], [m for m in plays if m.end == "E"])
        notes = (f"The line, no spinner yet. Open ends add up to {count}.",)
        return Layout(combine(drawings), notes)
    number = tile_pair(str(spinner))[0]
    drawings.append(tile(number, number, Spot(0.0, 0.0, 90), last=str(spinner) == last))
    starts = {
        "W": Walker(-SHORT / 2, 0.0, "W"),
        "E": Walker(SHORT / 2, 0.0, "E"),
        "N": Walker(0.0, -SHORT, "N"),
        "S": Walker(0.0, SHORT, "S"),
    }
    arms: Mapping[str, Any] = layout["arms"]
    for name, walker in starts.items():
        arm = pairs(arms[name])
        pinwheel(walker, arm, RUNS[name])
        drawings += draw_laid(walker.laid, last)
        showing = arm[-1][1] if arm else number
        drawings += end_ghosts(walker, showing, [m for m in plays if m.end == name])
    sizes = ", ".join(f"{END_WORDS[n]} {len(arms[n])}" for n in starts)
    notes = (f"Spinner {spinner}; tiles on its arms: {sizes}. Open ends add up to {count}.",)
    return Layout(combine(drawings), notes)

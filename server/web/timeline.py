"""The replay's timeline: every step of a match on one bar, its hands and faults marked.

Pure data (no I/O, no markup): ``templates/timeline.html`` draws it as SVG, every mark a link
``?step=N`` (so it works without JavaScript; ``static/replay.js`` follows them in place). The
drawing has a fixed size in pixels, :data:`UNIT_MIN` to :data:`UNIT_MAX` a step, so a long
match scrolls inside its own box rather than shrinking its marks to nothing (docs/web.md: the
replay viewer).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from domino_arena.sdk.match.records import RecordFault

UNIT_MIN: Final = 4
"""Pixels a step takes at least (a 275-step Moon game is 1,100 pixels: it scrolls)."""
UNIT_MAX: Final = 40
FIT: Final = 600
"""Pixels a short match is spread over (its steps take more than the minimum)."""
PAD: Final = 24
"""Pixels left and right of the first and last step (room for their labels)."""
HEIGHT: Final = 68
LABEL_GAP: Final = 56
"""Pixels a hand's label needs from the previous one; a closer one is marked but not labelled
(its mark keeps its title)."""


def unit_of(total: int) -> int:
    """Pixels per step for a match of ``total`` steps."""
    return max(UNIT_MIN, min(UNIT_MAX, FIT // max(total, 1)))


def timeline(
    total: int, starts: Sequence[int], faults: Sequence[RecordFault], step: int
) -> dict[str, Any]:
    """The timeline of a match of ``total`` steps whose hands start at ``starts``
    (:func:`~.table.hand_starts`), with its ``faults``, at ``step``.

    Positions are pixels from the left: step ``s`` is centred at ``pad + s * unit``.
    """
    unit = unit_of(total)

    def x(s: int) -> int:
        return PAD + s * unit

    hands = []
    labelled = -LABEL_GAP
    for hand, start in enumerate(starts, start=1):
        shown = x(start) - labelled >= LABEL_GAP
        if shown:
            labelled = x(start)
        hands.append({"hand": hand, "step": start, "x": x(start), "label": shown})
    return {
        "total": total,
        "unit": unit,
        "pad": PAD,
        "width": 2 * PAD + total * unit,
        "height": HEIGHT,
        "step": step,
        "hands": hands,
        "faults": [
            {
                "step": f.step,
                "x": x(f.step),
                "seat": f.seat,
                "label": f.kind.label,
                "forfeited": f.forfeited,
            }
            for f in faults
        ],
    }

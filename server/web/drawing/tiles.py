"""One domino, drawn: a face with 0-6 pips in the classic layouts, a face-down back, or the
ghost of a legal play. Every picture of a tile on the site comes from :func:`tile`.

A tile is drawn in its own frame, lying east-west with its first number on the west half, then
turned by ``angle`` (a multiple of 90 degrees, clockwise) about its centre: a tile laid going
east reads first-then-second from left to right, one laid going north reads them upwards.
Hidden tiles are :func:`back`: they carry no number, not even in an attribute (docs/rules.md
1.14, 2.9, 3.11, 4.10: what each player sees).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Final

from .svg import Attr, Box, Drawing, el, num

SHORT: Final = 20.0
"""The short side of a tile on the table (the long side is twice as long), in user units."""
HAND_SHORT: Final = 16.0
"""The short side of a tile in a hand."""

PIP_SPOTS: Final[Mapping[int, tuple[tuple[int, int], ...]]] = {
    0: (),
    1: ((0, 0),),
    2: ((-1, -1), (1, 1)),
    3: ((-1, -1), (0, 0), (1, 1)),
    4: ((-1, -1), (1, -1), (-1, 1), (1, 1)),
    5: ((-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)),
    6: ((-1, -1), (0, -1), (1, -1), (-1, 1), (0, 1), (1, 1)),
}
"""Where the pips of each number sit in a square half, on a 3x3 grid (-1, 0, 1); the six runs
along the tile's long side, as on real dominoes."""


@dataclass(frozen=True, slots=True)
class Spot:
    """Where a tile lies: its centre, its turn (0, 90, 180 or 270 degrees clockwise from lying
    east-west) and its short side."""

    x: float
    y: float
    angle: int = 0
    short: float = SHORT

    @property
    def box(self) -> Box:
        """The tile's extent on the table."""
        across = self.angle % 180 == 90
        half_w, half_h = (self.short / 2, self.short) if across else (self.short, self.short / 2)
        return Box(self.x - half_w, self.y - half_h, self.x + half_w, self.y + half_h)

    @property
    def transform(self) -> str:
        where = f"translate({num(self.x)} {num(self.y)})"
        return where + (f" rotate({self.angle % 360})" if self.angle % 360 else "")


def pips(number: int, centre_x: float, short: float) -> str:
    """The pips of ``number`` in the square half centred at (``centre_x``, 0)."""
    step = short * 0.26
    radius = num(short * 0.09)
    return "".join(
        f'<circle class="pip" cx="{num(centre_x + dx * step)}" cy="{num(dy * step)}" '
        f'r="{radius}" fill="#1b1b1b"/>'
        for dx, dy in PIP_SPOTS[number]
    )


@cache
def _face(first: int, second: int, short: float, *, ghost: bool = False) -> str:
    """A tile's face and pips in its own frame (the same for every tile of those numbers)."""
    length = 2 * short
    face: dict[str, Attr] = {
        "class": "ghost-face" if ghost else "face",
        "x": num(-short),
        "y": num(-short / 2),
        "width": num(length),
        "height": num(short),
        "rx": num(short * 0.18),
        "fill": "#e3efff" if ghost else "#fbf8ef",
        "stroke": "#1565c0" if ghost else "#3a3a3a",
        "stroke-width": "1.5" if ghost else "1",
        "stroke-dasharray": "4 3" if ghost else None,
    }
    bar = {
        "class": "bar",
        "x1": "0",
        "y1": num(-short * 0.38),
        "x2": "0",
        "y2": num(short * 0.38),
        "stroke": "#6b6b6b",
    }
    return (
        el("rect", face)
        + el("line", bar)
        + pips(first, -short / 2, short)
        + pips(second, short / 2, short)
    )


@cache
def _glow(short: float) -> str:
    pad = 3.0
    return el(
        "rect",
        {
            "class": "glow",
            "x": num(-short - pad),
            "y": num(-short / 2 - pad),
            "width": num(2 * short + 2 * pad),
            "height": num(short + 2 * pad),
            "rx": num(short * 0.25),
            "fill": "none",
            "stroke": "#ff8f00",
            "stroke-width": "3",
        },
    )


def tile(
    first: int,
    second: int,
    spot: Spot,
    *,
    classes: str = "",
    last: bool = False,
    extra: Mapping[str, Attr] | None = None,
) -> Drawing:
    """A face-up tile showing ``first`` on its west half and ``second`` on its east half (before
    the turn), named for assistive technology by its numbers as they lie (``aria-label="6-4"``)
    and for scripts and tests by ``data-tile``, the tile's usual name (higher number first).

    ``last`` outlines it (the tile last played); ``extra`` adds attributes (a hand's playable
    tile becomes a button with ``data-action``).
    """
    body = (_glow(spot.short) if last else "") + _face(first, second, spot.short)
    kinds = " ".join(["tile", *classes.split(), *(["last"] if last else [])])
    name = f"{first}-{second}" + (", played last" if last else "")
    if extra:  # a button: its attributes replace the image's role and name
        values: dict[str, Attr] = {"class": kinds, "data-tile": f"{max(first, second)}-"
                                   f"{min(first, second)}", "role": "img", "aria-label": name,
                                   "transform": spot.transform}  # fmt: skip
        values.update(extra)
        return Drawing(el("g", values, body), spot.box)
    # The common case written out: a table holds dozens of tiles, and none holds a user's text.
    svg = (
        f'<g class="{kinds}" data-tile="{max(first, second)}-{min(first, second)}" role="img" '
        f'aria-label="{name}" transform="{spot.transform}">{body}</g>'
    )
    return Drawing(svg, spot.box)


@cache
def _back(short: float) -> str:
    """A tile's back in its own frame."""
    return el(
        "rect",
        {
            "class": "back-face",
            "x": num(-short),
            "y": num(-short / 2),
            "width": num(2 * short),
            "height": num(short),
            "rx": num(short * 0.18),
            "fill": "#31577a",
            "stroke": "#1d3550",
        },
    ) + el(
        "rect",
        {
            "class": "back-mark",
            "x": num(-short + 3),
            "y": num(-short / 2 + 3),
            "width": num(2 * short - 6),
            "height": num(short - 6),
            "rx": num(short * 0.12),
            "fill": "none",
            "stroke": "#9cb7d1",
        },
    )


def back(spot: Spot, *, hidden: str, classes: str = "") -> Drawing:
    """A face-down tile (``data-hidden`` says whose: ``hand``, ``widow``, ``discard``,
    ``boneyard``); its only name is "a hidden tile"."""
    svg = (
        f'<g class="tile back{" " + classes if classes else ""}" data-hidden="{hidden}" '
        f'role="img" aria-label="a hidden tile" transform="{spot.transform}">'
        f"{_back(spot.short)}</g>"
    )
    return Drawing(svg, spot.box)


def ghost(first: int, second: int, spot: Spot, *, action: str, label: str) -> Drawing:
    """The mark of a legal play where the tile would go: a dashed, see-through tile that is a
    focusable button carrying its action (``data-action``, bound by the play page's script)."""
    values: dict[str, Attr] = {
        "class": "legal ghost",
        "data-action": action,
        "tabindex": "0",
        "role": "button",
        "aria-label": label,
        "transform": spot.transform,
    }
    body = _face(first, second, spot.short, ghost=True)
    return Drawing(el("g", values, body), spot.box)


def legal_extra(action: str, label: str) -> dict[str, Attr]:
    """The attributes that make a drawn tile the button of a legal action."""
    return {"data-action": action, "tabindex": "0", "role": "button", "aria-label": label}

"""The seats around the table: each player's name plate (name, kind, side's score, whose turn)
and hand.

A name ``person:NAME`` is a person playing (issue 32's human play): the plate shows NAME with a
person icon and the word "person"; ``house:NAME`` is one of the house's bots. Every name is
escaped (svg.py) and cut to fit the plate, whole in its accessible name.

A hand is face up when the data has the seat's tiles (a finished match's replay, or the
viewer's own hand in human play) and otherwise one tile back per tile of ``hand_sizes``, with
no number anywhere (docs/rules.md 1.14, 2.9, 3.11, 4.10: what each player sees).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import ceil
from typing import Final

from .layout import combine, tile_pair
from .marks import Move
from .svg import Attr, Box, Drawing, el, num, text
from .tiles import HAND_SHORT, Spot, back, legal_extra, tile

PLATE_H: Final = 38.0
SIDE_W: Final = 84.0
"""The width of the column of a seat at the west or east side of the table."""
STEP: Final = HAND_SHORT + 4


@dataclass(frozen=True, slots=True)
class Who:
    """A seat's player as shown: the name and what kind of player it is."""

    name: str
    kind: str
    """``bot``, ``person`` or ``house``."""

    @property
    def spoken(self) -> str:
        """The name as assistive technology reads it ("person alice")."""
        return {"person": f"person {self.name}", "house": f"house bot {self.name}"}.get(
            self.kind, self.name
        )


def who(raw: str) -> Who:
    """The player named ``raw`` in a match's seats list."""
    for prefix in ("person", "house"):
        if raw.startswith(prefix + ":"):
            return Who(raw[len(prefix) + 1 :], prefix)
    return Who(raw, "bot")


def cut(name: str, room: int) -> str:
    """``name`` cut to ``room`` characters, with an ellipsis when cut."""
    return name if len(name) <= room else name[: room - 1] + "…"


@dataclass(frozen=True, slots=True)
class Seat:
    """Everything a seat's plate and hand show."""

    seat: int
    player: Who
    score: str
    """The seat's side's score as words ("52 points")."""
    extra: str
    """Game words for the seat (Moon's bid and tricks), or ""."""
    to_move: bool
    acted: bool
    """Whether this seat made the last move (its plate is outlined)."""
    tiles: Sequence[str] | None
    """The hand face up, or None: ``size`` backs."""
    size: int
    viewer: bool = False


def _person_icon(x: float, y: float) -> str:
    return el(
        "g",
        {"class": "person-icon", "fill": "#5e35b1", "aria-hidden": "true"},
        el("circle", {"cx": num(x + 5), "cy": num(y - 7), "r": "3"}),
        el("path", {"d": f"M{num(x)} {num(y + 1)}a5 4.5 0 0 1 10 0z"}),
    )


def plate(seat: Seat, x: float, y: float, width: float, *, narrow: bool) -> Drawing:
    """The name plate of ``seat`` with its top-left corner at (x, y): its facts on one line, or
    one a line on a ``narrow`` plate (a seat at the side of the table)."""
    classes = ["seat"] + (["to-move"] if seat.to_move else []) + (["acted"] if seat.acted else [])
    room = int((width - 14) / 6.6)
    kind = {"person": "person", "house": "house bot"}.get(seat.player.kind, "")
    turn = "▶ to move" if seat.to_move else ""
    facts = [f for f in (kind, seat.score, *seat.extra.split(" · "), turn) if f]
    rows = facts if narrow else [" · ".join(facts)]
    height = PLATE_H + 12 * (len(rows) - 1)
    parts = [
        el(
            "rect",
            {
                "class": "plate",
                "x": num(x),
                "y": num(y),
                "width": num(width),
                "height": num(height),
                "rx": "6",
                "fill": "#fff4c2" if seat.to_move else "#f4f1e8",
                "stroke": "#e0a000" if seat.to_move else "#ef6c00" if seat.acted else "#8d8a7d",
                "stroke-width": "3" if seat.to_move else "2" if seat.acted else "1",
                "stroke-dasharray": "5 3" if seat.acted and not seat.to_move else None,
            },
        ),
    ]
    icon_w = 13 if seat.player.kind == "person" else 0
    if seat.player.kind == "person":
        parts.append(_person_icon(x + 6, y + 16))
    parts.append(
        el(
            "text",
            {
                "class": "seat-name",
                "x": num(x + 7 + icon_w),
                "y": num(y + 15),
                "font-size": "12",
                "font-weight": "bold",
                "fill": "#1b1b1b",
            },
            text(cut(seat.player.name, room - icon_w // 6)),
        )
    )
    for i, row in enumerate(rows):
        parts.append(
            el(
                "text",
                {
                    "class": "seat-facts",
                    "x": num(x + 7),
                    "y": num(y + 29 + 12 * i),
                    "font-size": "10",
                    "fill": "#444",
                },
                text(cut(row, room + 3)),
            )
        )
    spoken = ", ".join(
        f
        for f in (
            seat.player.spoken,
            f"seat {seat.seat}",
            seat.score,
            seat.extra,
            "to move" if seat.to_move else "",
            "made the last move" if seat.acted else "",
        )
        if f
    )
    values: dict[str, Attr] = {
        "class": " ".join(classes),
        "data-seat": seat.seat,
        "role": "img",
        "aria-label": spoken,
    }
    return Drawing(el("g", values, *parts), Box(x, y, x + width, y + height))


def hand(seat: Seat, spots: Sequence[Spot], plays: Sequence[Move]) -> Drawing:
    """The hand of ``seat`` at ``spots`` (one per tile): face up, or backs."""
    drawings: list[Drawing] = []
    if seat.tiles is None:
        drawings = [back(spot, hidden="hand") for spot in spots[: seat.size]]
        values: dict[str, Attr] = {
            "class": "hand face-down",
            "data-seat": seat.seat,
            "data-size": seat.size,
        }
    else:
        for name, spot in zip(seat.tiles, spots, strict=False):
            a, b = tile_pair(name)
            mine = [m for m in plays if m.tile == name] if seat.viewer else []
            if len(mine) == 1:
                what = "discard" if mine[0].verb == "discard" else "play"
                extra = legal_extra(mine[0].action, f"{what} {name}")
                drawings.append(tile(a, b, spot, classes="playable legal", extra=extra))
            elif mine:
                drawings.append(tile(a, b, spot, classes="playable"))
            else:
                drawings.append(tile(a, b, spot))
        values = {"class": "hand", "data-seat": seat.seat}
    group = combine(drawings)
    return Drawing(el("g", values, group.svg), group.box)


def row_spots(count: int, x: float, y: float, width: float) -> list[Spot]:
    """Upright hand tiles in a row centred in ``width`` from ``x``; their tops at ``y``."""
    step = min(STEP, (width - HAND_SHORT) / max(count - 1, 1))
    start = x + (width - (step * (count - 1) + HAND_SHORT)) / 2 + HAND_SHORT / 2
    return [Spot(start + i * step, y + HAND_SHORT, 90, HAND_SHORT) for i in range(count)]


def column_spots(count: int, x: float, y: float, width: float, height: float) -> list[Spot]:
    """Hand tiles lying crosswise, stacked in columns from (x, y) within ``width``."""
    per_column = max(1, int(height // STEP))
    columns = max(1, ceil(count / per_column))
    column_w = min(2 * HAND_SHORT + 4, width / columns)
    spots = []
    for i in range(count):
        col, row = divmod(i, per_column)
        cx = x + (width - columns * column_w) / 2 + col * column_w + column_w / 2
        spots.append(Spot(cx, y + row * STEP + HAND_SHORT / 2, 0, HAND_SHORT))
    return spots

"""Three-Player Moon's table (docs/rules.md section 1): the current trick in the middle, each
tile on its player's side; the widow; the discard; the tricks taken so far.

The widow lies face down in the middle while the auction runs (1.2, 1.6) and is never shown face up
live: a spectator's data has no ``widow`` tile (it is None) and gets a back. A finished match's
replay has the tiles (``hands`` is there) and shows the widow and the discard face up, as
everything else. Tricks taken are public (every tile of a trick was played face up), so they
are drawn face up in a strip, each with its winner.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from .layout import Layout, combine, tile_pair
from .line import STEP
from .svg import Box, Drawing, el, num, text
from .tiles import SHORT, Spot, back, tile

MINI: Final = 12.0
"""The short side of a tile in the strip of taken tricks."""
SUITS: Final = {
    "0": "blanks",
    "1": "ones",
    "2": "twos",
    "3": "threes",
    "4": "fours",
    "5": "fives",
    "6": "sixes",
    "doubles": "doubles",
    "none": "no trump",
}


def trump_words(trump: str | None) -> str:
    """Moon's trump as a player says it ("sixes", "doubles", "no trump")."""
    return "not named yet" if trump is None else SUITS.get(trump, trump)


def _label(x: float, y: float, words: str, size: int = 10) -> Drawing:
    values = {
        "x": num(x),
        "y": num(y),
        "class": "felt-note",
        "font-size": str(size),
        "fill": "#f1f8e9",
        "text-anchor": "middle",
    }
    width = 0.55 * size * len(words)
    return Drawing(
        el("text", values, text(words)), Box(x - width / 2, y - size, x + width / 2, y + 3)
    )


def _face(name: str, spot: Spot, last: str | None) -> Drawing:
    a, b = tile_pair(name)
    return tile(a, b, spot, last=name == last)


def _tricks(
    tricks: Sequence[Mapping[str, Any]], names: Sequence[str], last: str | None, width: float
) -> Drawing:
    """The taken tricks in a grid: each its number, its three tiles and who took it."""
    parts: list[Drawing] = []
    cell_w, cell_h = 150.0, 2 * MINI + 22
    per_row = max(1, int(width // cell_w))
    for i, trick in enumerate(tricks):
        x = (i % per_row) * cell_w
        y = (i // per_row) * cell_h
        parts.append(_label(x + 8, y + MINI + 4, f"{i + 1}", 10))
        for j, play in enumerate(trick["plays"]):
            spot = Spot(x + 24 + j * (MINI + 4), y + MINI, 90, MINI)
            parts.append(_face(str(play["tile"]), spot, last))
        winner = names[int(trick["winner"])]
        parts.append(_label(x + 24 + 3 * (MINI + 4) + 36, y + MINI + 4, f"→ {winner}", 10))
    return combine(parts)


def moon_layout(
    table: Mapping[str, Any],
    names: Sequence[str],
    where: Mapping[int, str],
    last: str | None,
    width: float,
) -> Layout:
    """Draw the middle of a Moon table; ``where`` gives each seat's side of the table (S, W, N,
    E) and ``names`` each seat's short name."""
    face_up = "hands" in table
    phase = str(table["phase"])
    drawings: list[Drawing] = []
    middle: list[Drawing] = []
    corner_x = -5.5 * SHORT
    if phase == "bidding":
        spot = Spot(0.0, 0.0, 0)
        if face_up and table.get("widow"):
            middle.append(_face(str(table["widow"]), spot, last))
        else:
            middle.append(back(spot, hidden="widow"))
        middle.append(_label(0.0, SHORT * 1.4, "widow"))
    else:
        taken = "widow" if table.get("bidder") is None else "widow (taken)"
        if face_up and table.get("widow"):
            middle.append(_face(str(table["widow"]), Spot(corner_x, -2.2 * SHORT, 0), last))
            middle.append(_label(corner_x, -0.9 * SHORT, taken))
        if face_up and table.get("discard"):
            middle.append(_face(str(table["discard"]), Spot(corner_x, 1.2 * SHORT, 0), last))
            middle.append(_label(corner_x, 2.5 * SHORT, "discard"))
        elif not face_up and phase in ("trump", "playing") and table.get("bidder") is not None:
            middle.append(back(Spot(corner_x, 1.2 * SHORT, 0), hidden="discard"))
            middle.append(_label(corner_x, 2.5 * SHORT, "discard"))
    for play in table["trick"]:
        direction = where.get(int(play["seat"]), "S")
        dx, dy = STEP[direction]
        spot = Spot(dx * 2 * SHORT, dy * 1.5 * SHORT, 90 if dy else 0)
        middle.append(_face(str(play["tile"]), spot, last))
    drawings.append(combine(middle))
    drawn = combine(drawings)
    half = max(-drawn.box.x0, drawn.box.x1, 2 * SHORT + SHORT)  # the trick stays in the middle
    low = max(drawn.box.y1, 2.5 * SHORT)
    centre = Drawing(drawn.svg, Box(-half, min(drawn.box.y0, -2.5 * SHORT), half, low))
    parts = [centre]
    tricks = list(table["tricks"])
    if tricks:
        strip = _tricks(tricks, names, last, width)
        y = centre.box.y1 + 20 - strip.box.y0
        x = -strip.box.width / 2 - strip.box.x0
        parts.append(_label(0.0, centre.box.y1 + 12, "tricks taken", 10))
        parts.append(
            Drawing(
                strip.placed(x + strip.box.x0, y + strip.box.y0),
                Box(x + strip.box.x0, y + strip.box.y0, x + strip.box.x1, y + strip.box.y1),
            )
        )
    notes = [_contract(table, names)]
    won = ", ".join(f"{names[s]} {n}" for s, n in enumerate(table["tricks_won"]))
    notes.append(f"Tricks won: {won}.")
    return Layout(combine(parts), notes)


def _contract(table: Mapping[str, Any], names: Sequence[str]) -> str:
    bids = ", ".join(
        f"{names[int(b['seat'])]} {'pass' if b['bid'] is None else b['bid']}" for b in table["bids"]
    )
    if table.get("bidder") is None:
        return f"Bidding: {bids or 'no bid yet'}."
    who = names[int(table["bidder"])]
    return f"{who} bid {table['contract']}; trump: {trump_words(table.get('trump'))}."

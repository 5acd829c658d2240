"""A match's table as a picture: the entry point :func:`draw_table`.

It takes exactly the data of ``server/web/table.py`` (``draw_public`` for a live view,
``draw_table`` for a replay) and draws it as it lies: the felt in the middle with the game's
layout (one module per game), the seats around it (seats.py) with names, scores and hands,
the boneyard, and the last move highlighted. The picture is one SVG with a viewBox, so it
scales down to a phone's width; no JavaScript is needed to see it. Beside it goes a short text
of the same facts, for screen readers and readers without SVG.

Seat 0 sits at the bottom (or the viewer, in human play) and play runs clockwise (docs/rules.md
0.2): with four seats, west, north and east follow; with three, west and east; with two, north.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any, Final

from markupsafe import Markup

from .doubles import doubles_layout
from .layout import EMPTY, Layout, combine, tile_pair
from .marks import Move, moves
from .moon import moon_layout, trump_words
from .passing import passing_layout
from .seats import PLATE_H, SIDE_W, Seat, column_spots, hand, plate, row_spots, who
from .straight import straight_layout
from .svg import Box, Drawing, el, markup, num, text
from .tiles import HAND_SHORT, Spot, back, tile

VIEW_W: Final = 520.0
"""The picture's width in user units (it is drawn at the width of the page, at most
``style.css``'s limit)."""
PAD: Final = 10.0
POSITIONS: Final = {2: ("S", "N"), 3: ("S", "W", "E"), 4: ("S", "W", "N", "E")}
BONE: Final = 10.0
"""The short side of a boneyard tile."""
FELT: Final = "#2e6b40"


def _where(seats: int, viewer: int | None) -> dict[int, str]:
    """Each seat's side of the table; the viewer (else seat 0) at the bottom."""
    sides = POSITIONS.get(seats, ("S", "W", "N", "E") * 2)
    first = viewer if viewer is not None and 0 <= viewer < seats else 0
    return {seat: sides[(seat - first) % seats] for seat in range(seats)}


def _side_of(table: Mapping[str, Any], seat: int) -> int:
    for side, members in enumerate(table.get("sides") or ()):
        if seat in members:
            return side
    return seat % max(len(table["scores"]), 1)


def _last_words(
    last: Mapping[str, Any] | None, names: Sequence[str], face_up: bool
) -> tuple[str, str | None, int | None]:
    """The caption of the last move, the tile it laid (to outline) and the seat that made it.

    A discard's tile is named only face up (a replay): live, it is hidden (docs/rules.md 1.6)."""
    if not last:
        return "", None, None
    seat = last.get("seat")
    seat = None if seat is None or int(seat) < 0 or int(seat) >= len(names) else int(seat)
    words = str(last.get("action", "")).split()
    if seat is None or not words or words[0] == "deal":
        return "The tiles were dealt.", None, None
    name = names[seat]
    verb, rest = words[0], words[1:]
    tile_name = None
    if verb == "play" and rest:
        a, b = tile_pair(rest[0])
        tile_name = f"{max(a, b)}-{min(a, b)}"
        caption = f"{name} played {tile_name}"
    elif verb == "discard":
        shown = face_up and rest and rest[0] != "?"
        caption = f"{name} discarded {rest[0] if shown else 'a tile, face down'}"
    elif verb == "bid" and rest:
        caption = f"{name} bid {rest[0]}"
    elif verb == "trump" and rest:
        caption = f"{name} named trump: {trump_words(rest[0])}"
    elif verb == "draw":
        caption = f"{name} drew a tile"
    elif verb == "pass":
        caption = f"{name} passed"
    else:
        caption = f"{name}: {' '.join(words)}"
    return caption + ".", tile_name, seat


def _layout(
    table: Mapping[str, Any],
    names: Sequence[str],
    where: Mapping[int, str],
    plays: Sequence[Move],
    *,
    last_tile: str | None,
    width: float,
) -> Layout:
    game = table["game"]
    if game == "straight":
        return straight_layout(table["layout"], plays, last_tile, width)
    if game == "doubles":
        return doubles_layout(table, plays, last_tile, width)
    if game == "passing":
        return passing_layout(table, plays, last_tile, width)
    if game == "moon":
        return moon_layout(table, names, where, last_tile, width)
    return Layout(Drawing("", EMPTY), (f"No drawing for the game {game}.",))


def _boneyard(table: Mapping[str, Any], width: float) -> tuple[Drawing, str] | None:
    """The boneyard: face up in a replay, else one back per tile; and its words."""
    if "boneyard" in table:
        tiles: list[str] | None = list(table["boneyard"])
        size = len(tiles or ())
    elif "boneyard_size" in table:
        tiles, size = None, int(table["boneyard_size"])
    else:
        return None
    step = min(BONE + 3, (width - BONE) / max(size, 1))
    drawings = []
    for i in range(size):
        spot = Spot(BONE / 2 + i * step, BONE, 90, BONE)
        if tiles is None:
            drawings.append(back(spot, hidden="boneyard"))
        else:
            a, b = tile_pair(tiles[i])
            drawings.append(tile(a, b, spot))
    words = f"Boneyard: {size} tile{'s' if size != 1 else ''}" + (
        "." if tiles is not None else ", face down."
    )
    group = combine(drawings) if drawings else Drawing("", Box(0, 0, 0, 0))
    return Drawing(el("g", {"class": "boneyard"}, group.svg), group.box), words


def _line(
    x: float,
    y: float,
    words: str,
    *,
    size: int = 11,
    cls: str = "felt-note",
    anchor: str = "middle",
    bold: bool = False,
    fill: str = "#f1f8e9",
) -> str:
    return el(
        "text",
        {
            "x": num(x),
            "y": num(y),
            "class": cls,
            "font-size": str(size),
            "font-weight": "bold" if bold else None,
            "fill": fill,
            "text-anchor": anchor,
        },
        text(words),
    )


def _seats(table: Mapping[str, Any], names: Sequence[str], last_seat: int | None) -> list[Seat]:
    face_up = "hands" in table
    viewer = table.get("viewer")
    own = table.get("own_hand")
    teams = len(table["scores"]) < len(table["hand_sizes"])
    found = []
    for seat, size in enumerate(table["hand_sizes"]):
        score = table["scores"][_side_of(table, seat)]
        extra = ""
        if table["game"] == "moon":
            bids = [b["bid"] for b in table["bids"] if b["seat"] == seat]
            bid = "" if not bids else "passed" if bids[-1] is None else f"bid {bids[-1]}"
            won = table["tricks_won"][seat] if table["tricks_won"] else 0
            took = (
                f"{won} trick{'s' if won != 1 else ''}"
                if table["phase"] == "playing" or won
                else ""
            )
            extra = " · ".join(w for w in (bid, took) if w)
        tiles: list[str] | None = None
        if face_up:
            tiles = list(table["hands"][seat])
        elif viewer == seat and own is not None:
            tiles = list(own)
        found.append(
            Seat(
                seat=seat,
                player=who(names[seat] if seat < len(names) else f"seat {seat}"),
                score=f"{'team ' if teams else ''}{score} pts",
                extra=extra,
                to_move=table.get("to_move") == seat,
                acted=last_seat == seat,
                tiles=tiles,
                size=len(tiles) if tiles is not None else int(size),
                viewer=viewer == seat,
            )
        )
    return found


def draw_table(
    table: Mapping[str, Any],
    names: Sequence[str],
    *,
    last: Mapping[str, Any] | None = None,
    legal: Sequence[str] = (),
    label: str = "the table",
) -> Markup:
    """Draw ``table`` (the data of ``server/web/table.py``) with the players ``names`` (one per
    seat, as the match lists them), the move ``last`` (``{"seat", "action"}``; default: the
    table's own ``last``) outlined, and marks for the viewer's ``legal`` plays."""
    count = len(table["hand_sizes"])
    seats_names = [who(names[s] if s < len(names) else f"seat {s}").name for s in range(count)]
    face_up = "hands" in table
    where = _where(count, table.get("viewer"))
    caption, last_tile, last_seat = _last_words(last or table.get("last"), seats_names, face_up)
    plays = moves(legal)
    seats = _seats(table, names, last_seat)
    has_sides = any(d in ("W", "E") for d in where.values())
    side_w = SIDE_W + 8 if has_sides else 0.0
    felt_x0, felt_x1 = side_w, VIEW_W - side_w
    inner = felt_x1 - felt_x0 - 2 * PAD
    layout = _layout(table, seats_names, where, plays, last_tile=last_tile, width=inner)
    by_where = {d: s for s, d in where.items()}
    band = PLATE_H + 2 * HAND_SHORT + 20
    felt_y0 = band if "N" in by_where else PAD

    felt: list[str] = []
    y = felt_y0 + 18
    if caption:
        felt.append(
            _line(VIEW_W / 2, y, caption, size=12, bold=True, cls="felt-caption", fill="#ffe082")
        )
        y += 16
    chars = int(inner / 5.6)
    for note in layout.notes:
        for row in textwrap.wrap(note, chars):
            felt.append(_line(VIEW_W / 2, y, row))
            y += 14
    y += 8
    drawing = layout.drawing
    scale = min(1.0, inner / max(drawing.box.width, 1.0))
    x = felt_x0 + PAD + (inner - drawing.box.width * scale) / 2
    felt.append(el("g", {"class": "layout"}, drawing.placed(x, y, scale)))
    y += drawing.box.height * scale + 12
    bones = _boneyard(table, inner)
    if bones is not None:
        pile, words = bones
        felt.append(_line(felt_x0 + PAD, y + 4, words, anchor="start", size=10))
        y += 10
        felt.append(pile.placed(felt_x0 + PAD, y))
        y += pile.box.height + 10
    longest = max((s.size for s in seats if where[s.seat] in ("W", "E")), default=0)
    side_need = PLATE_H + 4 * 12 + 10 + min(longest, 8) * (HAND_SHORT + 4)
    felt_y1 = max(y, felt_y0 + (side_need + 12 if has_sides else 0), felt_y0 + 120)

    people: list[str] = []
    for seat in seats:
        side = where[seat.seat]
        n = seat.size
        if side in ("S", "N"):
            plate_w = min(240.0, VIEW_W - 2 * PAD)
            px = (VIEW_W - plate_w) / 2
            if side == "N":
                plate_y, hand_y = PAD, PAD + PLATE_H + 6
            else:
                hand_y, plate_y = felt_y1 + 8, felt_y1 + 8 + 2 * HAND_SHORT + 8
            spots = row_spots(n, PAD, hand_y, VIEW_W - 2 * PAD)
            people.append(plate(seat, px, plate_y, plate_w, narrow=False).svg)
        else:
            cx0 = 4.0 if side == "W" else VIEW_W - SIDE_W - 4
            top = felt_y0 + 6
            name_plate = plate(seat, cx0, top, SIDE_W, narrow=True)
            people.append(name_plate.svg)
            hand_top = name_plate.box.y1 + 8
            spots = column_spots(n, cx0, hand_top, SIDE_W, felt_y1 - hand_top - 6)
        people.append(hand(seat, spots, plays if seat.viewer else ()).svg)
    height = felt_y1 + (band if "S" in by_where else PAD)

    label_words = f"{label}: {table['game']}, deal {table['deal']}"
    svg = el(
        "svg",
        {
            "xmlns": "http://www.w3.org/2000/svg",
            "class": "domino-table",
            "viewBox": f"0 0 {num(VIEW_W)} {num(height)}",
            "width": "100%",
            "role": "group",
            "aria-label": label_words,
            "font-family": "system-ui, sans-serif",
            "data-game": table["game"],
        },
        el("title", None, text(label_words)),
        el(
            "rect",
            {
                "class": "felt",
                "x": num(felt_x0),
                "y": num(felt_y0),
                "width": num(felt_x1 - felt_x0),
                "height": num(felt_y1 - felt_y0),
                "rx": "14",
                "fill": FELT,
                "stroke": "#5d4037",
                "stroke-width": "4",
            },
        ),
        *felt,
        *people,
    )
    return markup(
        f'<section class="table" data-game="{text(table["game"])}">'
        + svg
        + _summary(table, seats, seats_names, layout, caption)
        + "</section>"
    )


def _summary(
    table: Mapping[str, Any],
    seats: Sequence[Seat],
    names: Sequence[str],
    layout: Layout,
    caption: str,
) -> str:
    """The same facts in words: who sits where with what score, whose turn, the layout's notes."""
    players = "; ".join(
        f"{s.player.spoken}: {s.score}"
        + (f", {s.extra}" if s.extra else "")
        + (", to move" if s.to_move else "")
        for s in seats
    )
    rows = [caption, f"Deal {table['deal']}, {table['phase']}. {players}.", *layout.notes]
    items = "".join(el("li", None, text(r)) for r in rows if r)
    return el("ul", {"class": "table-notes"}, items)

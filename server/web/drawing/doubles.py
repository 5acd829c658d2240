"""Doubles' table: every double a spinner, and the locked numbers (docs/rules.md section 4).

The data names the tiles in the order they were placed (``placed``), the numbers the open ends
show (``ends``, a multiset: ends showing the same number are alike, 4.4 and D12) and the
unlocked numbers; it does not say which end each tile went on. :func:`rebuild` finds a way the
tiles could have been laid that leaves exactly those ends, and the drawing shows that layout:
one panel per spinner (a cross like Straight's, with its double in the middle), each arm running
out to an open end or to the next spinner, which has its own panel. An open end showing a
locked number carries a padlock: only its own double may go there (4.5).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from .layout import Layout, combine, draw_laid, tile_pair
from .line import STEP, Walker, pinwheel
from .marks import Move, end_ghosts, opening_ghosts
from .svg import Box, Drawing, el, num, text
from .tiles import SHORT, Spot, tile

RUN: Final = {"W": 6 * SHORT, "E": 6 * SHORT, "N": 4 * SHORT, "S": 4 * SHORT}
SIDES: Final = ("W", "E", "N", "S")
PANEL_GAP: Final = 12.0


@dataclass(slots=True)
class Branch:
    """A chain leaving one side of a spinner: its tiles (inner, outer), and what ends it."""

    side: str
    showing: int
    tiles: list[tuple[int, int]] = field(default_factory=list)
    child: int | None = None
    """The spinner laid on its end (an index into the spinners), or None: the end is open."""


@dataclass(slots=True)
class Spinner:
    """A laid double and the chains leaving it; ``parent`` is where it was laid."""

    number: int
    branches: list[Branch]
    parent: tuple[int, str] | None = None


def _matches(placed: Sequence[tuple[int, int]], ends: Counter[int]) -> list[int] | None:
    """The number each placed tile was matched on, so that the open ends come out as ``ends``.

    A search over the choices that matter (a tile fitting two open numbers), remembering the
    positions that led nowhere; the first tile is the opening double, matched on nothing."""
    failed: set[tuple[int, tuple[int, ...]]] = set()

    def search(i: int, counts: tuple[int, ...], unlocked: frozenset[int]) -> list[int] | None:
        if i == len(placed):
            return [] if Counter({n: c for n, c in enumerate(counts) if c}) == ends else None
        if (i, counts) in failed:
            return None
        a, b = placed[i]
        options = [a] if a == b else [n for n in (a, b) if n in unlocked]
        for number in options:
            if not counts[number]:
                continue
            after = list(counts)
            after[number] -= 1
            if a == b:
                after[a] += 3
            else:
                after[b if number == a else a] += 1
            rest = search(i + 1, tuple(after), unlocked | {a} if a == b else unlocked)
            if rest is not None:
                return [number, *rest]
        failed.add((i, counts))
        return None

    first = placed[0][0]
    counts = tuple(4 if n == first else 0 for n in range(7))
    rest = search(1, counts, frozenset({first}))
    return None if rest is None else [first, *rest]


def rebuild(placed: Sequence[str], ends: Sequence[int]) -> list[Spinner]:
    """A layout of the ``placed`` tiles that leaves the open ends ``ends``: its spinners, the
    opening double first. Each tile goes on the shortest open chain showing its number."""
    tiles = [tile_pair(t) for t in placed]
    if not tiles:
        return []
    matched = _matches(tiles, Counter(ends)) or [tiles[0][0], *(t[0] for t in tiles[1:])]
    first = tiles[0][0]
    spinners = [Spinner(first, [Branch(side, first) for side in SIDES])]
    for (a, b), number in zip(tiles[1:], matched[1:], strict=True):
        open_ends = [
            (len(branch.tiles), k, branch)
            for k, spinner in enumerate(spinners)
            for branch in spinner.branches
            if branch.child is None and branch.showing == number
        ]
        if not open_ends:  # the data contradicts itself; draw what can be drawn
            continue
        _, k, branch = min(open_ends, key=lambda found: found[:2])
        if a == b:
            branch.child = len(spinners)
            outgoing = [Branch(side, a) for side in ("E", "N", "S")]
            spinners.append(Spinner(a, outgoing, parent=(k, branch.side)))
        else:
            other = b if number == a else a
            branch.tiles.append((number, other))
            branch.showing = other
    return spinners


def _padlock(x: float, y: float, number: int) -> Drawing:
    """The mark of an open end showing a locked number."""
    body = el(
        "rect",
        {
            "x": num(x - 5),
            "y": num(y - 2),
            "width": "10",
            "height": "8",
            "rx": "1.5",
            "class": "lock",
            "fill": "#c62828",
        },
    )
    shackle = el(
        "path",
        {
            "d": f"M{num(x - 3)} {num(y - 2)}v-3a3 3 0 0 1 6 0v3",
            "fill": "none",
            "stroke": "#c62828",
            "stroke-width": "1.6",
            "class": "lock-shackle",
        },
    )
    label = f"an open end showing {number}, locked until its double is laid"
    values = {"class": "locked-end", "role": "img", "aria-label": label}
    return Drawing(el("g", values, body + shackle), Box(x - 5, y - 8, x + 5, y + 6))


def _tag(x: float, y: float, words: str) -> Drawing:
    """A small caption on the felt (where an arm leads, where a spinner came from)."""
    values = {
        "x": num(x),
        "y": num(y),
        "class": "felt-note",
        "font-size": "10",
        "fill": "#f1f8e9",
        "text-anchor": "middle",
    }
    width = 5.5 * len(words)
    return Drawing(el("text", values, text(words)), Box(x - width / 2, y - 9, x + width / 2, y + 3))


def _panel(
    index: int,
    spinners: Sequence[Spinner],
    unlocked: set[int],
    plays: dict[int, list[Move]],
    last: str | None,
) -> Drawing:
    spinner = spinners[index]
    n = spinner.number
    name = f"{n}-{n}"
    drawings = [tile(n, n, Spot(0.0, 0.0, 90), last=name == last)]
    starts = {
        "W": Walker(-SHORT / 2, 0.0, "W"),
        "E": Walker(SHORT / 2, 0.0, "E"),
        "N": Walker(0.0, -SHORT, "N"),
        "S": Walker(0.0, SHORT, "S"),
    }
    if spinner.parent is not None:
        parent, _ = spinner.parent
        p = spinners[parent].number
        drawings.append(_tag(-SHORT * 2.2, -SHORT * 0.9, f"from {p}-{p}"))
    for branch in spinner.branches:
        walker = starts[branch.side]
        pinwheel(walker, branch.tiles, RUN[branch.side])
        drawings += draw_laid(walker.laid, last)
        dx, dy = STEP[walker.direction]
        x, y = walker.x + dx * 10, walker.y + dy * 10
        if branch.child is not None:
            c = spinners[branch.child].number
            drawings.append(_tag(x + dx * 14, y + dy * 6 + 3, f"to {c}-{c}"))
        else:
            here = plays.pop(branch.showing, [])
            drawings += end_ghosts(walker, branch.showing, here, f"an end showing {branch.showing}")
            if branch.showing not in unlocked and not here:
                drawings.append(_padlock(x, y, branch.showing))
    cross = combine(drawings)
    return cross


def _flow(panels: Sequence[Drawing], width: float) -> Drawing:
    """Panels side by side, in rows no wider than ``width`` (a panel wider than that shrinks)."""
    parts: list[str] = []
    x = y = row_height = 0.0
    for panel in panels:
        scale = min(1.0, width / panel.box.width)
        w, h = panel.box.width * scale, panel.box.height * scale
        if x > 0 and x + w > width:
            x, y, row_height = 0.0, y + row_height + PANEL_GAP, 0.0
        frame = el(
            "rect",
            {
                "class": "spinner-panel",
                "x": num(x - 4),
                "y": num(y - 4),
                "width": num(w + 8),
                "height": num(h + 8),
                "rx": "8",
                "fill": "none",
                "stroke": "#a5d6a7",
                "stroke-opacity": "0.5",
            },
        )
        parts.append(frame + panel.placed(x, y, scale))
        x += w + PANEL_GAP + 8
        row_height = max(row_height, h)
    return Drawing("".join(parts), Box(-4, -4, width + 4, y + row_height + 4))


def doubles_layout(
    table: Mapping[str, Any], plays: Sequence[Move], last: str | None, width: float
) -> Layout:
    """Draw ``table``'s ``placed``, ``ends`` and ``unlocked``."""
    placed: list[str] = list(table["placed"])
    unlocked = set(table["unlocked"])
    locked = [n for n in range(7) if n not in unlocked]
    if not placed:
        ghosts = opening_ghosts([m for m in plays if m.end is None], SHORT)
        return Layout(combine(ghosts), ("Nothing is laid yet: the highest double opens.",))
    spinners = rebuild(placed, table["ends"])
    by_number: dict[int, list[Move]] = {}
    for move in plays:
        if move.end is not None and move.end.isdigit():
            by_number.setdefault(int(move.end), []).append(move)
    panels = [_panel(i, spinners, unlocked, by_number, last) for i in range(len(spinners))]
    ends = ", ".join(str(e) for e in table["ends"]) or "none"
    notes = [
        f"Every double is a spinner ({len(spinners)} laid). Open ends show {ends}.",
        "Locked (an end showing one takes only its double): "
        + (", ".join(map(str, locked)) if locked else "none")
        + "; unlocked: "
        + ", ".join(map(str, sorted(unlocked)))
        + ".",
    ]
    if table.get("drawn"):
        notes.append(f"Just drawn, to be played at once: {table['drawn']}.")
    return Layout(_flow(panels, width), notes)

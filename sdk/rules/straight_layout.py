"""Straight Dominoes' layout: a line, then a spinner with four arms; its count (docs/rules.md 3.4,
3.5).

>>> StraightLayout().place(Tile(5, 5), None).place(Tile(5, 3), "W").count
13
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Final

from .actions import LINE_ENDS
from .errors import PositionError
from .linegame import OpenEnd, line_ends
from .slots import new_object, slot_setter
from .tiles import Tile, parse_laid, parse_tile

Pair = tuple[int, int]
"""A laid tile as the two numbers it shows, in the order the layout is read."""

Arm = tuple[Pair, ...]
"""One arm of the spinner, from the spinner outward, each tile as (inner, outer)."""

_W, _E, _N, _S = 0, 1, 2, 3
_ARM_INDEX: Final[dict[str | None, int]] = {name: i for i, name in enumerate(LINE_ENDS)}
_PAIRS: Final = tuple(tuple((a, b) for b in range(7)) for a in range(7))
"""Every pair of numbers, made once: :meth:`StraightLayout.place` shares them."""
_END_PAIRS: Final = tuple(tuple((name, b) for b in range(7)) for name in LINE_ENDS)
"""Every open end (name, number), made once."""
_NO_ARMS: Final[tuple[Arm, Arm, Arm, Arm]] = ((), (), (), ())


@dataclass(frozen=True, slots=True)
class StraightLayout:
    """The public layout of a Straight hand: a line, then a spinner with four arms (docs/rules.md
    3.4).

    Before the first double is played the layout is ``line``; the first double becomes the
    spinner and the line so far becomes the arm opposite the end it was played on. The values
    are immutable, so a bot may try :meth:`place` freely to see what a play would score.
    """

    line: tuple[Pair, ...] = ()
    """Before a spinner: the tiles from W to E, each as (its west number, its east number)."""
    spinner: int | None = None
    """The spinner's number n once the first double ``[n-n]`` is down, else None."""
    arms: tuple[Arm, Arm, Arm, Arm] = _NO_ARMS
    """With a spinner: arms W, E, N and S, each from the spinner outward as (inner, outer)."""
    ends: tuple[tuple[str, int], ...] = field(init=False, repr=False, compare=False)
    """The open ends as (name, number showing), in the order W, E, N, S; empty before a tile.
    The bare form move generation reads on every move; :attr:`open_ends` is the full one."""
    count: int = field(init=False, repr=False, compare=False)
    """The open-end total of docs/rules.md 3.5."""

    def __post_init__(self) -> None:
        ends, count = _ends_and_count(self.line, self.spinner, self.arms)
        object.__setattr__(self, "ends", ends)
        object.__setattr__(self, "count", count)

    @property
    def is_empty(self) -> bool:
        """Whether no tile has been played yet (the next play is the opening, docs/rules.md 3.3)."""
        return not self.line and self.spinner is None

    @property
    def north_south_open(self) -> bool:
        """Whether arms N and S take tiles: only once W and E each hold one (docs/rules.md 3.4,
        S2)."""
        return self.spinner is not None and bool(self.arms[_W]) and bool(self.arms[_E])

    @property
    def open_ends(self) -> tuple[OpenEnd, ...]:
        """The open ends in the order W, E (N, S once open), each with the number showing and
        whether a crosswise double lies there; an empty spinner side is none (X2)."""
        if self.spinner is None:
            return line_ends(self.line)
        arms = self.arms[: len(self.ends)]
        return tuple(
            OpenEnd(name, number, bool(arm) and arm[-1][0] == arm[-1][1])
            for (name, number), arm in zip(self.ends, arms, strict=True)
        )

    def showing(self, end: str) -> int | None:
        """Return the number showing at open end ``end``, or None if it is not open."""
        for name, value in self.ends:
            if name == end:
                return value
        return None

    def fits(self, tile: Tile) -> tuple[str | None, ...]:
        """Return the ends ``tile`` may be played on: ``(None,)`` for the opening tile."""
        if self.is_empty:
            return (None,)
        return tuple(name for name, v in self.ends if tile.high == v or tile.low == v)

    def place(self, tile: Tile, end: str | None) -> StraightLayout:
        """Return the layout after ``tile`` is laid on ``end`` (None for the opening tile).

        The caller makes sure the play fits; this only does the geometry of docs/rules.md 3.4.
        """
        line, n = self.line, self.spinner
        if n is None:
            if not line:
                if tile.is_double:
                    return _layout((), tile.high, _NO_ARMS)
                return _layout(((tile.low, tile.high),), None, _NO_ARMS)
            if end == "W":
                shown = line[0][0]
                if tile.is_double:
                    # The first double: the line now runs east from the spinner (docs/rules.md 3.4).
                    return _layout((), shown, ((), line, (), ()))
                return _layout(((tile.other(shown), shown), *line), None, _NO_ARMS)
            shown = line[-1][1]
            if tile.is_double:
                west = tuple((e, w) for w, e in reversed(line))
                return _layout((), shown, (west, (), (), ()))
            return _layout((*line, (shown, tile.other(shown))), None, _NO_ARMS)
        index = _ARM_INDEX[end]
        arms = self.arms
        arm = arms[index]
        shown = arm[-1][1] if arm else n
        out = tile.low if tile.high == shown else tile.high
        grown = (*arm, _PAIRS[shown][out])
        if index == _W:
            new_arms = (grown, arms[1], arms[2], arms[3])
        elif index == _E:
            new_arms = (arms[0], grown, arms[2], arms[3])
        elif index == _N:
            new_arms = (arms[0], arms[1], grown, arms[3])
        else:
            new_arms = (arms[0], arms[1], arms[2], grown)
        ends = self.ends
        if len(ends) < 4:
            return _layout((), n, new_arms)
        # All four ends open: only this end changes, in the ends and in the count (3.5).
        count = self.count + (out + out if shown == out else out)
        if arm:
            inner, outer = arm[-1]
            count -= outer + outer if inner == outer else outer
        ends = (*ends[:index], _END_PAIRS[index][out], *ends[index + 1 :])
        return _new_layout((), n, new_arms, ends, count)

    def tiles(self) -> tuple[Tile, ...]:
        """Return every tile on the table."""
        laid = [Tile(a, b) for a, b in self.line]
        if self.spinner is not None:
            laid.append(Tile(self.spinner, self.spinner))
            laid.extend(Tile(a, b) for arm in self.arms for a, b in arm)
        return tuple(laid)

    def __str__(self) -> str:
        """E.g. ``"1-4 4-6"``, or ``"3-1 1-5 [5-5] 5-2 | N: 5-0 | S: -"``, read W to E."""
        if self.spinner is None:
            return " ".join(f"{w}-{e}" for w, e in self.line) or "(empty)"
        west, east, north, south = self.arms
        row = [f"{o}-{i}" for i, o in reversed(west)]
        row.append(f"[{self.spinner}-{self.spinner}]")
        row.extend(f"{i}-{o}" for i, o in east)
        text = " ".join(row)
        if self.north_south_open:
            for name, arm in (("N", north), ("S", south)):
                text += f" | {name}: " + (" ".join(f"{i}-{o}" for i, o in arm) or "-")
        return text


def _ends_and_count(
    line: tuple[Pair, ...], n: int | None, arms: tuple[Arm, Arm, Arm, Arm]
) -> tuple[tuple[tuple[str, int], ...], int]:
    """Return the open ends and the count (docs/rules.md 3.5) of a layout; see the fields."""
    ends: tuple[tuple[str, int], ...]
    if n is None:
        if line:
            return (("W", line[0][0]), ("E", line[-1][1])), line[0][0] + line[-1][1]
        return (), 0
    west, east, north, south = arms
    w = west[-1][1] if west else n
    e = east[-1][1] if east else n
    if west and east:
        ends = (("W", w), ("E", e), ("N", north[-1][1] if north else n))
        ends = (*ends, ("S", south[-1][1] if south else n))
        count = 0
    else:
        ends = (("W", w), ("E", e))
        count = n + n
    for arm in arms:
        if arm:
            inner, outer = arm[-1]
            count += outer + outer if inner == outer else outer
    return ends, count


def _layout(
    line: tuple[Pair, ...], n: int | None, arms: tuple[Arm, Arm, Arm, Arm]
) -> StraightLayout:
    """Return ``StraightLayout(line, n, arms)``, made as the dataclass makes it, at less cost:
    :meth:`StraightLayout.place` runs on every play."""
    return _new_layout(line, n, arms, *_ends_and_count(line, n, arms))


_LAYOUT_LINE: Final = slot_setter(StraightLayout, "line")
_LAYOUT_SPINNER: Final = slot_setter(StraightLayout, "spinner")
_LAYOUT_ARMS: Final = slot_setter(StraightLayout, "arms")
_LAYOUT_ENDS: Final = slot_setter(StraightLayout, "ends")
_LAYOUT_COUNT: Final = slot_setter(StraightLayout, "count")


def _new_layout(
    line: tuple[Pair, ...],
    spinner: int | None,
    arms: tuple[Arm, Arm, Arm, Arm],
    ends: tuple[tuple[str, int], ...],
    count: int,
) -> StraightLayout:
    """A layout with every field given (its ``__post_init__`` would compute the last two)."""
    layout = new_object(StraightLayout)
    _LAYOUT_LINE(layout, line)
    _LAYOUT_SPINNER(layout, spinner)
    _LAYOUT_ARMS(layout, arms)
    _LAYOUT_ENDS(layout, ends)
    _LAYOUT_COUNT(layout, count)
    return layout


def layout_from(
    line: Sequence[str], spinner: int | str | None, arms: Mapping[str, Sequence[str]] | None
) -> StraightLayout:
    """Build and check the layout fields of a position."""
    if spinner is None:
        if arms:
            raise PositionError("arms: arms need a spinner; give 'spinner' too")
        laid = [parse_laid(text, "line") for text in line]
        for a, b in laid:
            if a == b:
                raise PositionError(
                    f"line: {a}-{b} is a double, and the first double played is the spinner "
                    "(docs/rules.md 3.4, S1); give 'spinner' and 'arms' instead"
                )
        for (_, right), (left, _) in pairwise(laid):
            if right != left:
                raise PositionError(f"line: the tiles do not join ({right} next to {left})")
        return StraightLayout(line=tuple(laid))
    if line:
        raise PositionError(
            "line: a layout with a spinner is given as 'spinner' and 'arms' only; "
            "the line before the spinner is one of its arms"
        )
    if isinstance(spinner, str):
        double = parse_tile(spinner, "spinner")
        if not double.is_double:
            raise PositionError(f"spinner: {spinner} is not a double (docs/rules.md 3.4)")
        n = double.high
    elif isinstance(spinner, int) and not isinstance(spinner, bool) and 0 <= spinner <= 6:
        n = spinner
    else:
        raise PositionError(f"spinner: expected a number 0-6 or a double like '5-5', got {spinner}")
    given = dict(arms or {})
    unknown = [name for name in given if name not in LINE_ENDS]
    if unknown:
        raise PositionError(f"arms: unknown arm {unknown[0]!r}; arms are W, E, N and S")
    built: list[Arm] = []
    for name in LINE_ENDS:
        arm = tuple(parse_laid(text, f"arms[{name}]") for text in given.get(name, ()))
        shown = n
        for a, b in arm:
            if a != shown:
                raise PositionError(
                    f"arms[{name}]: {a}-{b} does not join the {shown} showing there "
                    "(write each tile inner number first)"
                )
            shown = b
        built.append(arm)
    west, east, north, south = built
    if (north or south) and not (west and east):
        raise PositionError(
            "arms: N and S open only after W and E each hold a tile (docs/rules.md 3.4, S2)"
        )
    return StraightLayout(spinner=n, arms=(west, east, north, south))

"""Tiles of the double-six set.

A :class:`Tile` is an interned value: ``Tile(4, 6) is Tile(6, 4)``, so comparisons are by
identity and tiles can be used freely as set members and dictionary keys.

>>> t = Tile.parse("6-4")
>>> t, str(t), t.pips, t.is_double
(Tile(6, 4), '6-4', 10, False)
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import attrgetter
from typing import ClassVar, Final

from .errors import InvalidActionError, PositionError

MAX_PIP: Final = 6


class Tile:
    """One domino, written ``h-l`` with ``h >= l`` (docs/rules.md 0.1)."""

    __slots__ = ("high", "index", "is_double", "low", "pips")

    high: int
    low: int
    pips: int
    is_double: bool
    index: int
    """Position in the canonical order (by high, then low); also the sort key."""

    _interned: ClassVar[dict[tuple[int, int], Tile]] = {}

    def __new__(cls, a: int, b: int) -> Tile:
        try:
            return cls._interned[(a, b)]
        except KeyError:
            raise InvalidActionError(
                f"no tile {a}-{b}: both numbers must be integers from 0 to {MAX_PIP}"
            ) from None

    @classmethod
    def _make(cls, high: int, low: int, index: int) -> Tile:
        tile = object.__new__(cls)
        for name, value in (
            ("high", high),
            ("low", low),
            ("pips", high + low),
            ("is_double", high == low),
            ("index", index),
        ):
            object.__setattr__(tile, name, value)
        return tile

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Tile is immutable")

    def __reduce__(self) -> tuple[type[Tile], tuple[int, int]]:
        return (Tile, (self.high, self.low))

    def __lt__(self, other: Tile) -> bool:
        return self.index < other.index

    def __le__(self, other: Tile) -> bool:
        return self.index <= other.index

    def __gt__(self, other: Tile) -> bool:
        return self.index > other.index

    def __ge__(self, other: Tile) -> bool:
        return self.index >= other.index

    def __hash__(self) -> int:
        return self.index

    def __repr__(self) -> str:
        return f"Tile({self.high}, {self.low})"

    def __str__(self) -> str:
        return f"{self.high}-{self.low}"

    def has(self, number: int) -> bool:
        """Return whether either half shows ``number``."""
        return self.high == number or self.low == number

    def other(self, number: int) -> int:
        """Return the number at the other half from ``number`` (which the tile must hold)."""
        return self.low if self.high == number else self.high

    @classmethod
    def parse(cls, text: str) -> Tile:
        """Parse ``"6-4"`` (either order, optional brackets) into a tile.

        Raises:
            InvalidActionError: the text is not two numbers 0-6 joined by ``-``.
        """
        body = text.strip().removeprefix("[").removesuffix("]")
        parts = body.split("-")
        if len(parts) != 2 or not all(len(p) == 1 and p in "0123456789" for p in parts):
            raise InvalidActionError(
                f"bad tile '{text}': expected two numbers 0-{MAX_PIP} joined by '-', e.g. '6-4'"
            )
        return cls(int(parts[0]), int(parts[1]))


def _intern_all() -> tuple[Tile, ...]:
    tiles: list[Tile] = []
    for high in range(MAX_PIP + 1):
        for low in range(high + 1):
            tiles.append(Tile._make(high, low, len(tiles)))
    for tile in tiles:
        Tile._interned[(tile.high, tile.low)] = tile
        Tile._interned[(tile.low, tile.high)] = tile
    return tuple(tiles)


DOUBLE_SIX: Final[tuple[Tile, ...]] = _intern_all()
"""All 28 tiles in canonical order."""

TILE_KEY: Final = attrgetter("index")
"""The canonical order as a sort key in C (``sorted(tiles, key=TILE_KEY)``): the same order as
the tiles' own comparisons, without a Python call per comparison. Hands are kept this way."""


def pip_total(tiles: Iterable[Tile]) -> int:
    """Return the sum of the pip values of ``tiles`` (docs/rules.md 0.1)."""
    return sum(t.pips for t in tiles)


def format_tiles(tiles: Iterable[Tile]) -> str:
    """Return tiles as space-separated canonical text."""
    return " ".join(str(t) for t in tiles)


def parse_tiles(tiles: str | Iterable[str | Tile], field: str | None = None) -> tuple[Tile, ...]:
    """Return the tiles of ``tiles``, in order: the one tile reader of every game.

    A string is tile text separated by spaces or commas (``"6-6 5-4"``, ``"6-6,5-4"``; a single
    ``"6-4"`` is one tile); any other iterable holds :class:`Tile` values or tile texts, one each
    (``["6-6", Tile(5, 4)]``). So a string is never read character by character.

    Args:
        field: the position field being read (``"hands[1]"``); when given, a bad tile raises
            :class:`PositionError` naming it, as every ``from_position`` does.

    Raises:
        InvalidActionError: a bad tile and no ``field``.
        PositionError: a bad tile in ``field``.
    """
    parts: Iterable[str | Tile] = (
        tiles.replace(",", " ").split() if isinstance(tiles, str) else tiles
    )
    return tuple(parse_tile(part, field) for part in parts)


def parse_tile(tile: str | Tile, field: str | None = None) -> Tile:
    """Return ``tile`` itself or the tile its text names; errors as in :func:`parse_tiles`."""
    if isinstance(tile, Tile):
        return tile
    try:
        if not isinstance(tile, str):
            raise InvalidActionError(f"bad tile {tile!r}: expected a tile like '6-4'")
        return Tile.parse(tile)
    except InvalidActionError as exc:
        if field is None:
            raise
        raise PositionError(f"{field}: {exc}") from None


def parse_laid(text: str, field: str) -> tuple[int, int]:
    """Return a laid tile written in reading order (``"4-6"``: 4 first) as its two numbers.

    Passing's line and Straight's arms give each tile as it lies, so the order matters here,
    unlike in :meth:`Tile.parse`.

    Raises:
        PositionError: ``text`` is not a tile; the message names ``field``.
    """
    parse_tile(text, field)
    first, second = text.strip().removeprefix("[").removesuffix("]").split("-")
    return int(first), int(second)

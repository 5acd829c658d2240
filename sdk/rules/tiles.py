"""Tiles of the double-six set.

A :class:`Tile` is an interned value: ``Tile(4, 6) is Tile(6, 4)``, so comparisons are by
identity and tiles can be used freely as set members and dictionary keys.

>>> t = Tile.parse("6-4")
>>> t, str(t), t.pips, t.is_double
(Tile(6, 4), '6-4', 10, False)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar, Final

from .errors import InvalidActionError

MAX_PIP: Final = 6


class Tile:
    """One domino, written ``h-l`` with ``h >= l`` (RULES.md 0.1)."""

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


def pip_total(tiles: Iterable[Tile]) -> int:
    """Return the sum of the pip values of ``tiles`` (RULES.md 0.1)."""
    return sum(t.pips for t in tiles)


def format_tiles(tiles: Iterable[Tile]) -> str:
    """Return tiles as space-separated canonical text."""
    return " ".join(str(t) for t in tiles)


def parse_tiles(text: str) -> tuple[Tile, ...]:
    """Parse space- or comma-separated tiles, e.g. ``"6-6 5-4"``."""
    return tuple(Tile.parse(part) for part in text.replace(",", " ").split())

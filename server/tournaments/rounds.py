"""Rounds: what an adaptive format (Swiss, knockout) learns from a round before it seats the next.

A fixed format (round robin, balanced, gauntlet) knows every table before the first game. Swiss
and knockout choose each round's tables from the results so far, so the tournament's life
stores a round's tables before its games start and reads its results back as
:class:`TableResult` (docs/tournaments.md: Swiss, knockout). This module is the one place a
table's games become its entrants' points, for the life of a tournament and its pages alike.
Pure: no I/O, the standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

ADAPTIVE_FORMATS: Final = ("swiss", "knockout")
"""The formats whose rounds are seated one by one from the results so far (the others know
every table before the first game)."""


@dataclass(frozen=True, slots=True)
class PlacedGame:
    """One finished game of a table, as the round's results need it.

    Raises:
        ValueError: lengths that disagree, sides not numbered 0..S-1, no side first.
    """

    seats: tuple[str, ...]
    """The entrant in each seat."""
    side_of_seat: tuple[int, ...]
    """Each seat's side (partnerships: seats 0+2 are side 0, 1+3 side 1; else seat = side)."""
    standing: tuple[int, ...]
    """Per side: its place, 0 = first; equal places drew (the ladder's standing)."""
    scores: tuple[int, ...]
    """Per side: the game's points (the tie-break after match points)."""

    def __post_init__(self) -> None:
        if len(self.seats) != len(self.side_of_seat):
            raise ValueError("seats, side_of_seat: expected one value per seat")
        sides = max(self.side_of_seat, default=-1) + 1
        if sorted(set(self.side_of_seat)) != list(range(sides)) or len(self.standing) != sides:
            raise ValueError(f"standing: expected one place per side 0..{sides - 1}")
        if len(self.scores) != sides:
            raise ValueError(f"scores: expected one score per side 0..{sides - 1}")
        if sides < 2 or 0 not in self.standing:
            raise ValueError("standing: expected at least two sides and one of them first")

    def points(self, seat: int) -> float:
        """The match points of ``seat``'s side: 1 for each other side it finished ahead of,
        0.5 for each it drew with, over the other sides (1 = first alone, 0 = last alone)."""
        sides = len(self.standing)
        own = self.standing[self.side_of_seat[seat]]
        total = math.fsum(
            1.0 if own < place else 0.5 if own == place else 0.0
            for side, place in enumerate(self.standing)
            if side != self.side_of_seat[seat]
        )
        return total / (sides - 1)


@dataclass(frozen=True, slots=True)
class TableResult:
    """One table of a round as it came out: its entrants in the order the round seated them,
    and each one's match points and game points summed over the table's games."""

    entrants: tuple[str, ...]
    points: tuple[float, ...]
    """Per entrant (same order): :meth:`PlacedGame.points` summed over the table's games."""
    score: tuple[int, ...]
    """Per entrant: its side's game points summed over the table's games."""
    games: int
    """The table's games that finished."""

    def points_of(self, entrant: str) -> float:
        return self.points[self.entrants.index(entrant)]

    def score_of(self, entrant: str) -> int:
        return self.score[self.entrants.index(entrant)]


def round_results(
    tables: Sequence[tuple[str, ...]], games: Iterable[PlacedGame]
) -> tuple[TableResult, ...]:
    """Sum ``games`` into the results of ``tables`` (a round's tables, in its order).

    A game belongs to the table whose entrants it seats (in any rotation); a game of no table
    is an error, since a round's games are exactly its tables' (:class:`ValueError`, naming
    it). A table none of whose games finished has ``games`` 0 and no points.
    """
    seated = [entrant for table in tables for entrant in table]
    if len(set(seated)) != len(seated):
        raise ValueError("tables: expected no entrant at two tables of one round")
    index = {frozenset(table): number for number, table in enumerate(tables)}
    points = [dict.fromkeys(table, 0.0) for table in tables]
    scores = [dict.fromkeys(table, 0) for table in tables]
    counts = [0] * len(tables)
    for game in games:
        number = index.get(frozenset(game.seats))
        if number is None:
            raise ValueError(f"game seating {', '.join(game.seats)}: not a table of this round")
        counts[number] += 1
        for seat, entrant in enumerate(game.seats):
            points[number][entrant] += game.points(seat)
            scores[number][entrant] += game.scores[game.side_of_seat[seat]]
    return tuple(
        TableResult(
            entrants=table,
            points=tuple(points[number][entrant] for entrant in table),
            score=tuple(scores[number][entrant] for entrant in table),
            games=counts[number],
        )
        for number, table in enumerate(tables)
    )

"""Elo ratings per game type, pure (DESIGN.md decision 11): no I/O, no clock, no database.

A game of N sides is scored as its N(N-1)/2 pairwise results by final standing, each with
K/(N-1). In partnership play a side's rating is the mean of its partners' ratings and both
partners take the side's change. Forfeits count as losses for the forfeiting side; voided and
aborted games are never rated (the caller does not pass them).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

INITIAL_RATING: Final = 1500.0
DEFAULT_K: Final = 24.0


@dataclass(frozen=True, slots=True)
class Rating:
    """One bot's standing in one pool (game type)."""

    rating: float = INITIAL_RATING
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    faults: int = 0
    information: float = 0.0
    """Sum of weight * p * (1 - p) over its pairwise results (p: expected score then)."""

    @property
    def uncertainty(self) -> float:
        """Half-width of a 95% interval of the rating, in Elo points (inf before any game)."""
        if self.information <= 0:
            return math.inf
        return 1.96 * 400 / math.log(10) / math.sqrt(self.information)


@dataclass(frozen=True, slots=True)
class RatedGame:
    """A finished game as the ladder sees it."""

    bots: tuple[str, ...]
    """The bot in each seat."""
    side_of_seat: tuple[int, ...]
    standing: tuple[int, ...]
    """Per side: its place, 0 = first; sides with equal places drew with each other."""
    faults: tuple[int, ...]
    """Faults charged to each seat in this game."""


def expected_score(rating: float, opponent: float) -> float:
    """The logistic Elo expectation of ``rating`` against ``opponent``."""
    raise NotImplementedError


def standing(
    scores: Iterable[int], winner: int | None, forfeited_side: int | None = None
) -> tuple[int, ...]:
    """Return each side's place: the winner first, the forfeiting side last, the rest by score."""
    raise NotImplementedError


def rate_game(
    ratings: Mapping[str, Rating], game: RatedGame, k: float = DEFAULT_K
) -> dict[str, Rating]:
    """Return the new rating of every bot of ``game`` (a bot missing from ``ratings`` is new)."""
    raise NotImplementedError


def replay(games: Iterable[RatedGame], k: float = DEFAULT_K) -> dict[str, Rating]:
    """Rate ``games`` in order from scratch: what the stored ratings must equal."""
    raise NotImplementedError

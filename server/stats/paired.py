"""Head-to-head estimates from paired units: score, Elo with its 95% interval, normalized Elo, LOS.

Luck is most of a domino game's result, so one game says little about which bot is stronger.
Duplicate deals (docs/decisions.md: decision 15) play one deal under every seat rotation; the *unit*
of a comparison is then the whole duplicate set, not the game: the luck of the deal cancels inside
a set, and sets are independent of each other while the games of a set are not. This is
fishtest's game pair (its pentanomial statistics) generalised to any number of seats.

A unit's score is in [0, 1]: the candidate's mean score over the unit's games
(:func:`set_score`: win 1, draw 1/2, loss 0), or for a swap-one-seat comparison of bots A and B
on the same deals ``0.5 + (mean score of A - mean score of B) / 2`` (:func:`swap_score`). Unit
scores take few distinct values, so the data is kept as a distribution, value -> count
(:func:`score_counts`), which is also what the GSPRT (``sprt.py``) reads.

The formulas are fishtest's ``stat_util.get_elo`` (official-stockfish/fishtest,
``server/fishtest/stats/stat_util.py``) and cutechess's ``elo.cpp``, written for a general
distribution: with n units of mean ``mu`` and per-unit standard deviation ``sigma``,

* Elo = -400 log10(1/mu - 1); its 95% interval is ``mu +- 1.96 sigma/sqrt(n)`` mapped through
  the same function (so it is not symmetric about the Elo);
* normalized Elo = (mu - 1/2) / sigma_game * 800/ln 10, ``sigma_game = sqrt(m) sigma`` for units
  of m games (fishtest's ``LLR_normalized_alt``: ``sqrt(2) sigma_pair`` for game pairs): the
  t-value per game, on an Elo-like scale, which does not grow when luck is taken out;
* LOS = Phi((mu - 1/2) / (sigma/sqrt(n))), the chance that the candidate is the stronger.

>>> e = estimate([1.0, 0.5, 0.5, 0.75, 0.25, 1.0, 0.5, 0.75])
>>> e.units, e.score, round(e.elo, 1), round(e.los, 3)
(8, 0.65625, 112.3, 0.963)

Edges, all finite (:class:`PairedEstimate` says what each field is then):

* **no units**: score 1/2, Elo 0, LOS 1/2, and intervals as wide as the scale goes;
* **no spread** (one unit, or every unit the same, e.g. all scores 1): the sample variance is
  0, which would claim a point-sure Elo. The variance used is never below
  :func:`variance_floor`, that of one pseudo-unit split between scores 0 and 1 averaged in
  with the n units (cutechess adds half a game per cell, a Jeffreys prior, for the same
  reason); on data with any spread it is far below the sample variance and changes nothing;
* **scores of 0 or 1** (and interval ends there): Elo is clamped to :data:`ELO_LIMIT`, as
  fishtest clamps the score to [0.001, 0.999].
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from domino_arena.server.tournaments.game_sd import Z95

SCORE_CLAMP: Final = 1e-3
"""Scores are clamped to [SCORE_CLAMP, 1 - SCORE_CLAMP] before the Elo map (fishtest's)."""

NELO_PER_T: Final = 800 / math.log(10)
"""Normalized Elo per unit of t-value per game (fishtest's ``nelo_divided_by_nt``)."""

_DIGITS: Final = 12
"""Unit scores are rounded to this many digits when counted, so 1/3 from two sums is one cell."""


class ScoreError(ValueError):
    """A unit score or count that is not a number in [0, 1] (or not a count of units)."""


ELO_LIMIT: Final = 400 * math.log10((1 - SCORE_CLAMP) / SCORE_CLAMP)
"""The largest Elo difference reported (about 1200): that of score 0.999."""


def elo_of_score(score: float) -> float:
    """Return the logistic Elo difference of an expected score: -400 log10(1/score - 1).

    The score is clamped to [0.001, 0.999] first, so 0 and 1 give -/+ :data:`ELO_LIMIT`.
    """
    if score <= SCORE_CLAMP:
        return -ELO_LIMIT
    if score >= 1 - SCORE_CLAMP:
        return ELO_LIMIT
    return -400 * math.log10(1 / score - 1)


def score_of_elo(elo: float) -> float:
    """Return the expected score of a logistic Elo difference: 1 / (1 + 10^(-elo/400))."""
    return 1 / (1 + 10 ** (-elo / 400))


def set_score(game_scores: Sequence[float]) -> float:
    """Return a duplicate set's unit score: the candidate's mean score over the set's games.

    Raises:
        ScoreError: no games, or a game score outside [0, 1].
    """
    if not game_scores:
        raise ScoreError("game_scores: a duplicate set needs at least one game, got none")
    for score in game_scores:
        _check_score("game score", score)
    return sum(game_scores) / len(game_scores)


def swap_score(a_mean: float, b_mean: float) -> float:
    """Return a swap-one-seat unit score: 0.5 + (A's mean score - B's mean score) / 2.

    A and B each played the unit's deals in the same seat against the same others, so the
    score is 1/2 when they did equally well and in [0, 1] whatever happened.

    Raises:
        ScoreError: a mean score outside [0, 1].
    """
    _check_score("a_mean", a_mean)
    _check_score("b_mean", b_mean)
    return 0.5 + (a_mean - b_mean) / 2


def score_counts(scores: Iterable[float]) -> dict[float, int]:
    """Return the distribution of unit scores, value -> count, sorted by value.

    Raises:
        ScoreError: a score that is not a finite number in [0, 1].
    """
    counts: Counter[float] = Counter()
    for score in scores:
        _check_score("unit score", score)
        counts[round(float(score), _DIGITS)] += 1
    return dict(sorted(counts.items()))


def checked_counts(counts: Mapping[float, int]) -> tuple[tuple[float, int], ...]:
    """Return ``counts`` (value -> count) as sorted (value, count) pairs without empty cells.

    Raises:
        ScoreError: a value outside [0, 1], or a count that is not a non-negative integer.
    """
    cells: dict[float, int] = {}
    for value, count in counts.items():
        _check_score("unit score", value)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ScoreError(
                f"count of unit score {value}: must be a non-negative integer, got {count!r}"
            )
        if count:
            key = round(float(value), _DIGITS)
            cells[key] = cells.get(key, 0) + count
    return tuple(sorted(cells.items()))


@dataclass(frozen=True, slots=True)
class PairedEstimate:
    """What n unit scores say about the candidate against its opponent."""

    units: int
    score: float
    """Mean unit score; 1/2 with no units."""
    sigma: float
    """Per-unit standard deviation used for the intervals: the sample one (divided by n, as
    fishtest's), never below the square root of :func:`variance_floor`."""
    elo: float
    """Logistic Elo difference of ``score``, clamped to +-:data:`ELO_LIMIT`."""
    elo_low: float
    elo_high: float
    """The 95% interval of the Elo: ``score -+ 1.96 sigma/sqrt(units)`` through the Elo map."""
    nelo: float
    """Normalized Elo per game (fishtest's): (score - 1/2) / (sigma sqrt(m)) * 800/ln 10."""
    nelo_low: float
    nelo_high: float
    """The 95% interval of the normalized Elo: the score's interval, clipped to [0, 1], over
    the same per-game sigma."""
    los: float
    """Likelihood of superiority: Phi((score - 1/2) / (sigma/sqrt(units))); 1/2 with no units."""
    games_per_unit: int
    distribution: tuple[tuple[float, int], ...]
    """The unit scores, (value, count) sorted by value."""

    @property
    def elo_half_width(self) -> float:
        """Half the width of the Elo interval (the "+-" that fishtest and cutechess print)."""
        return (self.elo_high - self.elo_low) / 2


def variance_floor(units: int, score: float) -> float:
    """Return the least per-unit variance the intervals use: one pseudo-unit's share.

    Half a unit at score 0 and half at score 1, averaged in with ``units`` units of mean
    ``score``: ``(score^2/2 + (1 - score)^2/2) / (units + 1)``. It is 1/4 (the largest any
    score in [0, 1] can have) with no units, and shrinks as 1/n, so it only matters when the
    units show (almost) no spread: then "all alike so far" is not read as "known exactly".
    """
    return (score**2 / 2 + (1 - score) ** 2 / 2) / (units + 1)


def estimate(scores: Iterable[float], *, games_per_unit: int = 1) -> PairedEstimate:
    """Return the estimates from unit scores (each in [0, 1]); see the module docstring.

    ``games_per_unit`` (m) only scales the normalized Elo to one game: 2 for game pairs, the
    number of rotations for a duplicate set.

    Raises:
        ScoreError: a score outside [0, 1].
        ValueError: ``games_per_unit`` below 1.
    """
    return estimate_counts(score_counts(scores), games_per_unit=games_per_unit)


def estimate_counts(counts: Mapping[float, int], *, games_per_unit: int = 1) -> PairedEstimate:
    """Return the estimates from a distribution of unit scores, value -> count.

    Raises:
        ScoreError: a value outside [0, 1] or a count that is not a non-negative integer.
        ValueError: ``games_per_unit`` below 1.
    """
    if isinstance(games_per_unit, bool) or not isinstance(games_per_unit, int):
        raise ScoreError(f"games_per_unit: must be an integer, got {games_per_unit!r}")
    if games_per_unit < 1:
        raise ScoreError(f"games_per_unit: must be at least 1, got {games_per_unit}")
    cells = checked_counts(counts)
    n = sum(count for _, count in cells)
    mu = sum(value * count for value, count in cells) / n if n else 0.5
    sample_var = sum(count * (value - mu) ** 2 for value, count in cells) / n if n else 0.0
    sigma = math.sqrt(max(sample_var, variance_floor(n, mu)))
    se = sigma / math.sqrt(n) if n else math.inf
    low, high = max(mu - Z95 * se, 0.0), min(mu + Z95 * se, 1.0)
    sigma_game = sigma * math.sqrt(games_per_unit)
    return PairedEstimate(
        units=n,
        score=mu,
        sigma=sigma,
        elo=elo_of_score(mu),
        elo_low=elo_of_score(low),
        elo_high=elo_of_score(high),
        nelo=(mu - 0.5) / sigma_game * NELO_PER_T,
        nelo_low=(low - 0.5) / sigma_game * NELO_PER_T,
        nelo_high=(high - 0.5) / sigma_game * NELO_PER_T,
        los=normal_cdf((mu - 0.5) / se) if n else 0.5,
        games_per_unit=games_per_unit,
        distribution=cells,
    )


def normal_cdf(z: float) -> float:
    """Return Phi(z), the standard normal distribution function."""
    return 0.5 * math.erfc(-z / math.sqrt(2))


def _check_score(field: str, score: float) -> None:
    if isinstance(score, bool) or not isinstance(score, int | float):
        raise ScoreError(f"{field}: must be a number in [0, 1], got {score!r}")
    if not 0.0 <= score <= 1.0:  # also refuses NaN
        raise ScoreError(f"{field}: must be in [0, 1], got {score!r}")

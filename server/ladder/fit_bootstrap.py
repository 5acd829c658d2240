"""How sure the batch fit is: a bootstrap over independent units, with intervals and LOS.

docs/ratings.md. The games of a duplicate set (one deal under all its rotations) share
their deal, so they are not independent of each other; the sets are. The bootstrap therefore
resamples *units* (:attr:`.fit.FitGame.unit`) with replacement, as many as there are, refits
the pool on the games of the drawn units (a unit drawn k times weighs k), and reads the spread
of the refitted ratings:

* a bot's interval is its point rating ± z times the standard deviation of its ratings over
  the rounds (z = 1.96 for 95%, the default): the normal bootstrap interval. Percentile
  intervals (the 2.5th and 97.5th percentiles) were measured too and ran narrow on tournaments
  of a few dozen sets (92% coverage of the truth at 60 sets, against 95.8% for these;
  bench/fit_coverage.py), the usual small-sample bias of the percentile method;
* each seat position's interval likewise, around its fitted advantage;
* the likelihood of superiority ``LOS[a][b]`` is the fraction of rounds in which ``a`` was
  rated above ``b``, a tie counting half: how often the data, redrawn, still puts ``a`` first.

Each round is anchored as the point fit is: the anchor bot at its rating, the frozen baselines
held at theirs in every round (constants of each refit, so they have no spread), or the mean of
the bots at the point fit's mean of those same bots (1500 when all are present). A round can miss
a bot (none of its units drawn) or split the pool into parts that never met; a bot is rated in
a round only when it is in the anchor's part (or the largest part, without an anchor), and
(with frozen baselines: in a part holding one of them); its interval and LOS use the rounds
where it is rated (:attr:`Bootstrap.rated_rounds` counts
them). Every refit starts from the point fit (a warm start), and the draws come from one
seeded generator, so the same games, point and seed give the same numbers whatever the order
of the games.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Final

from domino_arena.server.ladder.fit import FitGame, FitResult, Problem, one_thread

DEFAULT_ROUNDS: Final = 200
DEFAULT_LEVEL: Final = 0.95

# numpy and scipy (some 40 MiB and 0.4 s) are imported by the functions that fit, not here:
# the web face and the referee import this module's types at start and may never fit.
if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Bootstrap:
    """The spread of the batch fit over resampled units; every number on the Elo scale."""

    rounds: int
    seed: int
    level: float
    """The intervals' coverage, e.g. 0.95."""
    intervals: Mapping[str, tuple[float, float]]
    """Each bot's rating interval (low, high); (-inf, inf) for a bot rated in no round."""
    seat_intervals: tuple[tuple[float, float], ...]
    """Each seat position's advantage interval; position 0 is (0.0, 0.0)."""
    los: Mapping[str, Mapping[str, float]]
    """``los[a][b]``: the fraction of rounds in which ``a`` was rated above ``b`` (ties half),
    over the rounds that rated both (0.5 when none did); no entry for ``a`` against itself."""
    rated_rounds: Mapping[str, int]
    """How many rounds rated each bot (``rounds`` unless some missed it)."""
    seat_draws: tuple[tuple[float, ...], ...] = ()
    """Each round's seat advantages (one row per round, position 0 first): the spread of any
    combination of them, e.g. a partnership side's seats together (``batch.seat_rows``)."""


def bootstrap(
    games: Sequence[FitGame],
    point: FitResult,
    *,
    rounds: int = DEFAULT_ROUNDS,
    seed: int = 0,
    level: float = DEFAULT_LEVEL,
) -> Bootstrap:
    """Resample the units of ``games`` ``rounds`` times, refit, and return the spread.

    Args:
        point: the fit of the same ``games`` (:func:`.fit.fit`): its anchor, prior and seat
            terms are kept, and each refit starts from it.
        seed: seeds the resampling (numpy's default generator).
        level: the intervals' coverage, in (0, 1).

    Raises:
        ValueError: ``rounds`` below 1, ``level`` outside (0, 1), or a ``point`` that was not
            fitted on these games (other bots or seats), and whatever :func:`.fit.fit` refuses.
    """
    import numpy as np  # noqa: PLC0415

    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds: expected a whole number of rounds, at least 1, got {rounds!r}")
    if not 0 < level < 1:
        raise ValueError(f"level: expected a coverage between 0 and 1, got {level}")
    problem = Problem(
        games, seat_terms=point.seat_terms, prior_sigma=point.prior_sigma, fixed=point.fixed
    )
    if set(point.ratings) != set(problem.bots) or point.players != problem.players:
        raise ValueError(
            "point: expected the fit of these games; it rates "
            f"{sorted(point.ratings)} with {point.players} seats, the games have "
            f"{list(problem.bots)} with {problem.players}"
        )
    problem.check_anchor(point.anchor, point.anchor_rating)
    start = problem.start_of(point)
    point_elo = np.array([point.ratings[bot] for bot in problem.bots])
    rng = np.random.default_rng(seed)
    units = len(problem.units)
    ratings = np.full((rounds, len(problem.bots)), np.nan)
    seats = np.zeros((rounds, problem.players))
    with one_thread():
        for round_ in range(rounds):
            drawn = np.bincount(rng.integers(0, units, size=units), minlength=units)
            weights = drawn[problem.unit_of_game].astype(np.float64)
            params = problem.solve(weights, start)
            seats[round_] = problem.seat_elo(params)
            rated = _rated(problem, weights, point.anchor)
            if not rated.any():
                continue
            elo = problem.elo(params)
            if problem.fixed:
                offset = problem.centre
            elif point.anchor is None:
                offset = float(point_elo[rated].mean() - elo[rated].mean())
            else:
                offset = point.anchor_rating - float(elo[problem.index[point.anchor]])
            ratings[round_, rated] = elo[rated] + offset
    z = NormalDist().inv_cdf(0.5 + level / 2)
    intervals: dict[str, tuple[float, float]] = {}
    for column, bot in enumerate(problem.bots):
        values = ratings[:, column]
        values = values[~np.isnan(values)]
        if len(values) == 0:
            intervals[bot] = (-math.inf, math.inf)
        else:
            half = z * float(values.std())
            intervals[bot] = (point.ratings[bot] - half, point.ratings[bot] + half)
    seat_half = z * seats.std(axis=0)
    seat_point = np.array(point.seat_advantage)
    seat_low, seat_high = seat_point - seat_half, seat_point + seat_half
    superior = superiority(ratings)
    return Bootstrap(
        rounds=rounds,
        seed=seed,
        level=level,
        intervals=intervals,
        seat_intervals=tuple(
            (float(low), float(high)) for low, high in zip(seat_low, seat_high, strict=True)
        ),
        los={
            a: {b: float(superior[i, j]) for j, b in enumerate(problem.bots) if j != i}
            for i, a in enumerate(problem.bots)
        },
        seat_draws=tuple(tuple(float(x) for x in row) for row in seats),
        rated_rounds={
            bot: int(n)
            for bot, n in zip(problem.bots, (~np.isnan(ratings)).sum(axis=0), strict=True)
        },
    )


def superiority(ratings: Matrix) -> Matrix:
    """``LOS[i, j]`` from a rounds x bots matrix of ratings (NaN: not rated that round): the
    fraction of the rounds rating both where bot ``i`` is above ``j``, ties half; 0.5 where no
    round rates both."""
    import numpy as np  # noqa: PLC0415

    here = ~np.isnan(ratings)
    filled = np.where(here, ratings, 0.0)
    above = filled[:, :, None] > filled[:, None, :]
    level = filled[:, :, None] == filled[:, None, :]
    both = here[:, :, None] & here[:, None, :]
    wins = ((above + 0.5 * level) * both).sum(axis=0)
    shared = both.sum(axis=0)
    return np.where(shared > 0, wins / np.maximum(shared, 1), 0.5)


def _rated(problem: Problem, weights: Matrix, anchor: str | None) -> npt.NDArray[np.bool_]:
    """Which bots a round rates: those in the anchor's part, in a part holding a frozen
    baseline, or else in the largest part."""
    import numpy as np  # noqa: PLC0415

    parts = problem.components(weights)
    chosen: tuple[str, ...] = parts[0] if parts else ()
    if problem.fixed:
        chosen = tuple(bot for part in parts if set(part) & problem.fixed.keys() for bot in part)
    elif anchor is not None:
        chosen = next((part for part in parts if anchor in part), ())
    rated = np.zeros(len(problem.bots), dtype=np.bool_)
    rated[[problem.index[bot] for bot in chosen]] = True
    return rated

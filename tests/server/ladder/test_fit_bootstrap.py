"""The bootstrap of the batch fit (server/ladder/fit_bootstrap.py): determinism, the unit as
the thing resampled, anchoring per round, LOS, rounds that miss a bot, and bad input.

Coverage over repeated simulations is measured by ``bench/fit_coverage.py``, not here.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random

import numpy as np
import pytest

from domino_arena.server.ladder.elo import RatedGame
from domino_arena.server.ladder.fit import FitGame, fit
from domino_arena.server.ladder.fit_bootstrap import DEFAULT_ROUNDS, bootstrap, superiority
from tests.fakes.fit_games import duplicate_sets

TRUTH = {"a": 1650.0, "b": 1550.0, "c": 1450.0, "d": 1350.0}


def a_tournament(seed: int = 2, deals: int = 12) -> list[FitGame]:
    rng = random.Random(seed)
    tables = [list(t) for t in itertools.combinations(TRUTH, 2)]
    return duplicate_sets(tables, (0, 1), TRUTH, (0.0, -40.0), rng, deals=deals)


def test_the_same_seed_gives_the_same_numbers_in_any_order_of_the_games() -> None:
    games = a_tournament()
    point = fit(games)
    once = bootstrap(games, point, rounds=30, seed=4)
    shuffled = list(games)
    random.Random(1).shuffle(shuffled)
    assert bootstrap(shuffled, point, rounds=30, seed=4) == once
    assert bootstrap(games, point, rounds=30, seed=5) != once
    assert (once.rounds, once.seed, once.level) == (30, 4, 0.95)
    assert DEFAULT_ROUNDS == 200


def test_intervals_hold_the_point_and_order_the_bots() -> None:
    games = a_tournament()
    point = fit(games)
    result = bootstrap(games, point, rounds=100)
    for bot, (low, high) in result.intervals.items():
        assert low < point.ratings[bot] < high, bot
        assert 20 < high - low < 400, bot
    assert result.rated_rounds == dict.fromkeys(TRUTH, 100)
    assert result.seat_intervals[0] == (0.0, 0.0)
    low, high = result.seat_intervals[1]
    assert low < point.seat_advantage[1] < high
    # The strongest bot is above the weakest in every round; LOS is complementary.
    assert result.los["a"]["d"] == 1.0
    for a, b in itertools.permutations(TRUTH, 2):
        assert result.los[a][b] + result.los[b][a] == pytest.approx(1.0)
    assert "a" not in result.los["a"]


def test_a_wider_level_gives_wider_intervals() -> None:
    games = a_tournament()
    point = fit(games)
    narrow = bootstrap(games, point, rounds=60, level=0.5)
    wide = bootstrap(games, point, rounds=60, level=0.99)
    for bot in TRUTH:
        assert wide.intervals[bot][0] < narrow.intervals[bot][0]
        assert narrow.intervals[bot][1] < wide.intervals[bot][1]


def test_one_unit_resampled_is_always_itself() -> None:
    # Every round draws the only unit: every refit is the point fit.
    games = [dataclasses.replace(g, unit="all") for g in a_tournament(deals=3)]
    point = fit(games)
    result = bootstrap(games, point, rounds=5)
    for bot, (low, high) in result.intervals.items():
        assert low == pytest.approx(point.ratings[bot], abs=1e-4)
        assert high == pytest.approx(point.ratings[bot], abs=1e-4)


def test_units_not_games_are_resampled() -> None:
    # Each unit is two games, one won by each bot: every resample of units is even, so the
    # interval is a point; the same games as one unit each resample unevenly.
    games: list[FitGame] = []
    for deal in range(40):
        for bots in (("a", "b"), ("b", "a")):
            games.append(FitGame(RatedGame(bots, (0, 1), (0, 1), (0, 0)), 0, f"set{deal}"))
    paired = bootstrap(games, fit(games, seat_terms=False), rounds=50)
    singles = [dataclasses.replace(g, unit=f"g{i}") for i, g in enumerate(games)]
    alone = bootstrap(singles, fit(singles, seat_terms=False), rounds=50)
    low, high = paired.intervals["a"]
    assert low == pytest.approx(1500.0, abs=1e-4) and high == pytest.approx(1500.0, abs=1e-4)
    low, high = alone.intervals["a"]
    assert high - low > 50


def test_an_anchored_point_is_anchored_in_every_round() -> None:
    games = a_tournament()
    point = fit(games, anchor="d", anchor_rating=1000.0)
    result = bootstrap(games, point, rounds=40)
    low, high = result.intervals["d"]
    assert low == pytest.approx(1000.0) and high == pytest.approx(1000.0)
    assert result.intervals["a"][0] > 1000.0


def test_a_bot_missing_from_a_round_is_not_rated_in_it() -> None:
    games = a_tournament(deals=6)
    rare = [
        FitGame(RatedGame(("z", "a"), (0, 1), (1, 0), (0, 0)), 0, "rare"),
        FitGame(RatedGame(("a", "z"), (0, 1), (1, 0), (0, 0)), 0, "rare"),
    ]
    games += rare
    point = fit(games)
    result = bootstrap(games, point, rounds=60)
    # The unit "rare" is missed by a round with chance (1 - 1/n)^n, about 37%.
    assert 20 < result.rated_rounds["z"] < 60
    assert result.rated_rounds["a"] == 60
    assert all(math.isfinite(end) for end in result.intervals["z"])
    assert result.los["z"]["a"] + result.los["a"]["z"] == pytest.approx(1.0)


def test_superiority_counts_ties_as_half_and_skips_unrated_rounds() -> None:
    nan = math.nan
    ratings = np.array(
        [
            [1600.0, 1500.0, nan],
            [1500.0, 1500.0, 1400.0],
            [1400.0, 1500.0, 1700.0],
            [1700.0, 1500.0, nan],
        ]
    )
    los = superiority(ratings)
    assert los[0, 1] == pytest.approx((1 + 0.5 + 0 + 1) / 4)
    assert los[1, 0] == pytest.approx(1 - los[0, 1])
    assert los[0, 2] == pytest.approx((1 + 0) / 2)
    assert los[2, 1] == pytest.approx((0 + 1) / 2)
    assert superiority(np.array([[1500.0, nan], [nan, 1500.0]]))[0, 1] == 0.5


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"rounds": 0}, "rounds: expected a whole number of rounds, at least 1, got 0"),
        ({"rounds": 2.5}, "rounds: expected a whole number"),
        ({"level": 1.0}, "level: expected a coverage between 0 and 1, got 1.0"),
    ],
)
def test_bad_options_are_refused(options: dict[str, float], message: str) -> None:
    games = a_tournament(deals=2)
    with pytest.raises(ValueError, match=message):
        bootstrap(games, fit(games), **options)  # type: ignore[arg-type]


def test_a_point_of_other_games_is_refused() -> None:
    games = a_tournament(deals=2)
    other = [g for g in games if "d" not in g.game.bots]
    with pytest.raises(
        ValueError, match=r"point: expected the fit of these games; it rates \['a', 'b', 'c'\]"
    ):
        bootstrap(games, fit(other))


def test_frozen_baselines_are_held_in_every_round() -> None:
    games = a_tournament()
    point = fit(games, fixed={"a": 1650.0, "d": 1350.0})
    result = bootstrap(games, point, rounds=40, seed=3)
    for bot, rating in (("a", 1650.0), ("d", 1350.0)):
        low, high = result.intervals[bot]
        assert low == pytest.approx(rating) and high == pytest.approx(rating)
    for bot in ("b", "c"):
        low, high = result.intervals[bot]
        assert low < point.ratings[bot] < high
        assert high - low > 20
    assert bootstrap(games, point, rounds=40, seed=3) == result

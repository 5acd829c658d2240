"""The seat advantage the surfaces show (``BatchStandings.seat_rows``): per seat position in
free-for-all pools, and in partnership pools the one thing the games measure, the first
starter's side against the other."""

from __future__ import annotations

import itertools
import random
import statistics

import pytest

from domino_arena.server.ladder.batch import BatchStandings, PoolKey, batch_standings
from domino_arena.server.ladder.fit import fit
from domino_arena.server.ladder.fit_bootstrap import bootstrap
from tests.fakes.fit_games import duplicate_sets
from tests.fakes.graded import a_term

STRENGTHS = {"a": 1600.0, "b": 1550.0, "c": 1500.0, "d": 1450.0, "e": 1400.0}
SIDE_ADVANTAGE = 60.0
"""The simulated seats: positions 0 and 2 (the first starter's side) +60 Elo together."""


def partnership_standings(seed: int, deals: int) -> BatchStandings:
    rng = random.Random(seed)
    tables = [list(t) for t in itertools.permutations(STRENGTHS, 4)][::7]
    seats = (0.0, -SIDE_ADVANTAGE / 2, 0.0, -SIDE_ADVANTAGE / 2)
    games = duplicate_sets(tables, (0, 1, 0, 1), STRENGTHS, seats, rng, deals=deals)
    point = fit(games)
    spread = bootstrap(games, point, rounds=60, seed=seed)
    return BatchStandings("passing", PoolKey(4, True), point, spread, len(games), (), (), ())


def test_a_partnership_pool_shows_one_side_line_the_contrast_of_its_seat_terms() -> None:
    standings = partnership_standings(seed=3, deals=6)
    (row,) = standings.seat_rows()
    s = standings.point.seat_advantage
    assert row.label == "the first starter's side (seats 0 and 2 against 1 and 3)"
    assert row.position == 0
    assert row.elo == pytest.approx((s[0] + s[2] - s[1] - s[3]) / 2)
    draws = [(d[0] + d[2] - d[1] - d[3]) / 2 for d in standings.spread.seat_draws]
    half = 1.959964 * statistics.pstdev(draws)
    assert (row.low, row.high) == pytest.approx((row.elo - half, row.elo + half), abs=1e-3)
    assert row.low < SIDE_ADVANTAGE < row.high, "the simulated side advantage is recovered"


def test_a_free_for_all_pool_shows_each_seat_position_after_the_first() -> None:
    rng = random.Random(5)
    tables = [list(t) for t in itertools.combinations(STRENGTHS, 3)]
    games = duplicate_sets(tables, (0, 1, 2), STRENGTHS, (0.0, -30.0, 20.0), rng, deals=4)
    point = fit(games)
    spread = bootstrap(games, point, rounds=20, seed=1)
    standings = BatchStandings("moon", PoolKey(3, False), point, spread, len(games), (), (), ())
    rows = standings.seat_rows()
    assert [(r.label, r.position) for r in rows] == [("seat 1", 1), ("seat 2", 2)]
    for r in rows:
        assert (r.elo, (r.low, r.high)) == (
            point.seat_advantage[r.position],
            spread.seat_intervals[r.position],
        )


def test_batch_standings_hold_the_baselines_that_played_and_skip_the_others() -> None:
    _, matches = a_term(deals=10)
    fixed = {"house:greedy": 1500.0, "house:random": 1000.0, "house:search": 1800.0}
    table = batch_standings(matches, game="passing", rounds=10, fixed=fixed)
    assert table.point.fixed == {"house:greedy": 1500.0, "house:random": 1000.0}
    assert table.point.ratings["house:random"] == 1000.0
    assert table.spread.intervals["house:greedy"] == (1500.0, 1500.0)

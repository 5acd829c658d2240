"""The expected precision of a graded tournament (server/stats/precision.py): the schedule's
counts, the half-widths against what the grades of simulated games really show, the warning at
the default size, and sizing for a precision asked for."""

from __future__ import annotations

import math

import pytest

from domino_arena.server.stats.grades import grades
from domino_arena.server.stats.precision import (
    MAX_GAMES_PER_PAIRING,
    THRESHOLD,
    Precision,
    expected,
    expected_balanced,
    sized,
    sized_balanced,
)
from tests.fakes.graded import a_term, term_bots


def test_one_game_per_pairing_of_a_two_player_game_is_one_set_and_says_so() -> None:
    p = expected("straight", seats=2, partnerships=False, entrants=42, games_per_pairing=1)
    assert (p.sets_per_baseline, p.games_per_entrant, p.games) == (1, 2 * 41, 42 * 41)
    assert math.isinf(p.baseline_half_width) and math.isfinite(p.rating_half_width)
    assert "is 1 duplicate set: it has no interval" in p.warning
    assert "every verdict will be 'not significant'" in p.warning


def test_the_counts_follow_the_schedule_of_three_seats_partnerships_and_fresh_deals() -> None:
    moon = expected("moon", seats=3, partnerships=False, entrants=6, games_per_pairing=2)
    assert moon.sets_per_baseline == math.comb(4, 1) * 2  # tables with both, one set per deal
    assert moon.games_per_entrant == math.comb(5, 2) * 3 * 2
    teams = expected("passing", seats=4, partnerships=True, entrants=5, games_per_pairing=1)
    assert teams.sets_per_baseline == math.comb(3, 2) * 2  # opponents in 2 of 3 pairings
    fresh = expected(
        "straight", seats=2, partnerships=False, entrants=4, games_per_pairing=3, fresh=True
    )
    assert fresh.sets_per_baseline == 6 and fresh.sd_per_game > 0  # every game its own unit
    with pytest.raises(ValueError, match="cannot fill a 3-seat table"):
        expected("moon", seats=3, partnerships=False, entrants=2, games_per_pairing=1)


def test_the_expected_half_widths_match_the_grades_of_simulated_games() -> None:
    tournament, matches = a_term(deals=40)  # a win or a loss per game: sd per game 1/2
    eve = next(
        g for g in grades([tournament], matches, term_bots(), rounds=200).grades if g.bot == "eve"
    )
    p = expected("unmeasured", seats=2, partnerships=False, entrants=4, games_per_pairing=40)
    assert p.sd_per_game == 0.5 and p.sets_per_baseline == 40
    level = eve.baselines[0]  # eve against greedy: equal strengths, where the estimate is made
    measured = (level.elo_high - level.elo_low) / 2
    assert 0.75 < p.baseline_half_width / measured < 1.33, (p.baseline_half_width, measured)
    rating = (eve.rating_high - eve.rating_low) / 2
    # A lower bound: eve learns less from games against far stronger or weaker bots.
    assert 0.5 < p.rating_half_width / rating <= 1, (p.rating_half_width, rating)


def test_sizing_finds_the_fewest_games_per_pairing_that_reach_the_precision() -> None:
    def size(half_width: float, *, baselines: bool = True) -> Precision:
        return sized(
            "passing",
            seats=2,
            partnerships=False,
            entrants=12,
            half_width=half_width,
            baselines=baselines,
        )

    p = size(THRESHOLD)
    assert p.baseline_half_width <= THRESHOLD and p.warning == ""
    fewer = expected(
        "passing",
        seats=2,
        partnerships=False,
        entrants=12,
        games_per_pairing=p.games_per_pairing - 1,
    )
    assert fewer.baseline_half_width > THRESHOLD and fewer.warning
    assert size(60, baselines=False).rating_half_width <= 60
    with pytest.raises(ValueError, match=f"needs more than {MAX_GAMES_PER_PAIRING} games"):
        size(1)


def test_a_balanced_design_rests_each_rating_on_its_tables_pairwise_results() -> None:
    """A balanced design of t tables per entrant gives t (k - 1) pairwise results per deal: the
    round robin's formula when t is the round robin's own tables per entrant."""
    rr = expected("moon", seats=3, partnerships=False, entrants=6, games_per_pairing=2)
    same = expected_balanced(
        "moon",
        seats=3,
        partnerships=False,
        entrants=6,
        tables_per_entrant=math.comb(5, 2),
        games_per_pairing=2,
    )
    assert same.rating_half_width == pytest.approx(rr.rating_half_width)
    assert (same.games_per_entrant, same.games) == (rr.games_per_entrant, rr.games)
    big = expected_balanced(
        "passing", seats=4, partnerships=False, entrants=40, tables_per_entrant=25
    )
    assert (big.games_per_entrant, big.games) == (100, 40 * 25)
    four = expected_balanced(
        "passing", seats=4, partnerships=False, entrants=40, tables_per_entrant=100
    )
    assert four.rating_half_width == pytest.approx(big.rating_half_width / 2)


def test_sizing_a_balanced_design_finds_the_fewest_tables_that_reach_the_precision() -> None:
    p = sized_balanced(
        "doubles", seats=4, partnerships=True, entrants=200, half_width=60, baselines=False
    )
    fewer = expected_balanced(
        "doubles",
        seats=4,
        partnerships=True,
        entrants=200,
        tables_per_entrant=p.games_per_entrant // 4 - 1,
    )
    assert p.rating_half_width <= 60 < fewer.rating_half_width
    with pytest.raises(ValueError, match=r"precision: \+-0.1 Elo needs more than 30000 games"):
        sized_balanced(
            "moon", seats=3, partnerships=False, entrants=9, half_width=0.1, baselines=False
        )

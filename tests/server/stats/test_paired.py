"""Estimates from paired units: fishtest's numbers, hand-checked cases, the edges, bad input."""

from __future__ import annotations

import doctest
import math

import pytest

from domino_arena.server.stats import paired
from domino_arena.server.stats.paired import (
    ELO_LIMIT,
    NELO_PER_T,
    ScoreError,
    elo_of_score,
    estimate,
    estimate_counts,
    score_counts,
    score_of_elo,
    set_score,
    swap_score,
    variance_floor,
)
from domino_arena.server.tournaments.game_sd import Z95

PENTANOMIAL = [10789, 19328, 33806, 19402, 10543]
"""A fishtest run's game-pair counts, [LL, LD, DD+WL, WD, WW] (its stat_util self-test)."""


def pentanomial(counts: list[int]) -> dict[float, int]:
    return {i / 4: c for i, c in enumerate(counts)}


def test_the_docstring_examples_hold() -> None:
    assert doctest.testmod(paired).failed == 0


def test_a_pentanomial_gives_fishtests_elo_interval_and_los() -> None:
    # Printed by fishtest's stat_util.get_elo(PENTANOMIAL) (scipy's Phi and Phi_inv).
    e = estimate_counts(pentanomial(PENTANOMIAL), games_per_unit=2)
    assert e.units == sum(PENTANOMIAL)
    assert e.elo == pytest.approx(-0.7735773359165423, abs=1e-12)
    assert e.elo_half_width == pytest.approx(1.2775798957280218, rel=1e-9)
    assert e.los == pytest.approx(0.1176588580327751, rel=1e-9)


def test_normalized_elo_is_fishtests_t_value_per_game() -> None:
    # LLR_normalized_alt: nt = (mu - 1/2) / sigma_pg with sigma_pg = sqrt(2 var) for pairs.
    counts = pentanomial([39, 2226, 31451, 2412, 40])
    e = estimate_counts(counts, games_per_unit=2)
    n = sum(counts.values())
    mu = sum(v * c for v, c in counts.items()) / n
    var = sum(c * (v - mu) ** 2 for v, c in counts.items()) / n
    assert e.nelo == pytest.approx((mu - 0.5) / math.sqrt(2 * var) * 800 / math.log(10))
    assert e.nelo_low < e.nelo < e.nelo_high


def test_a_two_point_case_checks_by_hand() -> None:
    # 60 units at 3/4 and 40 at 1/4: mu = 0.55, var = 0.24 * 1/4 = 0.06.
    e = estimate([0.75] * 60 + [0.25] * 40, games_per_unit=3)
    assert e.score == pytest.approx(0.55)
    assert e.sigma == pytest.approx(math.sqrt(0.06))
    se = math.sqrt(0.06) / 10
    assert e.elo == pytest.approx(-400 * math.log10(1 / 0.55 - 1))
    assert e.elo_low == pytest.approx(-400 * math.log10(1 / (0.55 - Z95 * se) - 1))
    assert e.elo_high == pytest.approx(-400 * math.log10(1 / (0.55 + Z95 * se) - 1))
    assert e.los == pytest.approx(0.5 * math.erfc(-(0.05 / se) / math.sqrt(2)))
    assert e.nelo == pytest.approx(0.05 / (math.sqrt(0.06) * math.sqrt(3)) * NELO_PER_T)
    assert e.distribution == ((0.25, 40), (0.75, 60))


def test_the_elo_map_and_its_inverse_agree() -> None:
    for elo in (-600.0, -35.0, 0.0, 12.5, 400.0):
        assert elo_of_score(score_of_elo(elo)) == pytest.approx(elo)
    assert score_of_elo(400) == pytest.approx(10 / 11)
    assert elo_of_score(1.0) == ELO_LIMIT == -elo_of_score(0.0)
    assert math.isclose(ELO_LIMIT, 400 * math.log10(999))


def test_better_results_give_a_higher_elo_and_los() -> None:
    previous = estimate([0.0] * 10 + [0.5] * 80 + [1.0] * 10)
    for moved in range(1, 10):
        e = estimate([0.0] * (10 - moved) + [0.5] * 80 + [1.0] * (10 + moved))
        assert e.elo > previous.elo
        assert e.los > previous.los
        assert e.nelo > previous.nelo
        previous = e


def test_the_interval_holds_the_elo_and_shrinks_with_more_units() -> None:
    widths = []
    for k in (1, 4, 16, 64):
        e = estimate([0.0, 0.5, 0.5, 1.0, 1.0] * k)
        assert e.elo_low < e.elo < e.elo_high
        widths.append(e.elo_half_width)
    assert widths == sorted(widths, reverse=True)
    assert widths[-1] < widths[0] / 4  # about 1/sqrt(n): 8x the units, under a quarter


def test_no_units_say_nothing_yet_finitely() -> None:
    e = estimate([])
    assert (e.units, e.score, e.elo, e.los) == (0, 0.5, 0.0, 0.5)
    assert (e.elo_low, e.elo_high) == (-ELO_LIMIT, ELO_LIMIT)
    assert e.sigma == 0.5
    assert (e.nelo, e.nelo_low, e.nelo_high) == (0.0, -NELO_PER_T, NELO_PER_T)
    assert e.distribution == ()


def test_one_unit_or_no_spread_uses_the_variance_floor() -> None:
    one = estimate([1.0])
    assert one.sigma == pytest.approx(math.sqrt(variance_floor(1, 1.0))) == pytest.approx(0.5)
    assert one.elo == ELO_LIMIT
    assert one.los == pytest.approx(0.5 * math.erfc(-1 / math.sqrt(2)))  # Phi(1)
    assert one.elo_low < 0 < one.elo_high == ELO_LIMIT  # one win proves little
    many = estimate([1.0] * 100)
    assert many.los > 0.999999
    assert many.elo_low > 500  # a hundred sets won outright prove a lot
    assert all(math.isfinite(v) for v in (many.elo_low, many.nelo, many.nelo_high, many.sigma))
    even = estimate([0.5] * 50)
    assert (even.elo, even.los, even.nelo) == (0.0, 0.5, 0.0)
    assert even.sigma == pytest.approx(math.sqrt(0.25 / 51))


def test_the_floor_changes_nothing_when_the_units_spread() -> None:
    counts = pentanomial([3, 5, 10, 7, 2])
    e = estimate_counts(counts)
    n, mu = 27, sum(v * c for v, c in counts.items()) / 27
    sample = sum(c * (v - mu) ** 2 for v, c in counts.items()) / n
    assert sample > variance_floor(n, mu)
    assert e.sigma == pytest.approx(math.sqrt(sample))


def test_scores_are_counted_once_per_value() -> None:
    thirds = [1 / 3, (0.0 + 0.0 + 1.0) / 3, set_score([0.0, 1.0, 0.0])]
    assert score_counts([*thirds, 1.0, 0.0, 1.0]) == {0.0: 1, round(1 / 3, 12): 3, 1.0: 2}
    assert estimate(thirds).distribution == ((round(1 / 3, 12), 3),)


def test_unit_scores_of_sets_and_swaps() -> None:
    assert set_score([1.0, 0.5, 0.0, 1.0]) == 0.625
    assert swap_score(1.0, 0.0) == 1.0
    assert swap_score(0.25, 0.75) == 0.25
    assert swap_score(0.4, 0.4) == 0.5


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: estimate([0.5, 1.5]), r"unit score: must be in \[0, 1\], got 1.5"),
        (lambda: estimate([math.nan]), r"unit score: must be in \[0, 1\], got nan"),
        (lambda: estimate(["1"]), r"unit score: must be a number"),  # type: ignore[list-item]
        (lambda: estimate([True]), r"unit score: must be a number"),
        (lambda: estimate_counts({0.5: -1}), r"count of unit score 0.5: must be a non-negative"),
        (lambda: estimate_counts({0.5: 2.0}), r"must be a non-negative integer, got 2.0"),  # type: ignore[dict-item]
        (lambda: estimate_counts({2.0: 1}), r"unit score: must be in \[0, 1\], got 2.0"),
        (lambda: estimate([0.5], games_per_unit=0), r"games_per_unit: must be at least 1"),
        (lambda: set_score([]), r"game_scores: a duplicate set needs at least one game"),
        (lambda: set_score([0.5, -0.1]), r"game score: must be in \[0, 1\], got -0.1"),
        (lambda: swap_score(0.5, 1.1), r"b_mean: must be in \[0, 1\], got 1.1"),
    ],
)
def test_bad_input_is_refused_by_name(call: object, message: str) -> None:
    assert callable(call)
    with pytest.raises(ScoreError, match=message):
        call()

"""The GSPRT: fishtest's LLRs, a case solved by hand, the Brownian approximation, the verdicts,
bad parameters, and a small seeded simulation of its error rates."""

from __future__ import annotations

import doctest
import math
import random

import pytest

from domino_arena.server.stats import sprt
from domino_arena.server.stats.paired import ScoreError
from domino_arena.server.stats.sprt import (
    REGULARISATION,
    Sprt,
    SprtOptionError,
    Verdict,
    constrained_mle,
    parse_sprt,
    secular_root,
)

PAIRS = (0.0, 0.25, 0.5, 0.75, 1.0)
"""The unit scores of a game pair with draws (fishtest's pentanomial)."""


def pentanomial(counts: list[int]) -> dict[float, int]:
    return dict(zip(PAIRS, counts, strict=True))


def test_the_docstring_examples_hold() -> None:
    assert doctest.testmod(sprt).failed == 0


def test_the_bounds_are_walds() -> None:
    test = Sprt(0, 5)
    assert test.lower == pytest.approx(-math.log(19)) == pytest.approx(-2.944438979)
    assert test.upper == pytest.approx(math.log(19))
    skewed = Sprt(0, 5, alpha=0.01, beta=0.2)
    assert skewed.lower == pytest.approx(math.log(0.2 / 0.99))
    assert skewed.upper == pytest.approx(math.log(0.8 / 0.01))


@pytest.mark.parametrize(
    ("counts", "elo0", "elo1", "fishtest"),
    [
        # Printed by fishtest's LLRcalc.LLR_logistic(elo0, elo1, counts).
        ([10789, 19328, 33806, 19402, 10543], -3, 1, 2.1310678117940807),
        ([39, 2226, 31451, 2412, 40], 0.2, 0.9, 2.1625425800483593),
        ([1187, 7410, 13475, 7378, 1164], -3, 1, 2.86152718059463),
        ([3, 5, 10, 7, 2], 0, 50, -0.9446864987621195),
    ],
)
def test_pentanomial_llrs_are_fishtests(
    counts: list[int], elo0: float, elo1: float, fishtest: float
) -> None:
    test = Sprt(elo0, elo1, support=PAIRS)
    assert test.llr(pentanomial(counts)) == pytest.approx(fishtest, abs=1e-9)


def test_a_trinomial_llr_is_fishtests() -> None:
    # LLR_logistic(0, 5, [100, 200, 130]): losses, draws, wins.
    assert Sprt(0, 5).llr({0.0: 100, 0.5: 200, 1.0: 130}) == pytest.approx(0.7244458361486839)


def test_wins_and_losses_only_give_the_bernoulli_llr() -> None:
    # On the scores {0, 1} the only distribution with mean s is Bernoulli(s), so the
    # generalised LLR is the plain one: W ln(s1/s0) + L ln((1-s1)/(1-s0)).
    test = Sprt(-10, 30)
    s0, s1 = 1 / (1 + 10 ** (10 / 400)), 1 / (1 + 10 ** (-30 / 400))
    wins, losses = 70, 45
    expected = wins * math.log(s1 / s0) + losses * math.log((1 - s1) / (1 - s0))
    assert test.llr({0.0: losses, 1.0: wins}) == pytest.approx(expected, rel=1e-12)


def test_the_brownian_approximation_agrees_for_small_elo_differences() -> None:
    counts = {0.0: 20, 1 / 3: 45, 2 / 3: 50, 1.0: 25}
    close = Sprt(0, 2)
    assert close.llr(counts) == pytest.approx(close.brownian_llr(counts), rel=0.01)
    wide = Sprt(0, 200)
    assert abs(wide.llr(counts) - wide.brownian_llr(counts)) > 0.05 * abs(wide.llr(counts))


def test_the_constrained_mle_has_the_mean_asked_for() -> None:
    weights = {0.0: 3.0, 0.25: 5.0, 0.5: 10.0, 0.75: 7.0, 1.0: 2.0}
    for mean in (0.1, 0.4, 0.5, 0.77, 0.95):
        mle = constrained_mle(weights, mean)
        assert sum(mle.values()) == pytest.approx(1.0, abs=1e-12)
        assert sum(v * p for v, p in mle.items()) == pytest.approx(mean, abs=1e-12)
        assert all(p > 0 for p in mle.values())
    at_mean = constrained_mle(weights, sum(v * w for v, w in weights.items()) / 27)
    assert at_mean == pytest.approx({v: w / 27 for v, w in weights.items()})


def test_the_secular_root_needs_deviations_on_both_sides() -> None:
    assert secular_root([-0.5, 0.5], [1.0, 1.0]) == pytest.approx(0.0, abs=1e-15)
    with pytest.raises(ValueError, match="deviations: must straddle 0"):
        secular_root([0.1, 0.5], [1.0, 1.0])


def test_the_llr_grows_as_results_improve() -> None:
    test = Sprt(0, 20)
    llrs = []
    for moved in range(0, 30, 5):
        llrs.append(test.llr({0.0: 40 - moved, 0.5: 100, 1.0: 40 + moved}))
    assert llrs == sorted(llrs)
    assert llrs[0] < 0 < llrs[-1]


def test_unseen_extremes_are_regularised_so_one_unit_has_an_llr() -> None:
    test = Sprt(0, 20)
    assert test.llr({}) == 0.0
    assert 0 < test.llr({1.0: 1}) < test.llr({1.0: 2})
    assert test.llr({0.5: 1}) < 0  # a draw is nearer s0 = 1/2 than s1
    # A cell outside the observed ones counts REGULARISATION, as fishtest's regularize.
    seen_pair = test.llr({0.0: 1, 1.0: 1})
    with_support = Sprt(0, 20, support=[0.5]).llr({0.0: 1, 1.0: 1})
    assert with_support != seen_pair
    assert abs(with_support - seen_pair) < 100 * REGULARISATION


def test_the_verdicts() -> None:
    test = Sprt(0, 50, max_units=200)
    assert test.status({}).verdict is Verdict.CONTINUE
    strong = test.status({0.0: 10, 0.5: 40, 1.0: 50})
    assert (strong.verdict, strong.units, strong.leaning) == (Verdict.H1, 100, None)
    assert strong.llr >= strong.upper
    weak = test.status({0.0: 50, 0.5: 40, 1.0: 10})
    assert weak.verdict is Verdict.H0
    assert weak.llr <= weak.lower
    assert test.status({0.0: 5, 0.5: 10, 1.0: 6}).verdict is Verdict.CONTINUE


def test_at_the_cap_an_undecided_test_is_inconclusive_with_its_leaning() -> None:
    test = Sprt(0, 10, max_units=100)
    up = test.status({0.0: 45, 1.0: 55})
    assert (up.verdict, up.leaning, up.units) == (Verdict.INCONCLUSIVE, Verdict.H1, 100)
    assert test.lower < up.llr < test.upper
    down = test.status({0.0: 52, 1.0: 48})
    assert (down.verdict, down.leaning) == (Verdict.INCONCLUSIVE, Verdict.H0)
    assert down.describe().startswith("inconclusive (leaning H0) after 100 units: LLR ")
    assert Sprt(0, 10).status({0.0: 45, 1.0: 55}).verdict is Verdict.CONTINUE


def test_a_crossed_bound_decides_even_at_the_cap() -> None:
    test = Sprt(0, 50, max_units=100)
    assert test.status({0.0: 10, 0.5: 40, 1.0: 50}).verdict is Verdict.H1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"elo0": 5, "elo1": 5}, "elo0 must be below elo1, got 5 and 5"),
        ({"elo0": 10, "elo1": 0}, "elo0 must be below elo1"),
        ({"elo0": math.nan, "elo1": 5}, "elo0: must be a finite Elo"),
        ({"elo0": 0, "elo1": 2000}, "elo1: must be a finite Elo within"),
        ({"elo0": 0, "elo1": 5, "alpha": 0}, r"alpha: must be in \(0, 1\), got 0"),
        ({"elo0": 0, "elo1": 5, "beta": 1.0}, r"beta: must be in \(0, 1\), got 1.0"),
        ({"elo0": 0, "elo1": 5, "alpha": 0.6, "beta": 0.5}, "alpha and beta: must sum to less"),
        ({"elo0": 0, "elo1": 5, "max_units": 0}, "max_units: must be a positive integer"),
        ({"elo0": 0, "elo1": 5, "support": [1.5]}, r"support: unit scores are in \[0, 1\]"),
    ],
)
def test_bad_parameters_are_refused_by_name(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(SprtOptionError, match=message):
        Sprt(**kwargs)  # type: ignore[arg-type]


def test_bad_counts_are_refused() -> None:
    with pytest.raises(ScoreError, match=r"count of unit score 1\.0"):
        Sprt(0, 5).llr({1.0: -2})


def test_the_cli_text_parses() -> None:
    test = parse_sprt("0,5")
    assert (test.elo0, test.elo1, test.alpha, test.beta, test.max_units) == (0, 5, 0.05, 0.05, None)
    test = parse_sprt(" -3, 1, 0.01, 0.1 ", max_units=5000)
    assert (test.elo0, test.elo1, test.alpha, test.beta, test.max_units) == (-3, 1, 0.01, 0.1, 5000)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("5", r"--sprt: expected elo0,elo1 or elo0,elo1,alpha,beta, got '5' \(1 values\)"),
        ("0,5,0.05", r"--sprt: expected .* \(3 values\)"),
        ("0,five", "--sprt: elo1 must be a number, got 'five'"),
        ("0,5,0.05,x", "--sprt: beta must be a number, got 'x'"),
        ("5,0", "--sprt: elo0 and elo1: elo0 must be below elo1"),
        ("0,5,0.5,0.5", "--sprt: alpha and beta: must sum to less than 1"),
    ],
)
def test_bad_cli_text_says_what_was_expected(text: str, message: str) -> None:
    with pytest.raises(SprtOptionError, match=message):
        parse_sprt(text)


def run_test(test: Sprt, shape: dict[float, float], rng: random.Random) -> Verdict:
    """Run ``test`` on units drawn from ``shape`` (value -> probability) to a verdict."""
    values, weights = list(shape), list(shape.values())
    counts: dict[float, int] = {}
    while True:
        value = rng.choices(values, weights)[0]
        counts[value] = counts.get(value, 0) + 1
        status = test.status(counts)
        if status.verdict is not Verdict.CONTINUE:
            return status.verdict


def test_error_rates_are_near_alpha_and_beta_in_a_small_simulation() -> None:
    # Duplicate sets of three games, tilted to the exact means of H0 and of H1; 200 tests each.
    base = {0.0: 0.15, 1 / 3: 0.3, 2 / 3: 0.35, 1.0: 0.2}
    test = Sprt(0, 120, alpha=0.05, beta=0.05, max_units=2000)
    rng = random.Random(11)
    runs = 200
    at_h0 = constrained_mle(base, test.s0)
    at_h1 = constrained_mle(base, test.s1)
    false_h1 = sum(run_test(test, at_h0, rng) is Verdict.H1 for _ in range(runs)) / runs
    false_h0 = sum(run_test(test, at_h1, rng) is Verdict.H0 for _ in range(runs)) / runs
    assert 0.005 <= false_h1 <= 0.12  # 0.05 when written
    assert 0.005 <= false_h0 <= 0.12  # 0.065

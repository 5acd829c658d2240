"""The batch rating fit (server/ladder/fit.py): hand tables, an independent fit, recovery of
known strengths from games drawn from the model, anchors, order independence, every bad input.

Elo differences here are ``400 log10(odds)``; the prior's pull is computed exactly where a test
keeps it, or made to vanish with a huge ``prior_sigma``.
"""

from __future__ import annotations

import dataclasses
import doctest
import itertools
import math
import random

import choix
import numpy as np
import pytest
from scipy import optimize

from domino_arena.bots import make_bot
from domino_arena.sdk.local import play_game
from domino_arena.sdk.match.records import record_lines
from domino_arena.sdk.rules import make_game
from domino_arena.sdk.rules.dealing import first_seat
from domino_arena.server.ladder import fit as fit_module
from domino_arena.server.ladder.elo import RatedGame
from domino_arena.server.ladder.fit import (
    ELO_PER_NATURAL,
    MODEL,
    PRIOR_SIGMA,
    FitGame,
    fit,
    fit_game_of,
)
from domino_arena.server.store.matches import StoredMatch
from tests.fakes.fit_games import duplicate_sets
from tests.fakes.store import a_match

VANISHING = 1e7
"""A prior so weak that its pull is far below the tolerances."""


def duel(winner: str, loser: str, *, first: int = 0, unit: str = "", draw: bool = False) -> FitGame:
    """A two-player game, ``winner`` in seat 0."""
    game = RatedGame((winner, loser), (0, 1), (0, 0) if draw else (0, 1), (0, 0))
    return FitGame(game, first, unit or f"{winner}-{loser}-{random.random()}")


def numbered(games: list[FitGame]) -> list[FitGame]:
    """The games, each its own unit."""
    return [dataclasses.replace(g, unit=f"g{i}") for i, g in enumerate(games)]


def test_the_module_examples_hold() -> None:
    assert doctest.testmod(fit_module).failed == 0


# -- hand-computed tables ---------------------------------------------------------------------


def test_three_wins_in_four_are_400_log10_3_with_a_vanishing_prior() -> None:
    games = numbered([duel("a", "b")] * 3 + [duel("b", "a")])
    result = fit(games, seat_terms=False, prior_sigma=VANISHING)
    assert result.ratings["a"] - result.ratings["b"] == pytest.approx(400 * math.log10(3), abs=1e-3)
    assert (result.ratings["a"] + result.ratings["b"]) / 2 == pytest.approx(1500)
    assert result.games == {"a": 4, "b": 4}
    assert result.units == 4
    assert result.model == MODEL == "plackett-luce/1"
    # The log-likelihood at the fit: 3 log(3/4) + log(1/4).
    assert result.log_likelihood == pytest.approx(3 * math.log(0.75) + math.log(0.25))


def test_the_default_prior_pulls_as_its_posterior_says() -> None:
    # Posterior of d = theta_a - theta_b (theta_a = -theta_b = d/2, each N(0, s^2)):
    # 3 log s(d) + log s(-d) - d^2 / (4 s^2); stationary where 3 - 4 s(d) = d / (2 s^2).
    s = PRIOR_SIGMA / ELO_PER_NATURAL
    d = optimize.brentq(lambda d: 3 - 4 / (1 + math.exp(-d)) - d / (2 * s * s), 0, 3)
    games = numbered([duel("a", "b")] * 3 + [duel("b", "a")])
    result = fit(games, seat_terms=False)
    assert result.ratings["a"] - result.ratings["b"] == pytest.approx(d * ELO_PER_NATURAL, 1e-6)
    assert 0 < 400 * math.log10(3) - d * ELO_PER_NATURAL < 5


def test_balanced_seats_leave_the_seat_term_at_zero() -> None:
    # a wins 3 of 4 from each seat: no seat is better, and a is 400 log10 3 above b.
    as_first = [duel("a", "b")] * 3 + [duel("b", "a", first=1)]
    as_second = [duel("a", "b", first=1)] * 3 + [duel("b", "a")]
    result = fit(numbered(as_first + as_second), prior_sigma=VANISHING)
    assert result.ratings["a"] - result.ratings["b"] == pytest.approx(400 * math.log10(3), abs=1e-3)
    assert result.seat_advantage[0] == 0.0
    assert result.seat_advantage[1] == pytest.approx(0.0, abs=1e-6)


def test_a_first_mover_advantage_is_measured_apart_from_the_strengths() -> None:
    # Whoever starts wins 3 of 4, whichever bot it is: equal bots, second seat -190.8.
    games = []
    for starter, other in (("a", "b"), ("b", "a")):
        games += [duel(starter, other)] * 3 + [duel(other, starter, first=1)]
    result = fit(numbered(games), prior_sigma=VANISHING)
    assert result.ratings["a"] == pytest.approx(result.ratings["b"], abs=1e-3)
    assert result.seat_advantage[0] == 0.0
    assert result.seat_advantage[1] == pytest.approx(-400 * math.log10(3), abs=1e-3)


def test_a_draw_is_half_a_win_each_way() -> None:
    # 1 win + 2 draws vs 0 wins: as 2 wins and 1 loss, i.e. odds 2:1.
    games = numbered([duel("a", "b"), duel("a", "b", draw=True), duel("b", "a", draw=True)])
    result = fit(games, seat_terms=False, prior_sigma=VANISHING)
    assert result.ratings["a"] - result.ratings["b"] == pytest.approx(400 * math.log10(2), abs=1e-3)
    assert result.log_likelihood == pytest.approx(math.log(2 / 3) + 2 * math.log(2 / 9) / 2)


def test_three_sides_follow_plackett_luce() -> None:
    # The log-likelihood of a 3-side game at the fitted strengths, by hand.
    orders = [(0, 1, 2), (0, 1, 2), (1, 0, 2), (2, 1, 0), (0, 2, 1), (1, 2, 0)]
    games = []
    for i, order in enumerate(orders):
        standing = tuple(order.index(side) for side in range(3))
        games.append(FitGame(RatedGame(("a", "b", "c"), (0, 1, 2), standing, (0, 0, 0)), 0, f"{i}"))
    result = fit(games, prior_sigma=VANISHING, seat_terms=False)
    u = {bot: r / ELO_PER_NATURAL for bot, r in result.ratings.items()}
    expected = 0.0
    for order in orders:
        left = [("a", "b", "c")[side] for side in order]
        for place in range(2):
            expected += u[left[place]] - math.log(sum(math.exp(u[b]) for b in left[place:]))
    assert result.log_likelihood == pytest.approx(expected, abs=1e-9)
    assert result.ratings["a"] > result.ratings["c"]
    assert result.ratings["b"] > result.ratings["c"]


def test_a_tie_among_three_counts_every_order_of_the_tied_sides() -> None:
    tied = FitGame(RatedGame(("a", "b", "c"), (0, 1, 2), (0, 1, 1), (0, 0, 0)), 0, "tie")
    other = FitGame(RatedGame(("a", "b", "c"), (0, 1, 2), (2, 0, 1), (0, 0, 0)), 0, "other")
    result = fit([tied, other], prior_sigma=VANISHING, seat_terms=False)
    u = {bot: r / ELO_PER_NATURAL for bot, r in result.ratings.items()}

    def log_pl(order: str) -> float:
        return sum(u[order[k]] - math.log(sum(math.exp(u[b]) for b in order[k:])) for k in range(2))

    assert result.log_likelihood == pytest.approx(
        (log_pl("abc") + log_pl("acb")) / 2 + log_pl("bca"), abs=1e-9
    )


def test_a_bot_that_won_every_game_stays_finite() -> None:
    wins = [duel("a", "b", first=first) for first in (0, 1)] * 10
    result = fit(numbered([*wins, duel("b", "c"), duel("c", "b")]))
    assert all(math.isfinite(r) for r in result.ratings.values())
    assert result.ratings["a"] - result.ratings["b"] > 600


# -- against an independent fit ----------------------------------------------------------------


def test_two_sided_games_match_choix() -> None:
    rng = random.Random(5)
    bots = [f"bot{i}" for i in range(6)]
    truth = {bot: rng.uniform(-300, 300) for bot in bots}
    tables = [list(pair) for pair in itertools.combinations(bots, 2)]
    games = duplicate_sets(tables, (0, 1), truth, (0.0, 0.0), rng, deals=6)
    # choix's penalty alpha * sum(theta^2) is our prior when alpha = 1 / (2 s^2).
    s = PRIOR_SIGMA / ELO_PER_NATURAL
    data = [
        (
            bots.index(g.game.bots[g.game.standing.index(0)]),
            bots.index(g.game.bots[g.game.standing.index(1)]),
        )
        for g in games
    ]
    theirs = choix.opt_pairwise(len(bots), data, alpha=1 / (2 * s * s), method="BFGS", tol=1e-10)
    ours = fit(games, seat_terms=False)
    mine = np.array([ours.ratings[bot] for bot in bots])
    assert np.allclose(mine - mine.mean(), theirs * ELO_PER_NATURAL, atol=1e-3)
    # And the unregularised iterative Luce spectral ranking (choix's other algorithm).
    spectral = choix.ilsr_pairwise(len(bots), data, alpha=0.0, tol=1e-12)
    vanishing = fit(games, seat_terms=False, prior_sigma=VANISHING)
    mine = np.array([vanishing.ratings[bot] for bot in bots])
    centred = (spectral - spectral.mean()) * ELO_PER_NATURAL
    assert np.allclose(mine - mine.mean(), centred, atol=1e-2)


# -- recovering known strengths ----------------------------------------------------------------


def test_known_strengths_and_seat_advantages_are_recovered() -> None:
    rng = random.Random(11)
    truth = {"a": 1700.0, "b": 1600.0, "c": 1500.0, "d": 1400.0, "e": 1300.0}
    seats = (0.0, -60.0, -120.0)
    tables = [list(t) for t in itertools.combinations(truth, 3)]
    games = duplicate_sets(tables, (0, 1, 2), truth, seats, rng, deals=120)
    result = fit(games)
    assert result.players == 3
    assert result.units == 10 * 120
    for bot, rating in truth.items():
        assert result.ratings[bot] == pytest.approx(rating, abs=30), bot
    assert result.seat_advantage[0] == 0.0
    assert result.seat_advantage[1] == pytest.approx(-60, abs=25)
    assert result.seat_advantage[2] == pytest.approx(-120, abs=25)


def test_individual_strengths_are_recovered_from_partnership_games() -> None:
    rng = random.Random(3)
    truth = {"a": 1750.0, "b": 1600.0, "c": 1500.0, "d": 1450.0, "e": 1400.0, "f": 1300.0}
    seats = (0.0, -40.0, 20.0, -40.0)
    # Partners change: every four bots, in every one of their three pairings.
    tables = []
    for four in itertools.combinations(truth, 4):
        w, x, y, z = four
        tables += [[w, y, x, z], [w, x, y, z], [w, x, z, y]]
    games = duplicate_sets(tables, (0, 1, 0, 1), truth, seats, rng, deals=60)
    result = fit(games)
    for bot, rating in truth.items():
        assert result.ratings[bot] == pytest.approx(rating, abs=40), bot
    # Two sides: only (seats 0 and 2) against (seats 1 and 3) is measured; the true
    # difference is (0 + 20)/2 - (-40 - 40)/2 = 50.
    gained = (result.seat_advantage[2] - result.seat_advantage[1] - result.seat_advantage[3]) / 2
    assert gained == pytest.approx(50, abs=20)


# -- anchors and order -------------------------------------------------------------------------


def a_table(seed: int = 1) -> list[FitGame]:
    rng = random.Random(seed)
    truth = {"a": 1600.0, "b": 1500.0, "c": 1450.0, "d": 1400.0}
    tables = [list(t) for t in itertools.combinations(truth, 2)]
    return duplicate_sets(tables, (0, 1), truth, (0.0, -30.0), rng, deals=10)


def test_the_pool_mean_is_1500_by_default_or_the_anchor_is_held() -> None:
    games = a_table()
    plain = fit(games)
    assert sum(plain.ratings.values()) / 4 == pytest.approx(1500)
    held = fit(games, anchor="c", anchor_rating=1000.0)
    assert held.ratings["c"] == pytest.approx(1000.0, abs=1e-9)
    assert (held.anchor, held.anchor_rating) == ("c", 1000.0)
    for bot in plain.ratings:
        shift = held.ratings[bot] - plain.ratings[bot]
        assert shift == pytest.approx(1000.0 - plain.ratings["c"], abs=1e-9)
    assert held.seat_advantage == plain.seat_advantage
    mean_at = fit(games, anchor_rating=2000.0)
    assert sum(mean_at.ratings.values()) / 4 == pytest.approx(2000)


def test_the_order_of_the_games_does_not_change_a_bit() -> None:
    games = a_table()
    shuffled = list(games)
    random.Random(9).shuffle(shuffled)
    assert fit(shuffled) == fit(games)


def test_the_standings_are_highest_first() -> None:
    result = fit(a_table())
    table = result.standings()
    assert [r for _, r in table] == sorted(result.ratings.values(), reverse=True)


# -- the adapter from stored matches -----------------------------------------------------------


def stored(match_id: str = "m1", **changes: object) -> StoredMatch:
    base = dataclasses.replace(
        a_match(match_id), seats=("ann", "bob"), scores=(7, 3), winner=0, rated=True, record=None
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_a_match_without_record_starts_where_its_seed_says() -> None:
    for seed in range(6):
        item = fit_game_of(stored(seed=seed))
        assert item.first_seat == first_seat(seed, 2)
        assert item.game.standing == (0, 1)
        assert item.unit == "m1"


def test_a_match_with_a_record_starts_where_the_record_says() -> None:
    game = make_game("straight", players=2)
    seed = next(s for s in range(100) if first_seat(s, 2) == 0)
    played = play_game(game, [make_bot("greedy", 1), make_bot("greedy", 2)], seed, first_seat=1)
    record = "".join(line + "\n" for line in record_lines(played.record))
    item = fit_game_of(stored(seed=seed, record=record))
    assert item.first_seat == 1
    assert item.position(1) == 0
    assert item.position(0) == 1


def test_a_tournament_game_belongs_to_its_duplicate_set() -> None:
    item = fit_game_of(stored(tournament_id="t7", game_index=3, deal_id=2, rotation=1))
    assert item.unit == "t7/2"
    lone = fit_game_of(stored("m9", tournament_id="t7", game_index=4))
    assert lone.unit == "m9"


def test_an_unrated_ending_is_refused() -> None:
    with pytest.raises(ValueError, match="termination 'void' is never rated"):
        fit_game_of(stored(termination="void", winner=None))


# -- bad input ---------------------------------------------------------------------------------


def test_no_games_is_refused() -> None:
    with pytest.raises(ValueError, match="games: expected at least one rated game"):
        fit([])


def test_an_unknown_anchor_is_refused() -> None:
    with pytest.raises(
        ValueError, match="anchor: 'zed' played none of the games; expected one of a, b"
    ):
        fit(a_table(), anchor="zed")


def test_bots_that_never_met_are_refused() -> None:
    games = numbered([duel("a", "b"), duel("b", "a"), duel("c", "d"), duel("d", "c")])
    with pytest.raises(ValueError, match=r"2 parts that never met \(a, b; c, d\)"):
        fit(games)


def test_a_pool_of_mixed_seat_counts_is_refused() -> None:
    three = FitGame(RatedGame(("a", "b", "c"), (0, 1, 2), (0, 1, 2), (0, 0, 0)), 0, "x")
    with pytest.raises(ValueError, match=r"games\[1\]: 3 seats, but games\[0\] has 2"):
        fit([duel("a", "b"), three])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"prior_sigma": 0.0}, "prior_sigma: expected a positive finite number of Elo, got 0.0"),
        ({"prior_sigma": math.inf}, "prior_sigma: expected a positive finite"),
        ({"anchor_rating": math.nan}, "anchor_rating: expected a finite rating, got nan"),
    ],
)
def test_bad_options_are_refused(options: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        fit(a_table(), **options)  # type: ignore[arg-type]


def test_a_game_with_a_bad_first_seat_or_unit_is_refused() -> None:
    game = RatedGame(("a", "b"), (0, 1), (0, 1), (0, 0))
    with pytest.raises(ValueError, match=r"first_seat: expected a seat in 0\.\.1, got 2"):
        FitGame(game, 2, "u")
    with pytest.raises(ValueError, match="unit: expected a non-empty unit key, got ''"):
        FitGame(game, 0, "")


# -- frozen baselines ---------------------------------------------------------------------------


def test_frozen_baselines_are_held_and_the_others_recovered_against_them() -> None:
    rng = random.Random(21)
    truth = {
        "house:greedy": 1500.0,
        "house:random": 1000.0,
        "ann": 1700.0,
        "bob": 1350.0,
        "cat": 1150.0,
    }
    seats = (0.0, -50.0, -100.0)
    tables = [list(t) for t in itertools.combinations(truth, 3)]
    games = duplicate_sets(tables, (0, 1, 2), truth, seats, rng, deals=120)
    fixed = {"house:greedy": 1500.0, "house:random": 1000.0}
    result = fit(games, fixed=fixed)
    assert result.fixed == fixed and result.anchor is None
    assert result.ratings["house:greedy"] == 1500.0
    assert result.ratings["house:random"] == 1000.0
    for bot in ("ann", "bob", "cat"):
        assert result.ratings[bot] == pytest.approx(truth[bot], abs=35), bot
    assert result.seat_advantage[1] == pytest.approx(-50, abs=25)
    assert result.seat_advantage[2] == pytest.approx(-100, abs=25)


def test_frozen_baselines_impose_their_spacing_where_one_anchor_measures_it() -> None:
    games = a_table()
    measured = fit(games, anchor="d", anchor_rating=1400.0)
    frozen = fit(games, fixed={"d": 1400.0, "a": 2000.0})
    assert frozen.ratings["a"] == 2000.0 and frozen.ratings["d"] == 1400.0
    assert measured.ratings["a"] < 1900.0
    # b and c are pulled up by a's higher fixed rating: they lost to it less than 600 says.
    assert frozen.ratings["b"] > measured.ratings["b"]


def test_one_frozen_baseline_is_the_anchor_less_its_prior_pull() -> None:
    games = a_table()
    anchored = fit(games, anchor="c", anchor_rating=1450.0, prior_sigma=VANISHING)
    frozen = fit(games, fixed={"c": 1450.0}, prior_sigma=VANISHING)
    for bot, rating in anchored.ratings.items():
        assert frozen.ratings[bot] == pytest.approx(rating, abs=1e-3), bot


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"fixed": {"zed": 1000.0}}, "fixed: baseline 'zed' played none"),
        ({"fixed": {"a": math.inf}}, "fixed: 'a' at inf"),
        ({"fixed": {"a": 1500.0}, "anchor": "b"}, "anchor: 'b' given with fixed baselines"),
    ],
)
def test_bad_frozen_baselines_are_refused(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        fit(a_table(), **options)  # type: ignore[arg-type]

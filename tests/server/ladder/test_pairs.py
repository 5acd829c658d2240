"""The pair table (server/ladder/pairs.py): hand tables, seat advantages in the expectation, a
simulated pair that plays better together than alone, and bad input."""

from __future__ import annotations

import itertools
import random

import pytest

from domino_arena.server.ladder.elo import RatedGame, expected_score
from domino_arena.server.ladder.fit import FitGame, FitResult, fit
from domino_arena.server.ladder.pairs import PairRow, pair_table
from tests.fakes.fit_games import play


def a_point(
    ratings: dict[str, float], seats: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0)
) -> FitResult:
    """A fit's result written by hand."""
    return FitResult(
        ratings=ratings,
        games=dict.fromkeys(ratings, 1),
        seat_advantage=seats,
        log_likelihood=0.0,
        players=len(seats),
        units=1,
        anchor=None,
        anchor_rating=1500.0,
        prior_sigma=1000.0,
        seat_terms=True,
    )


def teams(bots: str, standing: tuple[int, int], first: int = 0) -> FitGame:
    """Four seats, partners across the table (seats 0 and 2 against 1 and 3)."""
    return FitGame(RatedGame(tuple(bots), (0, 1, 0, 1), standing, (0,) * 4), first, bots)


EVEN = {"a": 1600.0, "b": 1400.0, "c": 1500.0, "d": 1500.0}


def test_a_win_between_even_sides_is_half_a_point_above_expectation() -> None:
    rows = pair_table([teams("acbd", (0, 1))], a_point(EVEN))
    # Sides: a+b (1500 on average) against c+d (1500): each expected 1/2.
    assert rows == [PairRow(("a", "b"), 1, 1.0, 0.5), PairRow(("c", "d"), 1, 0.0, 0.5)]
    assert rows[0].surplus == 0.5
    assert rows[1].surplus_per_game == -0.5


def test_draws_score_half_and_games_add_up() -> None:
    games = [teams("acbd", (0, 0)), teams("cadb", (1, 0)), teams("abcd", (0, 1))]
    rows = {row.partners: row for row in pair_table(games, a_point(EVEN))}
    # a+b: a draw and a win (seats 0,2 in the first game, 1,3 in the second).
    assert rows["a", "b"].games == 2
    assert rows["a", "b"].score == pytest.approx(1.5)
    assert rows["a", "b"].expected == pytest.approx(1.0)
    # a+c (1550) against b+d (1450) in the third game, and won.
    expected = expected_score(1550, 1450)
    assert rows["a", "c"] == PairRow(("a", "c"), 1, 1.0, pytest.approx(expected))  # type: ignore[arg-type]
    assert rows["b", "d"].expected == pytest.approx(1 - expected)


def test_seat_advantages_enter_the_expectation() -> None:
    seats = (0.0, -100.0, 40.0, -60.0)
    point = a_point(dict.fromkeys("abcd", 1500.0), seats)
    # First seat 1: a (seat 0) is at position 3, b (seat 1) at 0, c at 1, d at 2.
    rows = {row.partners: row for row in pair_table([teams("abcd", (1, 0), first=1)], point)}
    side_ac = 1500 + (seats[3] + seats[1]) / 2
    side_bd = 1500 + (seats[0] + seats[2]) / 2
    assert rows["a", "c"].expected == pytest.approx(expected_score(side_ac, side_bd))
    assert rows["b", "d"].score == 1.0


def test_three_sides_average_the_pairwise_results() -> None:
    game = FitGame(RatedGame(("a", "b", "c", "d"), (0, 1, 0, 2), (1, 0, 2), (0,) * 4), 0, "u")
    rows = pair_table([game], a_point(EVEN))
    # a+c is second of three: 1 against d, 0 against b.
    expected = (expected_score(1550, 1400) + expected_score(1550, 1500)) / 2
    assert rows == [PairRow(("a", "c"), 1, 0.5, pytest.approx(expected))]  # type: ignore[arg-type]


def test_games_without_partners_give_no_rows() -> None:
    duel = FitGame(RatedGame(("a", "b"), (0, 1), (0, 1), (0, 0)), 0, "u")
    assert pair_table([duel], a_point({"a": 1500.0, "b": 1500.0}, (0.0, 0.0))) == []


def test_a_pair_that_plays_better_together_stands_out() -> None:
    rng = random.Random(6)
    truth = {bot: 1500.0 for bot in "abcdef"}
    seats = (0.0, 0.0, 0.0, 0.0)
    games = []
    for number, four in enumerate(itertools.combinations(truth, 4)):
        w, x, y, z = four
        for table in ([w, y, x, z], [w, x, y, z], [w, x, z, y]):
            for deal in range(40):
                together = {table[0], table[2]} == {"a", "b"} or {table[1], table[3]} == {"a", "b"}
                strengths = {**truth, "a": 1800.0, "b": 1800.0} if together else truth
                unit = f"{number}/{table}/{deal}"
                games.append(
                    play(
                        table,
                        (0, 1, 0, 1),
                        0,
                        strengths=strengths,
                        seat_advantage=seats,
                        rng=rng,
                        unit=unit,
                    )
                )
    rows = pair_table(games, fit(games))
    assert rows[0].partners == ("a", "b")
    assert rows[0].surplus_per_game > 0.12
    others = [row for row in rows if row.partners != ("a", "b")]
    assert all(abs(row.surplus_per_game) < 0.1 for row in others)
    assert sum(row.games for row in rows) == 2 * len(games)


def test_games_of_another_pool_or_bots_are_refused() -> None:
    with pytest.raises(ValueError, match=r"games\[0\]: point rates no d; expected the games"):
        pair_table([teams("abcd", (0, 1))], a_point({"a": 1.0, "b": 1.0, "c": 1.0}))
    with pytest.raises(
        ValueError, match=r"games\[0\]: 4 seats, but point was fitted on games of 2"
    ):
        pair_table([teams("abcd", (0, 1))], a_point(EVEN, (0.0, 0.0)))

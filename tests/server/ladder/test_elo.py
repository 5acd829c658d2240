"""The Elo module: hand-computed tables, properties of the update, and every bad input.

The hand tables use E(r, o) = 1 / (1 + 10^((o - r) / 400)), K = 24, and a side's pairwise
results weighted 1/(S-1), so each pair moves by K/(S-1) * (score - E).
"""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domino_arena.sdk.match.records import forfeit_winner
from domino_arena.server.ladder.elo import (
    DEFAULT_K,
    INITIAL_RATING,
    PairRecord,
    RatedGame,
    Rating,
    expected_score,
    head_to_head,
    rate_game,
    replay,
    standing,
    standings,
)


def rated(ratings: dict[str, float]) -> dict[str, Rating]:
    return {bot: Rating(rating=value) for bot, value in ratings.items()}


def ffa(bots: str, places: tuple[int, ...], faults: tuple[int, ...] | None = None) -> RatedGame:
    """A free-for-all game: one bot per side, bots named by one letter each."""
    return RatedGame(tuple(bots), tuple(range(len(bots))), places, faults or (0,) * len(bots))


def changes(before: dict[str, Rating], game: RatedGame) -> dict[str, float]:
    after = rate_game(before, game)
    return {bot: after[bot].rating - before.get(bot, Rating()).rating for bot in game.bots}


# -- hand-computed tables ---------------------------------------------------------------------


def test_two_equal_players_move_by_half_of_k() -> None:
    # E = 0.5 each: the winner gets 24 * (1 - 0.5) = +12, the loser 24 * (0 - 0.5) = -12.
    after = rate_game({}, ffa("ab", (0, 1)))
    assert after["a"] == Rating(1512.0, games=1, wins=1, information=0.25)
    assert after["b"] == Rating(1488.0, games=1, losses=1, information=0.25)
    # information 0.25 -> 1.96 * 400 / ln 10 / sqrt(0.25) = 680.9737 Elo points either way.
    assert after["a"].uncertainty == pytest.approx(680.9737, abs=1e-4)
    assert Rating().uncertainty == math.inf


def test_a_draw_between_equals_changes_no_rating() -> None:
    after = rate_game({}, ffa("ab", (0, 0)))
    assert after["a"] == Rating(INITIAL_RATING, games=1, draws=1, information=0.25)
    assert after["b"] == Rating(INITIAL_RATING, games=1, draws=1, information=0.25)


def test_two_unequal_players() -> None:
    # E(1600, 1400) = 1 / (1 + 10^(-200/400)) = 1 / (1 + 0.3162) = 0.7597.
    # Favourite wins: 24 * (1 - 0.7597) = +5.7661 and the underdog -5.7661.
    # Underdog wins:  24 * (1 - 0.2403) = +18.2339 and the favourite -18.2339.
    before = rated({"a": 1600, "b": 1400})
    assert expected_score(1600, 1400) == pytest.approx(0.7597, abs=1e-4)
    favourite = changes(before, ffa("ab", (0, 1)))
    assert favourite["a"] == pytest.approx(5.7661, abs=1e-4)
    assert favourite["b"] == pytest.approx(-5.7661, abs=1e-4)
    upset = changes(before, ffa("ab", (1, 0)))
    assert upset["a"] == pytest.approx(-18.2339, abs=1e-4)
    assert upset["b"] == pytest.approx(18.2339, abs=1e-4)
    # Information p(1-p) = 0.7597 * 0.2403 = 0.1825 for both, whoever wins.
    after = rate_game(before, ffa("ab", (1, 0)))
    assert after["a"].information == pytest.approx(0.1825, abs=1e-4)
    assert after["b"].information == after["a"].information


def test_three_player_free_for_all_with_distinct_places() -> None:
    # Three sides: each pair with K/2 = 12, all E = 0.5.
    # first  (a): 12 * (1 - 0.5) + 12 * (1 - 0.5) = +12
    # second (b): 12 * (0 - 0.5) + 12 * (1 - 0.5) =   0
    # third  (c): 12 * (0 - 0.5) + 12 * (0 - 0.5) = -12
    # information: 2 pairs * 1/2 * 0.25 = 0.25 each.
    after = rate_game({}, ffa("abc", (0, 1, 2)))
    assert [after[bot].rating for bot in "abc"] == [1512.0, 1500.0, 1488.0]
    assert [after[bot].information for bot in "abc"] == [0.25, 0.25, 0.25]
    assert [(after[b].wins, after[b].losses) for b in "abc"] == [(1, 0), (0, 1), (0, 1)]


def test_three_player_with_a_tie_for_second() -> None:
    # a 1600, b 1500, c 1400; b first, a and c tie for second (places 1, 0, 1).
    # E(a, b) = 1 / (1 + 10^(-100/400)) = 0.6401, E(a, c) = 0.7597, E(b, c) = 0.6401.
    # a: 12 * (0   - 0.6401) + 12 * (0.5 - 0.7597) = -7.6808 - 3.1170 = -10.7977
    # b: 12 * (1   - 0.3599) + 12 * (1   - 0.6401) = +7.6808 + 4.3192 = +12.0000
    # c: 12 * (0.5 - 0.2403) + 12 * (0   - 0.3599) = +3.1170 - 4.3192 =  -1.2023
    before = rated({"a": 1600, "b": 1500, "c": 1400})
    delta = changes(before, ffa("abc", (1, 0, 1)))
    assert delta["a"] == pytest.approx(-10.7977, abs=1e-4)
    assert delta["b"] == pytest.approx(12.0, abs=1e-4)
    assert delta["c"] == pytest.approx(-1.2023, abs=1e-4)
    after = rate_game(before, ffa("abc", (1, 0, 1)))
    # Sharing second place is no draw: only a shared first place is.
    assert [after[b].losses for b in "abc"] == [1, 0, 1]
    assert after["b"].wins == 1


def test_a_tie_for_first_is_a_draw_for_those_sides_only() -> None:
    after = rate_game({}, ffa("abc", (0, 0, 2)))
    assert [(after[b].wins, after[b].draws, after[b].losses) for b in "abc"] == [
        (0, 1, 0),
        (0, 1, 0),
        (0, 0, 1),
    ]
    # a and b: 12 * (0.5 - 0.5) + 12 * (1 - 0.5) = +6 each; c: 2 * 12 * (0 - 0.5) = -12.
    assert [after[b].rating for b in "abc"] == [1506.0, 1506.0, 1488.0]


def test_partners_take_the_whole_change_of_their_side() -> None:
    # Seats a b c d, partners a+c against b+d.
    # Team means: (1700 + 1500) / 2 = 1600 and (1450 + 1350) / 2 = 1400.
    # b+d win: the team change is the 1600-vs-1400 upset of the two-player table, K = 24
    # (two sides): -18.2339 for a and c, +18.2339 for b and d, whatever each partner's rating.
    before = rated({"a": 1700, "b": 1450, "c": 1500, "d": 1350})
    game = RatedGame(("a", "b", "c", "d"), (0, 1, 0, 1), (1, 0), (0, 0, 0, 0))
    after = rate_game(before, game)
    assert after["a"].rating == pytest.approx(1681.7661, abs=1e-4)
    assert after["c"].rating == pytest.approx(1481.7661, abs=1e-4)
    assert after["b"].rating == pytest.approx(1468.2339, abs=1e-4)
    assert after["d"].rating == pytest.approx(1368.2339, abs=1e-4)
    assert {after[bot].information for bot in "abcd"} == {after["a"].information}
    assert after["a"].information == pytest.approx(0.1825, abs=1e-4)
    assert [after[b].wins for b in "abcd"] == [0, 1, 0, 1]


def test_a_forfeit_places_the_forfeiting_side_last_whatever_its_score() -> None:
    # Side 1 leads 40 to 20 to 10 and forfeits: side 2 (the best of the rest) wins, side 0 is
    # second. From 1500 each, as in the three-player table: +12, 0, -12.
    scores = (10, 40, 20)
    winner = forfeit_winner(scores, 1)
    assert winner == 2
    places = standing(scores, winner, forfeited_side=1)
    assert places == (1, 2, 0)
    after = rate_game({}, ffa("abc", places, faults=(0, 3, 1)))
    assert [after[b].rating for b in "abc"] == [1500.0, 1488.0, 1512.0]
    assert [after[b].faults for b in "abc"] == [0, 3, 1]
    assert [(after[b].wins, after[b].losses) for b in "abc"] == [(0, 1), (0, 1), (1, 0)]


def test_a_two_side_forfeit_is_a_loss_even_when_ahead() -> None:
    places = standing((100, 0), forfeit_winner((100, 0), 0), forfeited_side=0)
    assert places == (1, 0)
    after = rate_game({}, ffa("ab", places, faults=(1, 0)))
    assert (after["a"].rating, after["a"].losses, after["a"].faults) == (1488.0, 1, 1)


def test_ratings_accumulate_over_games() -> None:
    ratings = replay([ffa("ab", (0, 1)), ffa("ab", (0, 0), faults=(2, 0))])
    # Second game from 1512 vs 1488: E = 1 / (1 + 10^(-24/400)) = 0.5345, and a draws:
    # 24 * (0.5 - 0.5345) = -0.8276, so a ends on 1511.1724.
    expected = 1 / (1 + 10 ** (-24 / 400))
    assert ratings["a"].rating == pytest.approx(1512 + 24 * (0.5 - expected))
    assert ratings["a"].rating == pytest.approx(1511.1724, abs=1e-4)
    assert ratings["a"] == Rating(
        ratings["a"].rating, 2, 1, 1, 0, 2, 0.25 + expected * (1 - expected)
    )


def test_rate_game_returns_only_the_game_and_leaves_the_mapping_alone() -> None:
    before = rated({"a": 1600, "z": 1234})
    after = rate_game(before, ffa("ab", (0, 1)))
    assert list(after) == ["a", "b"]
    assert before == rated({"a": 1600, "z": 1234})


# -- standing ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scores", "winner", "forfeited", "places"),
    [
        ((61, 40), 0, None, (0, 1)),
        ((20, 20), None, None, (0, 0)),
        ((61, 40, 75), 0, None, (0, 2, 1)),
        ((5, 9, 9, 2), None, None, (2, 0, 0, 3)),
        ((5, 9, 9, 2), 3, None, (3, 1, 1, 0)),
        ((5, 5, 5, 5), 1, 2, (1, 0, 3, 1)),
        ((5, 5, 5, 9), None, 3, (0, 0, 0, 3)),
    ],
)
def test_standing(
    scores: tuple[int, ...], winner: int | None, forfeited: int | None, places: tuple[int, ...]
) -> None:
    assert standing(scores, winner, forfeited) == places
    RatedGame(
        tuple(f"b{i}" for i in range(len(scores))),
        tuple(range(len(scores))),
        places,
        (0,) * len(scores),
    )


# -- properties -------------------------------------------------------------------------------

NAMES = tuple(f"bot{i}" for i in range(7))


@st.composite
def rated_games(draw: st.DrawFn) -> RatedGame:
    """Any game: 2 to 4 seats in any partnership layout (unequal sides too), any result."""
    seats = draw(st.integers(min_value=2, max_value=4))
    bots = tuple(draw(st.permutations(NAMES))[:seats])
    raw = draw(st.lists(st.integers(0, seats - 1), min_size=seats, max_size=seats))
    numbering = {side: number for number, side in enumerate(dict.fromkeys(raw))}
    sides = len(numbering)
    if sides < 2:
        side_of_seat = tuple(range(seats))
        sides = seats
    else:
        side_of_seat = tuple(numbering[side] for side in raw)
    scores = draw(st.lists(st.integers(0, 3), min_size=sides, max_size=sides))
    winner = draw(st.none() | st.integers(0, sides - 1))
    forfeited = draw(st.none() | st.integers(0, sides - 1).filter(lambda side: side != winner))
    faults = draw(st.lists(st.integers(0, 3), min_size=seats, max_size=seats))
    return RatedGame(bots, side_of_seat, standing(scores, winner, forfeited), tuple(faults))


prior_ratings = st.fixed_dictionaries(
    {name: st.floats(min_value=1000, max_value=2000).map(Rating) for name in NAMES}
)


@given(game=rated_games(), before=prior_ratings)
def test_the_sides_changes_sum_to_zero(game: RatedGame, before: dict[str, Rating]) -> None:
    """What one side gains the others lose: each side's change counted once (not per partner).

    So the total rating is conserved when every side has the same number of seats (a
    free-for-all or 2 against 2), and not otherwise: a side of two that gains x adds 2x.
    """
    delta = changes(before, game)
    size = [game.side_of_seat.count(side) for side in range(game.sides)]
    per_side = [
        delta[bot] / size[side] for bot, side in zip(game.bots, game.side_of_seat, strict=True)
    ]
    assert math.fsum(per_side) == pytest.approx(0, abs=1e-9)
    if len(set(size)) == 1:
        assert math.fsum(delta.values()) == pytest.approx(0, abs=1e-9)
    for bot, side in zip(game.bots, game.side_of_seat, strict=True):
        partners = [b for b, s in zip(game.bots, game.side_of_seat, strict=True) if s == side]
        for partner in partners:
            assert delta[partner] == pytest.approx(delta[bot], abs=1e-9)


@given(games=st.lists(rated_games(), max_size=25))
def test_replay_equals_rating_each_game_as_it_ends(games: list[RatedGame]) -> None:
    """The store rates one game at a time from the rows of its bots; replay must agree exactly."""
    stored: dict[str, Rating] = {}
    for game in games:
        rows = {bot: stored[bot] for bot in game.bots if bot in stored}
        stored.update(rate_game(rows, game))
    assert replay(games) == stored
    middle = len(games) // 2
    resumed = replay(games[:middle])
    for game in games[middle:]:
        resumed.update(rate_game(resumed, game))
    assert resumed == stored
    for rating in stored.values():
        assert rating.games == rating.wins + rating.draws + rating.losses


@given(game=rated_games(), before=prior_ratings, seed=st.integers(0, 2**32))
def test_the_order_of_the_mapping_and_of_the_seats_does_not_matter(
    game: RatedGame, before: dict[str, Rating], seed: int
) -> None:
    rng = random.Random(seed)
    shuffled = list(before.items())
    rng.shuffle(shuffled)
    expected = rate_game(before, game)
    assert rate_game(dict(shuffled), game) == expected

    seats = list(range(len(game.bots)))
    rng.shuffle(seats)
    sides = list(range(game.sides))
    rng.shuffle(sides)
    renumbered = RatedGame(
        tuple(game.bots[seat] for seat in seats),
        tuple(sides[game.side_of_seat[seat]] for seat in seats),
        tuple(game.standing[sides.index(side)] for side in range(game.sides)),
        tuple(game.faults[seat] for seat in seats),
    )
    assert rate_game(before, renumbered) == expected


@given(games=st.lists(rated_games(), min_size=1, max_size=30))
def test_every_game_lowers_the_uncertainty_of_its_bots(games: list[RatedGame]) -> None:
    ratings: dict[str, Rating] = {}
    for game in games:
        after = rate_game(ratings, game)
        for bot in game.bots:
            assert after[bot].uncertainty < ratings.get(bot, Rating()).uncertainty
        ratings.update(after)


@given(games=st.lists(rated_games(), max_size=15))
def test_head_to_head_mirrors_and_counts_every_meeting(games: list[RatedGame]) -> None:
    records = head_to_head(games)
    for (a, b), record in records.items():
        assert a != b
        assert records[b, a] == PairRecord(record.losses, record.draws, record.wins)
    meetings = sum(
        1
        for game in games
        for a in range(len(game.bots))
        for b in range(len(game.bots))
        if game.side_of_seat[a] != game.side_of_seat[b]
    )
    assert sum(record.games for record in records.values()) == meetings


# -- head to head and standings ---------------------------------------------------------------


def test_head_to_head_counts_opponents_not_partners() -> None:
    games = [
        RatedGame(("a", "b", "c", "d"), (0, 1, 0, 1), (0, 1), (0, 0, 0, 0)),
        RatedGame(("a", "b", "c"), (0, 1, 2), (1, 0, 1), (0, 0, 0)),
    ]
    records = head_to_head(games)
    # a and c: partners in the first game, tied for second in the second.
    assert records["a", "c"] == PairRecord(draws=1)
    assert records["a", "b"] == PairRecord(wins=1, losses=1)
    assert records["b", "a"] == PairRecord(wins=1, losses=1)
    assert records["a", "d"] == PairRecord(wins=1)
    assert records["d", "c"] == PairRecord(losses=1)
    assert ("b", "d") not in records  # only ever partners


def test_head_to_head_counts_a_shared_place_as_a_draw() -> None:
    records = head_to_head([ffa("abc", (1, 0, 1))])
    assert records["a", "c"] == PairRecord(draws=1)
    assert records["b", "c"] == PairRecord(wins=1)


def test_standings_sort_by_rating_then_name() -> None:
    table = standings(rated({"carol": 1500, "alice": 1520, "bob": 1500, "dave": 1480}))
    assert [name for name, _ in table] == ["alice", "bob", "carol", "dave"]
    assert standings({}) == []


# -- bad inputs -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bots", "sides", "places", "faults", "message"),
    [
        (("a", "b"), (0,), (0, 1), (0, 0), r"side_of_seat: expected one entry per seat \(2"),
        (("a", "b"), (0, 1), (0, 1), (0,), r"faults: expected one entry per seat \(2"),
        (("a", "a"), (0, 1), (0, 1), (0, 0), r"bots: 'a' sits in seats 0 and 1"),
        (("a", ""), (0, 1), (0, 1), (0, 0), r"bots\[1\]: expected a non-empty bot name"),
        (("a", "b"), (0, 0), (0,), (0, 0), r"side_of_seat: a rated game needs at least two"),
        (("a", "b"), (0, 2), (0, 1), (0, 0), r"side_of_seat: expected the sides numbered 0\.\.1"),
        (("a", "b"), (1, 2), (0, 1), (0, 0), r"side_of_seat: expected the sides numbered 0\.\.1"),
        (("a", "b"), (0, 1), (0, 1, 2), (0, 0), r"standing: expected one place per side \(2\)"),
        (("a", "b"), (0, 1), (0, 2), (0, 0), r"standing\[1\]: expected a place in 0\.\.1, got 2"),
        (("a", "b"), (0, 1), (0, -1), (0, 0), r"standing\[1\]: expected a place in 0\.\.1"),
        (("a", "b"), (0, 1), (1, 1), (0, 0), r"standing: expected some side in place 0"),
        (("a", "b"), (0, 1), (0, 1), (-1, 0), r"faults\[0\]: expected a count of at least 0"),
    ],
)
def test_a_malformed_game_is_refused_with_the_field(
    bots: tuple[str, ...],
    sides: tuple[int, ...],
    places: tuple[int, ...],
    faults: tuple[int, ...],
    message: str,
) -> None:
    with pytest.raises(ValueError, match=message):
        RatedGame(bots, sides, places, faults)


@pytest.mark.parametrize(
    ("scores", "winner", "forfeited", "message"),
    [
        ((5,), None, None, r"scores: expected one score per side, at least two"),
        ((), None, None, r"scores: expected one score per side"),
        ((5, 6), 2, None, r"winner: expected a side in 0\.\.1 or None, got 2"),
        ((5, 6), -1, None, r"winner: expected a side in 0\.\.1 or None, got -1"),
        ((5, 6), None, 3, r"forfeited_side: expected a side in 0\.\.1 or None, got 3"),
        ((5, 6), 1, 1, r"forfeited_side: side 1 is also the winner"),
    ],
)
def test_standing_refuses_bad_arguments(
    scores: tuple[int, ...], winner: int | None, forfeited: int | None, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        standing(scores, winner, forfeited)


@pytest.mark.parametrize("k", [0.0, -24.0, math.nan, math.inf])
def test_k_must_be_positive_and_finite(k: float) -> None:
    with pytest.raises(ValueError, match="k: expected a positive finite number"):
        rate_game({}, ffa("ab", (0, 1)), k)
    with pytest.raises(ValueError, match="k: expected a positive finite number"):
        replay([], k)


def test_k_scales_the_change() -> None:
    assert rate_game({}, ffa("ab", (0, 1)), k=2 * DEFAULT_K)["a"].rating == 1524.0


# -- frozen baselines ---------------------------------------------------------------------------


def test_a_frozen_baseline_is_never_rated_and_its_opponent_moves_against_its_fixed_rating() -> None:
    game = RatedGame(("ann", "house:greedy"), (0, 1), (0, 1), (0, 0), (("house:greedy", 1700.0),))
    new = rate_game({"house:greedy": Rating(rating=1200.0)}, game)
    assert list(new) == ["ann"]
    expected = 1.0 / (1.0 + 10 ** ((1700.0 - 1500.0) / 400))
    assert new["ann"].rating == pytest.approx(1500.0 + 24.0 * (1 - expected))
    assert (new["ann"].games, new["ann"].wins) == (1, 1)


def test_a_house_bot_without_a_fixed_rating_moves_no_one() -> None:
    game = RatedGame(("ann", "house:random", "bob"), (0, 1, 2), (1, 0, 2), (0, 0, 0))
    new = rate_game({}, game)
    assert sorted(new) == ["ann", "bob"]
    alone = rate_game({}, RatedGame(("ann", "bob"), (0, 1), (0, 1), (0, 0)))
    # ann beat bob: the same pair, at half weight (three sides); the house seat counts for none.
    assert new["ann"].rating - 1500.0 == pytest.approx((alone["ann"].rating - 1500.0) / 2)
    assert new["ann"].losses == 1 and new["bob"].losses == 1


def test_a_replay_never_rates_a_house_bot() -> None:
    fixed = (("house:greedy", 1500.0),)
    games = [
        RatedGame(("ann", "house:greedy"), (0, 1), (i % 2, 1 - i % 2), (0, 0), fixed)
        for i in range(5)
    ]
    assert list(replay(games)) == ["ann"]


@pytest.mark.parametrize("fixed", [(("greedy", 1500.0),), (("house:greedy", math.inf),)])
def test_a_bad_fixed_rating_is_refused(fixed: tuple[tuple[str, float], ...]) -> None:
    with pytest.raises(ValueError, match="fixed: "):
        RatedGame(("ann", "house:greedy"), (0, 1), (0, 1), (0, 0), fixed)

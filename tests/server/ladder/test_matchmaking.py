"""Matchmaking: every idle bot gets a game, nearer ratings are preferred, games stay even."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domino_arena.server.ladder.matchmaking import Candidate, pick_tables


def candidates(ratings: list[float], games: list[int] | None = None) -> list[Candidate]:
    games = games or [0] * len(ratings)
    return [Candidate(f"b{i}", r, g) for i, (r, g) in enumerate(zip(ratings, games, strict=True))]


@given(
    ratings=st.lists(st.floats(min_value=1000, max_value=2000), min_size=0, max_size=13),
    seats=st.integers(min_value=2, max_value=4),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_every_idle_bot_gets_a_game_when_enough_are_idle(
    ratings: list[float], seats: int, seed: int
) -> None:
    tables = pick_tables(candidates(ratings), seats, rng=random.Random(seed))
    seated = [name for table in tables for name in table]
    assert len(seated) == len(set(seated))
    assert all(len(table) == seats for table in tables)
    assert len(tables) == len(ratings) // seats


def test_busy_bots_are_never_seated() -> None:
    bots = [Candidate("a", 1500, 0, busy=True), Candidate("b", 1500, 3), Candidate("c", 1500, 9)]
    assert sorted(pick_tables(bots, 2, rng=random.Random(0))[0]) == ["b", "c"]


def test_nearest_ratings_are_preferred() -> None:
    bots = candidates([1500, 2100, 1490, 2080, 1000, 1010])
    tables = {frozenset(t) for t in pick_tables(bots, 2, rng=random.Random(3))}
    assert tables == {frozenset({"b0", "b2"}), frozenset({"b1", "b3"}), frozenset({"b4", "b5"})}


def test_the_leader_is_the_bot_with_fewest_games() -> None:
    bots = candidates([1500, 1800, 1790, 1510], games=[5, 5, 0, 5])
    (first,) = pick_tables(bots, 2, rng=random.Random(0), max_tables=1)
    assert sorted(first) == ["b1", "b2"]  # b2 leads and takes the nearest rating


def test_the_bots_with_most_games_sit_out() -> None:
    bots = candidates([1500, 1500, 1500], games=[4, 3, 3])
    for seed in range(20):
        assert sorted(pick_tables(bots, 2, rng=random.Random(seed))[0]) == ["b1", "b2"]


def test_partnerships_balance_the_teams() -> None:
    bots = candidates([2000, 1800, 1700, 1100])
    for seed in range(10):
        (table,) = pick_tables(bots, 4, rng=random.Random(seed), partnerships=True)
        teams = {frozenset(table[0::2]), frozenset(table[1::2])}
        assert teams == {frozenset({"b0", "b3"}), frozenset({"b1", "b2"})}


@given(
    count=st.integers(min_value=2, max_value=11),
    seats=st.integers(min_value=2, max_value=4),
    seed=st.integers(min_value=0, max_value=2**32),
    max_tables=st.none() | st.integers(min_value=1, max_value=3),
)
def test_games_per_bot_differ_by_at_most_one_over_many_rounds(
    count: int, seats: int, seed: int, max_tables: int | None
) -> None:
    rng = random.Random(seed)
    ratings = {f"b{i}": rng.uniform(1000, 2000) for i in range(count)}
    games: Counter[str] = Counter()
    for _ in range(30):
        bots = [Candidate(name, r, games[name]) for name, r in ratings.items()]
        for table in pick_tables(bots, seats, rng=rng, max_tables=max_tables):
            games.update(table)
        played = [games[name] for name in ratings]
        assert max(played) - min(played) <= 1


def test_same_seed_same_tables() -> None:
    bots = candidates([1500.0] * 8)
    first = pick_tables(bots, 4, rng=random.Random(7))
    assert first == pick_tables(bots, 4, rng=random.Random(7))
    assert sorted(n for t in first for n in t) == sorted(c.name for c in bots)


def test_bad_requests_are_refused() -> None:
    with pytest.raises(ValueError, match="at least 2 seats"):
        pick_tables([], 1, rng=random.Random(0))
    with pytest.raises(ValueError, match="partnerships need 4 seats"):
        pick_tables([], 3, rng=random.Random(0), partnerships=True)
    with pytest.raises(ValueError, match="unique"):
        pick_tables([Candidate("a", 1, 0), Candidate("a", 2, 0)], 2, rng=random.Random(0))


@given(
    owners=st.lists(st.sampled_from(["", "ann", "bob", "cid"]), min_size=0, max_size=13),
    seats=st.integers(min_value=3, max_value=4),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_two_bots_of_an_owner_never_share_a_free_for_all_table_unless_allowed(
    owners: list[str], seats: int, seed: int
) -> None:
    rng = random.Random(seed)
    bots = [Candidate(f"b{i}", rng.uniform(1000, 2000), 0, owner=o) for i, o in enumerate(owners)]
    owner_of = {bot.name: bot.owner for bot in bots}
    tables = pick_tables(bots, seats, rng=rng, same_owner_tables=False)
    for table in tables:
        named = [owner_of[name] for name in table if owner_of[name]]
        assert len(named) == len(set(named)), table
    assert all(len(table) == seats for table in tables)
    seated = [name for table in tables for name in table]
    assert len(seated) == len(set(seated))
    # Allowed: the same tables as without owners.
    plain = [dataclasses.replace(bot, owner="") for bot in bots]
    assert pick_tables(bots, seats, rng=random.Random(seed)) == pick_tables(
        plain, seats, rng=random.Random(seed)
    )


@given(
    owners=st.lists(st.sampled_from(["", "ann", "bob"]), min_size=0, max_size=12),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_two_bots_of_an_owner_are_never_partners_unless_allowed(
    owners: list[str], seed: int
) -> None:
    rng = random.Random(seed)
    bots = [Candidate(f"b{i}", rng.uniform(1000, 2000), 0, owner=o) for i, o in enumerate(owners)]
    owner_of = {bot.name: bot.owner for bot in bots}
    tables = pick_tables(bots, 4, rng=rng, partnerships=True, same_owner_partners=False)
    for table in tables:
        for first, second in ((table[0], table[2]), (table[1], table[3])):
            assert not owner_of[first] or owner_of[first] != owner_of[second], table


def test_a_leader_without_a_fair_table_sits_out_and_the_others_play() -> None:
    bots = [Candidate("a1", 1500, 0, owner="ann"), Candidate("a2", 1500, 0, owner="ann")]
    bots += [Candidate("b", 1500, 1), Candidate("c", 1500, 1), Candidate("d", 1500, 1)]
    tables = pick_tables(bots, 3, rng=random.Random(0), same_owner_tables=False)
    (table,) = tables
    assert sum(name.startswith("a") for name in table) == 1

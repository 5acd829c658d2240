"""Properties of the round-robin schedule: equal seats, equal meetings, every rotation per deal."""

from __future__ import annotations

from collections import Counter, defaultdict
from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domino_arena.server.scheduler import round_robin


@given(
    count=st.integers(min_value=2, max_value=7),
    seats=st.integers(min_value=2, max_value=4),
    repeats=st.integers(min_value=1, max_value=3),
)
def test_every_entrant_plays_every_seat_equally_often(count: int, seats: int, repeats: int) -> None:
    entrants = [f"bot{i}" for i in range(count)]
    if count < seats:
        with pytest.raises(ValueError, match="needs at least"):
            round_robin(entrants, seats)
        return
    schedule = round_robin(entrants, seats, games_per_pairing=repeats)
    per_seat = Counter((name, seat) for g in schedule for seat, name in enumerate(g.seats))
    assert len(set(per_seat.values())) == 1
    assert {name for name, _ in per_seat} == set(entrants)
    meetings = Counter(pair for g in schedule for pair in combinations(sorted(g.seats), 2))
    assert len(set(meetings.values())) == 1
    assert len(meetings) == count * (count - 1) // 2


@given(count=st.integers(min_value=4, max_value=6))
def test_partnership_tables_pair_every_team(count: int) -> None:
    entrants = [f"bot{i}" for i in range(count)]
    schedule = round_robin(entrants, 4, partnerships=True)
    teams = Counter(frozenset((g.seats[0], g.seats[2])) for g in schedule)
    teams.update(frozenset((g.seats[1], g.seats[3])) for g in schedule)
    assert len(teams) == count * (count - 1) // 2
    assert len(set(teams.values())) == 1


@given(
    count=st.integers(min_value=2, max_value=6),
    seats=st.integers(min_value=2, max_value=4),
    repeats=st.integers(min_value=1, max_value=3),
)
def test_every_deal_is_played_under_all_rotations(count: int, seats: int, repeats: int) -> None:
    if count < seats:
        return
    schedule = round_robin([f"b{i}" for i in range(count)], seats, games_per_pairing=repeats)
    by_deal: dict[int, list[tuple[str, ...]]] = defaultdict(list)
    rotations: dict[int, list[int]] = defaultdict(list)
    for game in schedule:
        by_deal[game.deal_id].append(game.seats)
        rotations[game.deal_id].append(game.rotation)
    for deal_id, seatings in by_deal.items():
        assert sorted(rotations[deal_id]) == list(range(seats))
        assert len({frozenset(s) for s in seatings}) == 1
        # Each entrant of the table sits in every seat once on this deal.
        for seat in range(seats):
            assert len({s[seat] for s in seatings}) == seats
    assert [g.index for g in schedule] == list(range(len(schedule)))


def test_without_duplicate_deals_every_game_has_its_own_deal() -> None:
    schedule = round_robin(["a", "b", "c"], 2, duplicate_deals=False)
    assert len({g.deal_id for g in schedule}) == len(schedule) == 6


def test_bad_requests_are_refused_with_the_reason() -> None:
    with pytest.raises(ValueError, match="games_per_pairing"):
        round_robin(["a", "b"], 2, games_per_pairing=0)
    with pytest.raises(ValueError, match="unique"):
        round_robin(["a", "a"], 2)

"""Properties of the round-robin schedule: equal seats, equal meetings, every rotation per deal."""

from __future__ import annotations

from collections import Counter, defaultdict
from itertools import combinations, pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domino_arena.server.tournaments.scheduler import DealMode, berger_pairs, byes, round_robin


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


def test_fresh_deals_give_every_game_its_own_deal() -> None:
    schedule = round_robin(["a", "b", "c"], 2, deals=DealMode.FRESH)
    assert len({g.deal_id for g in schedule}) == len(schedule) == 6


@pytest.mark.parametrize("seats", [2, 3])
def test_spread_deals_play_each_rotation_of_a_table_on_every_deal_before_the_next(
    seats: int,
) -> None:
    repeats = 4
    entrants = ["a", "b", "c", "d"]
    duplicate = round_robin(entrants, seats, games_per_pairing=repeats)
    spread = round_robin(entrants, seats, games_per_pairing=repeats, deals=DealMode.SPREAD)
    # The same games (table, rotation, deal), in another order.
    assert sorted((g.seats, g.deal_id) for g in spread) == sorted(
        (g.seats, g.deal_id) for g in duplicate
    )
    for schedule, gap in ((duplicate, 1), (spread, repeats)):
        by_table: dict[frozenset[str], list[int]] = defaultdict(list)
        for game in schedule:
            by_table[frozenset(game.seats)].append(game.deal_id)
        for deals in by_table.values():
            # The games of one table between two rotations of a deal.
            for deal in set(deals):
                places = [i for i, d in enumerate(deals) if d == deal]
                assert min(b - a for a, b in pairwise(places)) == gap


def test_bad_requests_are_refused_with_the_reason() -> None:
    with pytest.raises(ValueError, match="games_per_pairing"):
        round_robin(["a", "b"], 2, games_per_pairing=0)
    with pytest.raises(ValueError, match="unique"):
        round_robin(["a", "a"], 2)


@given(
    count=st.integers(min_value=2, max_value=8),
    seats=st.integers(min_value=2, max_value=4),
    repeats=st.integers(min_value=1, max_value=2),
    partnerships=st.booleans(),
    deals=st.sampled_from(DealMode),
)
def test_rounds_seat_every_entrant_at_most_once_and_are_maximal(
    count: int, seats: int, repeats: int, partnerships: bool, deals: DealMode
) -> None:
    partnerships = partnerships and seats == 4
    if count < seats:
        return
    entrants = [f"b{i}" for i in range(count)]
    schedule = round_robin(
        entrants,
        seats,
        games_per_pairing=repeats,
        partnerships=partnerships,
        deals=deals,
    )
    assert [g.index for g in schedule] == list(range(len(schedule)))
    assert [g.round for g in schedule] == sorted(g.round for g in schedule)
    rounds: dict[int, list[tuple[str, ...]]] = defaultdict(list)
    for game in schedule:
        rounds[game.round].append(game.seats)
    assert sorted(rounds) == list(range(len(rounds)))
    for round_, seatings in rounds.items():
        playing = [name for seated in seatings for name in seated]
        assert len(playing) == len(set(playing)), f"round {round_} seats someone twice"
        # Maximal: every later game shares an entrant with this round.
        later = (g for g in schedule if g.round > round_)
        assert all(not set(g.seats).isdisjoint(playing) for g in later)
    # Every entrant sits out the same number of rounds.
    sat_out = Counter(name for out in byes(schedule, entrants).values() for name in out)
    assert len({sat_out[name] for name in entrants}) == 1
    assert set(byes(schedule, entrants)) == set(rounds)


@given(
    count=st.integers(min_value=2, max_value=9),
    repeats=st.integers(min_value=1, max_value=3),
)
def test_two_seat_rounds_follow_berger_tables(count: int, repeats: int) -> None:
    entrants = [f"b{i}" for i in range(count)]
    schedule = round_robin(entrants, 2, games_per_pairing=repeats)
    cycle = count - 1 if count % 2 == 0 else count
    assert len({g.round for g in schedule}) == cycle * 2 * repeats
    for game in schedule:
        assert sum(1 for g in schedule if g.round == game.round) == count // 2
    # Within each Berger cycle everyone has exactly one bye (odd count) or none (even count).
    for start in range(0, cycle * 2 * repeats, cycle):
        out = Counter(
            name
            for round_, names in byes(schedule, entrants).items()
            if start <= round_ < start + cycle
            for name in names
        )
        assert out == (Counter(entrants) if count % 2 else Counter())


def test_berger_pairs_meets_everyone_once() -> None:
    rounds = berger_pairs(["a", "b", "c", "d", "e"])
    pairs = [pair for pairs in rounds for pair in pairs]
    assert sorted(pairs) == sorted(combinations("abcde", 2))
    assert [len(pairs) for pairs in rounds] == [2] * 5


def test_rotations_of_a_deal_fall_in_different_rounds() -> None:
    schedule = round_robin(["a", "b", "c", "d", "e"], 3)
    rounds_of_deal: dict[int, set[int]] = defaultdict(set)
    for game in schedule:
        rounds_of_deal[game.deal_id].add(game.round)
    assert all(len(rounds) == 3 for rounds in rounds_of_deal.values())


def test_four_seats_among_eight_fill_most_rounds() -> None:
    schedule = round_robin([f"b{i}" for i in range(8)], 4)
    rounds = Counter(g.round for g in schedule)
    full = sum(1 for tables_in_round in rounds.values() if tables_in_round == 2)
    # 280 games, at best 140 rounds of two tables; greedy packing must come close.
    assert len(schedule) == 280
    assert full >= 0.9 * len(rounds)

"""The fair seating rule of the scheduler: no two bots of one owner at a 3-4 seat free-for-all
table, never partners; every allowed table kept whole; allowing gives the plain schedule."""

from __future__ import annotations

from collections import defaultdict

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domino_arena.server.tournaments.scheduler import (
    DealMode,
    ScheduledGame,
    SeatingError,
    round_robin,
    tables,
)

OWNERS = ("ann", "bob", "cid")


@st.composite
def fields(draw: st.DrawFn) -> tuple[list[str], dict[str, str], int, bool]:
    partnerships = draw(st.booleans())
    seats = 4 if partnerships else draw(st.integers(min_value=2, max_value=4))
    count = draw(st.integers(min_value=seats, max_value=7))
    houses = draw(st.integers(min_value=0, max_value=min(2, count)))
    entrants = [f"bot{i}" for i in range(count - houses)]
    entrants += [f"house:h{i}" for i in range(houses)]
    owners: dict[str, str] = {}
    for name in entrants[: count - houses]:
        owner = draw(st.sampled_from((*OWNERS, "")))
        if owner:
            owners[name] = owner
    return entrants, owners, seats, partnerships


def _forbidden(seats: tuple[str, ...], owners: dict[str, str], partnerships: bool) -> bool:
    of = [owners.get(e, "") for e in seats]
    if len(seats) == 2:
        return False
    if partnerships:
        return bool(of[0] and of[0] == of[2]) or bool(of[1] and of[1] == of[3])
    named = [o for o in of if o]
    return len(named) != len(set(named))


def _by_table(schedule: list[ScheduledGame]) -> dict[frozenset[str], set[tuple[str, ...]]]:
    found: dict[frozenset[str], set[tuple[str, ...]]] = defaultdict(set)
    for g in schedule:
        found[frozenset(g.seats)].add(g.seats)
    return found


@given(fields(), st.integers(min_value=1, max_value=2), st.sampled_from(list(DealMode)))
def test_no_forbidden_table_and_every_allowed_table_whole(
    drawn: tuple[list[str], dict[str, str], int, bool], repeats: int, deals: DealMode
) -> None:
    entrants, owners, seats, partnerships = drawn
    allowed = [
        t
        for t in tables(entrants, seats, partnerships=partnerships)
        if not _forbidden(t, owners, partnerships)
    ]
    if not allowed:
        with pytest.raises(SeatingError, match="same-owner seating rule"):
            round_robin(entrants, seats, partnerships=partnerships, owners=owners)
        return
    schedule = round_robin(
        entrants,
        seats,
        games_per_pairing=repeats,
        partnerships=partnerships,
        deals=deals,
        owners=owners,
    )
    assert not any(_forbidden(g.seats, owners, partnerships) for g in schedule)
    assert len(schedule) == len(allowed) * seats * repeats
    played = {g.seats for g in schedule}
    for table in allowed:  # every rotation of every allowed table, games_per_pairing times
        for r in range(seats):
            assert table[r:] + table[:r] in played
    per_seats: dict[tuple[str, ...], int] = defaultdict(int)
    for g in schedule:
        per_seats[g.seats] += 1
    assert set(per_seats.values()) == {repeats}
    if deals is not DealMode.FRESH:  # a deal is played under every rotation of its table
        rotations: dict[int, set[int]] = defaultdict(set)
        for g in schedule:
            rotations[g.deal_id].add(g.rotation)
        assert all(r == set(range(seats)) for r in rotations.values())
    for round_ in {g.round for g in schedule}:  # nobody plays twice in a round
        names = [e for g in schedule if g.round == round_ for e in g.seats]
        assert len(names) == len(set(names))
    assert [g.index for g in schedule] == list(range(len(schedule)))


@given(fields(), st.integers(min_value=1, max_value=2), st.sampled_from(list(DealMode)))
def test_allowing_restores_the_plain_schedule(
    drawn: tuple[list[str], dict[str, str], int, bool], repeats: int, deals: DealMode
) -> None:
    entrants, owners, seats, partnerships = drawn
    plain = round_robin(
        entrants, seats, games_per_pairing=repeats, partnerships=partnerships, deals=deals
    )
    allowed = round_robin(
        entrants,
        seats,
        games_per_pairing=repeats,
        partnerships=partnerships,
        deals=deals,
        owners=owners,
        allow_same_owner_tables=True,
        allow_same_owner_partners=True,
    )
    assert allowed == plain
    if seats == 2:  # two-seat games are never affected
        assert round_robin(entrants, seats, games_per_pairing=repeats, owners=owners) == (
            round_robin(entrants, seats, games_per_pairing=repeats)
        )


def test_partners_of_one_owner_never_but_opponents_may_meet() -> None:
    owners = {"a1": "ann", "a2": "ann", "b": "bob", "c": "cid"}
    schedule = round_robin(["a1", "a2", "b", "c"], 4, partnerships=True, owners=owners)
    assert schedule
    for g in schedule:
        assert {g.seats[0], g.seats[2]} != {"a1", "a2"}
        assert {g.seats[1], g.seats[3]} != {"a1", "a2"}
    assert len(schedule) == 2 * 4  # two of the three pairings, every rotation


def test_same_owner_free_for_all_with_house_bots() -> None:
    owners = {"a1": "ann", "a2": "ann", "b": "bob"}
    entrants = ["a1", "a2", "b", "house:greedy", "house:random"]
    schedule = round_robin(entrants, 3, owners=owners)
    assert all(not {"a1", "a2"} <= set(g.seats) for g in schedule)
    assert any({"house:greedy", "house:random"} <= set(g.seats) for g in schedule)
    with pytest.raises(SeatingError, match="ann"):
        round_robin(["a1", "a2", "b"], 3, owners=owners)
    assert round_robin(["a1", "a2", "b"], 3, owners=owners, allow_same_owner_tables=True)

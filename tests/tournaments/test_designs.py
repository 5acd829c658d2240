"""Properties of the balanced designs and gauntlets (issue 31): counted here from the tables."""

from __future__ import annotations

from collections import Counter
from functools import partial
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domino_arena.server.tournaments.designs import Balance, Design, balanced, gauntlet
from domino_arena.server.tournaments.scheduler import seating_allowed


def _names(count: int) -> list[str]:
    return [f"bot{i:04d}" for i in range(count)]


def _recount(design: Design, entrants: list[str], partnerships: bool) -> Balance:
    """An independent count: every pair of entrants, met or not."""
    seats = len(design.tables[0])
    per_entrant = Counter(e for table in design.tables for e in table)
    per_seat = Counter((e, i) for table in design.tables for i, e in enumerate(table))
    opponents: Counter[frozenset[str]] = Counter()
    partners: Counter[frozenset[str]] = Counter()
    for table in design.tables:
        for p, q in combinations(range(seats), 2):
            mates = partnerships and q - p == 2
            (partners if mates else opponents)[frozenset((table[p], table[q]))] += 1
    pairs = [frozenset(pair) for pair in combinations(entrants, 2)]
    met = [opponents[pair] for pair in pairs]
    partnered = [partners[pair] for pair in pairs]
    seated = [per_seat[(e, i)] for e in entrants for i in range(seats)]
    tables = [per_entrant[e] for e in entrants]
    return Balance(
        tables_per_entrant=(min(tables), max(tables)),
        meetings=(min(met), max(met)),
        seats=(min(seated), max(seated)),
        exact=min(tables) == max(tables)
        and min(met) == max(met)
        and (not partnerships or min(partnered) == max(partnered)),
        partners=(min(partnered), max(partnered)) if partnerships else None,
    )


@st.composite
def _sizes(draw: st.DrawFn) -> tuple[int, int, bool, int]:
    partnerships = draw(st.booleans())
    seats = 4 if partnerships else draw(st.integers(min_value=2, max_value=4))
    count = draw(st.integers(min_value=seats, max_value=60))
    return count, seats, partnerships, draw(st.integers(min_value=1, max_value=10))


@settings(max_examples=30, deadline=None)
@given(size=_sizes(), seed=st.integers(min_value=0, max_value=3))
def test_a_balanced_design_keeps_its_promises(size: tuple[int, int, bool, int], seed: int) -> None:
    count, seats, partnerships, per_entrant = size
    entrants = _names(count)
    design = balanced(
        entrants, seats, tables_per_entrant=per_entrant, partnerships=partnerships, seed=seed
    )
    for table in design.tables:
        assert len(table) == seats
        assert len(set(table)) == seats
        assert set(table) <= set(entrants)
    # Every entrant at exactly t tables; otherwise as few as possible at t + 1.
    tables = Counter(e for table in design.tables for e in table)
    more = -(count * per_entrant) % seats
    assert (
        sorted(tables[e] for e in entrants)
        == [per_entrant] * (count - more) + [per_entrant + 1] * more
    )
    # The report is the recount, never more than was reached.
    assert design.balance == _recount(design, entrants, partnerships)
    if not partnerships:  # free seating: each entrant's seat indices within one (a colouring)
        seated = Counter((e, i) for table in design.tables for i, e in enumerate(table))
        for e in entrants:
            spread = [seated[(e, i)] for i in range(seats)]
            assert max(spread) - min(spread) <= 1, (e, spread)
    if seats == 2 and (count % 2 == 0 or per_entrant % 2 == 0):  # the exact constructions
        low, high = design.balance.meetings
        assert high - low <= 1
        assert design.balance.exact == (per_entrant % (count - 1) == 0)  # whole round robins
    again = balanced(
        entrants, seats, tables_per_entrant=per_entrant, partnerships=partnerships, seed=seed
    )
    assert again == design


def test_small_block_designs_are_found_exact() -> None:
    """The Fano plane (7 entrants, 3 seats, 3 tables each) and the 2-seat round robin."""
    fano = balanced(_names(7), 3, tables_per_entrant=3)
    assert fano.balance.exact and fano.balance.meetings == (1, 1)
    pairs = balanced(_names(6), 2, tables_per_entrant=10)  # twice the round robin
    assert pairs.balance.exact and pairs.balance.meetings == (2, 2)
    assert pairs.balance.seats == (5, 5)
    assert "exact: yes" in str(pairs.balance)


def test_forty_entrants_at_four_seats() -> None:
    entrants = _names(40)
    design = balanced(entrants, 4, tables_per_entrant=10, seed=1)
    assert len(design.tables) == 100
    assert design.balance == _recount(design, entrants, False)
    assert design.balance.tables_per_entrant == (10, 10)
    assert design.balance.meetings == (0, 1)  # 30 different opponents of 39, none met twice
    assert design.balance.seats == (2, 3)
    assert str(design.balance).startswith("each entrant 10 tables; pairs meet 0-1 times")


def test_a_thousand_entrants_in_moon() -> None:
    entrants = _names(1000)
    design = balanced(entrants, 3, tables_per_entrant=33)
    assert len(design.tables) == 11_000
    assert design.balance.tables_per_entrant == (33, 33)
    assert design.balance.meetings == (0, 1)
    assert design.balance.seats == (11, 11)


def test_partnerships_balance_partners_and_opponents() -> None:
    entrants = _names(40)
    design = balanced(entrants, 4, tables_per_entrant=10, partnerships=True)
    assert design.balance == _recount(design, entrants, True)
    assert design.balance.meetings == (0, 1)
    assert design.balance.partners == (0, 1)
    assert "partners 0-1 times" in str(design.balance)


def test_the_same_owner_rule_is_kept() -> None:
    """Owners of two bots each: no table seats two of one owner (scheduler.seating_allowed)."""
    entrants = _names(12)
    owners = {e: f"owner{i // 2}" for i, e in enumerate(entrants)}
    allowed = partial(seating_allowed, owners=owners)
    design = balanced(entrants, 4, tables_per_entrant=6, allowed=allowed)
    for table in design.tables:
        assert len({owners[e] for e in table}) == 4
    assert design.balance.tables_per_entrant == (6, 6)
    assert design.balance == _recount(design, entrants, False)
    teams = partial(seating_allowed, owners=owners, partnerships=True)
    paired = balanced(entrants, 4, tables_per_entrant=6, partnerships=True, allowed=teams)
    for table in paired.tables:
        assert owners[table[0]] != owners[table[2]] and owners[table[1]] != owners[table[3]]


def test_a_rule_that_leaves_no_table_is_an_error() -> None:
    with pytest.raises(ValueError, match="seating rule"):
        balanced(_names(8), 4, tables_per_entrant=2, allowed=lambda table: False)
    with pytest.raises(ValueError, match="seating rule"):
        gauntlet(_names(3), ["house:a", "house:b"], 2, allowed=lambda table: False)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: balanced(_names(3), 4, tables_per_entrant=1), "entrants: a 4-seat design"),
        (lambda: balanced(["a", "b", "a"], 2, tables_per_entrant=1), "entrants: names must be"),
        (lambda: balanced(_names(8), 4, tables_per_entrant=0), "tables_per_entrant: must be"),
        (lambda: balanced(_names(8), 3, tables_per_entrant=1, partnerships=True), "partnerships"),
        (lambda: balanced(_names(8), 5, tables_per_entrant=1), "seats: a design seats 2, 3 or 4"),
        (lambda: gauntlet(_names(4), ["house:a"], 3), "baselines: a 3-seat gauntlet"),
        (lambda: gauntlet(_names(4), ["house:a", "house:a"], 2), "baselines: names must be"),
        (lambda: gauntlet(_names(4), ["bot0001"], 2), "baselines: bot0001 also entered"),
        (lambda: gauntlet(_names(4), ["house:a"], 2, tables_per_entrant=0), "tables_per_entrant"),
    ],
)
def test_bad_sizes_and_names_are_named(call: object, message: str) -> None:
    assert callable(call)
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize(
    ("seats", "partnerships", "per_entrant"),
    [(2, False, 5), (2, False, 7), (3, False, 10), (4, False, 20), (4, True, 30)],
)
def test_a_gauntlet_seats_one_entrant_with_baselines(
    seats: int, partnerships: bool, per_entrant: int
) -> None:
    entrants, baselines = _names(9), [f"house:base{i}" for i in range(5)]
    design = gauntlet(
        entrants, baselines, seats, tables_per_entrant=per_entrant, partnerships=partnerships
    )
    assert len(design.tables) == len(entrants) * per_entrant
    for table in design.tables:
        assert len(table) == seats and len(set(table)) == seats
        assert sum(e in entrants for e in table) == 1
    balance = design.balance
    assert balance.tables_per_entrant == (per_entrant, per_entrant)
    low, high = balance.meetings  # each entrant meets every baseline within one of the others
    assert high - low <= 1
    assert low == per_entrant * (seats - 1) // len(baselines)
    low, high = balance.seats
    assert high - low <= 1
    if partnerships:
        assert balance.partners is not None
        assert balance.partners[1] - balance.partners[0] <= 1
    if seats == 2 and per_entrant == len(baselines):
        assert balance.exact  # each entrant against each baseline once
    assert design == gauntlet(
        entrants, baselines, seats, tables_per_entrant=per_entrant, partnerships=partnerships
    )


def test_a_thousand_entrants_at_four_seats_and_a_hundred_tables() -> None:
    design = balanced(_names(1000), 4, tables_per_entrant=100)
    assert len(design.tables) == 25_000
    assert design.balance.tables_per_entrant == (100, 100)
    assert design.balance.meetings == (0, 1)
    assert design.balance.seats == (25, 25)

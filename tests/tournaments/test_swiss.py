"""Properties of Swiss rounds (issue 31), counted here from the tables each round returns."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator, Sequence
from functools import partial
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domino_arena.server.ladder.fit import FitGame, fit
from domino_arena.server.tournaments.rounds import PlacedGame, TableResult, round_results
from domino_arena.server.tournaments.scheduler import seating_allowed
from domino_arena.server.tournaments.swiss import (
    WINDOW,
    SwissRound,
    connected,
    folded_order,
    folds,
    points_order,
    swiss_round,
    swiss_rounds,
)
from tests.fakes.fit_games import duplicate_sets

Tables = tuple[tuple[str, ...], ...]


def _names(count: int) -> list[str]:
    return [f"bot{i:02d}" for i in range(count)]


def _pairs_met(previous: Sequence[Tables]) -> set[frozenset[str]]:
    return {frozenset(p) for tables in previous for t in tables for p in combinations(t, 2)}


def _check_round(
    made: SwissRound,
    entrants: list[str],
    seats: int,
    order: list[str],
    previous: list[Tables],
) -> None:
    """What every round promises, recounted from its tables."""
    seated = [e for table in made.tables for e in table]
    assert len(seated) == len(set(seated)), "an entrant at two tables"
    assert all(len(table) == seats for table in made.tables)
    assert sorted(seated + list(made.byes)) == sorted(entrants)
    assert len(made.byes) == len(entrants) % seats
    byes_so_far = Counter({e: len(previous) for e in entrants})
    byes_so_far.subtract(e for tables in previous for t in tables for e in t)
    if made.byes:  # the fewest byes so far, the weakest first among equals
        rested = max(byes_so_far[e] for e in made.byes)
        playing = [e for e in entrants if e not in made.byes]
        assert all(byes_so_far[e] >= rested for e in playing)
        weakest_resting = max(order.index(e) for e in made.byes if byes_so_far[e] == rested)
        assert all(
            order.index(e) < weakest_resting for e in playing if byes_so_far[e] == rested
        ) or all(byes_so_far[e] > rested for e in playing)
    playing = [e for e in order if e not in made.byes]
    if folds(len(previous) + 1):  # a folded round: the window is over the folded ranking
        playing = folded_order(playing, seats)
    ranks = {e: i for i, e in enumerate(playing)}
    for table in made.tables:  # adjacent strength: within the window of ranks
        span = max(ranks[e] for e in table) - min(ranks[e] for e in table)
        assert span < (2 * WINDOW + 1) * seats, (table, span)
    met = _pairs_met(previous)
    again = sum(1 for t in made.tables for p in combinations(t, 2) if frozenset(p) in met)
    assert made.repeats == again
    strongest = [min(ranks[e] for e in t) for t in made.tables]
    assert strongest == sorted(strongest)


@st.composite
def _fields(draw: st.DrawFn) -> tuple[int, int, bool, int, int]:
    partnerships = draw(st.booleans())
    seats = 4 if partnerships else draw(st.integers(min_value=2, max_value=4))
    count = draw(st.integers(min_value=max(2, seats), max_value=60))
    rounds = draw(st.integers(min_value=1, max_value=6))
    return count, seats, partnerships, rounds, draw(st.integers(min_value=0, max_value=3))


@settings(max_examples=40, deadline=None)
@given(field=_fields())
def test_every_round_keeps_its_promises(field: tuple[int, int, bool, int, int]) -> None:
    count, seats, partnerships, rounds, seed = field
    entrants = _names(count)
    rng = random.Random(seed)
    previous: list[Tables] = []
    order = list(entrants)
    for _ in range(rounds):
        rng.shuffle(order)
        made = swiss_round(entrants, seats, order, previous, partnerships=partnerships, seed=seed)
        _check_round(made, entrants, seats, order, previous)
        assert (
            swiss_round(
                entrants, seats, list(order), list(previous), partnerships=partnerships, seed=seed
            )
            == made
        )
        if partnerships and not previous:  # no partners yet: the two strongest together
            rank = {e: i for i, e in enumerate(order)}
            for table in made.tables:
                a, c, b, d = table
                assert rank[a] < rank[b] < rank[c] < rank[d]
        previous.append(made.tables)
    byes = Counter({e: 0 for e in entrants})
    byes.update(e for tables in previous for e in entrants if all(e not in t for t in tables))
    assert max(byes.values()) - min(byes.values()) <= 1


def _partitions(items: list[str], size: int) -> Iterator[list[tuple[str, ...]]]:
    if not items:
        yield []
        return
    head, rest = items[0], items[1:]
    for others in combinations(rest, size - 1):
        left = [e for e in rest if e not in others]
        for more in _partitions(left, size):
            yield [(head, *others), *more]


def _playable(table: tuple[str, ...], allowed: object, partnerships: bool) -> bool:
    assert callable(allowed)
    if not partnerships:
        return bool(allowed(table))
    a, b, c, d = table
    return any(allowed(t) for t in ((a, b, d, c), (a, b, c, d), (a, c, b, d)))


@st.composite
def _small_fields(draw: st.DrawFn) -> tuple[int, bool, int, int, int]:
    """Seats, partnerships, entrants (every table inside the window), seed, owners (0: none)."""
    seats = draw(st.integers(min_value=2, max_value=4))
    partnerships = seats == 4 and draw(st.booleans())
    count = draw(st.integers(min_value=1, max_value=WINDOW + 1)) * seats
    count += draw(st.integers(min_value=0, max_value=seats - 1))
    seed = draw(st.integers(min_value=0, max_value=10_000))
    return seats, partnerships, count, seed, draw(st.integers(min_value=0, max_value=6))


@settings(max_examples=80, deadline=None)
@given(field=_small_fields())
def test_a_repeat_free_allowed_round_is_found_when_one_exists(
    field: tuple[int, bool, int, int, int],
) -> None:
    seats, partnerships, count, seed, owners_of = field
    """Small fields (every table inside the window), checked against every partition."""
    entrants = _names(count)
    rng = random.Random(seed)
    previous: list[Tables] = []
    for _ in range(rng.randrange(4)):  # earlier rounds: random tables
        shuffled = rng.sample(entrants, count)
        previous.append(
            tuple(tuple(shuffled[i : i + seats]) for i in range(0, count - seats + 1, seats))
        )
    owners = {e: f"owner{rng.randrange(owners_of)}" for e in entrants} if owners_of else None
    allowed = partial(seating_allowed, owners=owners, partnerships=partnerships)
    order = rng.sample(entrants, count)
    try:
        made = swiss_round(
            entrants, seats, order, previous, partnerships=partnerships, allowed=allowed
        )
    except ValueError as error:
        made = None
        assert "seating rule" in str(error)
    byes = set(made.byes) if made else set()
    if made is None:  # the byes do not depend on the seating: recompute them
        made_free = swiss_round(entrants, seats, order, previous, partnerships=partnerships)
        byes = set(made_free.byes)
    playing = [e for e in entrants if e not in byes]
    met = _pairs_met(previous)
    playable = [
        p
        for p in _partitions(playing, seats)
        if all(_playable(t, allowed, partnerships) for t in p)
    ]
    if made is None:
        assert not playable
        return
    assert playable
    for table in made.tables:
        assert allowed(table)
    fresh = any(
        all(frozenset(q) not in met for t in p for q in combinations(t, 2)) for p in playable
    )
    assert (made.repeats == 0) == fresh


def test_the_rule_raises_when_no_table_is_allowed() -> None:
    with pytest.raises(ValueError, match="allowed: the same-owner seating rule"):
        swiss_round(_names(8), 4, _names(8), [], allowed=lambda table: False)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: swiss_round(_names(4), 5, _names(4), []), "seats: a Swiss round seats 2, 3 or 4"),
        (lambda: swiss_round(_names(8), 3, _names(8), [], partnerships=True), "partnerships"),
        (lambda: swiss_round(["a", "a", "b"], 2, ["a", "b"], []), "entrants: names must be"),
        (lambda: swiss_round(_names(3), 4, _names(3), []), "entrants: a 4-seat Swiss round"),
        (lambda: swiss_round(_names(4), 2, _names(3), []), "order: .* missing: bot03"),
        (lambda: swiss_round(_names(4), 2, [*_names(4), "x"], []), "order: .* not entered: x"),
        (lambda: swiss_round(_names(2), 2, ["bot00", "bot00", "bot01"], []), "order: .* repeated"),
        (
            lambda: swiss_round(_names(4), 2, _names(4), [[("bot00", "bot01", "bot02")]]),
            "previous: round 1 has a table of 3",
        ),
        (lambda: swiss_rounds(40, 4, 0, 4), "games_per_entrant: must be at least 1"),
        (lambda: swiss_rounds(40, 4, 48, 0), "games_per_table: must be at least 1"),
        (lambda: swiss_rounds(3, 4, 48, 4), "entrants: a 4-seat Swiss needs at least 4"),
        (lambda: swiss_rounds(8, 5, 48, 5), "seats: Swiss seats 2, 3 or 4"),
    ],
)
def test_bad_inputs_are_named(call: object, message: str) -> None:
    assert callable(call)
    with pytest.raises(ValueError, match=message):
        call()


def test_rounds_for_the_games_per_entrant() -> None:
    assert swiss_rounds(40, 4, 48, 4) == 12
    assert swiss_rounds(41, 4, 48, 4) == 13  # one sits out each round: 12.3 rounds for the mean
    assert swiss_rounds(40, 4, 50, 8) == 7  # two deals a table
    assert swiss_rounds(10, 2, 1, 100) == 1


def test_the_first_round_seats_adjacent_ranks_and_the_second_avoids_them() -> None:
    entrants = _names(16)
    first = swiss_round(entrants, 4, entrants, [])
    assert first.tables == tuple(
        (entrants[i], entrants[i + 1], entrants[i + 2], entrants[i + 3]) for i in range(0, 16, 4)
    )
    assert first.repeats == 0
    shuffled = random.Random(3).sample(entrants, 16)
    second = swiss_round(entrants, 4, shuffled, [first.tables])
    assert second.repeats == 0


def _placed(tables: Tables, standing: dict[str, int]) -> tuple[TableResult, ...]:
    """Each table's one game, finishing in ``standing`` order (0 first)."""
    games = []
    for table in tables:
        places = sorted(table, key=standing.__getitem__)
        games.append(
            PlacedGame(
                table,
                tuple(range(len(table))),
                tuple(places.index(e) for e in table),
                (0,) * len(table),
            )
        )
    return round_results(tables, games)


def test_points_order_and_connected() -> None:
    order = _names(5)
    tables = (("bot00", "bot01"), ("bot02", "bot03"))
    results = _placed(tables, {"bot00": 1, "bot01": 0, "bot02": 0, "bot03": 1})
    # bot01 and bot02 won (1 a game); bot04 had a bye (0.5); bot00 and bot03 lost.
    assert points_order(order, results) == ["bot01", "bot02", "bot04", "bot00", "bot03"]
    assert not connected(order, [tables])
    assert not connected(order, [tables, (("bot01", "bot02"),)])
    assert connected(order, [tables, (("bot01", "bot02"),), (("bot03", "bot04"),)])


def _spearman(a: Sequence[float], b: Sequence[float]) -> float:
    def ranks(xs: Sequence[float]) -> list[int]:
        order = sorted(range(len(xs)), key=xs.__getitem__)
        out = [0] * len(xs)
        for r, i in enumerate(order):
            out[i] = r
        return out

    ra, rb, n = ranks(a), ranks(b), len(a)
    return 1 - 6 * sum((x - y) ** 2 for x, y in zip(ra, rb, strict=True)) / (n * (n * n - 1))


def test_a_few_swiss_rounds_rank_a_separated_field() -> None:
    """24 entrants 100 Elo apart, 4 seats, 6 rounds of one deal a table under every rotation:
    the fit of the games ranks them nearly as the truth, and the last round's top table holds
    the strong."""
    entrants = _names(24)
    rng = random.Random(7)
    strengths = {e: 1500 + 100 * (12 - i) for i, e in enumerate(entrants)}  # bot00 strongest
    order = rng.sample(entrants, len(entrants))
    previous: list[Tables] = []
    games: list[FitGame] = []
    results: list[TableResult] = []
    for number in range(6):
        if number and connected(entrants, previous):
            ratings = fit(games).ratings
            order = sorted(order, key=lambda e: -ratings[e])
        elif number:
            order = points_order(order, results)
        made = swiss_round(entrants, 4, order, previous)
        played = duplicate_sets(
            made.tables,
            (0, 1, 2, 3),
            strengths,
            (0, -30, -60, -90),
            rng,
            deals=1,
            prefix=f"r{number}",
        )
        games += played
        previous.append(made.tables)
        results += round_results(
            made.tables,
            [
                PlacedGame(g.game.bots, g.game.side_of_seat, g.game.standing, (0,) * 4)
                for g in played
            ],
        )
    ratings = fit(games).ratings
    rho = _spearman([ratings[e] for e in entrants], [strengths[e] for e in entrants])
    top = sorted(entrants, key=lambda e: -ratings[e])[:4]
    assert rho > 0.9
    assert all(entrants.index(e) < 6 for e in top)


def test_every_third_round_seats_the_ranking_folded() -> None:
    entrants = _names(12)
    quiet: list[Tables] = [(), ()]  # two rounds of byes: round 3, no pair met yet
    assert [folds(n) for n in range(1, 7)] == [False, False, True, False, False, True]
    made = swiss_round(entrants, 3, entrants, quiet)
    assert made.tables == (
        ("bot00", "bot04", "bot08"),
        ("bot01", "bot05", "bot09"),
        ("bot02", "bot06", "bot10"),
        ("bot03", "bot07", "bot11"),
    )
    assert swiss_round(entrants, 3, entrants, quiet[:1]).tables[0] == ("bot00", "bot01", "bot02")
    pairs = swiss_round(entrants, 2, entrants, quiet).tables
    assert pairs[0] == ("bot00", "bot06") and pairs[-1] == ("bot05", "bot11")

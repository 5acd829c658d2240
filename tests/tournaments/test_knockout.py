"""Knockouts played to the end through ``bracket()`` (issue 31): random and favourite results,
hand-drawn brackets, the sequential rule and the errors for rounds that do not fit."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domino_arena.server.tournaments.knockout import (
    Bracket,
    KnockoutRules,
    Tie,
    bracket,
    bracket_order,
    sets_bounds,
    stages_needed,
)
from domino_arena.server.tournaments.rounds import PlacedGame, TableResult, round_results

Outcome = Callable[[tuple[str, ...]], TableResult]


def _names(count: int) -> list[str]:
    return [f"s{i}" for i in range(1, count + 1)]


def _duplicate_set(
    table: tuple[str, ...],
    places: Callable[[tuple[str, ...]], list[int]],
    scores: Callable[[tuple[str, ...]], list[int]],
) -> TableResult:
    """One duplicate set of ``table``: a game under every rotation, summed by the real
    ``round_results``; ``places`` and ``scores`` give each seat's outcome of one game."""
    games = []
    for rotation in range(len(table)):
        seats = table[rotation:] + table[:rotation]
        standing = places(seats)
        low = min(standing)
        games.append(
            PlacedGame(
                seats=seats,
                side_of_seat=tuple(range(len(seats))),
                standing=tuple(place - low for place in standing),
                scores=tuple(scores(seats)),
            )
        )
    (result,) = round_results([table], games)
    return result


def _random_outcome(rng: random.Random) -> Outcome:
    """Few distinct places and scores, so level ties (and so extra sets) are frequent."""

    def outcome(table: tuple[str, ...]) -> TableResult:
        result = _duplicate_set(
            table,
            lambda seats: [rng.randrange(2) for _ in seats],
            lambda seats: [rng.randrange(2) for _ in seats],
        )
        order = list(table)
        rng.shuffle(order)  # results may name a table's entrants in any order
        return TableResult(
            entrants=tuple(order),
            points=tuple(result.points_of(e) for e in order),
            score=tuple(result.score_of(e) for e in order),
            games=result.games,
        )

    return outcome


def _favourites(seeding: list[str]) -> Outcome:
    """The better seed finishes ahead in every game."""
    seed = {entrant: number for number, entrant in enumerate(seeding)}
    return lambda table: _duplicate_set(
        table, lambda seats: [seed[e] for e in seats], lambda seats: [0 for _ in seats]
    )


def _play(
    seeding: list[str], rules: KnockoutRules, outcome: Outcome, rng: random.Random | None = None
) -> tuple[Bracket, list[list[TableResult]]]:
    """Play to a champion, rebuilding the bracket from every round so far each time (as a
    resuming referee does) and checking the state between rounds."""
    rounds: list[list[TableResult]] = []
    state = bracket(seeding, rules, rounds)
    while tables := state.next_tables():
        _check_in_progress(state)
        results = [outcome(table) for table in tables]
        if rng is not None:
            rng.shuffle(results)
        rounds.append(results)
        state = bracket(seeding, rules, rounds)
        assert len(rounds) <= len(seeding) * rules.max_sets
    return state, rounds


def _check_in_progress(state: Bracket) -> None:
    assert state.champion is None and state.final_order == ()
    for earlier in state.stages[:-1]:
        assert all(tie.decided for tie in earlier)
    assert not all(tie.decided for tie in state.stages[-1])
    seated = [e for table in state.next_tables() for e in table]
    assert len(seated) == len(set(seated))


def _totals(tie: Tie, sets: int) -> tuple[dict[str, float], dict[str, int]]:
    points = {e: math.fsum(s.points_of(e) for s in tie.sets[:sets]) for e in tie.entrants}
    score = {e: sum(s.score_of(e) for s in tie.sets[:sets]) for e in tie.entrants}
    return points, score


def _level_at(tie: Tie, sets: int, final: bool) -> bool:
    """Whether two or more entrants share the decisive place on points and score after the
    first ``sets`` sets (an independent count)."""
    points, score = _totals(tie, sets)
    pick = max if final else min
    edge = pick(points.values())
    group = [e for e in tie.entrants if abs(points[e] - edge) < 1e-9]
    edge_score = pick(score[e] for e in group)
    return sum(1 for e in group if score[e] == edge_score) > 1


@st.composite
def _fields(draw: st.DrawFn) -> tuple[int, KnockoutRules]:
    table_size = draw(st.integers(min_value=2, max_value=4))
    entrants = draw(st.integers(min_value=table_size, max_value=70))
    sets = draw(st.integers(min_value=1, max_value=2))
    max_sets = draw(st.integers(min_value=sets, max_value=sets + 2))
    return entrants, KnockoutRules(table_size, sets=sets, max_sets=max_sets)


@settings(max_examples=60, deadline=None)
@given(field=_fields(), seed=st.integers(min_value=0, max_value=2**32))
def test_a_random_knockout_keeps_its_promises(field: tuple[int, KnockoutRules], seed: int) -> None:
    count, rules = field
    seeding = _names(count)
    rank = {entrant: number for number, entrant in enumerate(seeding)}
    rng = random.Random(seed)
    state, rounds = _play(seeding, rules, _random_outcome(rng), rng)

    # One champion, everyone else out exactly once, the final's order first to last.
    assert state.champion is not None
    eliminated = Counter(e for stage in state.stages for tie in stage for e in tie.out)
    assert set(eliminated) == set(seeding) - {state.champion}
    assert max(eliminated.values()) == 1
    assert state.final_order[0] == state.champion
    final = state.stages[-1]
    assert len(final) == 1 and len(final[0].entrants) == rules.table_size
    assert sorted(state.final_order) == sorted(final[0].entrants)
    assert final[0].through == (state.champion,)
    assert len(state.stages) == stages_needed(count, rules.table_size)

    alive = list(seeding)
    played_sets = 0
    for number, stage in enumerate(state.stages):
        seated = [e for tie in stage for e in tie.entrants]
        assert sorted(seated) == sorted(alive)  # disjoint tables covering the survivors
        byes = sorted(
            (tie.entrants[0] for tie in stage if tie.decided_by == "bye"), key=rank.__getitem__
        )
        assert byes == sorted(alive, key=rank.__getitem__)[: len(byes)]  # top seeds only
        if rules.table_size == 2 and number > 0:
            assert not byes
        for tie in stage:
            assert tie.stage == number
            assert list(tie.entrants) == sorted(tie.entrants, key=rank.__getitem__)
            if tie.decided_by == "bye":
                assert tie.sets == () and tie.out == ()
                continue
            assert len(tie.entrants) == rules.table_size
            is_final = len(stage) == 1
            assert len(tie.out) == (rules.table_size - 1 if is_final else 1)
            # The sequential rule: a set beyond ``sets`` only while the tie was level.
            assert rules.sets <= len(tie.sets) <= rules.max_sets
            for before in range(rules.sets, len(tie.sets)):
                assert _level_at(tie, before, is_final)
            level = _level_at(tie, len(tie.sets), is_final)
            assert (tie.decided_by == "seed") == level
            if level:
                assert len(tie.sets) == rules.max_sets
            played_sets += len(tie.sets)
        alive = [e for tie in stage for e in tie.through]
    assert alive == [state.champion]
    low, high = sets_bounds(count, rules)
    assert low <= played_sets <= high
    assert played_sets == sum(len(results) for results in rounds)

    # Replay: the same rounds, in another order within each, give the same bracket.
    shuffled = [rng.sample(results, len(results)) for results in rounds]
    assert bracket(seeding, rules, shuffled) == state
    assert bracket(seeding, rules, rounds) == state


@settings(max_examples=40, deadline=None)
@given(count=st.integers(min_value=2, max_value=70), table_size=st.integers(2, 4))
def test_favourites_meet_only_at_the_end(count: int, table_size: int) -> None:
    count = max(count, table_size)
    seeding = _names(count)
    state, _ = _play(seeding, KnockoutRules(table_size), _favourites(seeding))
    assert state.champion == "s1"
    assert state.final_order == tuple(seeding[:table_size])
    for stage in state.stages[:-1]:
        for tie in stage:
            assert not {"s1", "s2"} <= set(tie.entrants)
            assert tie.decided_by in ("points", "bye")


def test_eight_entrants_of_two_follow_the_usual_bracket() -> None:
    seeding = _names(8)
    assert bracket_order(8) == (1, 8, 4, 5, 2, 7, 3, 6)
    start = bracket(seeding, KnockoutRules(2), [])
    assert start.next_tables() == (("s1", "s8"), ("s4", "s5"), ("s2", "s7"), ("s3", "s6"))
    # Upsets: 8 beats 1, 5 beats 4; the bracket keeps its tree (no re-pairing by seed).
    upsets = {"s8", "s5"}

    def outcome(table: tuple[str, ...]) -> TableResult:
        winner = next((e for e in table if e in upsets), table[0])
        return _duplicate_set(
            table, lambda seats: [0 if e == winner else 1 for e in seats], lambda s: [0, 0]
        )

    first = bracket(seeding, KnockoutRules(2), [[outcome(t) for t in start.next_tables()]])
    assert first.next_tables() == (("s5", "s8"), ("s2", "s3"))
    state, rounds = _play(seeding, KnockoutRules(2), outcome)
    assert len(rounds) == 3
    assert state.champion == "s5"
    assert state.final_order == ("s5", "s2")
    assert [len(stage) for stage in state.stages] == [4, 2, 1]


def test_six_entrants_of_two_give_the_top_two_byes() -> None:
    seeding = _names(6)
    state = bracket(seeding, KnockoutRules(2), [])
    assert [(tie.entrants, tie.decided_by) for tie in state.stages[0]] == [
        (("s1",), "bye"),
        (("s4", "s5"), ""),
        (("s2",), "bye"),
        (("s3", "s6"), ""),
    ]
    assert state.stages[0][0].through == ("s1",)
    assert state.stages[0][1].through == ()
    assert state.next_tables() == (("s4", "s5"), ("s3", "s6"))
    done, _ = _play(seeding, KnockoutRules(2), _favourites(seeding))
    assert [tie.entrants for tie in done.stages[1]] == [("s1", "s4"), ("s2", "s3")]
    assert done.stages[2][0].entrants == ("s1", "s2")
    assert stages_needed(6, 2) == 3
    assert sets_bounds(6, KnockoutRules(2, sets=2, max_sets=5)) == (10, 25)


def test_nine_at_three_seats_snake_and_eliminate_the_last() -> None:
    seeding = _names(9)
    state, rounds = _play(seeding, KnockoutRules(3), _favourites(seeding))
    stages = [[tie.entrants for tie in stage] for stage in state.stages]
    assert stages == [
        [("s1", "s6", "s7"), ("s2", "s5", "s8"), ("s3", "s4", "s9")],
        [("s1", "s4", "s5"), ("s2", "s3", "s6")],
        [("s1",), ("s2", "s3", "s4")],
        [("s1", "s2", "s3")],
    ]
    assert [tie.out for tie in state.stages[0]] == [("s7",), ("s8",), ("s9",)]
    assert state.stages[-1][0].out == ("s2", "s3")
    assert state.final_order == ("s1", "s2", "s3")
    assert len(rounds) == 4 == stages_needed(9, 3)
    assert sets_bounds(9, KnockoutRules(3)) == (7, 7)


def test_five_at_four_seats_play_one_table_and_a_bye_then_the_final() -> None:
    seeding = _names(5)
    state = bracket(seeding, KnockoutRules(4), [])
    assert [tie.entrants for tie in state.stages[0]] == [("s1",), ("s2", "s3", "s4", "s5")]
    assert stages_needed(5, 4) == 2 and stages_needed(4, 4) == 1


def _set(points: dict[str, float], score: dict[str, int] | None = None) -> TableResult:
    score = score or dict.fromkeys(points, 0)
    return TableResult(
        entrants=tuple(points),
        points=tuple(points.values()),
        score=tuple(score[e] for e in points),
        games=len(points),
    )


def test_the_sequential_rule_plays_on_only_while_level() -> None:
    rules = KnockoutRules(2, sets=1, max_sets=3)
    seeding = ["a", "b"]
    level = _set({"a": 1.0, "b": 1.0}, {"a": 50, "b": 50})
    after_one = bracket(seeding, rules, [[level]])
    assert after_one.next_tables() == (("a", "b"),)  # level: another set
    assert not after_one.stages[0][0].decided
    by_score = bracket(seeding, rules, [[level], [_set({"a": 1.0, "b": 1.0}, {"a": 9, "b": 12})]])
    assert by_score.champion == "b" and by_score.stages[0][0].decided_by == "score"
    by_points = bracket(seeding, rules, [[level], [_set({"b": 0.0, "a": 2.0})]])
    assert by_points.champion == "a" and by_points.stages[0][0].decided_by == "points"
    by_seed = bracket(seeding, rules, [[level], [level], [level]])
    assert by_seed.champion == "a" and by_seed.stages[0][0].decided_by == "seed"
    assert by_seed.final_order == ("a", "b")
    fixed = bracket(seeding, KnockoutRules(2, sets=2, max_sets=2), [[level]])
    assert fixed.next_tables() == (("a", "b"),)  # at least ``sets`` sets, level or not
    decided = bracket(seeding, KnockoutRules(2, sets=2, max_sets=2), [[level], [level]])
    assert decided.champion == "a" and decided.stages[0][0].decided_by == "seed"


def test_thirds_that_sum_to_the_same_points_are_level() -> None:
    rules = KnockoutRules(4, sets=2, max_sets=2)
    seeding = ["a", "b", "c", "d", "e"]
    third = 1 / 3
    first = _set({"b": third, "c": 1.0, "d": 0.5, "e": 0.0})
    second = _set({"b": third + third, "c": 1.0, "d": 0.5, "e": 1.0})
    state = bracket(seeding, rules, [[first], [second]])
    table = state.stages[0][1]
    # b: 1/3 + 2/3, e: 0 + 1, level on points and on score: the worse seed, e, is out.
    assert table.out == ("e",) and table.decided_by == "seed"
    assert state.next_tables() == (("a", "b", "c", "d"),)


def test_the_final_at_four_seats_ranks_every_place() -> None:
    seeding = ["a", "b", "c", "d"]
    result = _set({"a": 0.5, "b": 1.0, "c": 0.5, "d": 0.0}, {"a": 3, "b": 0, "c": 7, "d": 9})
    state = bracket(seeding, KnockoutRules(4), [[result]])
    assert state.champion == "b"
    assert state.final_order == ("b", "c", "a", "d")
    assert state.stages[0][0].decided_by == "points"
    assert state.stages[0][0].out == ("c", "a", "d")


def test_rounds_that_do_not_fit_are_refused_naming_the_table() -> None:
    seeding = _names(4)
    rules = KnockoutRules(2)
    s1_s4 = _set({"s1": 1.0, "s4": 0.0})
    s2_s3 = _set({"s2": 1.0, "s3": 0.0})
    with pytest.raises(ValueError, match=r"rounds\[0\]: no result for table s2, s3"):
        bracket(seeding, rules, [[s1_s4]])
    with pytest.raises(ValueError, match=r"rounds\[0\]: table s1, s2 is not one of this round"):
        bracket(seeding, rules, [[s1_s4, s2_s3, _set({"s1": 1.0, "s2": 0.0})]])
    with pytest.raises(ValueError, match=r"rounds\[0\]: table s1, s4: expected one result"):
        bracket(seeding, rules, [[s1_s4, s2_s3, s1_s4]])
    with pytest.raises(ValueError, match=r"rounds\[1\]: table s1, s4 is not one of"):
        bracket(seeding, rules, [[s1_s4, s2_s3], [s1_s4]])
    bad = TableResult(entrants=("s1", "s4"), points=(1.0,), score=(0, 0), games=2)
    with pytest.raises(ValueError, match=r"table s1, s4: expected points and score"):
        bracket(seeding, rules, [[bad, s2_s3]])
    final = _set({"s1": 1.0, "s2": 0.0})
    with pytest.raises(ValueError, match=r"rounds\[2\]: the knockout is over \(champion s1\)"):
        bracket(seeding, rules, [[s1_s4, s2_s3], [final], [final]])


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: KnockoutRules(1), "table_size: expected 2 to 4 seats"),
        (lambda: KnockoutRules(5), "table_size: expected 2 to 4 seats"),
        (lambda: KnockoutRules(2, sets=0), "sets: expected at least 1"),
        (lambda: KnockoutRules(2, sets=3, max_sets=2), r"max_sets: expected from sets \(3\)"),
        (lambda: KnockoutRules(2, sets=3, max_sets=16), "max_sets: expected from sets .* to 15"),
        (lambda: bracket(["a", "b", "a"], KnockoutRules(2), []), "seeding: expected each"),
        (lambda: bracket(["a", ""], KnockoutRules(2), []), "seeding: expected non-empty"),
        (lambda: bracket(["a", "b"], KnockoutRules(3), []), "seeding: .* at least 3"),
        (lambda: stages_needed(3, 4), "entrants: a knockout at 4 seats needs at least 4"),
        (lambda: stages_needed(8, 5), "table_size"),
        (lambda: sets_bounds(1, KnockoutRules(2)), "entrants: .* at least 2"),
    ],
)
def test_bad_rules_and_sizes_are_refused(make: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make()


def test_a_field_of_two_or_of_n_is_the_final_at_once() -> None:
    assert stages_needed(2, 2) == 1
    state = bracket(["x", "y", "z"], KnockoutRules(3), [])
    assert len(state.stages) == 1 and state.next_tables() == (("x", "y", "z"),)
    assert [stages_needed(n, 2) for n in (2, 3, 4, 5, 8, 9, 64, 65)] == [1, 2, 2, 3, 3, 4, 6, 7]


def test_the_example_of_the_docs_plays_as_shown() -> None:
    """docs/tournaments.md: Knockout, the example of 6 entrants with up to 3 sets a tie."""
    rules = KnockoutRules(2, sets=1, max_sets=3)
    seeding = _names(6)
    rounds = [[_set({"s4": 0.0, "s5": 2.0}), _set({"s3": 1.0, "s6": 1.0}, {"s3": 5, "s6": 5})]]
    assert bracket(seeding, rules, rounds).next_tables() == (("s3", "s6"),)
    rounds.append([_set({"s6": 1.0, "s3": 1.0}, {"s6": 4, "s3": 9})])
    state = bracket(seeding, rules, rounds)
    assert [tie.decided_by for tie in state.stages[0]] == ["bye", "points", "bye", "score"]
    assert state.next_tables() == (("s1", "s5"), ("s2", "s3"))
    rounds.append([_set({"s1": 2.0, "s5": 0.0}), _set({"s2": 2.0, "s3": 0.0})])
    assert bracket(seeding, rules, rounds).next_tables() == (("s1", "s2"),)

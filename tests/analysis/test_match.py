"""A match analysed: its decisions are the analysed seats' real ones, the result depends on
the record, id and seed alone, and it survives JSON."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest

from domino_arena.bots.search.playout import greedy_policy
from domino_arena.sdk.rules import CHANCE, GameState, make_game
from domino_arena.server.analysis import MatchAnalysis, analyse_match
from domino_arena.server.analysis.par import hand_par
from tests.fakes.analysed import greedy_record

FAST = {"precision": 100.0, "max_samples": 16, "min_samples": 8}


def test_every_real_decision_of_the_seat_is_analysed_and_forced_moves_are_not() -> None:
    record = greedy_record("straight", 5, steps=60)
    analysis = analyse_match(record, "m", seats=[1], **FAST)  # type: ignore[arg-type]
    state: GameState = make_game("straight").new_game(5, first_seat=0)
    expected = []
    forced = 0
    for i, step in enumerate(record.steps):
        if state.current_seat == 1:
            if len(state.legal_actions()) > 1:
                expected.append(i)
            else:
                forced += 1
        state = state.apply(step.action)
    assert forced > 0, "the record should hold a forced move of seat 1"
    assert [d.step for d in analysis.decisions] == expected
    for d in analysis.decisions:
        assert d.seat == 1
        assert d.chosen == str(record.steps[d.step].action)
        assert d.chosen in [v.action for v in d.values]
        assert d.best == max(d.values, key=lambda v: v.points).action or d.loss_points == 0
        assert d.samples >= 8
        assert d.phase == "play"
    (summary,) = analysis.summaries
    assert summary.decisions == len(expected)
    assert summary.name == "bot1"
    assert 0 <= summary.accuracy <= 100


def test_a_step_the_referee_played_for_the_seat_is_not_its_decision() -> None:
    record = greedy_record("passing", 5, steps=30)
    whole = analyse_match(record, "m", seats=[0], **FAST)  # type: ignore[arg-type]
    first = whole.decisions[0].step
    steps = list(record.steps)
    steps[first] = dataclasses.replace(steps[first], substituted=True)
    cut = analyse_match(dataclasses.replace(record, steps=tuple(steps)), "m", seats=[0], **FAST)  # type: ignore[arg-type]
    assert [d.step for d in cut.decisions] == [d.step for d in whole.decisions[1:]]
    assert cut.summaries[0].decisions == whole.summaries[0].decisions - 1


def test_the_same_match_and_seed_give_the_same_analysis_and_another_seed_another() -> None:
    record = greedy_record("moon", 2, steps=40)
    one = analyse_match(record, "m7", seed=3, **FAST)  # type: ignore[arg-type]
    two = analyse_match(record, "m7", seed=3, **FAST)  # type: ignore[arg-type]
    assert json.dumps(one.to_json()) == json.dumps(two.to_json())
    other = analyse_match(record, "m7", seed=4, **FAST)  # type: ignore[arg-type]
    assert other.to_json()["decisions"] != one.to_json()["decisions"]
    assert {d.phase for d in one.decisions} >= {"bid", "play"}


def test_the_analysis_survives_its_json() -> None:
    record = greedy_record("doubles", 1)
    analysis = analyse_match(record, "m", seats=[0], pars=True, par_nodes=300, **FAST)  # type: ignore[arg-type]
    text = json.dumps(analysis.to_json())
    assert MatchAnalysis.from_json(json.loads(text)) == analysis
    assert analysis.pars and all(len(p.par) == 2 == len(p.actual) for p in analysis.pars)
    assert [p.hand for p in analysis.pars] == sorted({p.hand for p in analysis.pars})


@pytest.mark.parametrize("seats", [[2], [-1], [0, 0], [], ["0"]])
def test_a_bad_seat_is_refused_naming_the_field(seats: list[object]) -> None:
    record = greedy_record("passing", 5, steps=5)
    with pytest.raises(ValueError, match="seats"):
        analyse_match(record, "m", seats=seats, **FAST)  # type: ignore[arg-type]


def test_a_record_that_does_not_replay_is_refused_naming_the_step() -> None:
    record = greedy_record("passing", 5, steps=6)
    steps = list(record.steps)
    steps[3] = steps[4]
    with pytest.raises(ValueError, match="record: step 3"):
        analyse_match(dataclasses.replace(record, steps=tuple(steps)), "m", **FAST)  # type: ignore[arg-type]


def brute_margin(state: GameState) -> int:
    """Side 0's margin in the rest of the deal under plain minimax on the immutable engine
    (no pruning, no simulator: a second implementation to check the par's search against)."""
    start = state.scores

    def value(s: GameState) -> int:
        if s.current_seat < 0:
            gains = [a - b for a, b in zip(s.scores, start, strict=True)]
            return gains[0] - gains[1]
        values = [value(s.apply(a)) for a in s.legal_actions()]
        return max(values) if s.game.side_of(s.current_seat) == 0 else min(values)

    return value(state)


@pytest.mark.parametrize(
    ("game", "seed", "back"), [("doubles", 4, 12), ("straight", 2, 12), ("doubles", 7, 12)]
)
def test_a_small_ending_has_an_exact_par_equal_to_plain_minimax(
    game: str, seed: int, back: int
) -> None:
    state: GameState = make_game(game).new_game(seed, first_seat=0)
    rng = random.Random(seed)
    history = [state]
    while state.current_seat != CHANCE and not state.is_terminal():
        legal = state.legal_actions()
        state = state.apply(legal[0] if len(legal) == 1 else greedy_policy(state, rng))
        history.append(state)
    start = history[-back]
    par, exact = hand_par(start, nodes=200_000)
    assert exact
    assert par[0] - par[1] == brute_margin(start)
    _, cut = hand_par(start, nodes=1)
    assert not cut

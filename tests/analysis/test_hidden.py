"""The analysis sees what the analysed seat saw and nothing more.

Two matches deal seat 0 the same hand while seat 1's hand and the boneyard differ; seat 0
opens both, so at step 0 its view is the same in both and so must be every value the analysis
gives its decision. A planted leak (a sampler that deals the true hidden tiles instead of
guessing them) breaks that equality: the check would catch an analysis that peeked.
"""

from __future__ import annotations

import dataclasses
import random

from domino_arena.bots.search.sampling import Hidden
from domino_arena.sdk.match.records import MatchRecord, record_from_state
from domino_arena.sdk.rules import GameState, Observation, make_game
from domino_arena.server.analysis import MatchAnalysis, WorldSampler, analyse_match

FAST = {"precision": 100.0, "max_samples": 32, "min_samples": 32}


def twin_seeds() -> tuple[int, int]:
    """Two seeds whose deals give seat 0 the same hand (and so differ only in what is hidden
    from it)."""
    seen: dict[tuple[object, ...], int] = {}
    for seed in range(100_000):
        hand = make_game("passing").new_game(seed, first_seat=0).hand(0)
        if hand in seen:
            return seen[hand], seed
        seen[hand] = seed
    raise AssertionError("no two seeds deal seat 0 the same hand")


def first_step_record(seed: int) -> MatchRecord:
    """The record of a match cut to its first step: seat 0's opening play of its first tile."""
    state: GameState = make_game("passing").new_game(seed, first_seat=0)
    final = state.apply(state.legal_actions()[0])
    while not final.is_terminal():
        final = final.apply(final.legal_actions()[-1])
    record = record_from_state(final, seats=["a", "b"], seed=seed, first_seat=0)
    return dataclasses.replace(record, steps=record.steps[:1])


class TrueDeal:
    """The planted leak: 'samples' the real hidden tiles of the match it was made for."""

    def __init__(self, truth: GameState) -> None:
        self.truth = truth

    def sample(self, rng: random.Random) -> Hidden:
        rng.random()
        t = self.truth
        hands = tuple(t.hand(s) for s in range(t.game.num_players))
        return Hidden(hands, tuple(t.boneyard))  # type: ignore[attr-defined]


def leaking(record: MatchRecord) -> object:
    truth = make_game("passing").new_game(record.seed, first_seat=record.first_seat)

    def factory(observation: Observation) -> WorldSampler:
        assert observation.history == ()
        return TrueDeal(truth)

    return factory


def step0_values(analysis: MatchAnalysis) -> list[tuple[str, float, float]]:
    (decision,) = analysis.decisions
    assert decision.step == 0
    return [(v.action, v.points, v.win) for v in decision.values]


def test_views_alike_give_values_alike_and_a_planted_leak_is_caught() -> None:
    a, b = twin_seeds()
    ra, rb = first_step_record(a), first_step_record(b)
    sa = make_game("passing").new_game(a, first_seat=0)
    sb = make_game("passing").new_game(b, first_seat=0)
    assert sa.observe(0) == sb.observe(0), "the twins must look alike to seat 0"
    assert sa.hand(1) != sb.hand(1)
    assert ra.steps == rb.steps

    honest_a = analyse_match(ra, "twin", seats=[0], **FAST)  # type: ignore[arg-type]
    honest_b = analyse_match(rb, "twin", seats=[0], **FAST)  # type: ignore[arg-type]
    assert step0_values(honest_a) == step0_values(honest_b)

    leak_a = analyse_match(ra, "twin", seats=[0], sampler=leaking(ra), **FAST)  # type: ignore[arg-type]
    leak_b = analyse_match(rb, "twin", seats=[0], sampler=leaking(rb), **FAST)  # type: ignore[arg-type]
    assert step0_values(leak_a) != step0_values(leak_b), "the check must catch a leak"

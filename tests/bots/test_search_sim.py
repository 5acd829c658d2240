"""The search bot on the push/pop simulator plays exactly as it did on the immutable engine.

Its playout policy on the simulator must choose what the greedy bot chooses from the mover's
observation (same action, same use of the random generator), on every position of many mixed
games of every configuration; and a search with a fixed sample budget must pick the same move
with ``engine="sim"`` as with ``engine="immutable"`` (the search before the simulator), so the
frozen baseline the referee hosts keeps its choices.
"""

from __future__ import annotations

import random

import pytest

from domino_arena.bots.greedy import strategy
from domino_arena.bots.search import SearchBot
from domino_arena.bots.search.playout import (
    greedy_policy,
    greedy_sim_policy,
    play_out,
    play_out_sim,
    side_value,
    sim_value,
)
from domino_arena.bots.search.sampling import determinizer
from domino_arena.bots.search.worlds import sim_of
from domino_arena.sdk.rules import Game, configurations
from domino_arena.sdk.rules.sim import simulate, snapshot_of
from tests.fakes.search_positions import IDS, positions

CONFIGS = list(configurations())


@pytest.mark.parametrize("game", CONFIGS, ids=IDS)
def test_greedy_on_the_simulator_chooses_what_the_greedy_bot_chooses(game: Game) -> None:
    choose = strategy(game.name)
    checked = 0
    for seed in range(12):
        for state in positions(game, seed, 200):
            sim = simulate(state)
            for k in range(3):
                on_sim, on_obs = random.Random(k), random.Random(k)
                action = greedy_sim_policy(sim, on_sim)
                assert action == choose(state.observe(state.current_seat), on_obs)
                assert on_sim.getstate() == on_obs.getstate()
            checked += 1
    assert checked > 100


@pytest.mark.parametrize("game", CONFIGS, ids=IDS)
def test_a_playout_on_the_simulator_is_the_playout_on_the_engine(game: Game) -> None:
    """Same steps, same end, same value; and popping it all comes back to the start."""
    for seed in range(4):
        for k, state in enumerate(positions(game, seed, 30)):
            sim = simulate(state)
            start = sim.snapshot()
            pushed = play_out_sim(sim, greedy_sim_policy, random.Random(k))
            end = play_out(state, greedy_policy, random.Random(k))
            assert sim.snapshot() == snapshot_of(end)
            side = game.side_of(state.current_seat)
            assert sim_value(sim, side, state.scores) == side_value(end, side, state.scores)
            for _ in range(pushed):
                sim.pop()
            assert sim.snapshot() == start


@pytest.mark.parametrize("game", CONFIGS, ids=IDS)
def test_a_sample_goes_into_the_simulator_as_from_position_builds_it(game: Game) -> None:
    """The search's shortcut (.worlds) and the checked engine path give the same position."""
    for seed in range(6):
        for state in positions(game, seed, 40):
            sampler = determinizer(state.observe(state.current_seat))
            hidden = sampler.sample(random.Random(seed))
            direct = sim_of(sampler.observation, hidden)
            assert direct.snapshot() == snapshot_of(sampler.build(hidden))
            assert direct.legal_actions() == state.legal_actions()


@pytest.mark.parametrize("game", CONFIGS, ids=IDS)
def test_search_chooses_the_same_on_either_engine(game: Game) -> None:
    compared = 0
    for seed in range(3):
        for k, state in enumerate(positions(game, seed, 12)):
            if k % 3:
                continue
            observation = state.observe(state.current_seat)
            new = SearchBot(seed + k, max_time=None, max_samples=4)
            old = SearchBot(seed + k, max_time=None, max_samples=4, engine="immutable")
            assert new.choose(observation) == old.choose(observation)
            assert new.samples_last_move == old.samples_last_move == 4
            compared += 1
    assert compared >= 3


def test_an_unknown_engine_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown engine 'mutable'"):
        SearchBot(1, engine="mutable")

"""The push/pop simulator against the immutable engine, step by step, over random games.

For every configuration the registry accepts, ``GAMES_PER_CONFIG`` seeded games of uniformly
random legal actions are played on the engine; at the start of every deal a simulator is built
from the engine's state (the simulator plays one deal; the next comes from the engine's seeded
shuffle) and then takes every action the engine takes. At every step:

- the legal actions are the same, in the same order; the seat to move, the scores and the
  mover's hand agree, and so do the phase (Moon) and the end of the deal and game;
- at one step in ``SNAPSHOT_EVERY`` and at the start and end of every deal, the whole position
  (every hand, the boneyard, the layout, bids, tricks, winner) agrees with the engine's;
- at one step in ``ROUND_TRIP_EVERY``, a random legal action is pushed and popped (a few plies
  deep) and the position must be exactly what it was;
- at the end of every deal, every action is popped back to the deal's start and the position is
  the one the deal started from; one deal in ``REPLAY_EVERY`` is then replayed with
  :meth:`Sim.push_checked` to the same end.

Cost: about 95 s of CPU for the 12,000 games (measured with the load of 12 others), half of it
Moon's (a random Moon game runs for over a hundred deals); the chunks of ``CHUNK`` games are
marked slow and spread over the workers.

Every check reads the engine through its own fields (:func:`snapshot_of`), not through a
simulator, so the two implementations are compared. The hypothesis test does all checks at
every step for arbitrary seeds.
"""

from __future__ import annotations

import doctest
import random
from typing import Final

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domino_arena.sdk.rules import (
    CHANCE,
    DEAL,
    DRAW,
    Action,
    Game,
    GameOverError,
    IllegalActionError,
    MoonState,
    Play,
    Tile,
    configurations,
    make_game,
)
from domino_arena.sdk.rules import sim as sim_package
from domino_arena.sdk.rules.sim import MoonSim, Sim, simulate, snapshot_of
from domino_arena.sdk.rules.state import GameState

GAMES_PER_CONFIG: Final = 1000
CHUNK: Final = 250
SNAPSHOT_EVERY: Final = 8
ROUND_TRIP_EVERY: Final = 8
REPLAY_EVERY: Final = 4
STEP_CAP: Final = 50_000
"""A random Moon game can run for hundreds of deals; none in these seeds reaches this."""

CONFIGS: Final = list(configurations())


def label(game: Game) -> str:
    options = game.options()
    name = game.name
    if "players" not in options:
        return name
    return f"{name}:{options['players']}{'p' if options.get('partnerships') else ''}"


def round_trip(sim: Sim, rng: random.Random, depth: int) -> None:
    """Push up to ``depth`` random actions, pop them all; the position must be unchanged."""
    before = sim.snapshot()
    legal_before = sim.legal_actions()
    pushed: list[Action] = []
    for _ in range(depth):
        legal = sim.legal_actions()
        if not legal:
            break
        action = rng.choice(legal)
        sim.push(action)
        pushed.append(action)
    while pushed:
        assert sim.pop() == pushed.pop()
    assert sim.snapshot() == before
    assert sim.legal_actions() == legal_before


def play_deal(state: GameState, rng: random.Random, *, every_step: bool) -> tuple[GameState, int]:
    """Play the deal of ``state`` at random on the engine and a simulator; check each step."""
    sim = simulate(state)
    start = snapshot_of(state)
    assert sim.snapshot() == start
    moon = isinstance(state, MoonState)
    actions: list[Action] = []
    while state.current_seat >= 0:
        legal = state.legal_actions()
        assert sim.legal_actions() == legal
        seat = state.current_seat
        assert sim.current_seat == seat
        assert sim.scores == state.scores
        assert tuple(sim.hands[seat]) == state.hand(seat)
        if moon:
            assert isinstance(sim, MoonSim) and isinstance(state, MoonState)
            assert sim.phase is state.phase
        step = len(actions)
        if every_step or step % SNAPSHOT_EVERY == 0:
            assert sim.snapshot() == snapshot_of(state)
        if every_step or step % ROUND_TRIP_EVERY == 3:
            round_trip(sim, rng, rng.randint(1, 3))
        action = rng.choice(legal)
        sim.push(action)
        actions.append(action)
        state = state.apply(action)
    assert sim.snapshot() == snapshot_of(state)
    assert sim.legal_actions() == ()
    assert sim.is_terminal() == state.is_terminal()
    assert sim.is_chance() == (state.current_seat == CHANCE)
    end = sim.snapshot()
    for action in reversed(actions):
        assert sim.pop() == action
    assert sim.snapshot() == start
    assert sim.ply == 0
    if every_step or state.deal_index % REPLAY_EVERY == 0:
        for action in actions:
            sim.push_checked(action)
        assert sim.snapshot() == end
    return state, len(actions)


def play_game(seed: int, game_index: int, *, every_step: bool = False) -> None:
    game = CONFIGS[game_index]
    rng = random.Random(f"sim/{label(game)}/{seed}")
    state = game.new_game(seed=seed)
    steps = 0
    while not state.is_terminal():
        if state.current_seat == CHANCE:
            state = state.apply(DEAL)
            continue
        state, taken = play_deal(state, rng, every_step=every_step)
        steps += taken
        assert steps <= STEP_CAP, f"seed {seed}: no end after {STEP_CAP} steps"


CHUNKS: Final = [
    pytest.param(index, start, id=f"{label(game)}-{start // CHUNK}")
    for index, game in enumerate(CONFIGS)
    for start in range(0, GAMES_PER_CONFIG, CHUNK)
]


@pytest.mark.slow
@pytest.mark.parametrize(("game_index", "start"), CHUNKS)
def test_sim_agrees_with_the_engine(game_index: int, start: int) -> None:
    for seed in range(start, start + CHUNK):
        play_game(seed, game_index)


@pytest.mark.parametrize("game_index", range(len(CONFIGS)), ids=[label(g) for g in CONFIGS])
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**63))
def test_sim_agrees_at_every_step_for_any_seed(game_index: int, seed: int) -> None:
    play_game(seed, game_index, every_step=True)


def test_configurations_are_all_simulated() -> None:
    """Every registered game has a simulator (a new game would fail here first)."""
    assert {g.name for g in CONFIGS} == {"passing", "straight", "doubles", "moon"}
    for game in CONFIGS:
        assert simulate(game.new_game(seed=1)).legal_actions()


def test_push_checked_refuses_an_illegal_action_and_the_end_of_the_deal() -> None:
    state = make_game("straight", players=2).new_game(seed=5)
    sim = simulate(state)
    held = set(state.hand(state.current_seat))
    foreign = next(t for t in state.hand(1 - state.current_seat) if t not in held)
    with pytest.raises(IllegalActionError, match="illegal action"):
        sim.push_checked(Play(foreign))
    with pytest.raises(IllegalActionError):
        sim.push_checked(DRAW)
    assert sim.ply == 0
    while not sim.is_deal_over():
        sim.push_checked(sim.legal_actions()[0])
    with pytest.raises(GameOverError, match="over"):
        sim.push_checked(DEAL)


def test_the_examples_in_the_docstrings_run() -> None:
    assert doctest.testmod(sim_package).failed == 0


def test_pop_with_nothing_pushed_raises() -> None:
    sim = simulate(make_game("moon").new_game(seed=2))
    with pytest.raises(IndexError):
        sim.pop()


def test_a_snapshot_tells_positions_apart() -> None:
    """The comparison is not vacuous: one action changes the snapshot, and the engine's."""
    state = make_game("doubles", players=3).new_game(seed=4)
    sim = simulate(state)
    sim.push(sim.legal_actions()[0])
    assert sim.snapshot() != snapshot_of(state)
    assert sim.snapshot() == snapshot_of(state.apply(state.legal_actions()[0]))
    assert isinstance(sim.hand(0)[0], Tile)

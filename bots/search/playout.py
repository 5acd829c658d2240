"""Playouts: finish a deal from a full position with a fast default policy, and score it.

A playout runs on a determinized position (every hand known), so the default policy may look at
it; the greedy one still plays each seat only from what that seat may see, as the house greedy
bot would. Playouts run on the push/pop simulator (:mod:`domino_arena.sdk.rules.sim`): the
search pushes an action, plays the deal out, scores it and pops back to the sampled position.
The same policies on the immutable engine (``play_out``, ``POLICIES``) are the search's
previous engine, kept for ``SearchBot(engine="immutable")``, which the strength bench
(``bench/search_strength.py``) plays against.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Final

from domino_arena.bots.greedy import Strategy, strategy
from domino_arena.bots.greedy import doubles as greedy_doubles
from domino_arena.bots.greedy import moon as greedy_moon
from domino_arena.bots.greedy import passing as greedy_passing
from domino_arena.bots.greedy import straight as greedy_straight
from domino_arena.sdk.rules import TERMINAL, Action, GameState
from domino_arena.sdk.rules.sim import DoublesSim, MoonSim, PassingSim, Sim, StraightSim

Policy = Callable[[GameState, random.Random], Action]
"""``policy(state, rng)``: one of ``state.legal_actions()`` for the seat to move."""

MAX_STEPS: Final = 1000
"""Steps a playout may take before it is scored as it stands (a deal is far shorter)."""

WIN_BONUS: Final = 1.0
"""Value of winning (or, negated, losing) the game in a playout, in units of the target."""


_STRATEGIES: dict[str, Strategy] = {}


def greedy_policy(state: GameState, rng: random.Random) -> Action:
    """Play the seat to move as the house greedy bot would, from its observation."""
    name = state.game.name
    choose = _STRATEGIES.get(name)
    if choose is None:
        choose = _STRATEGIES[name] = strategy(name)
    return choose(state.observe(state.current_seat), rng)


def random_policy(state: GameState, rng: random.Random) -> Action:
    """A uniformly random legal action."""
    return rng.choice(state.legal_actions())


POLICIES: Final[dict[str, Policy]] = {"greedy": greedy_policy, "random": random_policy}
"""Default policies by name."""


def play_out(state: GameState, policy: Policy, rng: random.Random) -> GameState:
    """Play ``state`` to the end of its deal (the next ``deal`` step, or the game's end)."""
    for _ in range(MAX_STEPS):
        if state.current_seat < 0:
            break
        legal = state.legal_actions()
        action = legal[0] if len(legal) == 1 else policy(state, rng)
        state = state.apply(action)
    return state


def side_value(state: GameState, side: int, before: Sequence[int]) -> float:
    """Score ``state`` for ``side``: its points since ``before`` minus the best other side's.

    A game won or lost in the playout adds or takes away ``WIN_BONUS`` times the target, so the
    search plays for the game, not only for points, when the end is near.
    """
    scores = state.scores
    gains = [now - then for now, then in zip(scores, before, strict=True)]
    own = gains[side]
    best_other = max(g for s, g in enumerate(gains) if s != side)
    value = float(own - best_other)
    outcome = state.outcome() if state.is_terminal() else None
    if outcome is not None:
        bonus = WIN_BONUS * state.game.target
        value += bonus if outcome.winner == side else -bonus
    return value


# -- on the simulator -------------------------------------------------------------------------

SimPolicy = Callable[[Sim, random.Random], Action]
"""``policy(sim, rng)``: one of ``sim.legal_actions()`` for the seat to move."""


def _greedy_passing(sim: Sim, rng: random.Random) -> Action:
    assert isinstance(sim, PassingSim)
    return greedy_passing.choose_from(sim.legal_actions(), sim.hands[sim.seat], sim.ends, rng)


def _greedy_straight(sim: Sim, rng: random.Random) -> Action:
    assert isinstance(sim, StraightSim)
    return greedy_straight.choose_from(sim.legal_actions(), sim.count_after, rng)


def _greedy_doubles(sim: Sim, rng: random.Random) -> Action:
    assert isinstance(sim, DoublesSim)
    return greedy_doubles.choose_from(
        sim.legal_actions(),
        sim.hands[sim.seat],
        rng,
        placed=sim.placed,
        ends=sim.ends,
        unlocked=sim.unlocked,
    )


def _greedy_moon(sim: Sim, rng: random.Random) -> Action:
    assert isinstance(sim, MoonSim)
    return greedy_moon.choose_from(
        sim.legal_actions(),
        sim.hands[sim.seat],
        rng,
        phase=sim.phase,
        seat=sim.seat,
        trump=sim.trump,
        trick=sim.trick,
        played=sim.played,
    )


_GREEDY_ON_SIM: Final[dict[type[Sim], SimPolicy]] = {
    PassingSim: _greedy_passing,
    StraightSim: _greedy_straight,
    DoublesSim: _greedy_doubles,
    MoonSim: _greedy_moon,
}


def greedy_sim_policy(sim: Sim, rng: random.Random) -> Action:
    """Play the seat to move as the house greedy bot would, from the parts of the position
    that seat may see: the same rule as :func:`greedy_policy`, and the same choice for the
    same ``rng`` (``tests/bots/test_search_sim.py`` checks this on many positions)."""
    return _GREEDY_ON_SIM[type(sim)](sim, rng)


def random_sim_policy(sim: Sim, rng: random.Random) -> Action:
    """A uniformly random legal action."""
    return rng.choice(sim.legal_actions())


SIM_POLICIES: Final[dict[str, SimPolicy]] = {
    "greedy": greedy_sim_policy,
    "random": random_sim_policy,
}
"""The policies of :data:`POLICIES`, on the simulator, by the same names."""


def play_out_sim(sim: Sim, policy: SimPolicy, rng: random.Random) -> int:
    """Push actions on ``sim`` to the end of its deal; return how many (to pop them back)."""
    pushed = 0
    while pushed < MAX_STEPS and sim.seat >= 0:
        legal = sim.legal_actions()
        sim.push(legal[0] if len(legal) == 1 else policy(sim, rng))
        pushed += 1
    return pushed


def sim_value(sim: Sim, side: int, before: Sequence[int]) -> float:
    """:func:`side_value` of the simulator's position."""
    scores = sim.scores
    gains = [now - then for now, then in zip(scores, before, strict=True)]
    own = gains[side]
    best_other = max(g for s, g in enumerate(gains) if s != side)
    value = float(own - best_other)
    if sim.seat == TERMINAL and sim.winner is not None:
        bonus = WIN_BONUS * sim.game.target
        value += bonus if sim.winner == side else -bonus
    return value

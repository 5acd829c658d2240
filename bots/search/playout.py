"""Playouts: finish a deal from a full position with a fast default policy, and score it.

A playout runs on a determinized state (every hand known), so the default policy may look at
the state; the greedy one still plays each seat from that seat's own observation, as the house
greedy bot would.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Final

from domino_arena.bots.greedy import Strategy, strategy
from domino_arena.sdk.rules import Action, GameState

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

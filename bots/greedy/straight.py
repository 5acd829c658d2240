"""A one-ply greedy player for Straight Dominoes.

It plays the tile that scores the most points at once (docs/rules.md 3.7), and among those the
heaviest, since pips left in hand feed the opponents' score at the end of the hand (3.9). It
looks no further ahead; it is the house baseline a real bot should beat.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from domino_arena.sdk.rules.actions import Action, Play
from domino_arena.sdk.rules.straight import StraightObservation
from domino_arena.sdk.rules.tiles import Tile


def choose(observation: StraightObservation, rng: random.Random) -> Action:
    """Return the legal action that scores most now, then sheds most pips; ties by ``rng``."""
    layout = observation.layout
    return choose_from(
        observation.legal_actions, lambda tile, end: layout.place(tile, end).count, rng
    )


def choose_from(
    legal: Sequence[Action], count_after: Callable[[Tile, str | None], int], rng: random.Random
) -> Action:
    """:func:`choose` from the legal actions and the count (docs/rules.md 3.5) each play would
    leave, so search can play the same rule on its simulator."""
    best: list[Action] = []
    best_key = (-1, -1)
    for action in legal:
        if not isinstance(action, Play):
            continue
        count = count_after(action.tile, action.end)
        key = (count if count % 5 == 0 else 0, action.tile.pips)
        if key > best_key:
            best, best_key = [action], key
        elif key == best_key:
            best.append(action)
    if not best:
        return legal[0]  # a lone draw or pass (docs/rules.md 3.6)
    return best[0] if len(best) == 1 else rng.choice(best)

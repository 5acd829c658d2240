"""Greedy one-ply bot for the Passing Game (docs/rules.md section 2).

The hand's loser pays with the pips left in hand (2.7), so the bot sheds the heaviest tile it can.
Among equally heavy plays it keeps its next turn open: it prefers the end that leaves numbers its
remaining tiles can match. It never passes while it can play, and draws only when it cannot play
(a draw ends the turn, P1, but a larger hand may let it play later); otherwise it passes.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from domino_arena.sdk.rules.actions import DRAW, PASS, Action, Play
from domino_arena.sdk.rules.passing import PassingObservation
from domino_arena.sdk.rules.tiles import Tile


def choose(observation: PassingObservation, rng: random.Random) -> Action:
    """Return a legal action for the seat to move: the best play, else draw, else pass.

    Ties between equally good plays are broken with ``rng``, so a seeded generator replays the
    same choices.
    """
    return choose_from(observation.legal_actions, observation.hand, observation.ends, rng)


def choose_from(
    legal: Sequence[Action],
    hand: Sequence[Tile],
    ends: tuple[int, int] | None,
    rng: random.Random,
) -> Action:
    """:func:`choose` from the parts of a position it reads: the mover's legal actions and
    hand and the numbers showing at W and E (None before the opening), so search can play
    the same rule on its simulator."""
    plays = [a for a in legal if isinstance(a, Play)]
    if plays:
        keyed = [(_value(hand, ends, play), play) for play in plays]
        best = max(key for key, _ in keyed)
        return rng.choice([play for key, play in keyed if key == best])
    if DRAW in legal:
        return DRAW
    if PASS in legal:
        return PASS
    # Only the referee's `deal` step is left; a bot is never asked to take it, but stay legal.
    return rng.choice(legal)


def _value(hand: Sequence[Tile], ends: tuple[int, int] | None, play: Play) -> tuple[int, int]:
    """Rank a play by the pips it sheds, then by how many kept tiles fit the new ends."""
    west, east = _ends_after(ends, play)
    fitting = sum(1 for t in hand if t is not play.tile and (t.has(west) or t.has(east)))
    return play.tile.pips, fitting


def _ends_after(ends: tuple[int, int] | None, play: Play) -> tuple[int, int]:
    tile: Tile = play.tile
    if ends is None:
        return tile.low, tile.high
    west, east = ends
    if play.end == "W":
        return tile.other(west), east
    return west, tile.other(east)

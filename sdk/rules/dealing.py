"""Seeded chance: the shuffle of every deal and the first starter (docs/rules.md 0.3).

Everything random in a game is drawn here from the game's seed, so (game, seed, actions)
replays a match exactly. Each deal gets its own generator, keyed by the deal's index, so a
position built mid-game can deal its next hand without replaying the earlier ones.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from .tiles import TILE_KEY, Tile


def shuffled(tiles: Sequence[Tile], seed: int, deal_index: int) -> list[Tile]:
    """Return the shuffle S of ``tiles`` for deal number ``deal_index`` (0 = first deal)."""
    order = list(tiles)
    random.Random(f"domino-arena/deal/{seed}/{deal_index}").shuffle(order)
    return order


def deal_round_robin(
    order: Sequence[Tile], players: int, hand_size: int
) -> tuple[tuple[tuple[Tile, ...], ...], tuple[Tile, ...]]:
    """Deal one tile at a time from seat 0 until every hand is full; the rest is the stock.

    Returns:
        The hands (each sorted) and the remaining tiles in order (the boneyard, or Moon's widow).
    """
    dealt = players * hand_size
    hands = tuple(tuple(sorted(order[seat:dealt:players], key=TILE_KEY)) for seat in range(players))
    return hands, tuple(order[dealt:])


def first_seat(seed: int, players: int) -> int:
    """Return the random first starter (first bidder in Moon) of a game with this seed."""
    return random.Random(f"domino-arena/first-seat/{seed}").randrange(players)

"""Doubles move counting written straight from docs/rules.md §4, independent of the engine.

It shares only the tiles with the engine. The layout is a plain list of open-end numbers and a
set of unlocked numbers; every rule is checked the obvious way, and every child state is a deep
copy. Slow on purpose: it exists to cross-check ``sdk/rules/doubles.py`` through perft.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field
from typing import Any

from domino_arena.sdk.rules.tiles import DOUBLE_SIX, Tile

HAND_SIZES = {2: 8, 3: 6, 4: 6}
TARGET = 100
BETWEEN_HANDS = "deal"
OVER = "over"


@dataclass
class Position:
    players: int
    hands: list[list[Tile]]
    boneyard: list[Tile]
    ends: list[int]
    unlocked: set[int]
    laid: int
    seat: int | str
    drawn: Tile | None
    scores: list[int]
    seed: int
    deal_index: int
    history: list[str] = field(default_factory=list)


def _tile(text: str | Tile) -> Tile:
    return text if isinstance(text, Tile) else Tile.parse(text)


def _fits(pos: Position, tile: Tile, number: int) -> bool:
    """docs/rules.md 4.5: the tile holds the number, and the number is unlocked or this is its
    double."""
    if number not in pos.ends:
        return False
    if tile.high != number and tile.low != number:
        return False
    return number in pos.unlocked or (tile.high == number and tile.low == number)


def _plays(pos: Position, tiles: list[Tile]) -> list[tuple[str, Tile, int]]:
    moves = []
    for tile in tiles:
        for number in sorted(set(pos.ends)):
            if _fits(pos, tile, number):
                moves.append(("play", tile, number))
    return moves


def _anyone_can_play(pos: Position) -> bool:
    return any(_plays(pos, hand) for hand in pos.hands)


def _moves(pos: Position) -> list[Any]:
    if pos.seat == OVER:
        return []
    if pos.seat == BETWEEN_HANDS:
        return [("deal",)]
    assert isinstance(pos.seat, int)
    hand = pos.hands[pos.seat]
    if pos.laid == 0:
        doubles = [t for t in hand if t.high == t.low]
        best = max(doubles, key=lambda t: t.high)
        return [("open", best)]
    if pos.drawn is not None:
        return _plays(pos, [pos.drawn])
    plays = _plays(pos, hand)
    if plays:
        return plays
    if len(pos.boneyard) >= 3:
        return [("draw",)]
    return [("pass",)]


def _pips(hand: list[Tile]) -> int:
    return sum(t.high + t.low for t in hand)


def _score(pos: Position, winner: int | None) -> None:
    if winner is not None:
        points = sum(_pips(h) for i, h in enumerate(pos.hands) if i != winner)
        pos.scores[winner] += points
        if pos.scores[winner] >= TARGET:
            pos.seat = OVER
            return
    pos.seat = BETWEEN_HANDS


def _end_of_hand(pos: Position, mover: int) -> bool:
    """docs/rules.md 4.7 and 0.7: domino first, then blocked; score it. True if the hand ended."""
    if not pos.hands[mover]:
        _score(pos, mover)
        return True
    if len(pos.boneyard) <= 2 and not _anyone_can_play(pos):
        totals = [_pips(h) for h in pos.hands]
        low = min(totals)
        lowest = [i for i, t in enumerate(totals) if t == low]
        _score(pos, lowest[0] if len(lowest) == 1 else None)
        return True
    return False


def _deal(pos: Position) -> None:
    """docs/rules.md 0.3: shuffle by the seed and the deal's index, deal one at a time from seat
    0."""
    pos.deal_index += 1
    order = list(DOUBLE_SIX)
    random.Random(f"domino-arena/deal/{pos.seed}/{pos.deal_index}").shuffle(order)
    size = HAND_SIZES[pos.players]
    pos.hands = [[] for _ in range(pos.players)]
    for k in range(size * pos.players):
        pos.hands[k % pos.players].append(order[k])
    pos.boneyard = order[size * pos.players :]
    pos.ends, pos.unlocked, pos.laid, pos.drawn = [], set(), 0, None
    pos.seat = BETWEEN_HANDS
    for number in range(6, -1, -1):
        holders = [s for s, h in enumerate(pos.hands) if Tile(number, number) in h]
        if holders:
            pos.seat = holders[0]
            return
    # No double anywhere: a void deal, and the next step is another deal (docs/rules.md 4.3).


def _apply(pos: Position, move: Any) -> Position:
    after = copy.deepcopy(pos)
    after.history.append(str(move))
    kind = move[0]
    if kind == "deal":
        _deal(after)
        return after
    seat = after.seat
    assert isinstance(seat, int)
    if kind == "open":
        tile = move[1]
        after.hands[seat].remove(tile)
        after.ends = [tile.high] * 4
        after.unlocked = {tile.high}
        after.laid = 1
    elif kind == "play":
        _, tile, number = move
        after.hands[seat].remove(tile)
        after.ends.remove(number)
        if tile.high == tile.low:
            after.ends += [number, number, number]
            after.unlocked.add(number)
        else:
            after.ends.append(tile.low if tile.high == number else tile.high)
        after.laid += 1
        after.drawn = None
    elif kind == "draw":
        tile = after.boneyard.pop(0)
        after.hands[seat].append(tile)
        if _plays(after, [tile]):
            after.drawn = tile
            return after
    if _end_of_hand(after, seat):
        return after
    after.seat = (seat + 1) % after.players
    return after


def _position(options: dict[str, Any], position: dict[str, Any]) -> Position:
    players = int(options.get("players", 2))
    pos = Position(
        players=players,
        hands=[[_tile(t) for t in h] for h in position["hands"]],
        boneyard=[_tile(t) for t in position["boneyard"]],
        ends=[],
        unlocked=set(),
        laid=0,
        seat=0,
        drawn=None,
        scores=list(position.get("scores") or [0] * players),
        seed=int(position.get("seed", 0)),
        deal_index=int(position.get("deal", 1)) - 1,
    )
    if "placed" in position:
        for i, text in enumerate(position["placed"]):
            words = text.split()
            tile = _tile(words[0])
            if i == 0:
                pos.ends, pos.unlocked = [tile.high] * 4, {tile.high}
            else:
                number = int(words[1])
                assert _fits(pos, tile, number), text
                pos.ends.remove(number)
                if tile.high == tile.low:
                    pos.ends += [number] * 3
                    pos.unlocked.add(number)
                else:
                    pos.ends.append(tile.low if tile.high == number else tile.high)
            pos.laid += 1
    elif position.get("laid"):
        laid = [_tile(t) for t in position["laid"]]
        pos.laid = len(laid)
        pos.ends = list(position["ends"])
        pos.unlocked = {t.high for t in laid if t.high == t.low}
    if position.get("seat") is not None:
        pos.seat = int(position["seat"])
    elif pos.laid == 0:
        for number in range(6, -1, -1):
            holders = [s for s, h in enumerate(pos.hands) if Tile(number, number) in h]
            if holders:
                pos.seat = holders[0]
                break
    if position.get("drawn") is not None:
        pos.drawn = _tile(position["drawn"])
    return pos


def _count(pos: Position, depth: int) -> int:
    if depth == 0:
        return 1
    return sum(_count(_apply(pos, m), depth - 1) for m in _moves(pos))


def perft(options: dict[str, Any], position: dict[str, Any], depth: int) -> int:
    """Count the action sequences of length ``depth`` from the position (engine field names)."""
    return _count(_position(options, position), depth)

"""Brute-force move counting for the Passing Game, written from docs/rules.md section 2 alone.

It shares nothing with the engine but the tiles, so agreeing perft counts cross-check the
engine's move generation, its end-of-hand checks (2.6, X4), its scoring (2.7), the target (2.8)
and the ``deal`` step between hands (X6). It is deliberately plain and slow: a state is a dict of
lists, copied whole at every step.

The shuffle of the next deal is the one fact docs/rules.md leaves to the implementation (0.3 says
only that the seed fixes it); it is re-derived here from the documented convention "one generator
per deal, keyed by the seed and the deal's 0-based index".
"""

from __future__ import annotations

import copy
import random
from typing import Any

from domino_arena.sdk.rules.tiles import DOUBLE_SIX, Tile

HAND_SIZE = {2: 7, 3: 7, 4: 6}
"""docs/rules.md 2.2: tiles dealt to each player."""

NEVER_DRAWN = 2
"""docs/rules.md 2.2: the last two tiles of the boneyard can never be drawn."""


def perft(options: dict[str, Any], position: dict[str, Any], depth: int) -> int:
    """Return the number of action sequences of length ``depth`` from ``position``."""
    return _count(_start(options, position), depth)


def _start(options: dict[str, Any], position: dict[str, Any]) -> dict[str, Any]:
    players = int(options.get("players", 2))
    teams = bool(options.get("partnerships", False))
    rule = options.get("target_rule", "gamerules")
    if rule == "pagat":
        target = 101 if players == 2 or teams else 61
    else:
        target = 101 if players in (2, 3) else 61
    line = [_ints(text) for text in position.get("line", [])]
    seat = int(position.get("seat", 0))
    starter = position.get("opener")
    return {
        "players": players,
        "sides": [[0, 2], [1, 3]] if teams else [[s] for s in range(players)],
        "target": target,
        "seed": int(position.get("seed", 0)),
        "deal": int(position.get("deal", 1)),
        "starter": seat if starter is None else int(starter),
        "to_move": seat,
        "hands": [[Tile.parse(t) for t in hand] for hand in position["hands"]],
        "boneyard": [Tile.parse(t) for t in position["boneyard"]],
        "west": line[0][0] if line else None,
        "east": line[-1][1] if line else None,
        "passes": int(position.get("passes", 0)),
        "scores": list(position.get("scores") or [0] * (2 if teams else players)),
        "over": False,
    }


def _ints(text: str) -> tuple[int, int]:
    """A laid tile ``"4-6"``: west number 4, east number 6."""
    left, right = text.split("-")
    return int(left), int(right)


def _moves(s: dict[str, Any]) -> list[tuple[str, Tile | None, str | None]]:
    """Every legal action as (kind, tile, end); docs/rules.md 2.5, X1, X6."""
    if s["over"]:
        return []
    if s["to_move"] == "deal":
        return [("deal", None, None)]
    hand = s["hands"][s["to_move"]]
    if s["west"] is None:
        return [("play", t, None) for t in hand]
    moves: list[tuple[str, Tile | None, str | None]] = [("pass", None, None)]
    for t in hand:
        if s["west"] in (t.high, t.low):
            moves.append(("play", t, "W"))
        if s["east"] in (t.high, t.low):
            moves.append(("play", t, "E"))
    if len(s["boneyard"]) > NEVER_DRAWN:
        moves.append(("draw", None, None))
    return moves


def _count(s: dict[str, Any], depth: int) -> int:
    if depth == 0:
        return 1
    total = 0
    for move in _moves(s):
        total += _count(_after(s, move), depth - 1) if depth > 1 else 1
    return total


def _after(s: dict[str, Any], move: tuple[str, Tile | None, str | None]) -> dict[str, Any]:
    s = copy.deepcopy(s)
    kind, tile, end = move
    if kind == "deal":
        _deal(s)
        return s
    me = s["to_move"]
    if kind == "play":
        assert tile is not None
        s["hands"][me].remove(tile)
        if s["west"] is None:
            s["west"], s["east"] = tile.low, tile.high
        elif end == "W":
            s["west"] = tile.high if tile.low == s["west"] else tile.low
        else:
            s["east"] = tile.high if tile.low == s["east"] else tile.low
        s["passes"] = 0
    elif kind == "draw":
        s["hands"][me].append(s["boneyard"].pop(0))
        s["passes"] = 0
    else:
        s["passes"] += 1
    # docs/rules.md 0.7: the hand ends by domino, dead position or pass-out after any action. The
    # three score alike (X4), so which one is reported does not matter here.
    dead = len(s["boneyard"]) <= NEVER_DRAWN and not any(
        s["west"] in (t.high, t.low) or s["east"] in (t.high, t.low)
        for hand in s["hands"]
        for t in hand
    )
    if not s["hands"][me] or dead or s["passes"] == s["players"]:
        _score(s)
    else:
        s["to_move"] = (me + 1) % s["players"]
    return s


def _score(s: dict[str, Any]) -> None:
    """docs/rules.md 2.7 and 2.8: the unique lowest side scores others minus own; target ends it."""
    seat_pips = [sum(t.high + t.low for t in hand) for hand in s["hands"]]
    side_pips = [sum(seat_pips[seat] for seat in side) for side in s["sides"]]
    low = min(side_pips)
    if side_pips.count(low) == 1:
        winner = side_pips.index(low)
        s["scores"][winner] += sum(side_pips) - low - low
        if s["scores"][winner] >= s["target"]:
            s["over"] = True
            return
    s["to_move"] = "deal"


def _deal(s: dict[str, Any]) -> None:
    """docs/rules.md 0.3, 2.2 and 2.3: shuffle, deal round robin from seat 0, rotate the starter."""
    order = list(DOUBLE_SIX)
    random.Random(f"domino-arena/deal/{s['seed']}/{s['deal']}").shuffle(order)
    n = s["players"]
    size = HAND_SIZE[n]
    s["hands"] = [[order[i] for i in range(seat, n * size, n)] for seat in range(n)]
    s["boneyard"] = order[n * size :]
    s["deal"] += 1
    s["starter"] = (s["starter"] + 1) % n
    s["to_move"] = s["starter"]
    s["west"] = s["east"] = None
    s["passes"] = 0

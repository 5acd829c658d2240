"""Brute-force move counting for Straight Dominoes, written from docs/rules.md section 3 alone.

It shares nothing with the engine but the tiles, so agreeing perft counts cross-check the
engine's move generation (3.4, 3.6), its count and in-play scoring (3.5, 3.7), its end-of-hand
checks (3.8, 0.7, X4), its hand scoring (3.9), the target reached mid-hand (3.10, X3) and the
``deal`` step between hands (X6). It is deliberately plain and slow: a state is a dict of lists,
copied whole at every step.

The layout is kept differently from the engine: each open end remembers only the number it shows,
whether its last tile is a crosswise double and how many tiles its arm holds, which is all that
3.4 and 3.5 need.

The shuffle of the next deal is the one fact docs/rules.md leaves to the implementation (0.3 says
only that the seed fixes it); it is re-derived here from the documented convention "one generator
per deal, keyed by the seed and the deal's 0-based index".
"""

from __future__ import annotations

import copy
import random
from typing import Any

from domino_arena.sdk.rules.tiles import DOUBLE_SIX, Tile

HAND_SIZE = 7
"""docs/rules.md 3.2: seven tiles each for 2, 3 or 4 players."""

TARGET = 250
"""docs/rules.md 3.10."""

Move = tuple[str, Tile | None, str | None]


def perft(options: dict[str, Any], position: dict[str, Any], depth: int) -> int:
    """Return the number of action sequences of length ``depth`` from ``position``."""
    return _count(_start(options, position), depth)


def _start(options: dict[str, Any], position: dict[str, Any]) -> dict[str, Any]:
    players = int(options.get("players", 2))
    teams = bool(options.get("partnerships", False))
    seat = int(position.get("seat", 0))
    starter = position.get("opener")
    s: dict[str, Any] = {
        "players": players,
        "sides": [[0, 2], [1, 3]] if teams else [[p] for p in range(players)],
        "seed": int(position.get("seed", 0)),
        "deal": int(position.get("deal", 1)),
        "starter": seat if starter is None else int(starter),
        "to_move": seat,
        "hands": [[Tile.parse(t) for t in hand] for hand in position["hands"]],
        "boneyard": [Tile.parse(t) for t in position.get("boneyard", [])],
        "scores": list(position.get("scores") or [0] * (2 if teams else players)),
        "over": False,
    }
    _clear_layout(s)
    spinner = position.get("spinner")
    if spinner is None:
        line = [_ints(text) for text in position.get("line", [])]
        if line:
            s["started"] = True
            s["ends"]["W"] = {"show": line[0][0], "double": False, "tiles": len(line)}
            s["ends"]["E"] = {"show": line[-1][1], "double": False, "tiles": len(line)}
        return s
    n = int(spinner) if not isinstance(spinner, str) else Tile.parse(spinner).high
    s["started"] = True
    s["spinner"] = n
    arms = position.get("arms") or {}
    for name in "WENS":
        laid = [_ints(text) for text in arms.get(name, [])]
        if laid:
            inner, outer = laid[-1]
            s["ends"][name] = {"show": outer, "double": inner == outer, "tiles": len(laid)}
        else:
            s["ends"][name] = {"show": n, "double": False, "tiles": 0}
    return s


def _clear_layout(s: dict[str, Any]) -> None:
    s["started"] = False
    s["spinner"] = None
    s["ends"] = {}


def _ints(text: str) -> tuple[int, int]:
    left, right = text.split("-")
    return int(left), int(right)


def _open_ends(s: dict[str, Any]) -> list[str]:
    """docs/rules.md 3.4: W and E; N and S too once the spinner's W and E arms hold a tile."""
    if not s["started"]:
        return []
    if s["spinner"] is None:
        return ["W", "E"]
    ends = s["ends"]
    if ends["W"]["tiles"] > 0 and ends["E"]["tiles"] > 0:
        return ["W", "E", "N", "S"]
    return ["W", "E"]


def _fits(s: dict[str, Any], tile: Tile) -> list[str]:
    return [e for e in _open_ends(s) if s["ends"][e]["show"] in (tile.high, tile.low)]


def _moves(s: dict[str, Any]) -> list[Move]:
    """Every legal action as (kind, tile, end); docs/rules.md 3.3, 3.6, X1, X6."""
    if s["over"]:
        return []
    if s["to_move"] == "deal":
        return [("deal", None, None)]
    hand = s["hands"][s["to_move"]]
    if not s["started"]:
        return [("play", t, None) for t in hand]
    plays: list[Move] = [("play", t, e) for t in hand for e in _fits(s, t)]
    if plays:
        return plays
    if s["boneyard"]:
        return [("draw", None, None)]
    return [("pass", None, None)]


def _count(s: dict[str, Any], depth: int) -> int:
    if depth == 0:
        return 1
    total = 0
    for move in _moves(s):
        total += _count(_after(s, move), depth - 1) if depth > 1 else 1
    return total


def _layout_count(s: dict[str, Any]) -> int:
    """docs/rules.md 3.5."""
    ends = s["ends"]
    n = s["spinner"]
    if n is None:
        return int(ends["W"]["show"] + ends["E"]["show"])
    total = 0
    if ends["W"]["tiles"] == 0 or ends["E"]["tiles"] == 0:
        total += 2 * n
    for name in "WENS":
        end = ends[name]
        if end["tiles"] > 0:
            total += end["show"] * (2 if end["double"] else 1)
    return total


def _lay(s: dict[str, Any], tile: Tile, end: str | None) -> None:
    """docs/rules.md 3.4: put ``tile`` on ``end`` (None: the opening tile)."""
    ends = s["ends"]
    if not s["started"]:
        s["started"] = True
        if tile.is_double:
            s["spinner"] = tile.high
            for name in "WENS":
                ends[name] = {"show": tile.high, "double": False, "tiles": 0}
        else:
            ends["W"] = {"show": tile.low, "double": False, "tiles": 1}
            ends["E"] = {"show": tile.high, "double": False, "tiles": 1}
        return
    assert end is not None
    shown = ends[end]["show"]
    new_show = tile.low if tile.high == shown else tile.high
    if s["spinner"] is None and tile.is_double:
        # The first double is the spinner: the old line is the other arm, this arm is empty.
        s["spinner"] = shown
        ends[end] = {"show": shown, "double": False, "tiles": 0}
        ends["N"] = {"show": shown, "double": False, "tiles": 0}
        ends["S"] = {"show": shown, "double": False, "tiles": 0}
        return
    ends[end] = {"show": new_show, "double": tile.is_double, "tiles": ends[end]["tiles"] + 1}


def _side(s: dict[str, Any], seat: int) -> int:
    for i, side in enumerate(s["sides"]):
        if seat in side:
            return i
    raise AssertionError(seat)


def _nobody_fits(s: dict[str, Any]) -> bool:
    return not any(_fits(s, t) for hand in s["hands"] for t in hand)


def _after(s: dict[str, Any], move: Move) -> dict[str, Any]:
    s = copy.deepcopy(s)
    kind, tile, end = move
    if kind == "deal":
        _deal(s)
        return s
    me = s["to_move"]
    if kind == "play":
        assert tile is not None
        s["hands"][me].remove(tile)
        _lay(s, tile, end)
        count = _layout_count(s)
        if count > 0 and count % 5 == 0:
            side = _side(s, me)
            s["scores"][side] += count
            if s["scores"][side] >= TARGET:
                s["over"] = True  # docs/rules.md 3.10 and X3: the game ends at once.
                return s
        if not s["hands"][me]:
            _score(s, me)
        elif not s["boneyard"] and _nobody_fits(s):
            _score(s, None)
        else:
            s["to_move"] = (me + 1) % s["players"]
    elif kind == "draw":
        s["hands"][me].append(s["boneyard"].pop(0))
        if not s["boneyard"] and _nobody_fits(s):
            _score(s, None)
        # Otherwise the same seat is still to move (docs/rules.md 3.6).
    elif not s["boneyard"] and _nobody_fits(s):
        _score(s, None)
    else:
        s["to_move"] = (me + 1) % s["players"]
    return s


def _round5(n: int) -> int:
    return 5 * int(n / 5 + 0.5)


def _score(s: dict[str, Any], went_out: int | None) -> None:
    """docs/rules.md 3.9: domino (``went_out``) or block; then the target, or the next deal."""
    seat_pips = [sum(t.high + t.low for t in hand) for hand in s["hands"]]
    side_pips = [sum(seat_pips[p] for p in side) for side in s["sides"]]
    winner: int | None
    if went_out is not None:
        winner = _side(s, went_out)
    else:
        low = min(side_pips)
        winner = side_pips.index(low) if side_pips.count(low) == 1 else None
    if winner is not None:
        others = sum(p for i, p in enumerate(side_pips) if i != winner)
        s["scores"][winner] += _round5(others)
        if s["scores"][winner] >= TARGET:
            s["over"] = True
            return
    s["to_move"] = "deal"


def _deal(s: dict[str, Any]) -> None:
    """docs/rules.md 0.3, 3.2 and 3.3: shuffle, deal round robin from seat 0, rotate the starter."""
    order = list(DOUBLE_SIX)
    random.Random(f"domino-arena/deal/{s['seed']}/{s['deal']}").shuffle(order)
    n = s["players"]
    s["hands"] = [[order[i] for i in range(seat, n * HAND_SIZE, n)] for seat in range(n)]
    s["boneyard"] = order[n * HAND_SIZE :]
    s["deal"] += 1
    s["starter"] = (s["starter"] + 1) % n
    s["to_move"] = s["starter"]
    _clear_layout(s)

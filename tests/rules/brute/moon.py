"""Brute-force move counting for Three-Player Moon, written straight from docs/rules.md section 1.

It shares nothing with the engine (``sdk/rules/moon.py``): tiles are ``(high, low)`` pairs, the
state is a plain dict copied at every step, and the suit rules are the pseudo-code of docs/rules.md
1.11 transcribed line by line. It reads the same position fields as ``MoonGame.from_position``
(without checking them), so the perft runner can compare the two.
"""

from __future__ import annotations

import copy
import random
from typing import Any

Tile = tuple[int, int]
State = dict[str, Any]

TRUMP = "trump"
BIDS = (4, 5, 6, 7, 21)
TRUMP_CHOICES: tuple[int | str, ...] = (0, 1, 2, 3, 4, 5, 6, "doubles", "none")


def _tile(text: Any) -> Tile:
    a, b = (int(x) for x in str(text).strip("[]").split("-"))
    return (max(a, b), min(a, b))


def _moon_tiles() -> list[Tile]:
    """docs/rules.md 1.1: the double-six set without the blanks, except 0-0; canonical order."""
    return [(h, lo) for h in range(7) for lo in range(h + 1) if lo > 0 or h == 0]


def _trump_value(raw: Any) -> int | str:
    if raw in (7, "doubles"):
        return "doubles"
    if raw in (8, "none"):
        return "none"
    return int(raw)


# -- docs/rules.md 1.11 pseudo-code ---------------------------------------------------------------


def is_trump(t: Tile, trump: int | str) -> bool:
    if trump == "none":
        return False
    if trump == "doubles":
        return t[0] == t[1]
    return trump in (t[0], t[1])


def led_suit(t: Tile, trump: int | str) -> int | str:
    return TRUMP if is_trump(t, trump) else t[0]


def follows(t: Tile, s: int | str, trump: int | str) -> bool:
    if s == TRUMP:
        return is_trump(t, trump)
    return not is_trump(t, trump) and s in (t[0], t[1])


def other(t: Tile, n: int | str) -> int:
    return t[1] if t[0] == n else t[0]


def rank(t: Tile, s: int | str, trump: int | str) -> int:
    if s == TRUMP:
        if trump == "doubles":
            return t[0]
        return 100 if t[0] == t[1] else other(t, trump)
    return 100 if t[0] == t[1] else other(t, s)


def winner(plays: list[tuple[int, Tile]], trump: int | str) -> int:
    trumps = [(rank(t, TRUMP, trump), seat) for seat, t in plays if is_trump(t, trump)]
    if trumps:
        return max(trumps)[1]
    s = led_suit(plays[0][1], trump)
    return max((rank(t, s, trump), seat) for seat, t in plays if follows(t, s, trump))[1]


# -- the position ------------------------------------------------------------------------------


def load(position: dict[str, Any]) -> State:
    """Turn the position fields into a brute-force state."""
    first = position.get("opener", 0)
    st: State = {
        "hands": [sorted(_tile(t) for t in h) for h in position["hands"]],
        "widow": _tile(position["boneyard"]) if position.get("boneyard") is not None else None,
        "first": first,
        "bids": [],
        "bidder": position.get("bidder"),
        "contract": position.get("contract"),
        "trump": None,
        "trick": [],
        "won": [0, 0, 0],
        "done": 0,
        "lead": None,
        "scores": list(position.get("scores") or [0, 0, 0]),
        "seed": position.get("seed", 0),
        "deal": position.get("deal", 1) - 1,
        "over": False,
    }
    for i, raw in enumerate(position.get("bids") or []):
        st["bids"].append(((first + i) % 3, None if raw in (None, "pass") else int(raw)))
    made = [(v, s) for s, v in st["bids"] if v is not None]
    if made and (len(st["bids"]) == 3 or st["bids"][-1][1] == 21):
        st["contract"], st["bidder"] = max(made)
    if st["bidder"] is None:
        st["phase"] = "bid"
        st["turn"] = (first + len(st["bids"])) % 3
        return st
    st["turn"] = st["bidder"]
    if position.get("discard") is None:
        st["phase"] = "discard"
        return st
    if position.get("trump") is None:
        st["phase"] = "trump"
        return st
    st["phase"] = "play"
    st["trump"] = _trump_value(position["trump"])
    lead = st["bidder"]
    if position.get("tricks") is not None:
        for tr in position["tricks"]:
            plays = [((lead + i) % 3, _tile(t)) for i, t in enumerate(tr["plays"])]
            lead = winner(plays, st["trump"])
            st["won"][lead] += 1
            st["done"] += 1
    elif position.get("tricks_won") is not None:
        st["won"] = list(position["tricks_won"])
        st["done"] = sum(st["won"])
        if st["done"]:
            lead = position["leader"]
    st["lead"] = lead
    st["trick"] = [((lead + i) % 3, _tile(t)) for i, t in enumerate(position.get("trick", []))]
    st["turn"] = (lead + len(st["trick"])) % 3
    return st


def deal(st: State) -> None:
    """docs/rules.md 0.3, 1.2, 1.4: shuffle from the seed, deal 7 each from seat 0, rotate."""
    st["deal"] += 1
    order = _moon_tiles()
    random.Random(f"domino-arena/deal/{st['seed']}/{st['deal']}").shuffle(order)
    st["hands"] = [sorted(order[s:21:3]) for s in range(3)]
    st["widow"] = order[21]
    st["first"] = (st["first"] + 1) % 3
    st.update(
        phase="bid", turn=st["first"], bids=[], bidder=None, contract=None, trump=None, trick=[]
    )
    st.update(won=[0, 0, 0], done=0, lead=None)


def moves(st: State) -> list[Any]:
    if st["over"]:
        return []
    phase = st["phase"]
    if phase == "deal":
        return ["deal"]
    hand = st["hands"][st["turn"]]
    if phase == "bid":
        high = max([v for _, v in st["bids"] if v is not None], default=0)
        return [v for v in BIDS if v > high] + ["pass"]
    if phase == "discard":
        return list(hand)
    if phase == "trump":
        return list(TRUMP_CHOICES)
    if not st["trick"]:
        return list(hand)
    s = led_suit(st["trick"][0][1], st["trump"])
    fit = [t for t in hand if follows(t, s, st["trump"])]
    return fit if fit else list(hand)


def play(st: State, move: Any) -> State:
    st = copy.deepcopy(st)
    phase = st["phase"]
    seat = st["turn"]
    if phase == "deal":
        deal(st)
    elif phase == "bid":
        value = None if move == "pass" else move
        st["bids"].append((seat, value))
        if value == 21 or len(st["bids"]) == 3:
            made = [(v, s) for s, v in st["bids"] if v is not None]
            if not made:
                st["phase"] = "deal"
            else:
                st["contract"], st["bidder"] = max(made)
                st["hands"][st["bidder"]].append(st["widow"])
                st["phase"] = "discard"
                st["turn"] = st["bidder"]
        else:
            st["turn"] = (seat + 1) % 3
    elif phase == "discard":
        st["hands"][seat].remove(move)
        st["phase"] = "trump"
    elif phase == "trump":
        st["trump"] = move
        st["phase"] = "play"
        st["lead"] = seat
    else:
        st["hands"][seat].remove(move)
        st["trick"].append((seat, move))
        st["turn"] = (seat + 1) % 3
        if len(st["trick"]) == 3:
            w = winner(st["trick"], st["trump"])
            st["won"][w] += 1
            st["done"] += 1
            st["trick"] = []
            st["turn"] = st["lead"] = w
            if st["done"] == 7:
                score(st)
    return st


def score(st: State) -> None:
    """docs/rules.md 1.12 and 1.13."""
    b, c = st["bidder"], st["contract"]
    took = st["won"][b]
    made = took == 7 if c == 21 else took >= c
    for s in range(3):
        st["scores"][s] += st["won"][s] if s != b else (c if made else -c)
    top = max(st["scores"])
    if (c == 21 and made) or (top >= 21 and st["scores"].count(top) == 1):
        st["over"] = True
    else:
        st["phase"] = "deal"


def count(st: State, depth: int) -> int:
    if depth == 0:
        return 1
    return sum(count(play(st, m), depth - 1) for m in moves(st))


def perft(options: dict[str, Any], position: dict[str, Any], depth: int) -> int:
    """Return the number of action sequences of length ``depth`` from ``position``."""
    assert not options, "Three-Player Moon has no options"
    return count(load(position), depth)

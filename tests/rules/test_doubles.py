"""Doubles (docs/rules.md §4 and §5.4 D1-D12): scenario tests from explicit positions, one per rule.

Most positions below were cut from seeded random playouts (so they are reachable) and then
written out in full, as ``DoublesGame.from_position`` takes them.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domino_arena.bots.greedy.doubles import choose as greedy_choose
from domino_arena.sdk.rules.actions import DEAL, DRAW, PASS, Action, Bid, Play
from domino_arena.sdk.rules.doubles import (
    DoublesGame,
    DoublesObservation,
    DoublesState,
)
from domino_arena.sdk.rules.errors import (
    GameOptionError,
    GameOverError,
    IllegalActionError,
    PositionError,
)
from domino_arena.sdk.rules.perft import perft
from domino_arena.sdk.rules.state import CHANCE, TERMINAL, HandEnd, LogEntry
from domino_arena.sdk.rules.tiles import DOUBLE_SIX, Tile, parse_tiles

from .brute.doubles import perft as brute_perft

TWO = DoublesGame(players=2)
THREE = DoublesGame(players=3)
DATA = Path(__file__).parent / "data" / "doubles.perft.json"


def tiles(text: str) -> tuple[Tile, ...]:
    return parse_tiles(text)


def play(tile: str, end: str | None = None) -> Play:
    return Play(Tile.parse(tile), end)


def rest(*used: list[str]) -> list[str]:
    """Return every tile not named in ``used``, in canonical order."""
    named = {Tile.parse(t) for group in used for t in group}
    return [str(t) for t in DOUBLE_SIX if t not in named]


def slots(state: DoublesState) -> dict[str, object]:
    """Return every slot of ``state`` by name, across the class hierarchy."""
    names = {n for cls in type(state).__mro__ for n in getattr(cls, "__slots__", ())}
    return {name: getattr(state, name) for name in names}


def rule_of(state: DoublesState, action: Action) -> str:
    with pytest.raises(IllegalActionError) as info:
        state.apply(action)
    return info.value.rule


def laid_in_order(text: str) -> list[str]:
    """Split ``"6-6, 6-4 6, 4-4 4"`` into the plays of a ``placed`` field."""
    return [part.strip() for part in text.split(",")]


def texts(state: DoublesState) -> list[str]:
    return [str(a) for a in state.legal_actions()]


# -- positions -----------------------------------------------------------------------------

# After 6-6 and 6-3: the 3 end is locked (docs/rules.md 4.5, D1, D2).
LOCKED_HANDS = [["3-1", "3-3", "5-2"], ["6-5", "4-0"]]
LOCKED: dict[str, Any] = {
    "hands": LOCKED_HANDS,
    "boneyard": rest(*LOCKED_HANDS, ["6-6", "6-3"]),
    "placed": ["6-6", "6-3 6"],
    "seat": 0,
}

# Only 6 ends are open and seat 1 holds no 6: it must draw one tile (4.6).
NO_SIX = [["6-5", "4-4", "2-1"], ["5-4", "3-2"]]


def draw_position(first: str) -> dict[str, Any]:
    return {
        "hands": NO_SIX,
        "boneyard": [first, *rest(*NO_SIX, ["6-6", first])],
        "placed": ["6-6"],
        "seat": 1,
    }


# Boneyard of two: seat 1 cannot play and may not draw, so it passes (4.6 step 3, D7).
PASS_HANDS = [
    ["6-0", "6-1", "6-2", "6-3", "6-4", "6-5"],
    rest(["6-0", "6-1", "6-2", "6-3", "6-4", "6-5", "6-6", "5-5", "4-4"]),
]
PASS_POSITION: dict[str, Any] = {
    "hands": PASS_HANDS,
    "boneyard": ["5-5", "4-4"],
    "placed": ["6-6"],
    "seat": 1,
}

# Seat 1 plays 6-1 and nobody can play any more: blocked, 21/5, seat 1 scores 21 (4.7, 4.8, D9).
BLOCK_WIN: dict[str, Any] = {
    "hands": [["4-3", "5-1", "5-3"], ["4-1", "6-1"]],
    "boneyard": ["4-4", "1-1"],
    "placed": laid_in_order(
        "3-3, 3-1 3, 3-2 3, 2-2 2, 2-1 2, 4-2 2, 3-0 3, 6-2 2, 6-3 3, "
        "0-0 0, 5-0 0, 1-0 0, 6-0 0, 5-5 5, 6-5 5, 5-2 5, 2-0 2, 5-4 5, "
        "6-6 6, 4-0 0, 6-4 6"
    ),
    "seat": 1,
    "scores": [56, 23],
}

# Seat 0 plays 6-3 and the hand blocks with 13/13: nobody scores (4.8, D9).
BLOCK_TIE: dict[str, Any] = {
    "hands": [["5-0", "6-2", "6-3"], ["5-2", "6-0"]],
    "boneyard": ["0-0", "6-6"],
    "placed": laid_in_order(
        "5-5, 6-5 5, 5-3 5, 5-4 5, 3-3 3, 3-0 3, 3-2 3, 4-3 3, 2-2 2, "
        "4-2 2, 2-0 2, 5-1 5, 2-1 2, 4-4 4, 6-4 4, 4-0 4, 1-1 1, 4-1 1, "
        "6-1 1, 1-0 1, 3-1 1"
    ),
    "seat": 0,
    "scores": [64, 38],
}

# Seat 0 draws 5-3 (leaving the undrawable two), it fits nowhere and nobody can play: blocked
# at once after the draw, 20/7, seat 1 scores 20 (0.7, 4.7).
BLOCK_AFTER_DRAW: dict[str, Any] = {
    "hands": [["2-1", "6-3"], ["5-2"]],
    "boneyard": ["5-3", "1-0", "6-6"],
    "placed": laid_in_order(
        "5-5, 6-5 5, 5-0 5, 5-1 5, 1-1 1, 6-1 1, 4-1 1, 5-4 5, 3-1 1, "
        "3-3 3, 3-2 3, 3-0 3, 2-2 2, 4-3 3, 4-2 2, 2-0 2, 6-2 2, 4-4 4, "
        "4-0 4, 0-0 0, 6-0 0, 6-4 4"
    ),
    "seat": 0,
}

# 3 players: seat 1 plays 6-3, the hand blocks at 8/12/15 and seat 0 scores 12 + 15 = 27.
BLOCK_THREE: dict[str, Any] = {
    "hands": [["5-3"], ["3-2", "4-3", "6-3"], ["4-0", "4-2", "5-0"]],
    "boneyard": ["3-3", "4-4"],
    "placed": laid_in_order(
        "5-5, 5-1 5, 5-2 5, 6-5 5, 2-2 2, 5-4 5, 2-1 2, 2-0 2, 6-2 2, "
        "0-0 0, 6-0 0, 3-0 0, 1-1 1, 4-1 1, 1-0 0, 6-1 1, 6-6 6, 3-1 1, "
        "6-4 6"
    ),
    "seat": 1,
}

# Seat 0 plays its last tile 6-1; the hand is then also blocked. Domino is reported (X4).
DOMINO_AND_BLOCK: dict[str, Any] = {
    "hands": [["6-1"], ["5-0"]],
    "boneyard": ["5-4", "0-0"],
    "placed": laid_in_order(
        "5-5, 5-3 5, 6-5 5, 5-2 5, 5-1 5, 6-6 6, 6-0 6, 6-3 6, 6-2 6, "
        "1-1 1, 3-1 1, 2-1 1, 1-0 1, 3-3 3, 3-0 3, 2-2 2, 2-0 2, 4-2 2, "
        "3-2 2, 4-3 3, 4-4 4, 6-4 4, 4-0 4, 4-1 4"
    ),
    "seat": 0,
    "scores": [58, 6],
}

# 3 players: seat 0 goes out with 6-1; the others hold 5-0 6-0 and 6-5: 22 pips (D10).
DOMINO_THREE: dict[str, Any] = {
    "hands": [["6-1"], ["5-0", "6-0"], ["6-5"]],
    "boneyard": ["0-0", "6-6"],
    "placed": laid_in_order(
        "5-5, 5-3 5, 5-1 5, 3-3 3, 5-4 5, 5-2 5, 3-0 3, 1-1 1, 3-2 3, "
        "1-0 1, 4-1 1, 3-1 1, 2-2 2, 6-2 2, 4-2 2, 6-3 3, 4-3 3, 4-4 4, "
        "2-0 2, 4-0 4, 6-4 4, 2-1 2"
    ),
    "seat": 0,
    "scores": [27, 39, 0],
}


# -- the game ------------------------------------------------------------------------------


@pytest.mark.parametrize(("players", "size", "stock"), [(2, 8, 12), (3, 6, 10), (4, 6, 4)])
def test_deal_sizes_and_boneyard(players: int, size: int, stock: int) -> None:
    """docs/rules.md 4.2: 8 tiles each for 2 players, 6 for 3 or 4; the rest is the boneyard."""
    game = DoublesGame(players=players)
    state = game.new_game(seed=12)
    assert [len(h) for h in state.hands] == [size] * players
    assert len(state.boneyard) == stock
    assert sorted([*state.boneyard, *(t for h in state.hands for t in h)]) == list(DOUBLE_SIX)


def test_game_configuration() -> None:
    """docs/rules.md 4.1, D11: 2-4 players, each alone, to 100."""
    game = DoublesGame(players=4)
    assert (game.name, game.title, game.target) == ("doubles", "Doubles", 100)
    assert game.sides == ((0,), (1,), (2,), (3,))
    assert game.options() == {"players": 4}
    assert DoublesGame() == TWO
    assert game.describe() == "Doubles, 4 players, to 100"
    with pytest.raises(GameOptionError, match="players must be 2, 3 or 4"):
        DoublesGame(players=5)


# -- opening (4.3, D8) -----------------------------------------------------------------------


def test_highest_double_opens_even_if_another_seat_would_start() -> None:
    """docs/rules.md 4.3: seed 7 leaves 6-6 in the boneyard; seat 1 opens with 5-5.

    Seat 0 holds 0-0 and 1-1 and is the seat the rotation would pick, but the highest double
    dealt decides.
    """
    state = TWO.new_game(seed=7, first_seat=0)
    assert Tile(6, 6) in state.boneyard
    assert {Tile(0, 0), Tile(1, 1)} <= set(state.hand(0))
    assert {Tile(3, 3), Tile(5, 5)} <= set(state.hand(1))
    assert (state.current_seat, state.opener) == (1, 1)
    assert state.legal_actions() == (play("5-5"),)


def test_opening_double_is_compulsory_and_logged() -> None:
    """docs/rules.md 4.3, 0.4, X1: the only legal action is the highest double, naming no end."""
    state = TWO.new_game(seed=7)
    assert rule_of(state, play("3-3")) == (
        "docs/rules.md 4.3: the hand must open with 5-5, the highest double"
    )
    assert rule_of(state, DRAW).startswith("docs/rules.md 4.3")
    assert rule_of(state, PASS).startswith("docs/rules.md 4.3")
    assert rule_of(state, play("5-5", "5")) == "docs/rules.md X1: the opening tile names no end"
    after = state.apply(play("5-5"))
    assert after.history == (LogEntry(1, play("5-5")),)
    assert after.ends == (5, 5, 5, 5)
    assert after.unlocked == frozenset({5})
    assert after.current_seat == 0, "play goes on clockwise from the opener"


def test_opening_position_defaults_to_the_holder_of_the_highest_double() -> None:
    hands = [["4-4", "1-1", "6-0"], ["5-5", "3-2"], ["2-2", "0-0"]]
    state = THREE.from_position(hands=hands, boneyard=rest(*hands))
    assert state.current_seat == 1
    assert texts(state) == ["play 5-5"]
    with pytest.raises(PositionError, match=r"seat: 5-5, the highest double, is in hands\[1\]"):
        THREE.from_position(hands=hands, boneyard=rest(*hands), seat=0)


def test_every_hand_opens_with_the_highest_double_dealt() -> None:
    """docs/rules.md D8: the opening rule holds for every hand, not only the first."""
    for players in (2, 3, 4):
        game = DoublesGame(players=players)
        rng = random.Random(players)
        state = game.new_game(seed=players)
        opened = 0
        while not state.is_terminal():
            if not state.placed and state.current_seat >= 0:
                dealt = [t for h in state.hands for t in h if t.is_double]
                top = max(dealt)
                assert top in state.hand(state.current_seat)
                assert state.legal_actions() == (Play(top),)
                opened += 1
            state = state.apply(rng.choice(state.legal_actions()))
        assert opened >= 2


# -- void deals ------------------------------------------------------------------------------


def test_void_deal_when_nobody_holds_a_double_then_redeal() -> None:
    """docs/rules.md 4.3, 0.5, X6: seed 1961 deals no double to either player; nobody scores."""
    state = TWO.new_game(seed=1961)
    assert not any(t.is_double for h in state.hands for t in h)
    assert state.current_seat == CHANCE
    assert state.legal_actions() == (DEAL,)
    (result,) = state.hand_results
    assert (result.deal, result.end, result.points) == (1, HandEnd.VOID, (0, 0))
    assert state.scores == (0, 0)
    assert rule_of(state, DRAW).startswith("docs/rules.md X6")
    redealt = state.apply(DEAL)
    assert redealt.deal_number == 2
    assert redealt.current_seat >= 0
    assert redealt.legal_actions() == (play("6-6"),)
    assert redealt.history == (LogEntry(CHANCE, DEAL),)


def test_void_deal_with_three_players() -> None:
    state = THREE.new_game(seed=1741)
    while state.deal_number < 2:
        state = state.apply(state.legal_actions()[0])
    # Seed 1741's second shuffle gives no double among the 18 dealt tiles.
    assert state.current_seat == CHANCE
    assert state.hand_results[-1].end == HandEnd.VOID


def test_void_deal_follows_a_finished_hand() -> None:
    """With seed 3, deal index 2 is void: the deal after this hand is thrown in (D8)."""
    state = TWO.from_position(**{**BLOCK_WIN, "seed": 3, "deal": 2})
    state = state.apply(play("6-1", "6"))
    assert state.current_seat == CHANCE
    state = state.apply(DEAL)
    assert state.current_seat == CHANCE
    assert state.hand_results[-1].end == HandEnd.VOID
    assert state.scores == (56, 44)
    state = state.apply(DEAL)
    assert state.deal_number == 4
    opening = state.legal_actions()[0]
    assert isinstance(opening, Play)
    assert opening.end is None


def test_position_without_any_double_is_refused() -> None:
    hands = [["6-5", "4-3"], ["2-1", "1-0"]]
    boneyard = [t for t in rest(*hands) if not Tile.parse(t).is_double]
    doubles = [f"{n}-{n}" for n in range(7)]
    with pytest.raises(PositionError, match="nobody holds a double"):
        TWO.from_position(hands=hands, boneyard=boneyard + doubles)


# -- layout and locking (4.4, 4.5, D1-D3, D12) ------------------------------------------------


def test_a_locked_end_accepts_only_its_own_double() -> None:
    """docs/rules.md 4.5, D1: 3 shows but is locked; 3-1 may not go there, 3-3 may and unlocks 3."""
    state = TWO.from_position(**LOCKED)
    assert state.ends == (3, 6, 6, 6)
    assert state.unlocked == frozenset({6})
    assert texts(state) == ["play 3-3 3"]
    assert rule_of(state, play("3-1", "3")) == "docs/rules.md 4.5: 3 is locked until 3-3 is played"
    state = state.apply(play("3-3", "3"))
    assert state.ends == (3, 3, 3, 6, 6, 6), "a double uses its end and opens three (4.4, D3)"
    assert state.unlocked == frozenset({3, 6})


def test_the_other_number_may_stay_locked() -> None:
    """docs/rules.md 4.5, D2: 6-5 goes on unlocked 6; its 5 sits exposed as a locked end."""
    state = TWO.from_position(**LOCKED).apply(play("3-3", "3"))
    assert texts(state) == ["play 6-5 6"]
    state = state.apply(play("6-5", "6"))
    assert state.ends == (3, 3, 3, 5, 6, 6)
    assert 5 not in state.unlocked
    assert texts(state) == ["play 3-1 3"]
    assert rule_of(state, play("5-2", "5")) == "docs/rules.md 4.5: 5 is locked until 5-5 is played"


def test_ends_showing_the_same_number_are_one_action() -> None:
    """docs/rules.md D12: a play names the digit shown; three 6 ends give one 'play 6-5 6'."""
    hands = [["6-5", "5-5", "5-1"], ["6-6", "6-3", "4-0"]]
    state = TWO.from_position(hands=hands, boneyard=rest(*hands))
    state = state.apply(play("6-6"))
    assert texts(state) == ["play 6-5 6"]
    state = state.apply(play("6-5", "6"))
    assert state.ends == (5, 6, 6, 6)
    state = state.apply(play("6-3", "6"))
    assert texts(state) == ["play 5-5 5"], "5-1 waits: 5 is locked"
    state = state.apply(play("5-5", "5"))
    assert state.ends == (3, 5, 5, 5, 6, 6)
    assert state.placed == tiles("6-6 6-5 6-3 5-5")


def test_a_tile_matching_two_unlocked_ends_offers_both() -> None:
    """docs/rules.md 4.5: 5-3 fits the unlocked 5 ends and the unlocked 3 ends: two actions."""
    placed = ["6-6", "6-3 6", "3-3 3", "6-5 6", "5-5 5"]
    hands = [["5-3", "1-0"], ["2-1", "4-0"]]
    state = TWO.from_position(
        hands=hands,
        boneyard=rest(*hands, [p.split()[0] for p in placed]),
        placed=placed,
        seat=0,
    )
    assert state.ends == (3, 3, 3, 5, 5, 5, 6, 6)
    assert texts(state) == ["play 5-3 3", "play 5-3 5"]
    assert state.apply(play("5-3", "3")).ends == (3, 3, 5, 5, 5, 5, 6, 6)
    assert state.apply(play("5-3", "5")).ends == (3, 3, 3, 3, 5, 5, 6, 6)


@pytest.mark.parametrize(
    ("action", "rule"),
    [
        (play("6-5", "W"), "docs/rules.md D12: an end is named by the digit it shows, not 'W'"),
        (play("6-5", "4"), "docs/rules.md 4.4: no open end shows 4"),
        (play("6-5", "3"), "docs/rules.md 4.5: 6-5 does not contain 3"),
        (play("6-5"), "docs/rules.md X1: every play after the opening names its end"),
        (play("6-4", "6"), "seat 1 does not hold 6-4"),
        (DRAW, "docs/rules.md 4.6: you can play, so you may not draw"),
        (PASS, "docs/rules.md 4.6: you can play, so you may not pass"),
        (DEAL, "docs/rules.md X6: a deal happens only between hands"),
        (Bid(5), "docs/rules.md 0.4: the actions of Doubles are play, draw and pass"),
    ],
)
def test_illegal_actions_name_the_rule(action: Action, rule: str) -> None:
    state = TWO.from_position(**LOCKED).apply(play("3-3", "3"))
    with pytest.raises(IllegalActionError) as info:
        state.apply(action)
    assert info.value.rule == rule
    assert info.value.legal == ("play 6-5 6",)
    assert str(action) in str(info.value)


# -- the turn (4.6, D4-D7) ------------------------------------------------------------------


def test_cannot_play_so_draw_one_and_play_it_at_once() -> None:
    """docs/rules.md 4.6, D4, D5: the drawn 6-1 fits, so the same seat must play it now."""
    state = TWO.from_position(**draw_position("6-1"))
    assert state.legal_actions() == (DRAW,)
    assert rule_of(state, PASS) == (
        "docs/rules.md 4.6: you cannot play and the boneyard holds 22, so you must draw"
    )
    drawn = state.apply(DRAW)
    assert drawn.current_seat == 1
    assert drawn.drawn == Tile(6, 1)
    assert Tile(6, 1) in drawn.hand(1)
    assert len(drawn.boneyard) == 21
    assert texts(drawn) == ["play 6-1 6"]
    why = "docs/rules.md 4.6 (D5): 6-1 was just drawn and fits, so it must be played at once"
    assert rule_of(drawn, PASS) == why
    assert rule_of(drawn, DRAW) == why
    assert drawn.observe(1).drawn == Tile(6, 1)
    assert drawn.observe(0).drawn is None, "the drawn tile is private until played (4.10)"
    played = drawn.apply(play("6-1", "6"))
    assert played.current_seat == 0
    assert played.drawn is None
    assert played.ends == (1, 6, 6, 6)
    assert [str(e) for e in played.history] == ["seat 1: draw", "seat 1: play 6-1 6"]


def test_a_drawn_tile_that_does_not_fit_ends_the_turn() -> None:
    """docs/rules.md 4.6, D4: exactly one tile is drawn, even with more left; the turn passes."""
    state = TWO.from_position(**draw_position("5-3"))
    after = state.apply(DRAW)
    assert after.current_seat == 0
    assert after.drawn is None
    assert after.hand(1) == tiles("3-2 5-3 5-4")
    assert len(after.boneyard) == len(state.boneyard) - 1
    assert texts(after) == ["play 6-5 6"]


def test_pass_when_nothing_fits_and_two_tiles_remain() -> None:
    """docs/rules.md 4.6 step 3, D7: the last two tiles are never drawn; the seat passes."""
    state = TWO.from_position(**PASS_POSITION)
    assert state.legal_actions() == (PASS,)
    assert rule_of(state, DRAW) == (
        "docs/rules.md 4.2 (D7): the last two tiles of the boneyard cannot be drawn; it holds 2"
    )
    after = state.apply(PASS)
    assert after.current_seat == 0
    assert after.boneyard == state.boneyard
    assert len(after.legal_actions()) == 6


@given(seed=st.integers(0, 10**6), players=st.sampled_from([2, 3, 4]))
@settings(max_examples=40)
def test_random_games_keep_the_rules(seed: int, players: int) -> None:
    """Invariants of whole seeded games: docs/rules.md 4.2-4.9 as seen from the state."""
    game = DoublesGame(players=players)
    rng = random.Random(seed)
    state = game.new_game(seed)
    steps = 0
    while not state.is_terminal():
        legal = state.legal_actions()
        assert legal and list(legal) == sorted(legal, key=lambda a: a.sort_key)
        assert len(state.boneyard) >= 2, "the last two tiles are never drawn (D7)"
        held = [t for h in state.hands for t in h]
        assert sorted([*held, *state.boneyard, *state.placed]) == list(DOUBLE_SIX)
        if state.current_seat >= 0 and state.placed:
            doubles = {t.high for t in state.placed if t.is_double}
            assert state.unlocked == frozenset(doubles)
            assert len(state.ends) == 2 * len(doubles) + 2
            plays = [a for a in legal if isinstance(a, Play)]
            if DRAW in legal:
                assert legal == (DRAW,) and len(state.boneyard) >= 3
            if PASS in legal:
                assert legal == (PASS,) and len(state.boneyard) <= 2
            if state.drawn is not None:
                assert plays and all(a.tile is state.drawn for a in plays)
        action = rng.choice(legal)
        before = slots(state)
        after = state.apply(action)
        assert slots(state) == before, "apply never changes the state it is given"
        if action == DRAW and after.current_seat == state.current_seat:
            assert after.drawn is not None
        state = after
        steps += 1
    assert max(state.scores) >= 100
    winner = state.outcome()
    assert winner is not None and state.scores[winner.winner] == max(state.scores)
    for result in state.hand_results:
        assert sum(1 for p in result.points if p) <= 1, "one player scores per hand (4.9)"
    assert [sum(r.points[s] for r in state.hand_results) for s in range(players)] == list(
        state.scores
    )


# -- end of the hand and scoring (4.7, 4.8, D9, D10, 0.7, X4) -------------------------------


def test_domino_scores_every_other_hands_pips() -> None:
    """docs/rules.md 4.8, D10: seat 0 goes out; seat 1 holds 5-0 6-0, seat 2 holds 6-5: 22."""
    state = DoublesGame(players=3).from_position(**DOMINO_THREE)
    after = state.apply(play("6-1", "1"))
    assert after.current_seat == CHANCE
    result = after.hand_results[-1]
    assert (result.end, result.points) == (HandEnd.DOMINO, (22, 0, 0))
    assert after.scores == (49, 39, 0)
    assert after.legal_actions() == (DEAL,)


def test_domino_is_reported_before_block() -> None:
    """docs/rules.md X4: the last tile also leaves nobody able to play; the end is a domino."""
    state = TWO.from_position(**DOMINO_AND_BLOCK)
    after = state.apply(play("6-1", "6"))
    result = after.hand_results[-1]
    assert (result.end, result.points) == (HandEnd.DOMINO, (5, 0))
    assert after.scores == (63, 6)


def test_blocked_unique_lowest_scores_the_others_without_subtraction() -> None:
    """docs/rules.md 4.7, 4.8, D9: totals 21/5 after the play: seat 1 scores 21, not 16."""
    state = TWO.from_position(**BLOCK_WIN)
    after = state.apply(play("6-1", "6"))
    assert after.current_seat == CHANCE, "the hand ends at once; no pass is asked for (0.7)"
    result = after.hand_results[-1]
    assert (result.end, result.points) == (HandEnd.BLOCKED, (0, 21))
    assert result.detail == "blocked; pip totals 21/5: seat 1 scores 21"
    assert after.scores == (56, 44)


def test_blocked_with_three_players() -> None:
    """docs/rules.md 4.8: totals 8/12/15; seat 0 scores 12 + 15."""
    after = THREE.from_position(**BLOCK_THREE).apply(play("6-3", "6"))
    assert after.hand_results[-1].points == (27, 0, 0)


def test_blocked_tie_for_lowest_scores_nobody() -> None:
    """docs/rules.md 4.8, D9: 13/13 after seat 0 plays 6-3: nobody scores."""
    after = TWO.from_position(**BLOCK_TIE).apply(play("6-3", "3"))
    result = after.hand_results[-1]
    assert (result.end, result.points) == (HandEnd.BLOCKED, (0, 0))
    assert "tie for lowest: nobody scores" in result.detail
    assert after.scores == (64, 38)
    assert after.current_seat == CHANCE


def test_block_is_checked_after_a_draw() -> None:
    """docs/rules.md 0.7, 4.7: the draw leaves two tiles and nobody can play: blocked at once."""
    state = TWO.from_position(**BLOCK_AFTER_DRAW)
    assert state.legal_actions() == (DRAW,)
    after = state.apply(DRAW)
    assert after.current_seat == CHANCE
    result = after.hand_results[-1]
    assert (result.end, result.points) == (HandEnd.BLOCKED, (0, 20))


def test_reaching_100_ends_the_game() -> None:
    """docs/rules.md 4.9: 95 + 5 for going out reaches the target; nothing further is dealt."""
    state = TWO.from_position(**{**DOMINO_AND_BLOCK, "scores": [95, 6]})
    after = state.apply(play("6-1", "6"))
    assert after.current_seat == TERMINAL
    assert after.legal_actions() == ()
    outcome = after.outcome()
    assert outcome is not None
    assert (outcome.winner, outcome.scores) == (0, (100, 6))
    with pytest.raises(GameOverError):
        after.apply(DEAL)


def test_falling_short_of_100_deals_again() -> None:
    state = TWO.from_position(**{**DOMINO_AND_BLOCK, "scores": [94, 6]})
    after = state.apply(play("6-1", "6"))
    assert (after.current_seat, after.scores, after.outcome()) == (CHANCE, (99, 6), None)
    nxt = after.apply(DEAL)
    assert nxt.deal_number == 2
    assert nxt.placed == ()
    assert nxt.scores == (99, 6)


# -- positions -----------------------------------------------------------------------------


def test_laid_and_ends_describe_the_same_layout_as_placed() -> None:
    by_plays = TWO.from_position(**LOCKED)
    by_ends = TWO.from_position(
        hands=LOCKED["hands"],
        boneyard=LOCKED["boneyard"],
        laid=["6-3", "6-6"],
        ends=[6, 3, 6, 6],
        unlocked=[6],
        seat=0,
    )
    assert (by_ends.ends, by_ends.unlocked) == (by_plays.ends, by_plays.unlocked)
    assert by_ends.legal_actions() == by_plays.legal_actions()


def test_position_with_a_drawn_tile() -> None:
    """docs/rules.md D5: a position may record that the seat to move has just drawn a fitting
    tile."""
    hands = [NO_SIX[0], ["5-4", "6-2"]]
    state = TWO.from_position(
        hands=hands, boneyard=rest(*hands, ["6-6"]), placed=["6-6"], seat=1, drawn="6-2"
    )
    assert state.drawn == Tile(6, 2)
    assert texts(state) == ["play 6-2 6"]
    assert rule_of(state, DRAW).startswith("docs/rules.md 4.6 (D5)")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"boneyard": ["6-6"]}, "tile 6-6 is in boneyard and in layout"),
        ({"boneyard": []}, "every tile must be somewhere; missing: 0-0"),
        ({"placed": ["6-6", "6-3 6", "3-1 3"]}, r"placed\[2\]: docs/rules.md 4.5: 3 is locked"),
        ({"placed": ["6-3"]}, r"placed\[0\]: a hand opens with a double"),
        ({"placed": ["6-6", "6-6 6"]}, r"placed\[1\]: 6-6 is already laid"),
        ({"laid": ["6-6"], "ends": [6, 6, 6, 6]}, "either as 'placed' or as 'laid'"),
        ({"seat": None}, "seat: required"),
        ({"seat": 2}, "seat: 2 is not a seat"),
        ({"scores": [100, 0]}, "scores: seat 0 has 100"),
        ({"scores": [1]}, "scores: expected 2 values"),
        ({"drawn": "5-2"}, "drawn: 5-2 fits no end"),
        ({"drawn": "6-5"}, r"drawn: 6-5 is not in hands\[0\]"),
        ({"hands": [[], ["6-5", "4-0", "3-1", "3-3", "5-2"]]}, r"hands\[0\]: empty"),
        ({"deal": 0}, "deal must be 1 or more"),
    ],
)
def test_inconsistent_positions_name_the_field(change: dict[str, Any], message: str) -> None:
    with pytest.raises(PositionError, match=message):
        TWO.from_position(**{**LOCKED, **change})


@pytest.mark.parametrize(
    ("laid", "ends", "unlocked", "message"),
    [
        (["6-6", "6-3"], [6, 6, 6, 6], None, "ends: 3 is locked, so each of the 1 laid halves"),
        (["6-6", "6-3"], [3, 6, 6, 6, 6, 6], None, "ends: 1 laid doubles leave 4 open ends"),
        (["6-6", "6-3"], [3, 6, 6, 6], [6, 3], "unlocked: must be the numbers"),
        (["6-3"], [6, 3], None, "laid: no double is laid"),
        (["6-6", "5-3"], [6, 6, 5, 3], None, "laid: 5-3 could not have been placed"),
        (["6-6", "6-3", "3-3"], [3, 3, 6, 6, 6, 6], None, "ends: 2 ends showing 3 cannot"),
        (["6-6"], [6, 6, 6, 9], None, "ends: 9 is not a number"),
        ([], [6], None, "laid: no tile is laid"),
    ],
)
def test_inconsistent_layouts_are_refused(
    laid: list[str], ends: list[int], unlocked: list[int] | None, message: str
) -> None:
    hands = [["5-1", "5-2"], ["4-1"]]
    with pytest.raises(PositionError, match=message):
        TWO.from_position(
            hands=hands,
            boneyard=rest(*hands, laid),
            laid=laid,
            ends=ends,
            unlocked=unlocked,
            seat=0,
        )


def test_positions_that_are_already_over_are_refused() -> None:
    with pytest.raises(PositionError, match=r"hands: nobody can play .* \(blocked, 4.7\)"):
        TWO.from_position(
            hands=[["4-3", "5-1", "5-3"], ["4-1"]],
            boneyard=["4-4", "1-1"],
            placed=[*BLOCK_WIN["placed"], "6-1 6"],
            seat=0,
        )


# -- hidden information, immutability, reproducibility -------------------------------------


def _tiles_in(value: object) -> set[Tile]:
    if isinstance(value, Tile):
        return {value}
    if isinstance(value, (tuple, list, frozenset, set)):
        return set().union(*(_tiles_in(v) for v in value)) if value else set()
    if isinstance(value, Play):
        return {value.tile}
    if isinstance(value, LogEntry):
        return _tiles_in(value.action)
    return set()


def test_observations_hide_other_hands_and_the_boneyard_order() -> None:
    """docs/rules.md 4.10: a seat sees the layout, counts and its own tiles, nothing more."""
    state = TWO.from_position(**draw_position("6-1")).apply(DRAW)
    watcher = state.observe(0)
    assert isinstance(watcher, DoublesObservation)
    fields = {name: getattr(watcher, name) for name in watcher.__dataclass_fields__}
    visible = set().union(*(_tiles_in(v) for k, v in fields.items() if k != "game"))
    assert visible <= set(state.hand(0)) | set(state.placed)
    assert watcher.hand_sizes == (3, 3)
    assert watcher.boneyard_size == 21
    assert watcher.legal_actions == ()
    assert watcher.history == (LogEntry(1, DRAW),)
    # The same position with the hidden tiles shuffled looks the same to seat 0.
    other = ["5-3", "2-0"]
    swapped = TWO.from_position(
        hands=[NO_SIX[0], other],
        boneyard=["6-2", *reversed(rest(NO_SIX[0], other, ["6-2", "6-6"]))],
        placed=["6-6"],
        seat=1,
    ).apply(DRAW)
    assert swapped.observe(0) == watcher
    assert swapped.observe(1) != state.observe(1)


def test_observation_of_the_mover() -> None:
    state = TWO.from_position(**LOCKED)
    seen = state.observe(0)
    assert seen.hand == tiles("3-1 3-3 5-2")
    assert seen.legal_actions == state.legal_actions()
    assert (seen.ends, seen.unlocked, seen.placed) == (
        (3, 6, 6, 6),
        frozenset({6}),
        tiles("6-6 6-3"),
    )
    assert seen.current_seat == 0


def test_clone_copies_every_slot() -> None:
    """DoublesState._clone lists the slots by hand for speed; it must not miss one."""
    state = TWO.from_position(**draw_position("6-1")).apply(DRAW)
    state.legal_actions()
    copy = state._clone()
    assert copy is not state
    assert slots(copy) == slots(state)


def test_same_seed_and_actions_replay_exactly() -> None:
    def run(seed: int) -> DoublesState:
        rng = random.Random(99)
        state = THREE.new_game(seed)
        for _ in range(120):
            if state.is_terminal():
                break
            state = state.apply(rng.choice(state.legal_actions()))
        return state

    first, second = run(5), run(5)
    assert first.history == second.history
    assert (first.hands, first.boneyard, first.scores) == (
        second.hands,
        second.boneyard,
        second.scores,
    )
    replay = THREE.new_game(5)
    for entry in first.history:
        replay = replay.apply(entry.action)
    assert (replay.hands, replay.placed, replay.ends) == (first.hands, first.placed, first.ends)
    assert run(6).history != first.history


# -- perft data and the greedy bot ----------------------------------------------------------


def _perft_cases() -> list[Any]:
    data = json.loads(DATA.read_text())
    assert data["game"] == "doubles"
    assert len(data["positions"]) >= 5
    return [pytest.param(p, id=p["id"]) for p in data["positions"]]


@pytest.mark.parametrize("case", _perft_cases())
def test_perft_data_matches_engine_and_brute_force(case: dict[str, Any]) -> None:
    game = DoublesGame(**case["options"])
    state = game.from_position(**case["position"])
    assert len(case["perft"]) >= 3
    for depth, expected in enumerate(case["perft"], start=1):
        assert perft(state, depth) == expected, depth
    depth = len(case["perft"])
    assert brute_perft(case["options"], case["position"], depth) == case["perft"][-1]


def test_greedy_beats_random() -> None:
    """The greedy bot wins clearly more than half of 100 seeded 2-player games."""
    wins = 0
    games = 100
    for seed in range(games):
        rng = random.Random(seed)
        state = TWO.new_game(seed)
        greedy_seat = seed % 2
        while not state.is_terminal():
            seat = state.current_seat
            if seat == greedy_seat:
                action = greedy_choose(state.observe(seat), rng)
                assert action in state.legal_actions()
            else:
                action = rng.choice(state.legal_actions())
            state = state.apply(action)
        outcome = state.outcome()
        assert outcome is not None
        wins += outcome.winner == greedy_seat
    assert wins >= 65, wins

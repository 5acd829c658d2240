"""Straight Dominoes: each rule of docs/rules.md section 3 and each row S1-S14, from explicit
positions.

Each test builds the position it talks about with ``StraightGame.from_position``; tiles a test
does not name go to the end of the boneyard (or into one hand when the boneyard must be empty).
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from domino_arena.bots.greedy.straight import choose as greedy_choose
from domino_arena.sdk.rules.actions import DEAL, DRAW, PASS, Action, Bid, Play
from domino_arena.sdk.rules.errors import (
    GameOptionError,
    GameOverError,
    IllegalActionError,
    PositionError,
)
from domino_arena.sdk.rules.perft import perft
from domino_arena.sdk.rules.slots import all_slots
from domino_arena.sdk.rules.state import CHANCE, TERMINAL, HandEnd
from domino_arena.sdk.rules.straight import (
    StraightGame,
    StraightObservation,
    StraightState,
    round5,
)
from domino_arena.sdk.rules.straight_layout import StraightLayout
from domino_arena.sdk.rules.tiles import DOUBLE_SIX, Tile, pip_total

from .brute import straight as brute

TWO = StraightGame()
THREE = StraightGame(players=3)
FOUR = StraightGame(players=4)
TEAMS = StraightGame(players=4, partnerships=True)

DEAD_ARMS: dict[str, list[str]] = {
    "W": ["6-0", "0-1", "1-6"],
    "E": ["6-2", "2-3", "3-6"],
    "N": ["6-5", "5-5", "5-1", "1-3", "3-5"],
    "S": ["6-4", "4-5", "5-2", "2-0"],
}
"""Spinner 6-6 with every 6 and every 5 but 5-0 laid; W, E show 6, N shows 5 and S shows 0.

Playing 5-0 on S leaves nothing anywhere that fits: with an empty boneyard the hand is blocked.
The twelve tiles left for the hands are 5-0 and 0-0 1-1 2-2 3-3 4-4 3-0 4-0 2-1 4-1 4-2 4-3.
"""


def as_tile(text: str) -> Tile:
    return Tile.parse(text)


def play(tile: str, end: str | None = None) -> Play:
    return Play(as_tile(tile), end)


def position(
    game: StraightGame,
    hands: list[list[str]],
    *,
    rest: int | None = None,
    boneyard: tuple[str, ...] | list[str] = (),
    line: tuple[str, ...] | list[str] = (),
    spinner: int | str | None = None,
    arms: dict[str, list[str]] | None = None,
    **fields: Any,
) -> StraightState:
    """Build a position; tiles not named go to the end of the boneyard, or to hand ``rest``."""
    named = {as_tile(t) for hand in hands for t in hand} | {as_tile(t) for t in (*boneyard, *line)}
    if isinstance(spinner, str):
        named.add(as_tile(spinner))
    elif spinner is not None:
        named.add(Tile(spinner, spinner))
    named |= {as_tile(t) for arm in (arms or {}).values() for t in arm}
    leftover = [str(t) for t in DOUBLE_SIX if t not in named]
    all_hands = [list(hand) for hand in hands]
    if rest is None:
        boneyard = [*boneyard, *leftover]
    else:
        all_hands[rest] += leftover
    return game.from_position(
        hands=all_hands, boneyard=boneyard, line=line, spinner=spinner, arms=arms, **fields
    )


def layout(
    line: tuple[str, ...] = (), spinner: int | None = None, **arms: list[str]
) -> StraightLayout:
    """A layout through the position parser (arms as W=[...], E=[...])."""
    laid = {as_tile(t) for t in line} | {as_tile(t) for arm in arms.values() for t in arm}
    if spinner is not None:
        laid.add(Tile(spinner, spinner))
    spare = next(str(t) for t in DOUBLE_SIX if t not in laid)
    state = position(TWO, [[spare], []], rest=1, line=line, spinner=spinner, arms=arms or None)
    return state.layout


def rule_of(state: StraightState, action: Action) -> str:
    with pytest.raises(IllegalActionError) as info:
        state.apply(action)
    return info.value.rule


# -- the game and its options ----------------------------------------------------------------


def test_game_configuration() -> None:
    assert (TWO.name, TWO.title, TWO.target, TWO.hand_size) == (
        "straight",
        "Straight Dominoes",
        250,
        7,
    )
    assert StraightGame.HAND_SIZES == {2: 7, 3: 7, 4: 7}
    assert TWO.sides == ((0,), (1,))
    assert TEAMS.sides == ((0, 2), (1, 3))
    assert TEAMS.options() == {"players": 4, "partnerships": True}
    assert TEAMS.describe() == "Straight Dominoes, 4 players in partnerships, to 250"
    assert StraightGame(**TEAMS.options()) == TEAMS


@pytest.mark.parametrize(("players", "partnerships"), [(1, False), (5, False), (3, True)])
def test_bad_options_are_refused(players: int, partnerships: bool) -> None:
    with pytest.raises(GameOptionError, match="straight"):
        StraightGame(players=players, partnerships=partnerships)


@pytest.mark.parametrize(("players", "boneyard"), [(2, 14), (3, 7), (4, 0)])
def test_deal_sizes(players: int, boneyard: int) -> None:
    """docs/rules.md 3.2: seven tiles each; the rest is the boneyard, all of it drawable (S8)."""
    state = StraightGame(players=players).new_game(seed=3)
    assert [len(h) for h in state.hands] == [7] * players
    assert len(state.boneyard) == boneyard


# -- rounding (0.6, S9) ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "expected"),
    [(n, 0) for n in (0, 1, 2)]
    + [(n, 5) for n in range(3, 8)]
    + [(n, 10) for n in range(8, 13)]
    + [(n, 15) for n in range(13, 18)]
    + [(n, 20) for n in range(18, 23)]
    + [(44, 45), (46, 45), (48, 50), (148, 150)],
)
def test_round5_table(n: int, expected: int) -> None:
    assert round5(n) == expected


@pytest.mark.parametrize(
    ("n", "expected"),
    [(Fraction(5, 2), 5), (Fraction(15, 2), 10), (Fraction(25, 2), 15), (2.5, 5), (12.5, 15)],
)
def test_round5_rounds_half_up(n: Fraction | float, expected: int) -> None:
    """docs/rules.md 0.6: a halfway value, impossible with whole pips, rounds up [CHOICE]."""
    assert round5(n) == expected


# -- layout geometry and the count (3.4, 3.5, S1-S3, X2) ---------------------------------------


def test_opening_non_double_shows_low_at_west() -> None:
    after = StraightLayout().place(as_tile("6-4"), None)
    assert after.line == ((4, 6),)
    assert after.ends == (("W", 4), ("E", 6))
    assert after.spinner is None
    assert after.count == 10


def test_opening_double_is_the_spinner_with_four_empty_arms() -> None:
    """S1: the opening double is the spinner; its count is 2n (3.5) and N/S are still shut."""
    after = StraightLayout().place(as_tile("5-5"), None)
    assert after.spinner == 5
    assert after.arms == ((), (), (), ())
    assert after.ends == (("W", 5), ("E", 5))
    assert not after.north_south_open
    assert after.count == 10


def test_a_later_double_on_east_becomes_the_spinner_and_the_line_its_west_arm() -> None:
    """S1, 3.4: the first double played later is the spinner; the line becomes arm W."""
    line = layout(line=("1-4", "4-6"))
    after = line.place(as_tile("6-6"), "E")
    assert after.spinner == 6
    assert after.line == ()
    assert after.arms == (((6, 4), (4, 1)), (), (), ())
    assert after.ends == (("W", 1), ("E", 6))
    assert after.count == 2 * 6 + 1


def test_a_later_double_on_west_becomes_the_spinner_and_the_line_its_east_arm() -> None:
    line = layout(line=("1-4", "4-6"))
    after = line.place(as_tile("1-1"), "W")
    assert after.spinner == 1
    assert after.arms == ((), ((1, 4), (4, 6)), (), ())
    assert after.ends == (("W", 1), ("E", 6))
    assert after.count == 2 * 1 + 6


def test_only_the_first_double_is_a_spinner() -> None:
    """3.4: at most one spinner; a later double is laid crosswise at the end of its arm."""
    spun = layout(line=("1-4", "4-6")).place(as_tile("6-6"), "E")
    after = spun.place(as_tile("1-1"), "W")
    assert after.spinner == 6
    assert after.arms[0] == ((6, 4), (4, 1), (1, 1))
    assert after.ends == (("W", 1), ("E", 6))
    assert after.count == 2 * 6 + 2 * 1
    # The next tile on that arm joins the double's far side; the double offers no other sides.
    further = after.place(as_tile("1-0"), "W")
    assert further.ends == (("W", 0), ("E", 6))
    assert further.count == 12 + 0


def test_north_and_south_open_once_west_and_east_hold_a_tile() -> None:
    """S2: long sides first; N and S open only after W and E each hold a tile."""
    spinner = StraightLayout().place(as_tile("5-5"), None)
    west = spinner.place(as_tile("5-3"), "W")
    assert not west.north_south_open
    assert [name for name, _ in west.ends] == ["W", "E"]
    both = west.place(as_tile("5-2"), "E")
    assert both.north_south_open
    assert both.ends == (("W", 3), ("E", 2), ("N", 5), ("S", 5))
    assert both.fits(as_tile("5-0")) == ("N", "S")
    assert both.fits(as_tile("3-2")) == ("W", "E")


@pytest.mark.parametrize(
    ("line", "spinner", "arms", "count"),
    [
        (("4-6",), None, {}, 10),  # the lone opening non-double counts h + l
        (("1-4", "4-6"), None, {}, 7),  # no spinner: W + E
        ((), 5, {}, 10),  # lone opening double spinner: 2n
        ((), 0, {}, 0),  # a blank counts 0
        ((), 5, {"W": ["5-3"]}, 13),  # 2n while E is empty, plus W
        ((), 6, {"W": ["6-4", "4-1"]}, 13),  # the line became arm W
        ((), 5, {"W": ["5-3"], "E": ["5-2"]}, 5),  # both long sides held: no 2n
        ((), 5, {"W": ["5-0"], "E": ["5-1"]}, 1),  # X2: empty N and S add nothing
        ((), 5, {"W": ["5-3"], "E": ["5-2"], "N": ["5-0"]}, 5),
        ((), 5, {"W": ["5-3"], "E": ["5-2"], "N": ["5-4"], "S": ["5-6"]}, 15),
        ((), 5, {"W": ["5-3", "3-3"], "E": ["5-2"]}, 8),  # an end crosswise double counts 2v
        ((), 6, {"W": ["6-4", "4-4"]}, 20),  # 2n + 2v
        ((), 5, {"W": ["5-3", "3-3", "3-1"], "E": ["5-2"]}, 3),  # covered double counts once
        ((), 2, {"W": ["2-1"], "E": ["2-4"], "N": ["2-6", "6-6"], "S": ["2-0", "0-0"]}, 17),
    ],
)
def test_count(
    line: tuple[str, ...], spinner: int | None, arms: dict[str, list[str]], count: int
) -> None:
    """docs/rules.md 3.5, S3, X2."""
    assert layout(line, spinner, **arms).count == count


def test_layout_text() -> None:
    assert str(StraightLayout()) == "(empty)"
    assert str(layout(line=("1-4", "4-6"))) == "1-4 4-6"
    text = str(layout((), 5, W=["5-3", "3-1"], E=["5-2"], N=["5-0"]))
    assert text == "1-3 3-5 [5-5] 5-2 | N: 5-0 | S: -"


# -- moves: the opening, compulsory play, N/S (3.3, 3.4, 3.6, S6, X1) ----------------------------


def test_the_starter_opens_with_any_tile_naming_no_end() -> None:
    """3.3, X1: any tile, no end; no draw or pass on the opening turn."""
    hand = ["6-4", "5-5", "2-1"]
    state = position(TWO, [hand, ["3-3"]], seat=0)
    assert state.legal_actions() == tuple(sorted((play(t) for t in hand), key=lambda a: a.sort_key))
    assert "docs/rules.md X1" in rule_of(state, play("6-4", "W"))
    assert "docs/rules.md 3.3" in rule_of(state, DRAW)
    assert "docs/rules.md 3.3" in rule_of(state, PASS)


def test_play_is_compulsory() -> None:
    """S6: holding a tile that fits, a seat must play even with tiles to draw."""
    state = position(TWO, [["4-0", "6-6"], ["5-5"]], line=("2-4",))
    assert state.legal_actions() == (play("4-0", "E"),)
    assert (
        rule_of(state, DRAW) == "docs/rules.md 3.6 (S6): you hold 4-0, which fits E; you must play"
    )
    assert "docs/rules.md 3.6 (S6)" in rule_of(state, PASS)


def test_every_fitting_end_is_a_separate_play() -> None:
    """0.4: a play names its end, even when the same tile fits several ends."""
    state = position(TWO, [["5-0", "3-2"], ["1-1"]], spinner=5, arms={"W": ["5-3"], "E": ["5-2"]})
    assert state.legal_actions() == (
        play("3-2", "E"),
        play("3-2", "W"),
        play("5-0", "N"),
        play("5-0", "S"),
    )


def test_north_and_south_need_west_and_east_in_play() -> None:
    state = position(TWO, [["5-1", "0-0"], ["5-0", "6-6"]], spinner=5, arms={"W": ["5-3"]})
    assert state.legal_actions() == (play("5-1", "E"),)
    assert (
        rule_of(state, play("5-1", "N"))
        == "docs/rules.md 3.4: N and S open only after W and E each hold a tile"
    )
    after = state.apply(play("5-1", "E"))
    assert after.layout.north_south_open
    assert after.legal_actions() == (play("5-0", "N"), play("5-0", "S"))


def test_there_is_no_north_before_a_spinner() -> None:
    state = position(TWO, [["4-0"], ["6-6"]], line=("2-4",))
    assert "no spinner yet" in rule_of(state, play("4-0", "N"))


@pytest.mark.parametrize(
    ("action", "rule"),
    [
        (play("6-6", "E"), "docs/rules.md 3.6: seat 0 does not hold 6-6"),
        (play("4-0"), "docs/rules.md 0.4: every play after the opening names its end"),
        (play("3-1", "W"), "docs/rules.md 3.4: 3-1 does not match the 2 showing at W"),
        (Bid(5), "docs/rules.md 0.4: only play, draw and pass are actions of Straight Dominoes"),
        (DEAL, "docs/rules.md X6: 'deal' is the chance step between hands, never a seat's action"),
    ],
)
def test_illegal_actions_name_the_rule(action: Action, rule: str) -> None:
    state = position(TWO, [["4-0", "3-1"], ["5-5"]], line=("2-4",))
    before = state.legal_actions()
    with pytest.raises(IllegalActionError) as info:
        state.apply(action)
    assert info.value.rule == rule
    assert info.value.legal == ("play 4-0 E",)
    assert state.legal_actions() == before


def test_between_hands_only_the_deal_is_legal() -> None:
    state = position(TWO, [["5-0"], ["4-4"]], rest=1, spinner=6, arms=DEAD_ARMS)
    ended = state.apply(play("5-0", "S"))
    assert ended.current_seat == CHANCE
    assert ended.legal_actions() == (DEAL,)
    assert "docs/rules.md X6" in rule_of(ended, PASS)


# -- drawing and passing (3.6, S7, S8) ---------------------------------------------------------


def test_draw_until_a_drawn_tile_fits_then_play_it() -> None:
    """S7: one DRAW action per tile, the same seat keeps its turn; the fitting tile is played."""
    state = position(
        TWO,
        [["6-6", "5-5", "6-5"], ["3-2", "0-0"]],
        line=("2-4",),
        boneyard=["1-1", "5-3", "6-0", "4-0"],
    )
    for drawn in ("1-1", "5-3", "6-0"):
        assert state.legal_actions() == (DRAW,)
        state = state.apply(DRAW)
        assert state.current_seat == 0
        assert as_tile(drawn) in state.hand(0)
    assert state.legal_actions() == (DRAW,)
    state = state.apply(DRAW)
    assert state.current_seat == 0
    assert state.legal_actions() == (play("4-0", "E"),)
    assert "you hold 4-0, which fits E; you must play" in rule_of(state, PASS)
    assert [str(e) for e in state.history] == ["seat 0: draw"] * 4
    state = state.apply(play("4-0", "E"))
    assert state.current_seat == 1
    assert len(state.hand(0)) == 6


def test_a_drawn_tile_that_fits_two_ends_may_go_on_either() -> None:
    state = position(TWO, [["6-6"], ["2-2"]], spinner=3, boneyard=["3-1"])
    state = state.apply(DRAW)
    assert state.legal_actions() == (play("3-1", "E"), play("3-1", "W"))


def test_every_tile_can_be_drawn() -> None:
    """S8: no reserve; the very last tile of the boneyard may be drawn."""
    state = position(TWO, [["6-6"], ["2-2"]], rest=1, line=("1-4",), boneyard=["5-5"])
    assert state.legal_actions() == (DRAW,)
    state = state.apply(DRAW)
    assert state.boneyard == ()
    assert state.legal_actions() == (PASS,)


def test_draw_until_the_boneyard_is_empty_then_pass() -> None:
    """3.6: nothing fits and the boneyard ran out: pass, and the turn moves on."""
    state = position(TWO, [["6-6", "5-5"], ["4-0"]], rest=1, line=("2-4",), boneyard=["1-1", "6-5"])
    state = state.apply(DRAW).apply(DRAW)
    assert state.current_seat == 0
    assert state.legal_actions() == (PASS,)
    assert rule_of(state, DRAW) == (
        "docs/rules.md 3.6: nothing fits and the boneyard is empty; you must pass"
    )
    state = state.apply(PASS)
    assert state.current_seat == 1
    assert play("4-0", "E") in state.legal_actions()


def test_no_pass_while_tiles_remain_to_draw() -> None:
    state = position(TWO, [["6-6"], ["4-0"]], line=("2-4",), boneyard=["1-1", "6-5"], rest=1)
    assert rule_of(state, PASS) == (
        "docs/rules.md 3.6 (S7): nothing fits and the boneyard holds 2 tiles; you must draw"
    )


def test_four_players_have_no_boneyard_and_pass() -> None:
    state = position(
        FOUR,
        [["6-6", "5-5", "3-3"], ["4-0"], ["1-1", "0-0"], []],
        rest=3,
        line=("2-4",),
    )
    assert state.boneyard == ()
    assert state.legal_actions() == (PASS,)
    state = state.apply(PASS)
    assert state.current_seat == 1
    assert state.legal_actions() == (play("4-0", "E"),)


# -- scoring during play (3.7, S4, S5) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("tile", "points"), [("5-0", 5), ("6-4", 10), ("5-5", 10), ("0-0", 0), ("3-1", 0)]
)
def test_the_opening_tile_scores(tile: str, points: int) -> None:
    """S5: the opening tile scores like any other play; 0 scores nothing."""
    state = position(TWO, [[tile, "2-1"], ["2-2"]])
    after = state.apply(play(tile))
    assert after.scores == (points, 0)


def test_a_multiple_of_five_scores_the_count() -> None:
    """3.7, S4: the points are the count itself; a count that is not a multiple scores nothing."""
    state = position(TWO, [["5-4", "6-1"], ["1-1"]], line=("5-6",), scores=[20, 30])
    scored = state.apply(play("5-4", "W"))
    assert scored.layout.count == 10
    assert scored.scores == (30, 30)
    unscored = state.apply(play("6-1", "E"))
    assert unscored.layout.count == 6
    assert unscored.scores == (20, 30)


def test_a_partner_scores_for_the_team() -> None:
    state = position(TEAMS, [["1-1"], ["2-2"], ["5-4", "0-0"], []], rest=3, seat=2,
                     line=("5-6",))  # fmt: skip
    assert state.apply(play("5-4", "W")).scores == (10, 0)


def test_twenty_five_scores_twenty_five() -> None:
    """3.7: 'a count of 25 scores 25' (crosswise doubles 12 and 4, N 8 and S 1)."""
    state = position(
        TWO,
        [["5-1", "0-0"], ["1-1"]],
        spinner=5,
        arms={"W": ["5-6", "6-6"], "E": ["5-2", "2-2"], "N": ["5-4", "4-4"]},
        scores=[100, 0],
    )
    assert state.layout.count == 12 + 4 + 8
    after = state.apply(play("5-1", "S"))
    assert after.layout.count == 25
    assert after.scores == (125, 0)


# -- end of the hand and its scoring (3.8, 3.9, S9-S11, X4) -------------------------------------


def test_domino_scores_round5_of_all_opponents() -> None:
    """3.9, S9: 3 players; the two opponents' pips are added, then rounded once."""
    state = position(THREE, [["5-0"], ["4-4", "2-1"], []], rest=2, spinner=6, arms=DEAD_ARMS)
    pips = pip_total(state.hand(1)) + pip_total(state.hand(2))
    after = state.apply(play("5-0", "S"))
    result = after.hand_results[-1]
    assert result.end is HandEnd.DOMINO  # X4: also blocked, domino is reported
    assert result.points == (round5(pips), 0, 0)
    assert after.scores == (round5(pips), 0, 0)
    assert after.current_seat == CHANCE


def test_domino_in_partnerships_ignores_the_partner() -> None:
    """S11: going out scores the two opponents' hands only."""
    state = position(
        TEAMS,
        [
            ["5-0"],
            ["0-0", "1-1", "2-2"],
            ["4-4", "3-3", "4-3", "4-2"],
            ["3-0", "4-0", "2-1", "4-1"],
        ],
        spinner=6,
        arms=DEAD_ARMS,
    )
    after = state.apply(play("5-0", "S"))
    assert after.hand_results[-1].end is HandEnd.DOMINO
    assert after.hand_results[-1].points == (20, 0)  # round5(6 + 15), not round5(48)
    assert after.scores == (20, 0)


def test_last_tile_scores_in_play_before_the_domino() -> None:
    """3.8: the in-play score of the last tile is applied first, then the hand is scored."""
    state = position(TWO, [["5-4"], []], rest=1, line=("5-6",))
    pips = pip_total(state.hand(1))
    after = state.apply(play("5-4", "W"))
    assert after.hand_results[-1].end is HandEnd.DOMINO
    assert after.hand_results[-1].points == (round5(pips), 0)
    assert after.scores == (10 + round5(pips), 0)


def test_block_scores_the_unique_lowest_without_subtraction() -> None:
    """3.9, S10: the lowest scores round5 of the others' pips; its own are not subtracted."""
    state = position(
        THREE,
        [["5-0", "4-0"], ["2-2", "4-3", "1-1"], ["0-0", "3-3", "4-4", "3-0", "2-1", "4-1", "4-2"]],
        spinner=6,
        arms=DEAD_ARMS,
        opener=2,
    )
    after = state.apply(play("5-0", "S"))
    assert after.seat_totals() == (4, 13, 31)
    result = after.hand_results[-1]
    assert result.end is HandEnd.BLOCKED
    assert result.points == (45, 0, 0)  # round5(44); with subtraction it would be round5(40)
    assert after.current_seat == CHANCE  # 0.7: ended at once, no pass asked for
    assert after.legal_actions() == (DEAL,)
    dealt = after.apply(DEAL)
    assert (dealt.opener, dealt.current_seat, dealt.deal_number) == (0, 0, 2)  # S13


def test_block_with_a_tie_for_lowest_scores_nothing() -> None:
    state = position(
        THREE,
        [["5-0", "4-0"], ["2-2"], []],
        rest=2,
        spinner=6,
        arms=DEAD_ARMS,
        scores=[5, 10, 15],
    )
    after = state.apply(play("5-0", "S"))
    assert after.seat_totals()[:2] == (4, 4)
    assert after.hand_results[-1].end is HandEnd.BLOCKED
    assert after.hand_results[-1].points == (0, 0, 0)
    assert after.scores == (5, 10, 15)
    assert "nobody scores" in after.hand_results[-1].detail


def test_block_in_partnerships_compares_team_totals() -> None:
    """S11: team totals; seat 1 is the lowest hand, yet its team (30) loses to 4 + 14."""
    state = position(
        TEAMS,
        [
            ["5-0", "4-0"],
            ["0-0", "1-1"],
            ["4-4", "3-3"],
            ["4-3", "4-2", "4-1", "2-1", "3-0", "2-2"],
        ],
        spinner=6,
        arms=DEAD_ARMS,
    )
    after = state.apply(play("5-0", "S"))
    assert after.side_totals() == (18, 30)
    assert after.hand_results[-1].end is HandEnd.BLOCKED
    assert after.hand_results[-1].points == (30, 0)


def test_a_draw_that_empties_the_boneyard_can_block() -> None:
    """3.8, 0.7: checked after every action; the drawer is not asked to pass."""
    state = position(
        TWO,
        [["0-0", "1-1"], ["2-2", "3-3", "4-4", "3-0", "4-0", "2-1", "4-1", "4-2", "4-3"]],
        spinner=6,
        arms={**DEAD_ARMS, "S": [*DEAD_ARMS["S"], "0-5"]},
        boneyard=[],
    )
    assert state.legal_actions() == (PASS,)  # already blocked: the pass ends it
    assert state.apply(PASS).hand_results[-1].end is HandEnd.BLOCKED
    state = position(
        TWO,
        [["0-0"], ["2-2", "3-3", "4-4", "3-0", "4-0", "2-1", "4-1", "4-2", "4-3"]],
        spinner=6,
        arms={**DEAD_ARMS, "S": [*DEAD_ARMS["S"], "0-5"]},
        boneyard=["1-1"],
    )
    after = state.apply(DRAW)
    assert after.current_seat == CHANCE
    assert after.hand_results[-1].end is HandEnd.BLOCKED
    assert after.hand_results[-1].points == (round5(pip_total(after.hand(1))), 0)


# -- the target (3.10, S12, X3) ----------------------------------------------------------------


def test_reaching_250_in_play_ends_the_game_at_once() -> None:
    state = position(TWO, [["5-4", "0-0"], ["1-1"]], line=("5-6",), scores=[245, 100])
    after = state.apply(play("5-4", "W"))
    assert after.current_seat == TERMINAL
    assert after.is_terminal()
    assert after.legal_actions() == ()
    assert after.scores == (255, 100)
    result = after.hand_results[-1]
    assert (result.end, result.points) == (HandEnd.TARGET, (0, 0))
    assert "seat 0 scored 10 in play" in result.detail
    outcome = after.outcome()
    assert outcome is not None
    assert (outcome.winner, outcome.scores) == (0, (255, 100))
    with pytest.raises(GameOverError):
        after.apply(PASS)


def test_last_tile_reaching_250_adds_no_going_out_points() -> None:
    """X3: the game ends at once; the domino is never scored."""
    state = position(TWO, [["5-4"], []], rest=1, line=("5-6",), scores=[240, 0])
    after = state.apply(play("5-4", "W"))
    assert after.scores == (250, 0)
    assert after.hand_results[-1].end is HandEnd.TARGET
    assert after.is_terminal()


def test_going_out_points_can_reach_250() -> None:
    state = position(TWO, [["6-1"], []], rest=1, line=("5-6",), scores=[245, 0])
    after = state.apply(play("6-1", "E"))
    assert after.hand_results[-1].end is HandEnd.DOMINO
    assert after.is_terminal()
    outcome = after.outcome()
    assert outcome is not None and outcome.winner == 0


# -- starters (3.3, S13) -----------------------------------------------------------------------


def _finish_hand(state: StraightState, rng: random.Random) -> StraightState:
    while state.current_seat >= 0:
        state = state.apply(rng.choice(state.legal_actions()))
    return state


def test_later_hands_rotate_the_starter() -> None:
    rng = random.Random(0)
    state = THREE.new_game(seed=4, first_seat=1)
    starters: list[int] = []
    while len(starters) < 4 and not state.is_terminal():
        starters.append(state.opener)
        assert state.current_seat == state.opener
        assert state.observe(0).opener == state.opener
        state = _finish_hand(state, rng)
        if state.is_chance():
            state = state.apply(DEAL)
    assert starters == [1, 2, 0, 1]


def test_first_starter_comes_from_the_seed() -> None:
    starters = {TWO.new_game(seed=s).opener for s in range(20)}
    assert starters == {0, 1}
    assert TWO.new_game(seed=5).opener == TWO.new_game(seed=5).opener


# -- immutability, hidden information, reproducibility -----------------------------------------


def _snapshot(state: StraightState) -> dict[str, object]:
    return {name: getattr(state, name) for name in all_slots(type(state)) if name != "_legal"}


def test_apply_never_mutates_and_tiles_are_conserved() -> None:
    rng = random.Random(1)
    for game in (TWO, THREE, TEAMS):
        state = game.new_game(seed=9)
        for _ in range(300):
            if state.is_terminal():
                break
            before = _snapshot(state)
            legal = state.legal_actions()
            assert legal and list(legal) == sorted(legal, key=lambda a: a.sort_key)
            after = state.apply(rng.choice(legal))
            assert all(getattr(state, name) is value for name, value in before.items())
            tiles = [*after.boneyard, *after.layout.tiles()]
            for hand in after.hands:
                tiles.extend(hand)
            assert sorted(tiles) == list(DOUBLE_SIX)
            gained = [b - a for a, b in zip(state.scores, after.scores, strict=True)]
            assert all(g >= 0 and g % 5 == 0 for g in gained)
            state = after


def test_clone_copies_every_slot() -> None:
    state = TWO.new_game(seed=2)
    copy = state._clone()
    for name in all_slots(StraightState):
        assert getattr(copy, name) is getattr(state, name), name


def test_observations_hold_only_the_seats_own_tiles() -> None:
    state = position(THREE, [["5-5", "3-3"], ["2-2", "1-1"], ["6-6"]], line=("2-4",))
    state = state.apply(DRAW)
    obs = state.observe(1)
    assert isinstance(obs, StraightObservation)
    assert obs.hand == state.hand(1)
    assert obs.hand_sizes == (3, 2, 1)
    assert obs.boneyard_size == len(state.boneyard)
    assert obs.legal_actions == ()
    assert obs.layout == state.layout
    assert [str(e) for e in obs.history] == ["seat 0: draw"]
    assert "boneyard" not in {f.name for f in dataclasses.fields(obs)}
    seen = set(_tiles_in([getattr(obs, f.name) for f in dataclasses.fields(obs)]))
    assert seen <= set(state.hand(1))
    # The same public position with other hidden tiles looks identical to seat 1.
    other = position(
        THREE,
        [["5-5", "3-3"], ["2-2", "1-1"], ["6-5"]],
        line=("2-4",),
        boneyard=["6-6", "1-0"],
    )
    other = other.apply(DRAW)
    assert other.observe(1) == obs
    assert other.observe(0) != state.observe(0)


def _tiles_in(value: object) -> list[Tile]:
    if isinstance(value, Tile):
        return [value]
    if isinstance(value, StraightGame):
        return []
    if isinstance(value, list | tuple):
        return [t for v in value for t in _tiles_in(v)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [t for f in dataclasses.fields(value) for t in _tiles_in(getattr(value, f.name))]
    return []


def test_same_seed_and_actions_replay_exactly() -> None:
    def run(seed: int) -> StraightState:
        rng = random.Random(42)
        state = TWO.new_game(seed=seed)
        while not state.is_terminal():
            state = state.apply(rng.choice(state.legal_actions()))
        return state

    first, second = run(7), run(7)
    assert first.history == second.history
    assert first.scores == second.scores
    assert first.hand_results == second.hand_results
    assert TWO.new_game(seed=7).hands != TWO.new_game(seed=8).hands


# -- explicit positions ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"line": ["1-4", "4-4"]}, "line: 4-4 is a double"),
        ({"line": ["1-4", "3-6"]}, "line: the tiles do not join"),
        ({"arms": {"W": ["5-3"]}}, "arms: arms need a spinner"),
        ({"spinner": "5-4"}, "spinner: 5-4 is not a double"),
        ({"spinner": 9}, "spinner: expected a number 0-6"),
        ({"spinner": 5, "line": ["1-4"]}, "line: a layout with a spinner"),
        ({"spinner": 5, "arms": {"N": ["5-3"]}}, "arms: N and S open only after W and E"),
        ({"spinner": 5, "arms": {"W": ["3-5"]}}, "arms[W]: 3-5 does not join the 5"),
        ({"spinner": 5, "arms": {"X": ["5-3"]}}, "arms: unknown arm 'X'"),
        ({"opener": 3}, "opener: 3 is not a seat"),
        ({"seat": 2}, "seat: 2 is not a seat"),
        ({"scores": [250, 0]}, "scores: side 0 has 250"),
        ({"scores": [0]}, "scores: expected 2 values"),
    ],
)
def test_bad_positions_name_the_field(fields: dict[str, Any], message: str) -> None:
    hands = [["0-0"], [str(t) for t in DOUBLE_SIX if t is not Tile(0, 0)]]
    laid = set()
    for text in (*fields.get("line", ()), *(t for a in fields.get("arms", {}).values() for t in a)):
        laid.add(text)
    spinner = fields.get("spinner")
    if isinstance(spinner, int) and 0 <= spinner <= 6:
        laid.add(f"{spinner}-{spinner}")
    hands[1] = [t for t in hands[1] if all(as_tile(t) is not as_tile(x) for x in laid)]
    with pytest.raises(PositionError, match=re.escape(message)):
        TWO.from_position(hands=hands, boneyard=[], **fields)


def test_positions_check_every_tile() -> None:
    with pytest.raises(PositionError, match="tile 4-2 is in boneyard and in layout"):
        position(TWO, [["6-6"], ["1-1"]], line=("2-4",), boneyard=["4-2"])
    with pytest.raises(PositionError, match="hands\\[1\\]: an empty hand"):
        position(TWO, [["6-6"], []], line=("2-4",))


def test_position_fields_round_trip() -> None:
    state = position(
        TEAMS,
        [["5-0"], ["0-0", "1-1", "2-2"], ["4-4", "3-3", "4-3", "4-2"], ["3-0", "4-0", "2-1"]],
        rest=3,
        spinner="6-6",
        arms=DEAD_ARMS,
        seat=0,
        opener=3,
        scores=[100, 200],
        seed=12,
        deal=4,
    )
    assert state.layout.spinner == 6
    assert state.layout.arms[3] == ((6, 4), (4, 5), (5, 2), (2, 0))
    assert (state.opener, state.scores, state.deal_number, state.seed) == (3, (100, 200), 4, 12)


# -- perft (the generic runner does the same through the registry) -----------------------------

DATA = Path(__file__).parent / "data" / "straight.perft.json"


def test_perft_data_agrees_with_engine_and_brute_force() -> None:
    data = json.loads(DATA.read_text())
    assert data["game"] == "straight"
    assert len(data["positions"]) >= 5
    for entry in data["positions"]:
        assert len(entry["perft"]) >= 3
        game = StraightGame(**entry["options"])
        state = game.from_position(**entry["position"])
        depth = len(entry["perft"])
        engine = [perft(state, d) for d in range(1, depth + 1)]
        assert engine == entry["perft"], entry["id"]
        assert (
            brute.perft(entry["options"], entry["position"], min(depth, 4))
            == entry["perft"][min(depth, 4) - 1]
        ), entry["id"]


# -- the greedy house bot ----------------------------------------------------------------------


def test_greedy_takes_the_points_then_the_heaviest_tile() -> None:
    state = position(TWO, [["5-4", "6-3", "1-0"], ["2-2"]], line=("5-6",))
    assert greedy_choose(state.observe(0), random.Random(0)) == play("5-4", "W")  # 10 points
    state = position(TWO, [["6-3", "1-0"], ["2-2"]], line=("1-6",))
    assert greedy_choose(state.observe(0), random.Random(0)) == play("6-3", "E")  # 9 pips
    state = position(TWO, [["6-6"], ["2-2"]], line=("2-4",))
    assert greedy_choose(state.observe(0), random.Random(0)) == DRAW


def test_greedy_beats_random() -> None:
    games, greedy_wins = 30, 0
    for seed in range(games):
        rng = random.Random(seed)
        greedy_seat = seed % 2
        state = TWO.new_game(seed=seed)
        while not state.is_terminal():
            seat = state.current_seat
            if seat == greedy_seat:
                action = greedy_choose(state.observe(seat), rng)
            else:
                action = rng.choice(state.legal_actions())
            state = state.apply(action)
        outcome = state.outcome()
        assert outcome is not None
        greedy_wins += outcome.winner == greedy_seat
    assert greedy_wins >= 24

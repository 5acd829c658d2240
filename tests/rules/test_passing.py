"""Scenario tests of the Passing Game engine against docs/rules.md section 2 and rows P1-P12 of 5.2.

Most tests build an explicit position with ``PassingGame.from_position`` so each rule is seen in
isolation; the rest play seeded games. Test names carry the rule they pin.
"""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import Iterator, Sequence
from itertools import pairwise
from typing import Any

import pytest

from domino_arena.bots.greedy.passing import choose as greedy_choose
from domino_arena.sdk.rules import (
    CHANCE,
    DEAL,
    DOUBLE_SIX,
    DRAW,
    PASS,
    TERMINAL,
    Action,
    Bid,
    GameOptionError,
    GameOverError,
    HandEnd,
    IllegalActionError,
    LogEntry,
    Play,
    PositionError,
    RulesError,
    Tile,
    game_options,
    make_game,
    parse_action,
)
from domino_arena.sdk.rules.dealing import first_seat, shuffled
from domino_arena.sdk.rules.passing import PassingGame, PassingObservation, PassingState

# -- helpers ----------------------------------------------------------------------------------


def t(text: str) -> Tile:
    return Tile.parse(text)


def act(text: str) -> Action:
    return parse_action(text)


def rest(*groups: Sequence[str]) -> list[str]:
    """Return, in canonical order, every tile not named in ``groups``."""
    used = {t(x) for group in groups for x in group}
    return [str(x) for x in DOUBLE_SIX if x not in used]


def position(
    hands: Sequence[Sequence[str]],
    *,
    line: Sequence[str] = (),
    boneyard: Sequence[str] | None = None,
    **options_and_fields: Any,
) -> PassingState:
    """Build a position; tiles named nowhere go to the end of the boneyard if it is not given."""
    option_names = {"partnerships", "target_rule"}
    options = {k: v for k, v in options_and_fields.items() if k in option_names}
    fields = {k: v for k, v in options_and_fields.items() if k not in option_names}
    game = PassingGame(players=len(hands), **options)
    if boneyard is None:
        boneyard = rest(*hands, line)
    return game.from_position(
        hands=[list(h) for h in hands], boneyard=list(boneyard), line=list(line), **fields
    )


def run(state: PassingState, *texts: str) -> PassingState:
    for text in texts:
        state = state.apply(act(text))
    return state


def random_walk(game: PassingGame, seed: int, steps: int = 10_000) -> Iterator[PassingState]:
    """Yield every state of a game played with seeded uniformly random legal actions."""
    rng = random.Random(seed)
    state = game.new_game(seed)
    yield state
    for _ in range(steps):
        if state.is_terminal():
            return
        state = state.apply(rng.choice(state.legal_actions()))
        yield state


GAMES = [
    PassingGame(players=2),
    PassingGame(players=3),
    PassingGame(players=4),
    PassingGame(players=4, partnerships=True),
]


# A line that uses up every 6 but 6-1 and 6-2 and shows 6 at both ends (used for dead positions).
SIX_LINE = ["6-6", "6-0", "0-3", "3-6", "6-4", "4-5", "5-6"]


# -- 2.2 deal and boneyard --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "size", "stock"),
    [(GAMES[0], 7, 14), (GAMES[1], 7, 7), (GAMES[2], 6, 4), (GAMES[3], 6, 4)],
)
def test_deal_sizes_and_boneyard_2_2(game: PassingGame, size: int, stock: int) -> None:
    for seed in range(5):
        state = game.new_game(seed)
        assert [len(h) for h in state.hands] == [size] * game.players
        assert len(state.boneyard) == stock
        everything = [x for h in state.hands for x in h] + list(state.boneyard)
        assert sorted(everything) == list(DOUBLE_SIX)
        view = state.observe(0)
        assert view.boneyard_size == stock
        assert view.hand_sizes == (size,) * game.players
        assert view.ends is None
        assert view.line == ()


def test_deal_is_round_robin_from_the_seeded_shuffle_0_3() -> None:
    state = PassingGame(players=3).new_game(11)
    order = shuffled(DOUBLE_SIX, 11, 0)
    for seat in range(3):
        assert state.hands[seat] == tuple(sorted(order[seat:21:3]))
    assert state.boneyard == tuple(order[21:])


@pytest.mark.parametrize(("players", "drawable"), [(2, 12), (3, 5), (4, 2)])
def test_only_all_but_the_last_two_tiles_can_be_drawn_p2(players: int, drawable: int) -> None:
    state = PassingGame(players=players).new_game(3)
    dealt = state.boneyard
    state = state.apply(state.legal_actions()[0])
    draws = 0
    while DRAW in state.legal_actions():
        state = state.apply(DRAW)
        draws += 1
    assert draws == drawable
    assert state.boneyard == dealt[-2:]
    in_hands = {x for hand in state.hands for x in hand}
    assert set(dealt[:drawable]) <= in_hands


# -- 2.3 and P11 starter ----------------------------------------------------------------------


def test_first_starter_is_random_from_the_seed_2_3() -> None:
    game = PassingGame(players=3)
    starters = set()
    for seed in range(30):
        state = game.new_game(seed)
        assert state.opener == state.current_seat == first_seat(seed, 3)
        assert game.new_game(seed).opener == state.opener
        starters.add(state.opener)
    assert starters == {0, 1, 2}


def test_first_seat_can_be_given_and_is_checked() -> None:
    game = PassingGame(players=4)
    assert game.new_game(5, first_seat=2).current_seat == 2
    assert game.new_game(5, first_seat=2).observe(0).opener == 2
    with pytest.raises(PositionError, match="first_seat"):
        game.new_game(5, first_seat=4)


@pytest.mark.parametrize("game", GAMES, ids=str)
def test_starter_rotates_clockwise_every_hand_p11(game: PassingGame) -> None:
    hands_seen = 0
    for seed in range(8):
        starters: list[int] = []
        for state in random_walk(game, seed=seed):
            if state.current_seat >= 0 and len(starters) < state.deal_number:
                starters.append(state.opener)
                assert state.current_seat == state.opener
        assert starters[0] == first_seat(seed, game.players)
        for before, after in pairwise(starters):
            assert after == (before + 1) % game.players
        hands_seen += len(starters)
    assert hands_seen >= 12


def test_starter_rotation_continues_from_a_position_p11() -> None:
    hands = [["1-0"], ["6-6", "5-5"], ["6-5", "4-4"], ["6-4", "3-3"]]
    state = position(hands, line=["0-2"], seat=0, opener=2, deal=3, seed=4)
    state = run(state, "play 1-0 W")
    assert state.current_seat == CHANCE
    state = state.apply(DEAL)
    assert state.deal_number == 4
    assert state.opener == state.current_seat == 3
    assert state.hands == tuple(tuple(sorted(shuffled(DOUBLE_SIX, 4, 3)[s:24:4])) for s in range(4))


# -- P4 and X1 the opening turn -----------------------------------------------------------------


def test_opening_turn_must_place_a_tile_and_names_no_end_p4_x1() -> None:
    state = PassingGame(players=2).new_game(1)
    hand = state.hands[state.current_seat]
    assert state.legal_actions() == tuple(Play(x) for x in hand)
    assert PASS not in state.legal_actions()
    assert DRAW not in state.legal_actions()
    for bad in (PASS, DRAW):
        with pytest.raises(IllegalActionError, match="P4") as info:
            state.apply(bad)
        assert info.value.legal == tuple(str(a) for a in state.legal_actions())
    with pytest.raises(IllegalActionError, match="X1"):
        state.apply(Play(hand[0], "W"))


@pytest.mark.parametrize(
    ("tile", "ends"), [("6-3", (3, 6)), ("3-6", (3, 6)), ("5-5", (5, 5)), ("1-0", (0, 1))]
)
def test_opening_tile_shows_low_at_west_high_at_east_2_4(tile: str, ends: tuple[int, int]) -> None:
    hands = [[tile, "2-2"], ["4-4"]]
    state = position(hands, seat=0).apply(Play(t(tile)))
    assert state.ends == ends
    assert state.line == (ends,)
    assert state.observe(1).ends == ends
    assert state.current_seat == 1


# -- 2.4 and 2.5 matching ---------------------------------------------------------------------


def test_plays_match_the_number_showing_at_w_or_e_2_5() -> None:
    hands = [["3-1", "6-2", "5-4", "3-6"], ["4-4"]]
    state = position(hands, line=["3-0", "0-6"], seat=0)
    assert state.ends == (3, 6)
    assert state.legal_actions() == (
        act("play 3-1 W"),
        act("play 6-2 E"),
        act("play 6-3 E"),
        act("play 6-3 W"),
        DRAW,
        PASS,
    )
    east = state.apply(act("play 6-2 E"))
    assert east.ends == (3, 2)
    assert east.line == ((3, 0), (0, 6), (6, 2))
    west = state.apply(act("play 3-1 W"))
    assert west.ends == (1, 6)
    assert west.line == ((1, 3), (3, 0), (0, 6))
    both = state.apply(act("play 6-3 W"))
    assert both.ends == (6, 6)
    assert state.apply(act("play 6-3 E")).ends == (3, 3)


def test_a_crosswise_double_does_not_branch_2_4_p12() -> None:
    hands = [["6-6", "6-1", "2-2"], ["4-4", "0-0"]]
    state = position(hands, line=["3-6"], seat=0, passes=0)
    state = run(state, "play 6-6 E")
    assert state.ends == (3, 6)
    assert state.line == ((3, 6), (6, 6))
    assert all(
        not isinstance(a, Play) or a.end in ("W", "E") for a in run(state, "pass").legal_actions()
    )
    state = run(state, "pass", "play 6-1 E")
    assert state.ends == (3, 1)
    assert state.line == ((3, 6), (6, 6), (6, 1))


def test_a_double_on_equal_ends_can_go_either_way_2_4() -> None:
    state = position([["4-2", "4-4"], ["0-0"]], line=["2-3", "3-4"], seat=0)
    state = run(state, "play 4-2 W")
    assert state.ends == (4, 4)
    state = run(state, "pass")
    assert act("play 4-4 W") in state.legal_actions()
    assert act("play 4-4 E") in state.legal_actions()


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("play 6-2 W", "2.5: 6-2 does not match 3 showing at W"),
        ("play 0-0 E", "does not hold 0-0"),
        ("play 6-2 N", "2.4"),
        ("play 6-2", "2.4"),
        ("bid 5", "only play, draw or pass"),
        ("deal", "only play, draw or pass"),
    ],
)
def test_illegal_actions_name_the_rule_and_list_the_legal_ones(text: str, rule: str) -> None:
    state = position([["6-2", "5-4"], ["0-0"]], line=["3-0", "0-6"], seat=0)
    with pytest.raises(IllegalActionError) as info:
        state.apply(act(text))
    error = info.value
    assert rule in error.rule
    assert error.action == text
    assert error.legal == ("play 6-2 E", "draw", "pass")
    assert "legal actions: play 6-2 E, draw, pass" in str(error)


@pytest.mark.parametrize(
    ("text", "rule"), [("play 0-0 E", "docs/rules.md 2.5"), ("pass", "docs/rules.md X6")]
)
def test_every_rejection_cites_rules_md(text: str, rule: str) -> None:
    """The reason a bot reads names the rule broken, as every other rejection does."""
    hands = [["6-2"], ["0-0"]] if text == "pass" else [["6-2", "5-4"], ["0-0"]]
    state = position(hands, line=["3-0", "0-6"], seat=0)
    if text == "pass":
        state = run(state, "play 6-2 E")  # seat 0 goes out: the deal step is due
        assert state.current_seat == CHANCE
    with pytest.raises(IllegalActionError) as info:
        state.apply(act(text))
    assert info.value.rule.startswith(rule)


# -- P3 voluntary pass and draw; P1 a draw ends the turn ----------------------------------------


def test_pass_and_draw_are_legal_while_holding_a_playable_tile_p3() -> None:
    state = position([["6-2"], ["5-5"]], line=["3-6"], seat=0)
    assert state.legal_actions() == (act("play 6-2 E"), DRAW, PASS)
    passed = state.apply(PASS)
    assert passed.hands == state.hands
    assert passed.boneyard == state.boneyard
    assert passed.current_seat == 1
    assert passed.passes == 1
    drew = state.apply(DRAW)
    assert drew.current_seat == 1


def test_a_draw_takes_one_tile_and_ends_the_turn_p1() -> None:
    state = position([["6-2"], ["5-5"]], line=["3-6"], boneyard=None, seat=0)
    first = state.boneyard[0]
    after = state.apply(DRAW)
    assert after.hands[0] == tuple(sorted((t("6-2"), first)))
    assert after.boneyard == state.boneyard[1:]
    assert after.current_seat == 1
    assert after.line == state.line
    assert after.observe(1).boneyard_size == len(state.boneyard) - 1
    assert after.history[-1] == LogEntry(0, DRAW)


def test_draw_is_illegal_with_two_tiles_left_p2() -> None:
    full = [["1-0"], rest(["1-0"], ["6-5"], ["6-6", "5-5", "4-4"])]
    three = position(full, line=["6-5"], boneyard=["6-6", "5-5", "4-4"], seat=0)
    assert DRAW in three.legal_actions()
    full2 = [["1-0", "4-4"], full[1]]
    two = position(full2, line=["6-5"], boneyard=["6-6", "5-5"], seat=0)
    assert two.legal_actions() == (PASS,)
    with pytest.raises(IllegalActionError, match=r"2\.2: draw needs 3 or more .* holds 2"):
        two.apply(DRAW)


# -- 2.6 end of the hand ------------------------------------------------------------------------


def test_domino_ends_the_hand_and_scores_the_others_pips_2_6a() -> None:
    hands = [["6-1"], ["5-5", "4-0"], ["3-3"]]
    state = position(hands, line=["2-1"], seat=0)
    state = run(state, "play 6-1 E")
    assert state.current_seat == CHANCE
    assert state.legal_actions() == (DEAL,)
    result = state.hand_results[-1]
    assert result.end is HandEnd.DOMINO
    assert result.points == (20, 0, 0)
    assert state.scores == (20, 0, 0)
    assert "seat 0 went out" in result.detail
    assert state.observe(2).current_seat == CHANCE
    assert state.observe(2).legal_actions == ()


def _dead_after_play() -> PassingState:
    """Seat 0 plays 6-5 on the 5 at E: both ends show 6, the two 6s left are the reserve."""
    line = SIX_LINE[:-1]  # W shows 6, E shows 5
    hands = [["6-5", "1-0"], ["2-2", "5-5"], ["3-3", "1-1"]]
    boneyard = ["6-1", "6-2"]
    hands[2] = hands[2] + rest(*hands, line, boneyard)
    return position(hands, line=line, boneyard=boneyard, seat=0)


def test_dead_position_ends_the_hand_at_once_p6() -> None:
    state = _dead_after_play()
    assert state.current_seat == 0
    after = run(state, "play 6-5 E")
    assert after.ends == (6, 6)
    assert after.current_seat == CHANCE
    result = after.hand_results[-1]
    assert result.end is HandEnd.BLOCKED
    assert result.points == (sum(after.seat_totals()) - 2, 0, 0)
    assert "nobody can play" in result.detail


def test_dead_position_after_a_draw_leaves_two_tiles_p6() -> None:
    boneyard = ["2-1", "6-1", "6-2"]
    hands = [["1-0"], ["2-2", "5-5"], ["3-3", "1-1"]]
    hands[1] = hands[1] + rest(*hands, SIX_LINE, boneyard)
    state = position(hands, line=SIX_LINE, boneyard=boneyard, seat=0)
    assert state.legal_actions() == (DRAW, PASS)
    assert state.apply(PASS).current_seat == 1  # 3 left: a draw is still possible, not dead
    after = state.apply(DRAW)
    assert after.hands[0] == (t("1-0"), t("2-1"))
    assert after.current_seat == CHANCE
    assert after.hand_results[-1].end is HandEnd.BLOCKED
    assert after.hand_results[-1].points == (sum(after.seat_totals()) - 2 * 4, 0, 0)


def test_no_dead_position_while_any_seat_can_play_p6() -> None:
    hands = [["1-0"], ["6-5"], ["3-3"]]
    line = SIX_LINE[:-1]
    boneyard = ["6-1", "6-2"]
    hands[2] = hands[2] + rest(*hands, line, boneyard)
    state = position(hands, line=line, boneyard=boneyard, seat=0)
    after = state.apply(PASS)
    assert after.current_seat == 1
    assert after.hand_results == ()


@pytest.mark.parametrize("game", GAMES, ids=str)
def test_pass_out_after_n_passes_in_a_row_p5(game: PassingGame) -> None:
    n = game.players
    state = game.new_game(21)
    state = state.apply(state.legal_actions()[0])
    for count in range(1, n):
        state = state.apply(PASS)
        assert state.passes == count
        assert state.observe(0).passes == count
        assert state.hand_results == ()
    state = state.apply(PASS)
    assert state.hand_results[-1].end is HandEnd.PASSED_OUT
    assert f"{n} passes in a row" in state.hand_results[-1].detail
    assert state.current_seat in (CHANCE, TERMINAL)


@pytest.mark.parametrize("reset", ["draw", "play 6-2 E"])
def test_a_draw_or_play_resets_the_pass_count_p5(reset: str) -> None:
    hands = [["6-2", "0-0"], ["5-5"], ["4-4"]]
    state = position(hands, line=["3-6"], seat=0, passes=2)
    after = run(state, reset)
    assert after.passes == 0
    assert after.current_seat == 1
    after = run(after, "pass", "pass")
    assert after.hand_results == ()
    after = run(after, "pass")
    assert after.hand_results[-1].end is HandEnd.PASSED_OUT


def test_domino_is_reported_before_the_dead_position_x4() -> None:
    line = SIX_LINE[:-1]
    hands = [["6-5"], ["2-2", "5-5"], ["3-3", "1-1"]]
    boneyard = ["6-1", "6-2"]
    hands[2] = hands[2] + rest(*hands, line, boneyard)
    state = position(hands, line=line, boneyard=boneyard, seat=0)
    after = run(state, "play 6-5 E")
    assert after.hand_results[-1].end is HandEnd.DOMINO


def test_dead_position_is_reported_before_the_pass_out_x4() -> None:
    # Only a built position can be dead and one pass short of a pass-out at once.
    hands = [["1-0"], ["2-2", "5-5"], ["3-3", "1-1"]]
    boneyard = ["6-1", "6-2"]
    hands[1] = hands[1] + rest(*hands, SIX_LINE, boneyard)
    state = position(hands, line=SIX_LINE, boneyard=boneyard, seat=0, passes=2)
    after = state.apply(PASS)
    assert after.hand_results[-1].end is HandEnd.BLOCKED


# -- 2.7 scoring ------------------------------------------------------------------------------


def _pass_out(hands: list[list[str]], **kwargs: Any) -> PassingState:
    """End a hand by N passes from a position whose line shows 6 at both ends."""
    boneyard = rest(*hands, SIX_LINE)
    fields = {"seat": 0, "passes": len(hands) - 1, **kwargs}
    return position(hands, line=SIX_LINE, boneyard=boneyard, **fields).apply(PASS)


def test_winner_scores_others_minus_own_p7() -> None:
    # Pip totals 5, 10, 12: seat 0 scores (10 + 12) - 5 = 17, not (10-5) + (12-5) = 12.
    state = _pass_out([["5-0"], ["5-5"], ["5-3", "3-1"]])
    result = state.hand_results[-1]
    assert result.points == (17, 0, 0)
    assert state.scores == (17, 0, 0)
    assert "5/10/12" in result.detail


def test_score_adds_to_previous_scores_p7() -> None:
    state = _pass_out([["5-5"], ["2-0"], ["5-3", "1-0"]], scores=[30, 40, 50])
    assert state.hand_results[-1].points == (0, 17, 0)
    assert state.scores == (30, 57, 50)


def test_tie_for_lowest_scores_nothing_p8() -> None:
    state = _pass_out([["5-0"], ["4-1"], ["5-3", "3-1"]], scores=[1, 2, 3])
    result = state.hand_results[-1]
    assert result.points == (0, 0, 0)
    assert state.scores == (1, 2, 3)
    assert "nobody scores" in result.detail
    assert state.current_seat == CHANCE


def test_player_going_out_ties_an_opponent_holding_only_double_blank_p8() -> None:
    hands = [["3-2"], ["0-0"], ["5-5", "4-4"]]
    state = position(hands, line=["1-3"], seat=0, scores=[100, 0, 0])
    after = run(state, "play 3-2 E")
    result = after.hand_results[-1]
    assert result.end is HandEnd.DOMINO
    assert result.points == (0, 0, 0)
    assert after.scores == (100, 0, 0)
    assert after.current_seat == CHANCE


def test_partnership_teams_compare_totals_p9() -> None:
    # Seat 1 goes out, but B+D hold 0 + 20 against A+C's 3 + 4: A+C score 20 - 7 = 13.
    hands = [["2-1"], ["6-0"], ["3-1"], ["6-6", "4-4"]]
    state = position(hands, line=["0-5"], seat=1, partnerships=True, scores=[10, 10])
    after = run(state, "play 6-0 W")
    result = after.hand_results[-1]
    assert result.end is HandEnd.DOMINO
    assert result.points == (13, 0)
    assert after.scores == (23, 10)
    assert after.game.sides == ((0, 2), (1, 3))


def test_partnership_equal_team_totals_score_nothing_p9() -> None:
    hands = [["2-1"], ["6-0"], ["3-1"], ["3-2", "1-1"]]
    state = position(hands, line=["0-5"], seat=1, partnerships=True)
    after = run(state, "play 6-0 W")
    assert after.hand_results[-1].points == (0, 0)
    assert "tie for lowest" in after.hand_results[-1].detail


def test_partnership_team_of_lower_total_wins_the_pass_out_p9() -> None:
    state = _pass_out([["5-0"], ["4-0"], ["5-5"], ["5-3", "1-0"]], partnerships=True)
    # A+C: 5 + 10 = 15; B+D: 4 + 9 = 13; B+D score 15 - 13 = 2.
    assert state.hand_results[-1].points == (0, 2)


# -- 2.8 target and X6 the deal between hands ---------------------------------------------------


@pytest.mark.parametrize(
    ("players", "partnerships", "rule", "target"),
    [
        (2, False, "gamerules", 101),
        (3, False, "gamerules", 101),
        (4, False, "gamerules", 61),
        (4, True, "gamerules", 61),
        (2, False, "pagat", 101),
        (3, False, "pagat", 61),
        (4, False, "pagat", 61),
        (4, True, "pagat", 101),
    ],
)
def test_targets_p10(players: int, partnerships: bool, rule: str, target: int) -> None:
    game = make_game("passing", players=players, partnerships=partnerships, target_rule=rule)
    assert game.target == target
    assert game.describe().endswith(f"to {target}")


# Seat 0 goes out with 1-0 (line W shows 0); the others, or the other team, hold 11 pips more.
TWO = [["1-0"], ["6-5"]]
THREE = [["1-0"], ["4-0"], ["3-2", "1-1"]]
FOUR = [["1-0"], ["4-0"], ["3-2"], ["1-1"]]
TEAMS = [["1-0"], ["5-0"], ["0-0"], ["3-3"]]


@pytest.mark.parametrize(
    ("options", "hands", "scores", "won"),
    [
        ({"players": 2}, TWO, [90, 0], (101, 0)),
        ({"players": 2}, TWO, [89, 0], None),
        ({"players": 3}, THREE, [60, 0, 0], None),
        ({"players": 3}, THREE, [90, 0, 0], (101, 0, 0)),
        ({"players": 3, "target_rule": "pagat"}, THREE, [50, 0, 60], (61, 0, 60)),
        ({"players": 4}, FOUR, [50, 0, 0, 0], (61, 0, 0, 0)),
        ({"players": 4}, FOUR, [49, 0, 0, 0], None),
        ({"players": 4, "partnerships": True}, TEAMS, [50, 0], (61, 0)),
        ({"players": 4, "partnerships": True}, TEAMS, [49, 0], None),
        ({"players": 4, "partnerships": True, "target_rule": "pagat"}, TEAMS, [50, 0], None),
        ({"players": 4, "partnerships": True, "target_rule": "pagat"}, TEAMS, [90, 0], (101, 0)),
    ],
)
def test_the_game_ends_when_the_target_is_reached_2_8_p10(
    options: dict[str, Any],
    hands: list[list[str]],
    scores: list[int],
    won: tuple[int, ...] | None,
) -> None:
    game = make_game("passing", **options)
    assert isinstance(game, PassingGame)
    boneyard = rest(*hands, ["0-2"])
    state = game.from_position(hands=hands, boneyard=boneyard, line=["0-2"], scores=scores)
    after = run(state, "play 1-0 W")
    assert after.hand_results[-1].points[0] == 11
    if won is None:
        assert after.current_seat == CHANCE
        assert after.outcome() is None
        assert after.legal_actions() == (DEAL,)
        return
    assert after.is_terminal()
    assert after.current_seat == TERMINAL
    assert after.legal_actions() == ()
    assert after.scores == won
    outcome = after.outcome()
    assert outcome is not None
    assert outcome.winner == 0
    assert outcome.scores == won
    assert outcome.winning_seats == game.sides[0]
    with pytest.raises(GameOverError):
        after.apply(DEAL)
    with pytest.raises(GameOverError):
        after.apply(PASS)


def test_the_next_hand_is_dealt_by_a_logged_deal_step_x6() -> None:
    hands = [["6-1"], ["5-5", "4-0"], ["3-3"]]
    state = position(hands, line=["2-1"], seat=0, seed=99, deal=2, opener=1, scores=[5, 6, 7])
    ended = run(state, "play 6-1 E")
    with pytest.raises(IllegalActionError, match="between hands only the 'deal' step") as info:
        ended.apply(PASS)
    assert info.value.legal == ("deal",)
    dealt = ended.apply(DEAL)
    assert dealt.history[-1] == LogEntry(CHANCE, DEAL)
    assert str(dealt.history[-1]) == "chance: deal"
    assert dealt.deal_number == 3
    assert dealt.scores == (25, 6, 7)
    assert dealt.opener == dealt.current_seat == 2
    assert dealt.line == ()
    assert dealt.ends is None
    assert dealt.passes == 0
    order = shuffled(DOUBLE_SIX, 99, 2)
    assert dealt.hands == tuple(tuple(sorted(order[s:21:3])) for s in range(3))
    assert dealt.boneyard == tuple(order[21:])
    assert dealt.deal_history(0) == ()
    assert dealt.observe(2).history == ()
    assert [str(e) for e in run(dealt, str(dealt.legal_actions()[0])).observe(0).history] == [
        f"seat 2: {dealt.legal_actions()[0]}"
    ]


def test_a_whole_game_reaches_the_target_and_stops() -> None:
    for game in GAMES:
        states = list(random_walk(game, seed=4))
        final = states[-1]
        assert final.is_terminal()
        outcome = final.outcome()
        assert outcome is not None
        assert final.scores[outcome.winner] >= game.target
        assert max(final.scores) == final.scores[outcome.winner]
        assert (
            sum(r.points[outcome.winner] for r in final.hand_results)
            == final.scores[outcome.winner]
        )
        assert all(sum(1 for p in r.points if p) <= 1 for r in final.hand_results)
        assert [r.deal for r in final.hand_results] == list(range(1, final.deal_number + 1))


# -- immutability, hidden information, determinism --------------------------------------------


def _snapshot(state: PassingState) -> tuple[Any, ...]:
    return (
        state.hands,
        state.boneyard,
        state.line,
        state.ends,
        state.passes,
        state.current_seat,
        state.opener,
        state.scores,
        state.hand_results,
        state.deal_number,
        state.history,
        state.legal_actions(),
    )


@pytest.mark.parametrize("game", GAMES, ids=str)
def test_apply_never_changes_the_state(game: PassingGame) -> None:
    for i, state in enumerate(random_walk(game, seed=12)):
        if i > 300:
            break
        before = _snapshot(state)
        for action in state.legal_actions():
            state.apply(action)
        with pytest.raises(RulesError):
            state.apply(Bid(4))
        assert _snapshot(state) == before


def _tiles_in(value: Any) -> Iterator[Tile]:
    if isinstance(value, Tile):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _tiles_in(item)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            if field.name != "game":
                yield from _tiles_in(getattr(value, field.name))


@pytest.mark.parametrize("game", GAMES, ids=str)
def test_observations_hide_other_hands_and_the_boneyard(game: PassingGame) -> None:
    names = {f.name for f in dataclasses.fields(PassingObservation)}
    assert not any("boneyard" in n and n != "boneyard_size" for n in names)
    for state in random_walk(game, seed=31):
        played = {e.action.tile for e in state.deal_history(0) if isinstance(e.action, Play)}
        for seat in range(game.players):
            view = state.observe(seat)
            assert view.hand == state.hands[seat]
            assert set(_tiles_in(view)) <= set(state.hands[seat]) | played
            assert view.boneyard_size == len(state.boneyard)
            assert view.hand_sizes == tuple(len(h) for h in state.hands)
            if seat == state.current_seat:
                assert view.legal_actions == state.legal_actions()
            else:
                assert view.legal_actions == ()


def test_same_seed_same_game_x6() -> None:
    game = PassingGame(players=3)
    first = list(random_walk(game, seed=5))
    second = list(random_walk(game, seed=5))
    assert first[-1].history == second[-1].history
    assert first[-1].hand_results == second[-1].hand_results
    assert first[-1].outcome() == second[-1].outcome()
    assert game.new_game(5).hands != game.new_game(6).hands


# -- explicit positions -------------------------------------------------------------------------


def _good() -> dict[str, Any]:
    hands = [["6-6", "5-5"], ["4-4"]]
    return {"hands": hands, "boneyard": rest(*hands, ["1-0", "0-2"]), "line": ["1-0", "0-2"]}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"hands": [["6-6", "5-5"]]}, "hands: expected 2 hands"),
        ({"hands": [["6-6", "5-5"], ["4-4", "9-9"]]}, "hands[1]: no tile 9-9"),
        ({"hands": [["6-6", "5-5"], ["4-4", "6-6"]]}, "tile 6-6 is in hands[0] and in hands[1]"),
        ({"boneyard": ["3-3"]}, "missing"),
        ({"boneyard": ["x", "3-3"]}, "boneyard: bad tile"),
        ({"line": ["1-0", "2-0"]}, "line: the tiles do not join"),
        ({"line": ["1-0", "0-7"]}, "line: no tile 0-7"),
        ({"line": ["1-0", "0-2", "6-6"]}, "in layout"),
        ({"seat": 2}, "seat: 2 is not a seat"),
        ({"seat": -1}, "seat"),
        ({"scores": [1, 2, 3]}, "scores: expected 2 values"),
        ({"deal": 0}, "deal must be 1 or more"),
    ],
)
def test_position_errors_name_the_field(change: dict[str, Any], field: str) -> None:
    fields = {**_good(), **change}
    with pytest.raises(PositionError) as info:
        PassingGame(players=2).from_position(**fields)
    assert field in str(info.value)


def test_a_good_position_round_trips_its_fields() -> None:
    state = PassingGame(players=2).from_position(
        **_good(), seat=1, passes=1, scores=[3, 4], opener=0, deal=2
    )
    assert state.ends == (1, 2)
    assert state.line == ((1, 0), (0, 2))
    assert state.current_seat == 1
    assert state.passes == 1
    assert state.scores == (3, 4)
    assert state.opener == 0
    assert state.deal_number == 2


@pytest.mark.parametrize("passes", [-1, 2, 5])
def test_position_rejects_a_pass_count_outside_0_to_n_minus_1(passes: int) -> None:
    """A hand with N or more passes in a row is already over (P5); more would never end."""
    with pytest.raises(PositionError, match="passes"):
        PassingGame(players=2).from_position(**_good(), passes=passes)


@pytest.mark.parametrize("starter", [-1, 2])
def test_position_rejects_a_starter_that_is_not_a_seat(starter: int) -> None:
    with pytest.raises(PositionError, match="opener"):
        PassingGame(players=2).from_position(**_good(), opener=starter)


# -- options through the registry -------------------------------------------------------------


def test_registry_defaults_and_options_round_trip() -> None:
    game = make_game("passing")
    assert game == PassingGame(players=2, partnerships=False, target_rule="gamerules")
    assert game_options("passing") == {
        "players": 2,
        "partnerships": False,
        "target_rule": "gamerules",
    }
    for g in GAMES:
        assert make_game("passing", **g.options()) == g
    assert make_game("passing", players=4, partnerships=True).describe() == (
        "Passing Game, 4 players in partnerships, to 61"
    )
    assert make_game("passing", players=3).sides == ((0,), (1,), (2,))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"seats": 2}, "unknown option 'seats'"),
        ({"players": "2"}, "option 'players' must be int"),
        ({"players": True}, "option 'players' must be int"),
        ({"partnerships": 1}, "option 'partnerships' must be bool"),
        ({"target_rule": 61}, "option 'target_rule' must be str"),
        ({"players": 5}, "players must be 2, 3 or 4, got 5"),
        ({"players": 1}, "players must be 2, 3 or 4, got 1"),
        ({"players": 3, "partnerships": True}, "partnerships need 4 players, got 3"),
        ({"target_rule": "house"}, "target_rule must be one of gamerules, pagat"),
    ],
)
def test_registry_rejects_bad_options(options: dict[str, Any], message: str) -> None:
    with pytest.raises(GameOptionError, match=re.escape(message)):
        make_game("passing", **options)


# -- the greedy bot -----------------------------------------------------------------------------


def _greedy(state: PassingState, seed: int = 0) -> Action:
    return greedy_choose(state.observe(state.current_seat), random.Random(seed))


def test_greedy_plays_the_heaviest_tile() -> None:
    state = position([["6-2", "3-1", "6-5"], ["0-0"]], line=["3-6"], seat=0)
    assert _greedy(state) == act("play 6-5 E")


def test_greedy_prefers_ends_that_its_tiles_can_match() -> None:
    # 6-3 sheds 9 either way; on W it leaves 6 and 6 (matched by 6-0), on E 3 and 3 (nothing).
    state = position([["6-3", "6-0", "2-1"], ["0-0"]], line=["3-5", "5-6"], seat=0)
    assert _greedy(state) == act("play 6-3 W")


def test_greedy_draws_only_when_it_cannot_play_and_then_passes() -> None:
    state = position([["1-1"], ["0-0"]], line=["3-6"], seat=0)
    assert _greedy(state) == DRAW
    full = [["1-1", "1-0"], rest(["1-1", "1-0"], ["3-6"], ["6-6", "5-5"])]
    stuck = position(full, line=["3-6"], boneyard=["6-6", "5-5"], seat=0)
    assert _greedy(stuck) == PASS


@pytest.mark.parametrize("game", GAMES, ids=str)
def test_greedy_is_always_legal(game: PassingGame) -> None:
    rng = random.Random(2)
    for seed in range(5):
        state = game.new_game(seed)
        while not state.is_terminal():
            if state.is_chance():
                state = state.apply(DEAL)
                continue
            legal = state.legal_actions()
            action = greedy_choose(state.observe(state.current_seat), rng)
            assert action in legal
            if any(isinstance(a, Play) for a in legal):
                assert isinstance(action, Play)
            elif DRAW in legal:
                assert action == DRAW
            state = state.apply(action)


def test_greedy_beats_uniform_random() -> None:
    game = PassingGame(players=2)
    greedy_wins = 0
    games = 30
    for seed in range(games):
        rng = random.Random(seed)
        greedy_seat = seed % 2
        state = game.new_game(seed)
        while not state.is_terminal():
            if state.is_chance():
                state = state.apply(DEAL)
            elif state.current_seat == greedy_seat:
                state = state.apply(greedy_choose(state.observe(greedy_seat), rng))
            else:
                state = state.apply(rng.choice(state.legal_actions()))
        outcome = state.outcome()
        assert outcome is not None
        greedy_wins += outcome.winner == greedy_seat
    assert greedy_wins >= 25

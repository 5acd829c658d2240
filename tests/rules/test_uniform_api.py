"""The API the four games share: the tile reader, opener and phase, explicit later deals,
hand results with winners and in-play points, open ends, and the option error (issue 8).

The hand results are worked out by hand from docs/rules.md in each test's comment.
"""

from __future__ import annotations

from typing import Any, TypeVar

import pytest

from domino_arena.sdk.rules import (
    DOUBLE_SIX,
    DoublesGame,
    GameOptionError,
    HandEnd,
    InvalidActionError,
    LineObservation,
    MoonGame,
    OpenEnd,
    PassingGame,
    Phase,
    PositionError,
    RulesError,
    StraightGame,
    Tile,
    make_game,
    parse_action,
    parse_tiles,
)
from domino_arena.sdk.rules.dealing import deal_round_robin
from domino_arena.sdk.rules.moon import MOON_TILES
from domino_arena.sdk.rules.slots import all_slots
from domino_arena.sdk.rules.state import GameState


def rest(*used: str, tiles: tuple[Tile, ...] = DOUBLE_SIX) -> list[str]:
    """Every tile of ``tiles`` not in ``used``, as text."""
    taken = set(parse_tiles(" ".join(used)))
    return [str(t) for t in tiles if t not in taken]


S = TypeVar("S", bound=GameState)


def play(state: S, *actions: str) -> S:
    for text in actions:
        state = state.apply(parse_action(text))
    return state


# -- one tile reader ---------------------------------------------------------------------------


def test_a_string_is_tile_text_and_a_list_holds_one_tile_each() -> None:
    assert parse_tiles("6-6 5-4,3-0") == (Tile(6, 6), Tile(5, 4), Tile(3, 0))
    assert parse_tiles("6-4") == (Tile(6, 4),), "one tile, never its characters"
    assert parse_tiles(["6-6", Tile(4, 5), "[3-1]"]) == (Tile(6, 6), Tile(5, 4), Tile(3, 1))
    assert parse_tiles(()) == parse_tiles("") == ()


def test_a_bad_tile_names_the_position_field_when_one_is_given() -> None:
    with pytest.raises(InvalidActionError, match="bad tile '6'"):
        parse_tiles(["6"])
    with pytest.raises(PositionError, match=r"hands\[1\]: no tile 7-1"):
        parse_tiles("7-1", "hands[1]")
    with pytest.raises(PositionError, match=r"boneyard: bad tile 5"):
        parse_tiles([5], "boneyard")  # type: ignore[list-item]


def test_every_game_reads_a_hand_given_as_text_the_same_way() -> None:
    as_lists = PassingGame().from_position(
        hands=[["6-6", "5-5"], ["4-4"]], boneyard=rest("6-6", "5-5", "4-4")
    )
    as_text = PassingGame().from_position(
        hands=["6-6 5-5", "4-4"], boneyard=" ".join(rest("6-6", "5-5", "4-4"))
    )
    assert as_text.hands == as_lists.hands and as_text.boneyard == as_lists.boneyard
    tiles = [str(t) for t in MOON_TILES]
    moon = MoonGame().from_position(
        hands=[" ".join(tiles[0:7]), tiles[7:14], tiles[14:21]], boneyard=tiles[21]
    )
    assert moon.hands[0] == parse_tiles(tiles[0:7]) and moon.widow == Tile.parse(tiles[21])


# -- opener and phase in every game ------------------------------------------------------------


@pytest.mark.parametrize(
    "game", [PassingGame(players=3), StraightGame(players=3), MoonGame()], ids=str
)
def test_the_opener_is_the_first_seat_and_rotates_by_one(game: Any) -> None:
    state = game.new_game(seed=4, first_seat=2)
    assert state.opener == state.observe(0).opener == state.current_seat == 2
    assert (
        state.phase
        is state.observe(1).phase
        is (Phase.BIDDING if isinstance(game, MoonGame) else Phase.PLAYING)
    )


def test_line_game_phases_follow_the_seat_to_move() -> None:
    hands = [["6-5"], ["1-0"]]
    state = PassingGame().from_position(
        hands=hands, boneyard=rest("6-5", "1-0", "5-5"), line=["5-5"]
    )
    assert state.phase is Phase.PLAYING
    after = play(state, "play 6-5 E")
    seen = after.observe(0)
    assert isinstance(seen, LineObservation)
    assert after.phase is seen.phase is Phase.DEAL
    won = PassingGame().from_position(
        hands=hands, boneyard=rest("6-5", "1-0", "5-5"), line=["5-5"], scores=[100, 0]
    )
    assert play(won, "play 6-5 E").phase is Phase.OVER


# -- explicit later deals (docs/rules.md 0.3) ------------------------------------------------------


def _two_deals(state: GameState, end: str, shuffle: list[Tile], players: int, size: int) -> None:
    """``end`` finishes the first deal; the second is ``shuffle`` dealt round-robin (0.3)."""
    over = play(state, *end.split(";"))
    assert over.is_chance()
    dealt = play(over, "deal")
    hands, _ = deal_round_robin(shuffle, players, size)
    assert dealt.hands == hands and dealt.deal_number == state.deal_number + 1


def test_passing_takes_the_next_deal_from_the_list_not_the_seed() -> None:
    shuffle = list(reversed(DOUBLE_SIX))
    for seed in (0, 1):
        state = PassingGame().from_position(
            hands=[["6-5"], ["1-0"]],
            boneyard=rest("6-5", "1-0", "5-5"),
            line=["5-5"],
            seed=seed,
            deals=[shuffle],
        )
        _two_deals(state, "play 6-5 E", shuffle, 2, 7)
        dealt = play(state, "play 6-5 E", "deal")
        assert dealt.boneyard == tuple(shuffle[14:])


def test_straight_and_doubles_take_the_next_deal_from_the_list() -> None:
    shuffle = list(reversed(DOUBLE_SIX))
    straight = StraightGame().from_position(
        hands=[["5-5"], ["1-0"]], boneyard=rest("5-5", "1-0", "5-0"), line=["0-5"], deals=[shuffle]
    )
    _two_deals(straight, "play 5-5 E", shuffle, 2, 7)
    doubles = DoublesGame().from_position(
        hands=[["6-1"], ["2-2", "3-1"]],
        boneyard=rest("6-1", "2-2", "3-1", "6-6"),
        placed=["6-6"],
        seat=0,
        deals=[" ".join(str(t) for t in shuffle)],
    )
    _two_deals(doubles, "play 6-1 6", shuffle, 2, 8)


def test_moon_takes_the_next_deal_from_the_list() -> None:
    shuffle = list(reversed(MOON_TILES))
    _two_deals(_last_moon_trick(4, deals=[shuffle]), "play 6-6;play 5-1;play 4-1", shuffle, 3, 7)
    dealt = play(_last_moon_trick(4, deals=[shuffle]), "play 6-6", "play 5-1", "play 4-1", "deal")
    assert dealt.widow is shuffle[21]


def test_deals_past_the_list_come_from_the_seed_and_a_bad_shuffle_is_refused() -> None:
    seeded = play(_last_moon_trick(4), "play 6-6", "play 5-1", "play 4-1", "deal")
    listed = play(_last_moon_trick(4, deals=[]), "play 6-6", "play 5-1", "play 4-1", "deal")
    assert listed.hands == seeded.hands
    with pytest.raises(PositionError, match=r"deals\[0\]: a shuffle holds each of the 22 tiles"):
        _last_moon_trick(4, deals=[DOUBLE_SIX])
    with pytest.raises(PositionError, match=r"deals\[1\]: a shuffle holds each of the 28"):
        PassingGame().from_position(
            hands=[["6-5"], ["1-0"]],
            boneyard=rest("6-5", "1-0", "5-5"),
            line=["5-5"],
            deals=[DOUBLE_SIX, DOUBLE_SIX[1:]],
        )


# -- hand results: winners and every point ------------------------------------------------------


def test_passing_result_names_the_unique_lowest_side() -> None:
    # docs/rules.md 2.7: seat 0 goes out (0 pips), seat 1 holds 1-0 (1 pip): side 0 scores
    # 1 - 0 = 1.
    state = PassingGame().from_position(
        hands=[["6-5"], ["1-0"]], boneyard=rest("6-5", "1-0", "5-5"), line=["5-5"]
    )
    (result,) = play(state, "play 6-5 W").hand_results
    assert (result.end, result.winners, result.points) == (HandEnd.DOMINO, (0,), (1, 0))
    assert result.in_play == (0, 0) and result.scored == (1, 0)


def test_passing_tie_for_lowest_has_no_winner() -> None:
    # docs/rules.md 2.7, P8: going out (0) ties the 0-0 (0): nobody scores, nobody wins.
    state = PassingGame().from_position(
        hands=[["6-5"], ["0-0"]], boneyard=rest("6-5", "0-0", "5-5"), line=["5-5"]
    )
    (result,) = play(state, "play 6-5 W").hand_results
    assert (result.winners, result.points) == ((), (0, 0))


def test_straight_result_adds_the_in_play_points_and_a_zero_point_winner() -> None:
    # docs/rules.md 3.4-3.9: 5-5 on E of the line 0-5 becomes the spinner; the line is arm W, arm E
    # is empty, so the count is 2*5 + 0 = 10, scored at once. Seat 0 has gone out; seat 1 holds
    # 1 pip, round5(1) = 0: seat 0 wins the hand with no end-of-hand points.
    state = StraightGame().from_position(
        hands=[["5-5"], ["1-0"]], boneyard=rest("5-5", "1-0", "5-0"), line=["0-5"]
    )
    after = play(state, "play 5-5 E")
    (result,) = after.hand_results
    assert (result.end, result.winners, result.points) == (HandEnd.DOMINO, (0,), (0, 0))
    assert (result.in_play, result.scored, after.scores) == ((10, 0), (10, 0), (10, 0))


def test_straight_result_of_a_domino_with_end_points() -> None:
    # As above, but seat 1 holds 6-6 and 6-5 (23 pips): round5(23) = 25 on top of the 10.
    state = StraightGame().from_position(
        hands=[["5-5"], ["6-6", "6-5"]], boneyard=rest("5-5", "6-6", "6-5", "5-0"), line=["0-5"]
    )
    (result,) = play(state, "play 5-5 E").hand_results
    assert (result.winners, result.points, result.in_play, result.scored) == (
        (0,),
        (25, 0),
        (10, 0),
        (35, 0),
    )


def test_straight_target_result_names_the_side_that_reached_250() -> None:
    # docs/rules.md 3.10, X3: the 10 in play takes side 1 from 245 to 255; the game ends at once.
    state = StraightGame().from_position(
        hands=[["6-6", "6-5"], ["5-5", "2-2"]],
        boneyard=rest("5-5", "6-6", "6-5", "2-2", "5-0"),
        line=["0-5"],
        seat=1,
        scores=[0, 245],
    )
    (result,) = play(state, "play 5-5 E").hand_results
    assert (result.end, result.winners, result.points) == (HandEnd.TARGET, (1,), (0, 0))
    assert result.in_play == (0, 10)


def test_doubles_results_of_a_domino_and_a_tied_block() -> None:
    # docs/rules.md 4.8: seat 0 goes out; the others hold 2-2 and 3-1, 8 pips: seat 0 scores 8.
    state = DoublesGame().from_position(
        hands=[["6-1"], ["2-2", "3-1"]],
        boneyard=rest("6-1", "2-2", "3-1", "6-6"),
        placed=["6-6"],
        seat=0,
    )
    (result,) = play(state, "play 6-1 6").hand_results
    assert (result.winners, result.points, result.in_play) == ((0,), (8, 0), (0, 0))


def test_moon_results_name_the_bidder_or_both_opponents() -> None:
    # docs/rules.md 1.12: seat 0 takes the last trick with 6-6 (trump 6): tricks 4/2/1.
    made = play(_last_moon_trick(4), "play 6-6", "play 5-1", "play 4-1").hand_results[-1]
    assert (made.end, made.winners, made.points) == (HandEnd.TRICKS, (0,), (4, 2, 1))
    # A contract of 5 with 4 tricks fails: -5 to the bidder, the opponents their tricks.
    failed = play(_last_moon_trick(5), "play 6-6", "play 5-1", "play 4-1").hand_results[-1]
    assert (failed.winners, failed.points, failed.scored) == ((1, 2), (-5, 2, 1), (-5, 2, 1))


def test_void_deals_have_no_winner() -> None:
    tiles = [str(t) for t in MOON_TILES]
    moon = MoonGame().from_position(
        hands=[tiles[0:7], tiles[7:14], tiles[14:21]], boneyard=tiles[21], bids=[None, None]
    )
    (void,) = play(moon, "pass").hand_results
    assert (void.end, void.winners, void.points, void.in_play) == (
        HandEnd.VOID,
        (),
        (0, 0, 0),
        (0, 0, 0),
    )


def test_a_result_read_back_without_winners_still_compares_equal() -> None:
    state = PassingGame().from_position(
        hands=[["6-5"], ["1-0"]], boneyard=rest("6-5", "1-0", "5-5"), line=["5-5"]
    )
    (result,) = play(state, "play 6-5 W").hand_results
    back = type(result)(result.deal, result.end, result.points, result.detail)
    assert back == result and back.scored == result.points


def _last_moon_trick(contract: int, **extra: Any) -> Any:
    """Trump 6, seat 0 (bidder) to lead 6-6 into the last trick with tricks 3/2/1 so far."""
    left = rest("6-6", "5-1", "4-1", tiles=MOON_TILES)
    return MoonGame().from_position(
        hands=[["6-6"], ["5-1"], ["4-1"]],
        bidder=0,
        contract=contract,
        discard=left[0],
        trump=6,
        tricks_won=[3, 2, 1],
        leader=0,
        played=left[1:],
        **extra,
    )


# -- open ends ----------------------------------------------------------------------------------


def test_passing_open_ends_show_a_crosswise_double() -> None:
    hands = [["6-5"], ["1-0"]]
    state = PassingGame().from_position(
        hands=hands, boneyard=rest("6-5", "1-0", "1-4", "4-4"), line=["1-4", "4-4"]
    )
    assert (
        state.open_ends
        == state.observe(1).open_ends
        == (
            OpenEnd("W", 1, False),
            OpenEnd("E", 4, True),
        )
    )
    empty = PassingGame().from_position(hands=hands, boneyard=rest("6-5", "1-0"))
    assert empty.open_ends == ()


def test_straight_open_ends_follow_the_spinner() -> None:
    state = StraightGame().from_position(
        hands=[["6-6"], ["6-4"]],
        boneyard=rest("6-6", "6-4", "5-5", "5-3", "3-3", "5-1"),
        spinner="5-5",
        arms={"W": ["5-3", "3-3"], "E": ["5-1"]},
    )
    assert (
        state.observe(0).open_ends
        == state.open_ends
        == (
            OpenEnd("W", 3, True),
            OpenEnd("E", 1, False),
            OpenEnd("N", 5, False),
            OpenEnd("S", 5, False),
        )
    )
    lone = StraightGame().from_position(
        hands=[["6-6"], ["6-4"]], boneyard=rest("6-6", "6-4", "5-5"), spinner=5
    )
    assert lone.open_ends == (OpenEnd("W", 5, False), OpenEnd("E", 5, False))  # X2


def test_doubles_open_ends_are_named_by_their_number() -> None:
    state = DoublesGame().from_position(
        hands=[["6-1"], ["2-2", "3-1"]],
        boneyard=rest("6-1", "2-2", "3-1", "6-6", "6-4"),
        placed=["6-6", "6-4 6"],
        seat=1,
    )
    six = OpenEnd("6", 6, False)
    assert state.open_ends == state.observe(0).open_ends == (OpenEnd("4", 4, False), six, six, six)


# -- the option error ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("checkers", {}, "unknown game 'checkers'"),
        ("passing", {"colour": "red"}, "unknown option 'colour'"),
        ("straight", {"players": 5}, "players must be 2, 3 or 4"),
        ("moon", {"deal_limit": 50}, "option 'deal_limit' is retired"),
    ],
)
def test_a_bad_option_raises_the_option_error(
    name: str, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(GameOptionError, match=message) as info:
        make_game(name, **options)
    assert isinstance(info.value, RulesError) and isinstance(info.value, ValueError)
    assert not isinstance(info.value, InvalidActionError)


@pytest.mark.parametrize("name", ["passing", "straight", "doubles", "moon"])
def test_clone_copies_every_slot_of_every_game(name: str) -> None:
    """``_clone`` lists each slot by hand (sdk/rules/slots.py): one forgotten would be shared
    wrongly or missing, so every slot of every game's state is checked, mid-deal."""
    state = make_game(name).new_game(seed=4)
    state = state.apply(state.legal_actions()[0])
    copy = state._clone()
    assert type(copy) is type(state)
    for slot in all_slots(type(state)):
        assert getattr(copy, slot) is getattr(state, slot), slot

"""Three-Player Moon: one scenario per rule of docs/rules.md section 1 and per row of 5.1 (M1-M19).

Positions are built explicitly with ``MoonGame.from_position`` so each test shows the tiles it is
about. Helpers build the two shapes used most: a trick being followed (``follow``) and a last
trick with one tile in each hand (``last_trick``), which decides a hand's scoring.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from domino_arena.bots.greedy.moon import choose as greedy_choose
from domino_arena.sdk.rules.actions import (
    DEAL,
    NO_TRUMP,
    PASS,
    TRUMP_DOUBLES,
    Action,
    Bid,
    Discard,
    Play,
    Trump,
    parse_action,
    sort_actions,
)
from domino_arena.sdk.rules.dealing import deal_round_robin, first_seat, shuffled
from domino_arena.sdk.rules.errors import (
    GameOptionError,
    GameOverError,
    IllegalActionError,
    PositionError,
)
from domino_arena.sdk.rules.moon import (
    MOON_TILES,
    TRUMP_LED,
    MoonGame,
    MoonState,
    Phase,
    Trick,
    follows,
    is_trump,
    led_suit,
    trick_winner,
)
from domino_arena.sdk.rules.perft import perft
from domino_arena.sdk.rules.registry import make_game
from domino_arena.sdk.rules.state import CHANCE, TERMINAL, HandEnd, LogEntry
from domino_arena.sdk.rules.tiles import DOUBLE_SIX, Tile
from tests.rules.brute import moon as brute

GAME = MoonGame()
DATA = Path(__file__).parent / "data" / "moon.perft.json"

HANDS = [
    ["3-2", "4-2", "4-3", "4-4", "5-2", "6-4", "6-6"],
    ["0-0", "3-1", "5-1", "5-5", "6-1", "6-2", "6-3"],
    ["1-1", "2-1", "2-2", "3-3", "4-1", "5-3", "5-4"],
]
WIDOW = "6-5"


def T(text: str) -> Tile:  # noqa: N802 - reads like the tile notation
    return Tile.parse(text)


def texts(actions: tuple[Action, ...]) -> list[str]:
    return [str(a) for a in actions]


def run(state: MoonState, *actions: str) -> MoonState:
    for text in actions:
        state = state.apply(parse_action(text))
    return state


def bidding(bids: list[int | None] | None = None, **extra: Any) -> MoonState:
    """The HANDS deal in the bidding, seat 0 bidding first unless ``opener`` says."""
    return GAME.from_position(hands=HANDS, boneyard=WIDOW, bids=bids or [], **extra)


def follow(trump: int | str, lead: str, hand: list[str]) -> MoonState:
    """Seat 0 (the bidder, 4 tricks taken) led ``lead``; seat 1 to follow holding ``hand``."""
    rest = [str(t) for t in MOON_TILES if str(t) not in (lead, *hand)]
    return GAME.from_position(
        hands=[rest[1:3], hand, rest[3:6]],
        bidder=0,
        contract=4,
        discard=rest[0],
        trump=trump,
        tricks_won=[4, 0, 0],
        leader=0,
        played=rest[6:],
        trick=[lead],
    )


def last_trick(
    tiles: tuple[str, str, str],
    *,
    leader: int,
    won: list[int],
    bidder: int = 0,
    contract: int = 4,
    trump: int | str = 6,
    scores: list[int] | None = None,
    opener: int = 0,
) -> MoonState:
    """Six tricks done; seat s holds only ``tiles[s]``; ``leader`` is about to lead."""
    rest = [str(t) for t in MOON_TILES if str(t) not in tiles]
    return GAME.from_position(
        hands=[[tiles[0]], [tiles[1]], [tiles[2]]],
        opener=opener,
        bidder=bidder,
        contract=contract,
        discard=rest[0],
        trump=trump,
        tricks_won=won,
        leader=leader,
        played=rest[1:],
        scores=scores,
        seed=5,
        deal=3,
    )


def finish(state: MoonState) -> MoonState:
    """Play out the forced last trick."""
    for _ in range(3):
        (only,) = state.legal_actions()
        state = state.apply(only)
    return state


def position_of(state: MoonState) -> dict[str, Any]:
    """The from_position fields that rebuild ``state`` (a mid-deal, non-chance state)."""
    pos: dict[str, Any] = {
        "hands": [[str(t) for t in h] for h in state.hands],
        "opener": state.opener,
        "bids": [v for _, v in state.bids],
        "scores": list(state.scores),
        "seed": state.seed,
        "deal": state.deal_number,
        "boneyard": str(state.widow),
    }
    if state.discard is not None:
        pos["discard"] = str(state.discard)
    if state.trump is not None:
        pos["trump"] = state.trump
        pos["tricks"] = [
            {"leader": t.leader, "plays": [str(x) for _, x in t.plays]} for t in state.tricks
        ]
        pos["trick"] = [str(x) for _, x in state.trick]
    return pos


def random_states(games: int, seed: int = 0) -> list[MoonState]:
    """Every state of a few seeded random games (random legal actions)."""
    states = []
    for g in range(games):
        rng = random.Random(seed * 1000 + g)
        state = GAME.new_game(seed * 1000 + g)
        for _ in range(150):
            states.append(state)
            if state.is_terminal():
                break
            state = state.apply(rng.choice(state.legal_actions()))
    return states


# -- the game and the deal: docs/rules.md 1.1, 1.2, 1.4, 0.3 -------------------------------------


def test_game_configuration() -> None:
    assert (GAME.name, GAME.title, GAME.num_players, GAME.target) == (
        "moon",
        "Three-Player Moon",
        3,
        21,
    )
    assert GAME.sides == ((0,), (1,), (2,))
    assert MoonGame() == GAME
    assert GAME.describe() == "Three-Player Moon, 3 players, to 21"


def test_the_22_tiles_drop_every_blank_but_0_0() -> None:
    """docs/rules.md 1.1 and M18: 'zero set removed' keeps 0-0 only."""
    assert len(MOON_TILES) == 22
    assert T("0-0") in MOON_TILES
    assert [t for t in DOUBLE_SIX if t not in MOON_TILES] == [T(f"{n}-0") for n in range(1, 7)]


def test_deal_gives_seven_each_round_robin_and_one_widow() -> None:
    """docs/rules.md 1.2 and 0.3: seven each, dealt one at a time from seat 0; the last is the
    widow."""
    state = GAME.new_game(seed=42)
    order = shuffled(MOON_TILES, 42, 0)
    hands, rest = deal_round_robin(order, 3, 7)
    assert state.hands == hands
    (widow,) = rest
    assert state.widow is widow
    assert all(len(state.hand(s)) == 7 for s in range(3))
    assert sorted([*state.hands[0], *state.hands[1], *state.hands[2], widow]) == list(MOON_TILES)


def test_opener_is_random_from_the_seed_or_given() -> None:
    """docs/rules.md 1.4: deal 1's first bidder is random (from the seed)."""
    for seed in range(6):
        state = GAME.new_game(seed)
        assert state.opener == state.current_seat == first_seat(seed, 3)
    assert GAME.new_game(0, first_seat=2).current_seat == 2
    with pytest.raises(PositionError, match="first_seat"):
        GAME.new_game(0, first_seat=3)


def test_a_seeded_game_is_reproducible() -> None:
    """docs/decisions.md, decision 4: (game, seed, actions) replays a match exactly."""

    def play(seed: int) -> MoonState:
        rng = random.Random(seed)
        state = GAME.new_game(seed)
        for _ in range(100_000):
            if state.is_terminal():
                return state
            state = state.apply(rng.choice(state.legal_actions()))
        raise AssertionError("a random game did not end in 100 000 steps")

    first, second = play(11), play(11)
    assert [str(e) for e in first.history] == [str(e) for e in second.history]
    assert first.scores == second.scores
    replay = GAME.new_game(11)
    for entry in first.history:
        assert entry.seat == replay.current_seat
        replay = replay.apply(entry.action)
    assert replay.outcome() == first.outcome()
    assert [str(e) for e in play(12).history] != [str(e) for e in first.history]


# -- bidding: docs/rules.md 1.5, M5 ---------------------------------------------------------------


def test_opener_may_bid_anything_or_pass() -> None:
    assert texts(bidding().legal_actions()) == [
        "bid 4",
        "bid 5",
        "bid 6",
        "bid 7",
        "bid 21",
        "pass",
    ]


def test_bids_must_be_higher_than_every_earlier_bid() -> None:
    state = bidding([6])
    assert texts(state.legal_actions()) == ["bid 7", "bid 21", "pass"]
    with pytest.raises(
        IllegalActionError, match=r"docs/rules\.md 1\.5: bids must be higher than 6"
    ):
        state.apply(Bid(6))
    with pytest.raises(IllegalActionError, match="higher than 6"):
        state.apply(Bid(4))
    assert texts(bidding([4, None]).legal_actions()) == [
        "bid 5",
        "bid 6",
        "bid 7",
        "bid 21",
        "pass",
    ]


def test_after_a_7_the_only_bid_left_is_21() -> None:
    """M5."""
    state = bidding([7])
    assert texts(state.legal_actions()) == ["bid 21", "pass"]
    with pytest.raises(IllegalActionError, match="after a 7 the only bid left is 21"):
        state.apply(Bid(7))
    after = state.apply(Bid(21))
    assert (after.bidder, after.contract) == (1, 21)


def test_a_bid_outside_4_to_7_and_21_is_refused() -> None:
    for value in (3, 8, 20, 22):
        with pytest.raises(
            IllegalActionError, match=r"docs/rules\.md 1\.5: a bid is 4, 5, 6, 7 or 21"
        ):
            bidding().apply(Bid(value))


def test_the_opener_may_bid_21_and_it_ends_the_bidding_at_once() -> None:
    """docs/rules.md 1.5 and M5: the others get no turn."""
    state = bidding(opener=1).apply(Bid(21))
    assert state.bids == ((1, 21),)
    assert (state.bidder, state.contract) == (1, 21)
    assert state.phase is Phase.DISCARD
    assert state.current_seat == 1


def test_21_after_other_bids_ends_the_bidding() -> None:
    state = bidding([4]).apply(Bid(21))
    assert state.bids == ((0, 4), (1, 21))
    assert state.phase is Phase.DISCARD and state.bidder == 1


def test_each_player_bids_once_and_the_highest_bid_wins() -> None:
    state = run(bidding(), "bid 4", "pass", "bid 6")
    assert state.bids == ((0, 4), (1, None), (2, 6))
    assert (state.bidder, state.contract, state.current_seat) == (2, 6, 2)
    state = run(bidding(), "bid 5", "pass", "pass")
    assert (state.bidder, state.contract) == (0, 5)


def test_only_bid_or_pass_during_the_bidding() -> None:
    with pytest.raises(IllegalActionError, match="during the bidding the only actions"):
        bidding().apply(Play(T("6-6")))
    with pytest.raises(IllegalActionError, match=r"docs/rules\.md X6"):
        bidding().apply(DEAL)


# -- void deals and the first-bidder rotation: M3, M4, X5, X6 ---------------------------------


def test_three_passes_void_the_deal() -> None:
    """M3: nobody scores; the deal step redeals all 22 tiles."""
    state = run(bidding(scores=[5, -2, 3], seed=7, deal=2), "pass", "pass", "pass")
    assert state.current_seat == CHANCE and state.phase is Phase.DEAL
    assert state.legal_actions() == (DEAL,)
    (result,) = state.hand_results
    assert (result.deal, result.end, result.points) == (2, HandEnd.VOID, (0, 0, 0))
    assert state.scores == (5, -2, 3)
    with pytest.raises(IllegalActionError, match=r"docs/rules\.md X6: between hands"):
        state.apply(PASS)
    dealt = state.apply(DEAL)
    assert dealt.history[-1] == LogEntry(CHANCE, DEAL)
    assert dealt.deal_number == 3
    assert dealt.hands == deal_round_robin(shuffled(MOON_TILES, 7, 2), 3, 7)[0]
    assert (dealt.opener, dealt.current_seat, dealt.phase) == (1, 1, Phase.BIDDING)
    assert dealt.scores == (5, -2, 3)


def test_opener_moves_one_seat_every_deal_void_deals_included() -> None:
    """docs/rules.md 1.4 and M4: 1 -> 2 (void) -> 0 (void) -> 1 (after a played hand) -> 2."""
    state = GAME.new_game(seed=3, first_seat=1)
    seen = [state.opener]
    for _ in range(2):
        state = run(state, "pass", "pass", "pass", "deal")
        seen.append(state.opener)
    assert seen == [1, 2, 0]
    played = finish(last_trick(("6-6", "5-1", "4-1"), leader=0, won=[3, 2, 1], opener=0))
    assert played.current_seat == CHANCE
    dealt = played.apply(DEAL)
    assert (dealt.opener, dealt.current_seat, dealt.deal_number) == (1, 1, 4)
    dealt = run(dealt, "pass", "pass", "pass", "deal")
    assert (dealt.opener, dealt.deal_number) == (2, 5)


def test_a_void_deal_during_a_tie_at_21_goes_on() -> None:
    """X5: nothing changes but the first bidder."""
    state = run(bidding([None, None], scores=[21, 21, 15], opener=2), "pass")
    assert state.current_seat == CHANCE and not state.is_terminal()
    assert state.outcome() is None
    dealt = state.apply(DEAL)
    assert (dealt.scores, dealt.opener, dealt.phase) == ((21, 21, 15), 0, Phase.BIDDING)


# -- widow and discard: docs/rules.md 1.6, M1, M2 --------------------------------------------------


def test_the_bidder_picks_up_the_widow_and_holds_8() -> None:
    state = run(bidding(), "pass", "bid 5", "pass")
    assert state.hand(1) == tuple(sorted(T(t) for t in [*HANDS[1], WIDOW]))
    mine = state.observe(1)
    assert (len(mine.hand), mine.widow, mine.hand_sizes) == (8, T(WIDOW), (7, 8, 7))
    for other in (0, 2):
        seen = state.observe(other)
        assert seen.widow is None and seen.discard is None
        assert repr(T(WIDOW)) not in repr(seen)


def test_the_discard_comes_before_trumps_and_may_be_any_of_the_8() -> None:
    """M1 and M2: the discard may be the widow itself; trumps wait for it."""
    state = run(bidding(), "pass", "bid 5", "pass")
    assert texts(state.legal_actions()) == [
        f"discard {t}" for t in sorted(T(x) for x in [*HANDS[1], WIDOW])
    ]
    with pytest.raises(IllegalActionError, match=r"docs/rules\.md 1\.6: seat 1 must first discard"):
        state.apply(Trump(5))
    kept = state.apply(Discard(T(WIDOW)))
    assert kept.hand(1) == tuple(T(t) for t in HANDS[1])
    assert (kept.phase, kept.discard, kept.current_seat) == (Phase.TRUMP, T(WIDOW), 1)
    swapped = state.apply(Discard(T("0-0")))
    assert T(WIDOW) in swapped.hand(1) and T("0-0") not in swapped.hand(1)


def test_a_discard_of_a_tile_not_held_is_refused() -> None:
    state = run(bidding(), "pass", "bid 5", "pass")
    with pytest.raises(IllegalActionError, match=r"docs/rules\.md 1\.6: seat 1 holds no 6-6"):
        state.apply(Discard(T("6-6")))
    with pytest.raises(IllegalActionError, match=r"docs/rules\.md 1\.5: the bidding is over"):
        state.apply(Bid(7))


def test_the_discard_is_hidden_from_the_other_seats() -> None:
    """docs/rules.md 1.6 and 1.14: only the bidder knows its discard."""
    state = run(bidding(), "pass", "bid 5", "pass", "discard 5-5", "trump 6")
    mine = state.observe(1)
    assert mine.discard == T("5-5")
    assert LogEntry(1, Discard(T("5-5"))) in mine.history
    for other in (0, 2):
        seen = state.observe(other)
        assert seen.discard is None and seen.widow is None
        assert LogEntry(1, Discard(None)) in seen.history
        assert repr(T("5-5")) not in repr(seen)
        assert repr(T(WIDOW)) not in repr(seen)
    assert state.history[-2] == LogEntry(1, Discard(T("5-5")))


# -- trumps: docs/rules.md 1.7, M10, M11 -----------------------------------------------------------


def test_nine_trump_choices_then_the_bidder_leads() -> None:
    state = run(bidding(), "pass", "bid 5", "pass", "discard 6-5")
    assert texts(state.legal_actions()) == [
        *(f"trump {n}" for n in range(7)),
        "trump doubles",
        "trump none",
    ]
    with pytest.raises(IllegalActionError, match=r"docs/rules\.md 1\.7"):
        state.apply(Play(T("5-5")))
    for choice in ("0", "doubles", "none"):
        after = run(state, f"trump {choice}")
        assert (after.phase, after.current_seat, after.leader) == (Phase.PLAYING, 1, 1)


def test_trump_0_makes_only_0_0_a_trump() -> None:
    """M11."""
    assert [t for t in MOON_TILES if is_trump(t, 0)] == [T("0-0")]
    assert trick_winner([(0, T("6-6")), (1, T("0-0")), (2, T("6-5"))], 0) == 1


@pytest.mark.parametrize(
    ("tile", "trump", "expected"),
    [
        ("6-5", 5, True),
        ("6-5", 6, True),
        ("6-5", 4, False),
        ("5-5", 5, True),
        ("5-5", TRUMP_DOUBLES, True),
        ("6-5", TRUMP_DOUBLES, False),
        ("0-0", TRUMP_DOUBLES, True),
        ("6-6", NO_TRUMP, False),
    ],
)
def test_which_tiles_are_trumps(tile: str, trump: int, expected: bool) -> None:
    """docs/rules.md 1.8."""
    assert is_trump(T(tile), trump) is expected


# -- leading and following: docs/rules.md 1.9, 1.10, M6, M7, M19 -----------------------------------


def test_the_suit_led_is_the_higher_end_or_the_double_s_number_or_trump() -> None:
    """docs/rules.md 1.9 and M6."""
    assert led_suit(T("5-3"), NO_TRUMP) == 5
    assert led_suit(T("3-3"), NO_TRUMP) == 3
    assert led_suit(T("5-3"), 3) == TRUMP_LED
    assert led_suit(T("4-4"), TRUMP_DOUBLES) == TRUMP_LED
    assert led_suit(T("6-4"), TRUMP_DOUBLES) == 6


def test_the_leader_may_lead_any_tile() -> None:
    """docs/rules.md 1.9 and M19: no trump lead required."""
    state = run(bidding(), "pass", "bid 5", "pass", "discard 6-5", "trump 6")
    assert texts(state.legal_actions()) == [f"play {t}" for t in HANDS[1]]


def test_trump_led_must_be_followed_with_a_trump() -> None:
    state = follow(6, "6-4", ["6-1", "5-5", "2-1"])
    assert texts(state.legal_actions()) == ["play 6-1"]
    with pytest.raises(
        IllegalActionError, match=r"docs/rules\.md 1\.10: trump was led and you hold 6-1"
    ):
        state.apply(Play(T("5-5")))


def test_trump_led_without_a_trump_frees_the_follower() -> None:
    state = follow(6, "6-4", ["5-5", "3-1", "2-1"])
    assert len(state.legal_actions()) == 3


def test_a_number_led_must_be_followed_with_that_number() -> None:
    state = follow(NO_TRUMP, "5-3", ["5-1", "3-1", "4-4"])
    assert texts(state.legal_actions()) == ["play 5-1"]
    with pytest.raises(IllegalActionError, match="a 5 was led and you hold 5-1, which follows"):
        state.apply(Play(T("3-1")))


def test_the_lower_end_follows_suit_too() -> None:
    """M7: a non-trump 6-5 follows a 5 lead."""
    state = follow(NO_TRUMP, "5-3", ["6-5", "4-4", "2-1"])
    assert texts(state.legal_actions()) == ["play 6-5"]
    state = follow(2, "4-3", ["4-1", "6-4", "3-1"])
    assert texts(state.legal_actions()) == ["play 4-1", "play 6-4"]


def test_only_the_higher_end_of_the_lead_names_the_suit() -> None:
    """docs/rules.md 1.9: 5-3 leads fives, so a 3 in hand does not have to follow."""
    state = follow(NO_TRUMP, "5-3", ["3-1", "4-2", "3-3"])
    assert len(state.legal_actions()) == 3


def test_a_trump_holding_the_led_number_does_not_follow_and_cannot_be_forced() -> None:
    """docs/rules.md 1.10: with 6 trump, 6-5 is a trump, not a 5."""
    free = follow(6, "5-3", ["6-5", "4-1", "2-2"])
    assert len(free.legal_actions()) == 3
    forced = follow(6, "5-3", ["6-5", "5-1", "2-2"])
    assert texts(forced.legal_actions()) == ["play 5-1"]
    with pytest.raises(IllegalActionError) as caught:
        forced.apply(Play(T("6-5")))
    assert caught.value.rule == (
        "docs/rules.md 1.10: a 5 was led and you hold 5-1, which follows suit; "
        "6-5 is a trump, so it does not count as a 5"
    )
    assert caught.value.legal == ("play 5-1",)


def test_doubles_as_trumps_leave_their_number_suits() -> None:
    """docs/rules.md 1.8 and M10: 5-5 is a trump, so it neither follows nor must be played on 5s."""
    state = follow("doubles", "5-3", ["5-5", "4-1", "2-1"])
    assert len(state.legal_actions()) == 3
    state = follow("doubles", "5-5", ["6-5", "4-4", "2-1"])
    assert texts(state.legal_actions()) == ["play 4-4"]
    assert follows(T("5-5"), 5, NO_TRUMP) and not follows(T("5-5"), 5, TRUMP_DOUBLES)


def test_a_play_must_be_a_held_tile_without_an_end() -> None:
    state = follow(6, "6-4", ["6-1", "5-5", "2-1"])
    with pytest.raises(IllegalActionError, match=r"docs/rules\.md 1\.10: seat 1 does not hold 6-6"):
        state.apply(Play(T("6-6")))
    with pytest.raises(IllegalActionError, match=r"docs/rules\.md 0\.4"):
        state.apply(Play(T("6-1"), "E"))
    with pytest.raises(IllegalActionError, match="the only action is 'play TILE'"):
        state.apply(Trump(6))
    with pytest.raises(IllegalActionError, match=r"docs/rules\.md 1\.5: the bidding is over"):
        state.apply(PASS)


# -- who wins a trick: docs/rules.md 1.11, M8, M9, M12 ---------------------------------------------


def plays(*tiles: str) -> list[tuple[int, Tile]]:
    return [(seat, T(t)) for seat, t in enumerate(tiles)]


@pytest.mark.parametrize(
    ("tiles", "trump", "winner"),
    [
        # Number suit, no trump: double first, then the other end (M8); off-suit never wins.
        (("6-3", "6-5", "6-6"), NO_TRUMP, 2),
        (("6-3", "6-5", "6-4"), NO_TRUMP, 1),
        (("5-3", "6-6", "5-1"), NO_TRUMP, 0),
        (("5-3", "6-5", "4-4"), NO_TRUMP, 1),
        # Doubles stay high with no trump (M12).
        (("6-5", "6-6", "4-4"), NO_TRUMP, 1),
        # Any trump beats the suit led; the highest trump wins.
        (("5-3", "2-1", "5-4"), 2, 1),
        (("5-3", "4-2", "2-2"), 2, 2),
        (("4-3", "6-4", "5-4"), 4, 1),
        (("4-1", "4-4", "6-4"), 4, 1),
        # Doubles as trump run 6-6 down to 0-0 (M9).
        (("1-1", "0-0", "6-5"), TRUMP_DOUBLES, 0),
        (("6-5", "0-0", "6-4"), TRUMP_DOUBLES, 1),
        (("3-3", "6-6", "5-5"), TRUMP_DOUBLES, 1),
    ],
)
def test_trick_winner(tiles: tuple[str, str, str], trump: int, winner: int) -> None:
    assert trick_winner(plays(*tiles), trump) == winner


def test_the_trick_winner_takes_it_and_leads_the_next() -> None:
    """docs/rules.md 1.9."""
    state = follow(NO_TRUMP, "5-3", ["6-5", "4-4", "2-1"])
    state = state.apply(Play(T("6-5")))
    state = state.apply(state.legal_actions()[0])
    (done,) = state.tricks
    assert done.winner == 1 and done.leader == 0
    assert (state.won, state.leader, state.current_seat) == ((4, 1, 0), 1, 1)
    assert state.trick == ()


# -- scoring a hand: docs/rules.md 1.12, M13, M14, M17 ---------------------------------------------


def test_all_seven_tricks_are_played_after_the_contract_is_made() -> None:
    """M13: the bidder has its 4 but the hand goes on."""
    state = follow(6, "6-4", ["6-1", "5-5", "2-1"])
    assert state.won == (4, 0, 0) and state.contract == 4
    state = run(state, "play 6-1")
    state = state.apply(state.legal_actions()[0])
    assert state.phase is Phase.PLAYING and state.current_seat == state.leader


def test_a_made_contract_scores_the_bid_and_extra_tricks_are_worth_nothing() -> None:
    """docs/rules.md 1.12 and M14: the opponents score their tricks too."""
    state = finish(last_trick(("6-6", "5-1", "4-1"), leader=0, won=[4, 1, 1], scores=[2, 3, 4]))
    (result,) = state.hand_results
    assert (result.end, result.points) == (HandEnd.TRICKS, (4, 1, 1))
    assert state.scores == (6, 4, 5)
    assert result.detail == "seat 0 bid 4 and took 5: made; tricks 5/1/1"
    assert state.current_seat == CHANCE and state.legal_actions() == (DEAL,)


def test_a_failed_contract_costs_the_bid_and_scores_can_go_negative() -> None:
    """docs/rules.md 1.12, M14 and M17."""
    state = finish(
        last_trick(("5-1", "6-6", "4-1"), leader=1, won=[4, 1, 1], contract=5, scores=[2, 0, 0])
    )
    assert state.hand_results[-1].points == (-5, 2, 1)
    assert state.scores == (-3, 2, 1)
    assert state.hands == ((), (), ())


def test_a_made_21_wins_at_once_even_from_a_negative_score() -> None:
    """M15: +21 is recorded and the bidder wins whatever the other scores."""
    state = finish(
        last_trick(
            ("5-1", "4-1", "6-6"),
            leader=2,
            won=[0, 0, 6],
            bidder=2,
            contract=21,
            scores=[20, 20, -30],
        )
    )
    assert state.is_terminal() and state.current_seat == TERMINAL
    assert state.hand_results[-1].points == (0, 0, 21)
    outcome = state.outcome()
    assert outcome is not None
    assert (outcome.winner, outcome.scores) == (2, (20, 20, -9))
    assert "bid of 21" in outcome.detail
    assert state.legal_actions() == ()
    with pytest.raises(GameOverError):
        state.apply(DEAL)


def test_a_failed_21_costs_21_and_the_opponents_still_score() -> None:
    """M15."""
    state = finish(
        last_trick(("6-6", "4-1", "5-1"), leader=2, won=[0, 0, 6], bidder=2, contract=21)
    )
    assert state.hand_results[-1].points == (1, 0, -21)
    assert state.scores == (1, 0, -21) and state.current_seat == CHANCE


# -- end of the game: docs/rules.md 1.13, M16 ------------------------------------------------------


def test_a_unique_highest_score_of_21_or_more_wins() -> None:
    state = finish(last_trick(("6-6", "5-1", "4-1"), leader=0, won=[3, 2, 1], scores=[18, 10, 5]))
    outcome = state.outcome()
    assert outcome is not None and state.is_terminal()
    assert (outcome.winner, outcome.scores, outcome.sides) == (0, (22, 12, 6), GAME.sides)
    assert outcome.result() == "side 0 (seat 0) wins 22-12-6"


def test_an_opponent_can_win_on_the_tricks_it_took() -> None:
    state = finish(last_trick(("5-1", "6-6", "4-1"), leader=1, won=[4, 1, 1], scores=[2, 19, 0]))
    outcome = state.outcome()
    assert outcome is not None and (outcome.winner, outcome.scores) == (1, (6, 21, 1))


def test_a_tie_at_21_or_more_plays_on_until_one_is_highest() -> None:
    """docs/rules.md 1.13 and M16: 21-21-21 plays another hand; a later hand decides it."""
    tied = finish(last_trick(("6-6", "5-1", "4-1"), leader=0, won=[3, 2, 1], scores=[17, 19, 20]))
    assert tied.scores == (21, 21, 21)
    assert tied.current_seat == CHANCE and tied.outcome() is None
    decided = finish(
        last_trick(("5-1", "4-1", "6-6"), leader=2, won=[4, 1, 1], contract=5, scores=[21, 21, 21])
    )
    outcome = decided.outcome()
    assert outcome is not None and (outcome.winner, outcome.scores) == (2, (16, 22, 23))


def test_a_high_score_below_21_plays_on() -> None:
    state = finish(last_trick(("6-6", "5-1", "4-1"), leader=0, won=[3, 2, 1], scores=[10, 17, 3]))
    assert state.scores == (14, 19, 4) and state.current_seat == CHANCE


def test_two_players_tied_at_21_or_more_above_a_third_play_on() -> None:
    state = finish(last_trick(("6-6", "5-1", "4-1"), leader=0, won=[3, 2, 1], scores=[18, 20, 0]))
    assert state.scores == (22, 22, 1)
    assert state.current_seat == CHANCE and state.outcome() is None


# -- what each player sees: docs/rules.md 1.14 -----------------------------------------------------


def test_the_observation_holds_the_public_state_and_the_own_hand() -> None:
    state = run(bidding(opener=2), "bid 4", "pass", "bid 5", "discard 6-5", "trump 3")
    state = run(state, "play 3-1", "play 5-3", "play 4-3", "play 1-1")
    obs = state.observe(2)
    assert obs.phase is Phase.PLAYING and obs.current_seat == 0
    assert obs.legal_actions == ()
    assert obs.hand == tuple(T(t) for t in ["2-1", "2-2", "3-3", "4-1", "5-4"])
    assert obs.hand_sizes == (6, 6, 5)
    assert obs.bids == ((2, 4), (0, None), (1, 5))
    assert (obs.opener, obs.bidder, obs.contract, obs.trump) == (2, 1, 5, 3)
    assert obs.tricks == (Trick(1, ((1, T("3-1")), (2, T("5-3")), (0, T("4-3"))), 2),)
    assert (obs.tricks_won, obs.leader, obs.trick) == ((0, 0, 1), 2, ((2, T("1-1")),))
    assert (obs.scores, obs.deal, obs.discard, obs.widow) == ((0, 0, 0), 1, None, None)
    assert texts(tuple(e.action for e in obs.history)) == [
        "bid 4",
        "pass",
        "bid 5",
        "discard ?",
        "trump 3",
        "play 3-1",
        "play 5-3",
        "play 4-3",
        "play 1-1",
    ]
    assert state.observe(0).legal_actions == state.legal_actions()


def test_observations_never_show_other_hands_or_the_widow() -> None:
    """docs/rules.md 1.14 over every state of a few random games."""
    for state in random_states(12):
        played = [t for trick in state.tricks for _, t in trick.plays]
        widow_hidden = state.widow not in [*played, *(t for _, t in state.trick)]
        for seat in range(3):
            shown = repr(state.observe(seat))
            for other in range(3):
                if other != seat:
                    for tile in state.hand(other):
                        assert repr(tile) not in shown
            if widow_hidden and seat != state.bidder:
                assert repr(state.widow) not in shown


# -- the engine's contract ---------------------------------------------------------------------


def test_apply_never_mutates_and_legal_actions_are_canonical() -> None:
    slots = ("_log", *MoonState.__slots__, "game")
    for state in random_states(4, seed=1):
        legal = state.legal_actions()
        assert legal == sort_actions(list(legal))
        assert bool(legal) != state.is_terminal()
        before = [getattr(state, name) for name in slots]
        for action in legal:
            state.apply(action)
        assert [getattr(state, name) for name in slots] == before


def test_hands_and_tiles_are_conserved_through_a_game() -> None:
    for state in random_states(6, seed=2):
        if state.phase in (Phase.DEAL, Phase.OVER):
            continue
        placed = [*state.hands[0], *state.hands[1], *state.hands[2]]
        placed += [t for trick in state.tricks for _, t in trick.plays]
        placed += [t for _, t in state.trick]
        if state.discard is not None:
            placed.append(state.discard)
        if state.phase is Phase.BIDDING:
            assert state.widow is not None
            placed.append(state.widow)
        assert sorted(placed) == list(MOON_TILES)


def test_from_position_rebuilds_mid_deal_states() -> None:
    for state in random_states(5, seed=3):
        if state.phase in (Phase.DEAL, Phase.OVER):
            continue
        rebuilt = GAME.from_position(**position_of(state))
        assert rebuilt.legal_actions() == state.legal_actions()
        assert (rebuilt.hands, rebuilt.phase, rebuilt.current_seat) == (
            state.hands,
            state.phase,
            state.current_seat,
        )
        assert (rebuilt.tricks, rebuilt.won, rebuilt.trick, rebuilt.leader) == (
            state.tricks,
            state.won,
            state.trick,
            state.leader,
        )
        assert (rebuilt.bidder, rebuilt.contract, rebuilt.trump) == (
            state.bidder,
            state.contract,
            state.trump,
        )


POSITION_ERRORS: list[tuple[dict[str, Any], str]] = [
    ({"boneyard": None}, "boneyard: the widow is required while bidding"),
    ({"boneyard": "6-6"}, "boneyard: tile 6-6 is also in hands"),
    ({"boneyard": "6-0"}, r"boneyard: 6-0 is not a Moon tile"),
    ({"hands": [HANDS[0][:6], HANDS[1], HANDS[2]]}, "missing 6-6"),
    ({"hands": [HANDS[0]]}, "hands: expected 3 hands"),
    ({"bids": [4, 4]}, r"bids\[1\]: 4 is not higher than 4"),
    ({"bids": [21, None]}, r"bids\[1\]: a bid of 21 ends the bidding"),
    ({"bids": [None, None, None]}, "bids: all three passed"),
    ({"bids": [3]}, r"bids\[0\]: expected 4, 5, 6, 7, 21 or a pass"),
    ({"bids": [4, None, 5], "bidder": 0}, "bidder: the bids make seat 2 the bidder"),
    ({"trump": 6}, "trump: not allowed while bidding is not over"),
    ({"scores": [22, 1, 0]}, "scores: seat 0 would already have won"),
    ({"scores": [1, 0]}, "scores: expected three"),
    ({"opener": 3}, "opener: 3 is not a seat"),
    ({"seat": 1}, "seat: the rules give the move to seat 0"),
    ({"deal": 0}, "deal must be a number 1 or more"),
]


@pytest.mark.parametrize(("change", "message"), POSITION_ERRORS)
def test_from_position_names_the_bad_field(change: dict[str, Any], message: str) -> None:
    with pytest.raises(PositionError, match=message):
        GAME.from_position(**{"hands": HANDS, "boneyard": WIDOW, **change})


def test_from_position_checks_hand_sizes_for_the_phase() -> None:
    """After the auction the bidder holds 8 tiles until it discards (docs/rules.md 1.6)."""
    picked = [[*HANDS[0], WIDOW], HANDS[1], HANDS[2]]
    state = GAME.from_position(hands=picked, bids=[4, None, None], boneyard=WIDOW)
    assert (state.phase, state.current_seat, state.widow) == (Phase.DISCARD, 0, T(WIDOW))
    uneven = [HANDS[0], [*HANDS[1], WIDOW], HANDS[2]]
    with pytest.raises(PositionError, match=r"hands\[0\]: seat 0 should hold 8 tiles"):
        GAME.from_position(hands=uneven, bids=[4, None, None])
    with pytest.raises(
        PositionError, match="boneyard: the widow 6-6 is not among the bidder's tiles"
    ):
        GAME.from_position(hands=uneven, bids=[None, 4, None], boneyard="6-6")
    with pytest.raises(PositionError, match="trump: not allowed while the bidder has not"):
        GAME.from_position(hands=picked, bids=[4, None, None], trump=6)


def test_from_position_checks_the_tricks() -> None:
    base = last_trick(("6-6", "5-1", "4-1"), leader=0, won=[3, 2, 1])
    assert base.current_seat == 0
    with pytest.raises(PositionError, match="leader: seat 2 won no trick"):
        last_trick(("6-6", "5-1", "4-1"), leader=2, won=[4, 2, 0])
    with pytest.raises(PositionError, match="tricks_won: after 7 tricks the hand is over"):
        last_trick(("6-6", "5-1", "4-1"), leader=0, won=[4, 2, 1])
    rest = [str(t) for t in MOON_TILES if str(t) not in ("6-6", "5-1", "4-1")]
    with pytest.raises(PositionError, match="played: 6 tricks hold 18 tiles, got 17"):
        GAME.from_position(
            hands=[["6-6"], ["5-1"], ["4-1"]],
            bidder=0,
            contract=4,
            discard=rest[0],
            trump=6,
            tricks_won=[3, 2, 1],
            leader=0,
            played=rest[2:],
        )


def test_from_position_refuses_a_revoke() -> None:
    """docs/rules.md 1.10: a recorded trick where a seat failed to follow while able is
    impossible."""
    start = run(bidding(), "pass", "bid 5", "pass", "discard 6-5", "trump 6")
    pos = position_of(start)
    # Seat 1 leads 5-5; seat 2 holds 5-3 and 5-4 but "plays" 1-1; seat 0 follows with 5-2.
    hands = [[t for t in pos["hands"][0] if t != "5-2"], ["0-0", "3-1", "5-1", "6-1", "6-2", "6-3"]]
    hands.append([t for t in pos["hands"][2] if t != "1-1"])
    revoke = {**pos, "hands": hands, "tricks": [{"leader": 1, "plays": ["5-5", "1-1", "5-2"]}]}
    with pytest.raises(PositionError, match=r"tricks\[0\]: seat 2 played 1-1 while holding 5-3"):
        GAME.from_position(**revoke)
    honest = {**pos, "trick": ["5-5"], "hands": [pos["hands"][0], hands[1], pos["hands"][2]]}
    assert texts(GAME.from_position(**honest).legal_actions()) == ["play 5-3", "play 5-4"]
    with pytest.raises(PositionError, match="leader: the tricks give the lead to seat 1"):
        GAME.from_position(**{**honest, "leader": 0})
    with pytest.raises(PositionError, match="tricks: give either tricks or tricks_won"):
        GAME.from_position(**{**honest, "tricks_won": [0, 0, 0]})


# -- perft data ----------------------------------------------------------------------------------


def test_perft_data_matches_engine_and_brute_force() -> None:
    """The runner in test_perft.py checks every game through the registry; this pins Moon now."""
    data = json.loads(DATA.read_text())
    assert data["game"] == "moon" and len(data["positions"]) >= 5
    for entry in data["positions"]:
        counts = entry["perft"]
        assert len(counts) >= 3, entry["id"]
        state = GAME.from_position(**entry["position"])
        assert [perft(state, d) for d in range(1, len(counts) + 1)] == counts, entry["id"]
        shallow = min(len(counts), 3)
        assert brute.perft({}, entry["position"], shallow) == counts[shallow - 1], entry["id"]


# -- the greedy house bot ------------------------------------------------------------------------


def test_greedy_beats_random_players() -> None:
    """bots/greedy/moon.py, alone against two uniformly random players, wins most games."""
    games, wins = 30, 0
    for g in range(games):
        greedy_seat = g % 3
        rng = random.Random(g)
        state = GAME.new_game(seed=500 + g)
        for _ in range(20_000):
            if state.is_terminal():
                break
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
    assert wins >= 20, f"greedy won {wins} of {games} (chance is 10)"


# -- the deal limit: docs/rules.md 7.2 (docs/rules.md is silent on a game nobody can win) ----------


def at_last_trick(game: MoonGame, scores: list[int], deal: int) -> MoonState:
    """Seat 0 bid 4, took 6 of 7 tricks so far; the last trick is forced; seat 0 wins it."""
    rest = [str(t) for t in MOON_TILES if str(t) not in ("6-6", "2-1", "3-1")]
    return game.from_position(
        hands=[["6-6"], ["2-1"], ["3-1"]],
        opener=0,
        bidder=0,
        contract=4,
        discard=rest[0],
        trump=6,
        tricks_won=[4, 1, 1],
        leader=0,
        played=rest[1:],
        scores=scores,
        seed=5,
        deal=deal,
    )


def test_no_deal_count_ends_the_game_a_unique_highest_score_below_21_plays_on() -> None:
    for deal in (3, 100, 5000):
        state = finish(at_last_trick(MoonGame(), [-30, 2, -4], deal=deal))
        assert state.scores == (-26, 3, -3)
        assert state.current_seat == CHANCE and state.outcome() is None, f"deal {deal}"


def test_a_void_deal_never_ends_the_game() -> None:
    tiles = [str(t) for t in MOON_TILES]
    position: dict[str, Any] = {
        "hands": [tiles[0:7], tiles[7:14], tiles[14:21]],
        "boneyard": tiles[21],
        "opener": 0,
        "bids": [None, None],
        "scores": [1, 0, 0],
        "deal": 200,
        "seed": 3,
    }
    voided = run(MoonGame().from_position(**position), "pass")
    assert voided.hand_results[-1].end is HandEnd.VOID
    assert voided.current_seat == CHANCE and voided.outcome() is None


def test_the_retired_deal_limit_option_is_refused_with_its_replacement_named() -> None:
    assert GAME.options() == {}
    assert make_game("moon", deal_limit=0) == MoonGame(), "0 meant no limit: old rows still load"
    for value in (50, -1, True):
        with pytest.raises(GameOptionError, match="'deal_limit' is retired") as info:
            make_game("moon", deal_limit=value)
        assert "max_deals" in str(info.value) and "docs/rules.md 1.13" in str(info.value)
    with pytest.raises(TypeError):
        MoonGame(deal_limit=3)  # type: ignore[call-arg]


def test_uniformly_random_players_play_on_by_the_rules_past_any_cap() -> None:
    """Random bidders fail most contracts: some games go on for hundreds of deals, and the
    engine keeps dealing (the cap on deals is the referee's: tests/match/test_core.py)."""
    long_games = 0
    for seed in range(40):
        state = GAME.new_game(seed)
        rng = random.Random(seed)
        while not state.is_terminal() and state.deal_number <= 150:
            state = state.apply(rng.choice(state.legal_actions()))
        if state.is_terminal():
            outcome = state.outcome()
            assert outcome is not None and outcome.winner is not None
            top = outcome.scores[outcome.winner]
            assert top >= 21 or "bid of 21" in outcome.detail
        else:
            long_games += 1
            assert state.outcome() is None and state.legal_actions()
    assert long_games > 0

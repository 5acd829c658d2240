"""The analysis finds the one winning action of constructed positions, in every game.

Each position has exactly one legal action that wins by a wide margin (it dominoes out, scores
a count, closes the end the opponent needs, takes the trick the contract needs); the analysis,
which sees only the deciding seat's observation, must rank it best, call every other action a
graded loss well beyond its standard error, and charge nothing for choosing it. Each game also
has a position with two actions worth exactly the same, neither of which may be called a
mistake. Positions with a history (Moon's bids, trump and tricks; Doubles' draws) are reached
by replaying a seeded game; the seeds and lines were found by a search and frozen here, and
each says why its action is the only winner (docs/analysis.md).
"""

from __future__ import annotations

import random

import pytest

from domino_arena.sdk.match.records import record_from_state
from domino_arena.sdk.match.results import Termination
from domino_arena.sdk.rules import (
    DoublesGame,
    GameState,
    MoonGame,
    PassingGame,
    StraightGame,
    parse_action,
)
from domino_arena.sdk.rules.actions import DRAW, PASS, Action, Play
from domino_arena.sdk.rules.tiles import DOUBLE_SIX, Tile, parse_tiles
from domino_arena.server.analysis import Budget, Severity, analyse_match
from domino_arena.server.analysis.evaluate import evaluate
from domino_arena.server.analysis.grading import NOISE_Z, severity
from domino_arena.server.analysis.scale import scale_of

BUDGET = Budget(precision=0.5, max_samples=128, min_samples=32)
"""Modest: a clear winner must stand out within a hundred samples or so."""

MARGIN_Z = 3.0
"""How many standard errors a losing action's loss must clear."""

GRADED = (Severity.MISTAKE, Severity.BLUNDER)


def rest(*taken: str) -> list[Tile]:
    """Every tile of the double-six set except ``taken`` (each a list of tiles as text)."""
    used = {t for text in taken for t in parse_tiles(text)}
    return [t for t in DOUBLE_SIX if t not in used]


def replay(state: GameState, line: str) -> GameState:
    """``state`` after the actions of ``line``, written as their text and separated by ";"."""
    for text in line.split(";"):
        state = state.apply(parse_action(text))
    return state


def assert_only_winner(state: GameState, winner: Action) -> None:
    """Every legal action evaluated as the chosen one: ``winner`` is best throughout, costs
    nothing when chosen, and every other action loses clearly and is graded."""
    seat = state.current_seat
    observation = state.observe(seat)
    scale = scale_of(state.game.name)
    assert winner in observation.legal_actions
    assert len(observation.legal_actions) >= 2
    for action in observation.legal_actions:
        ev = evaluate(observation, action, random.Random(f"positions/{action}"), BUDGET)
        assert ev.actions[ev.best] == winner, (action, ev)
        if action == winner:
            assert ev.loss_points == 0.0
            assert ev.loss_win == 0.0
            continue
        assert ev.loss_points > 0, (action, ev)
        assert ev.loss_points > MARGIN_Z * ev.stderr, (action, ev)
        assert severity(ev.loss_points, ev.loss_win, ev.stderr, scale) in GRADED, (action, ev)


def assert_equivalent(state: GameState, first: Action, second: Action) -> None:
    """Choosing either of two equal actions is no mistake: its loss against the best is within
    the noise and ungraded."""
    observation = state.observe(state.current_seat)
    scale = scale_of(state.game.name)
    for action in (first, second):
        ev = evaluate(observation, action, random.Random("positions/equal"), BUDGET)
        assert ev.loss_points <= NOISE_Z * ev.stderr, (action, ev)
        assert severity(ev.loss_points, ev.loss_win, ev.stderr, scale) is None, (action, ev)


# -- Passing -----------------------------------------------------------------------------------


def passing_out(players: int, partnerships: bool) -> GameState:
    """Seat 0's last tile, 0-3, fits the W end (0) and not the E end (6): playing it ends the
    hand with seat 0 out (docs/rules.md 2.6 a) and everyone else holding high tiles; a pass or
    a draw only gives the others turns to go out or shed pips, and a draw adds pips to seat 0."""
    line = ["0-1", "1-2", "2-6"]
    others = [["6-6", "5-5", "6-5"], ["4-4", "6-4", "5-4"], ["3-3", "6-3", "5-3"]]
    hands = [["0-3"], *others[: players - 1]]
    return PassingGame(players=players, partnerships=partnerships).from_position(
        hands=hands,
        boneyard=rest("0-3", *(" ".join(h) for h in others[: players - 1]), " ".join(line)),
        line=line,
        seat=0,
    )


@pytest.mark.parametrize(("players", "partnerships"), [(2, False), (4, True)])
def test_passing_the_only_going_out_play_is_found(players: int, partnerships: bool) -> None:
    state = passing_out(players, partnerships)
    assert set(state.legal_actions()) == {Play(Tile(0, 3), "W"), PASS, DRAW}
    assert_only_winner(state, Play(Tile(0, 3), "W"))


def test_passing_going_out_at_either_end_is_the_same() -> None:
    """Seat 0's last tile, 3-0, fits both ends (W shows 0, E shows 3): out either way."""
    line = ["0-4", "4-5", "5-3"]
    state = PassingGame(players=2).from_position(
        hands=[["3-0"], ["6-6", "5-5", "6-5"]],
        boneyard=rest("3-0", "6-6 5-5 6-5", " ".join(line)),
        line=line,
        seat=0,
    )
    assert_equivalent(state, Play(Tile(3, 0), "W"), Play(Tile(3, 0), "E"))


# -- Straight ----------------------------------------------------------------------------------


def test_straight_the_only_play_that_scores_the_count_is_found() -> None:
    """The line shows 5 at W and 1 at E and seat 0's last tile is 5-1: it goes out either way
    (the same domino points), but on E it makes the ends 5 and 5, a count of 10 scored as well
    (docs/rules.md 3.7, 3.8); on W they are 1 and 1, a count of 2 that scores nothing."""
    line = ["5-3", "3-2", "2-1"]
    state = StraightGame(players=2).from_position(
        hands=[["5-1"], ["6-4", "4-4", "6-2", "2-2"]],
        boneyard=rest("5-1", "6-4 4-4 6-2 2-2", " ".join(line)),
        line=line,
        seat=0,
    )
    assert set(state.legal_actions()) == {Play(Tile(5, 1), "W"), Play(Tile(5, 1), "E")}
    assert_only_winner(state, Play(Tile(5, 1), "E"))


def test_straight_a_play_at_either_of_two_like_ends_is_the_same() -> None:
    """Both ends show 2 and seat 0 holds 2-5 (and 6-6, which fits neither): either way the ends
    are 2 and 5, a count of 7, and the layouts are mirror images."""
    line = ["2-4", "4-3", "3-2"]
    state = StraightGame(players=2).from_position(
        hands=[["2-5", "6-6"], ["6-4", "4-4", "6-1", "1-1"]],
        boneyard=rest("2-5 6-6", "6-4 4-4 6-1 1-1", " ".join(line)),
        line=line,
        seat=0,
    )
    assert set(state.legal_actions()) == {Play(Tile(2, 5), "W"), Play(Tile(2, 5), "E")}
    assert_equivalent(state, Play(Tile(2, 5), "W"), Play(Tile(2, 5), "E"))


# -- Doubles -----------------------------------------------------------------------------------

DOUBLES_177 = (
    "play 5-5;play 5-3 5;play 6-5 5;play 5-0 5;draw;play 5-4 5;draw;play 4-4 4;play 6-4 4;"
    "draw;play 4-3 4;draw;play 0-0 0;play 4-0 4;play 2-0 0;draw;play 6-6 6;play 6-3 6;draw;"
    "play 6-2 6;draw;play 6-1 6;play 3-0 0;play 1-1 1;play 6-0 6;play 3-1 1;draw;"
    "play 4-1 1;play 4-2 4;draw"
)
"""Two-player Doubles, seed 177: seat 1 has just drawn 1-0 and must play it (docs/rules.md
4.6); it keeps 3-2, and both 2 and 3 are locked."""


def test_doubles_the_only_play_that_closes_the_opponents_end_is_found() -> None:
    """Seat 1 sees five tiles it does not hold: 2-1, 5-1, 5-2, 2-2 and 3-3; seat 0 drew while
    the 2 and 3 ends were open, so it holds neither double (docs/rules.md 4.6) and its two
    tiles are two of 2-1, 5-1 and 5-2. Of those only 2-1 and 5-1 fit anywhere, and only on
    the single 1 end (2 is locked and no end shows 5). 1-0 laid on that end closes it and
    shows 0: seat 0 cannot play at all. Laid on a 0 end, 1-0 shows a second 1: seat 0 plays on
    the 1 ends, and goes out first when it holds both, scoring seat 1's pips."""
    state = replay(DoublesGame(players=2).new_game(177, first_seat=0), DOUBLES_177)
    assert state.current_seat == 1
    assert set(state.legal_actions()) == {Play(Tile(1, 0), "0"), Play(Tile(1, 0), "1")}
    assert_only_winner(state, Play(Tile(1, 0), "1"))


def test_doubles_the_last_tile_at_any_end_is_the_same() -> None:
    """Seat 0's last tile, 4-2, fits the 4 ends and the 2 ends (both numbers unlocked): it
    goes out wherever it goes."""
    placed = ["4-4", "4-0 4", "0-0 0", "0-2 0", "2-2 2"]
    state = DoublesGame(players=2).from_position(
        hands=[["4-2"], ["6-5", "5-3", "6-6"]],
        boneyard=rest("4-2", "6-5 5-3 6-6", "4-4 4-0 0-0 2-0 2-2"),
        placed=placed,
        seat=0,
    )
    assert set(state.legal_actions()) == {Play(Tile(4, 2), "4"), Play(Tile(4, 2), "2")}
    assert_equivalent(state, Play(Tile(4, 2), "4"), Play(Tile(4, 2), "2"))


# -- Moon --------------------------------------------------------------------------------------

MOON_28 = (
    "bid 4;bid 6;pass;discard 3-1;trump 6;play 6-6;play 3-2;play 6-1;play 6-5;play 4-1;"
    "play 2-1;play 6-4;play 5-1;play 4-2;play 6-3;play 4-4;play 5-3;play 6-2;play 5-2;"
    "play 1-1"
)
"""Moon, seed 28: seat 1 bid 6, named sixes trump and has won the first five tricks; it
leads the sixth holding 3-3 and 4-3."""


def test_moon_the_only_lead_that_makes_the_contract_is_found() -> None:
    """Every trump (six) has been played, and so has every tile with a 3 except seat 1's own
    (3-1 is its discard), so 3-3 led wins the sixth trick and makes the contract of 6. 4-3
    leads suit 4, which 5-4 (in one of the others' hands, whichever) follows and beats; the
    last trick cannot be won with 3-3 either, so the contract fails: -6 and a trick or two to
    the others, instead of +6 (less the last trick, should the holder of 5-4 keep it)."""
    state = replay(MoonGame().new_game(28, first_seat=0), MOON_28)
    assert state.current_seat == 1
    assert set(state.legal_actions()) == {Play(Tile(3, 3)), Play(Tile(4, 3))}
    assert_only_winner(state, Play(Tile(3, 3)))


MOON_0 = (
    "bid 7;pass;pass;discard 2-1;trump 3;play 3-3;play 3-2;play 3-1;play 5-4;play 4-1;"
    "play 6-5;play 6-6;play 4-3;play 6-1;play 6-3;play 4-2;play 5-5;play 5-3;play 6-2;"
    "play 5-2;play 1-1"
)
"""Moon, seed 0: seat 0 bid 7 with threes trump and lost the second trick; it leads the
sixth with 1-1, and seat 1, holding 0-0 and 4-4, is to follow."""


def test_moon_two_tiles_that_can_never_win_are_the_same() -> None:
    """Seat 1 holds no 1 and no trump (every three is out), so it discards: 0-0 or 4-4. 1-1
    wins the sixth trick and seat 0 leads the last; no tile left can lead suit 0 or 4, so
    neither tile can win a trick, and the rest of the deal is the same either way."""
    state = replay(MoonGame().new_game(0, first_seat=0), MOON_0)
    assert state.current_seat == 1
    assert set(state.legal_actions()) == {Play(Tile(0, 0)), Play(Tile(4, 4))}
    assert_equivalent(state, Play(Tile(0, 0)), Play(Tile(4, 4)))


def test_a_match_record_that_misses_the_moon_lead_is_marked_a_blunder() -> None:
    """The same Moon position inside a match record, with seat 1 leading 4-3: the match
    analysis names 3-3 as the best and grades the lead a blunder (docs/analysis.md)."""
    state = replay(MoonGame().new_game(28, first_seat=0), MOON_28 + ";play 4-3")
    step = len(state.history) - 1
    record = record_from_state(
        state, seats=["a", "b", "c"], seed=28, first_seat=0, termination=Termination.ABORTED
    )
    analysis = analyse_match(record, "moon-28", seats=[1], max_samples=32, min_samples=16)
    decision = next(d for d in analysis.decisions if d.step == step)
    assert (decision.seat, decision.chosen, decision.best) == (1, "play 4-3", "play 3-3")
    assert decision.severity is Severity.BLUNDER
    assert decision.loss_points > MARGIN_Z * decision.stderr

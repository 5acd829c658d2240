"""One decision evaluated: the analysis ranks a position's only good action first, marks the
others as losses, and refuses what is not a decision."""

from __future__ import annotations

import random

import pytest

from domino_arena.sdk.rules import Action, PassingGame, PassingState, make_game
from domino_arena.sdk.rules.actions import DRAW, PASS, Play
from domino_arena.sdk.rules.tiles import Tile
from domino_arena.server.analysis import Budget, Severity
from domino_arena.server.analysis.evaluate import evaluate
from domino_arena.server.analysis.grading import accuracy, severity
from domino_arena.server.analysis.scale import SCALES, scale_of, win_chance

BUDGET = Budget(precision=0.5, max_samples=256, min_samples=32)


def going_out() -> PassingState:
    """Seat 0 holds one tile, 1-2, that fits the line's E end (2): playing it ends the hand
    with seat 0 out (docs/rules.md 2.6 a), scoring seat 1's pips; a pass or a draw gives seat
    1 a turn in which it may go out itself, and a draw adds pips to seat 0's hand."""
    tiles = [Tile(a, b) for a in range(7) for b in range(a + 1)]
    hands = [["1-2"], ["6-6", "5-5", "6-5", "4-4", "5-4", "6-4", "3-3"]]
    used = {Tile(1, 2), Tile(0, 2), *(Tile(int(t[0]), int(t[2])) for t in hands[1])}
    boneyard = [str(t) for t in tiles if t not in used]
    return PassingGame(players=2).from_position(
        hands=hands, boneyard=boneyard, line=["0-2"], seat=0
    )


@pytest.mark.parametrize("chosen", [PASS, DRAW])
def test_the_only_winning_action_is_best_and_the_others_lose(chosen: Action) -> None:
    state = going_out()
    play = Play(Tile(2, 1), "E")
    assert set(state.legal_actions()) == {play, DRAW, PASS}
    ev = evaluate(state.observe(0), chosen, random.Random("t"), BUDGET)
    assert ev.actions[ev.best] == play
    assert ev.points[ev.best] > max(p for i, p in enumerate(ev.points) if i != ev.best)
    assert ev.loss_points > 3 * ev.stderr > 0
    assert ev.wins[ev.best] >= ev.wins[ev.chosen]


def test_choosing_the_best_action_loses_nothing() -> None:
    play = Play(Tile(2, 1), "E")
    ev = evaluate(going_out().observe(0), play, random.Random("t"), BUDGET)
    assert ev.best == ev.chosen
    assert ev.loss_points == 0.0
    assert ev.loss_win == 0.0
    assert ev.samples >= 32


def test_sampling_stops_at_the_precision_or_the_budget() -> None:
    state = make_game("passing").new_game(seed=3, first_seat=0)
    obs = state.observe(0)
    loose = evaluate(obs, obs.legal_actions[0], random.Random(1), Budget(50.0, 512, 16))
    assert loose.samples == 16
    assert loose.stderr <= 50.0
    tight = evaluate(obs, obs.legal_actions[0], random.Random(1), Budget(1e-6, 40, 16))
    assert tight.samples == 40
    odd = evaluate(obs, obs.legal_actions[0], random.Random(1), Budget(50.0, 40, 21))
    assert odd.samples == 21


def test_a_move_not_legal_or_a_seat_not_to_move_is_refused() -> None:
    state = going_out()
    with pytest.raises(ValueError, match="chosen"):
        evaluate(state.observe(0), Play(Tile(6, 6), "E"), random.Random(1), BUDGET)
    with pytest.raises(ValueError, match="observation: seat 1 is not to move"):
        evaluate(state.observe(1), PASS, random.Random(1), BUDGET)


@pytest.mark.parametrize(
    ("field", "kwargs"),
    [
        ("precision", {"precision": 0.0, "max_samples": 10, "min_samples": 2}),
        ("min_samples", {"precision": 1.0, "max_samples": 10, "min_samples": 1}),
        ("max_samples", {"precision": 1.0, "max_samples": 3, "min_samples": 4}),
    ],
)
def test_a_bad_budget_names_its_field(field: str, kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError, match=field):
        Budget(**kwargs)  # type: ignore[arg-type]


def test_severity_needs_a_loss_beyond_the_noise_and_grows_with_it() -> None:
    scale = SCALES["passing"]
    assert severity(10.0, 0.0, stderr=6.0, scale=scale) is None
    assert severity(1.5, 0.0, stderr=0.1, scale=scale) is Severity.INACCURACY
    assert severity(4.0, 0.0, stderr=0.1, scale=scale) is Severity.MISTAKE
    assert severity(7.0, 0.0, stderr=0.1, scale=scale) is Severity.BLUNDER
    assert severity(0.0, 0.25, stderr=0.0, scale=scale) is Severity.BLUNDER
    assert severity(0.1, 0.01, stderr=0.0, scale=scale) is None


def test_accuracy_is_100_without_loss_and_falls_with_it() -> None:
    scale = SCALES["moon"]
    assert accuracy(0.0, scale) == 100.0
    assert 0 < accuracy(3.0, scale) < accuracy(1.0, scale) < 100.0


def test_win_chance_favours_the_side_ahead_and_more_so_near_the_end() -> None:
    scale = scale_of("passing")
    assert win_chance((50, 50), 0, 101, scale) == pytest.approx(0.5)
    assert win_chance((60, 40), 0, 101, scale) > 0.5 > win_chance((60, 40), 1, 101, scale)
    assert win_chance((95, 75), 0, 101, scale) > win_chance((25, 5), 0, 101, scale)
    with pytest.raises(ValueError, match="game: no analysis scale for 'chess'"):
        scale_of("chess")

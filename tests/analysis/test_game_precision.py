"""The game-level precision: a seat's decisions sampled together until the standard error of
its mean loss per decision is within the target (docs/analysis.md: precision)."""

from __future__ import annotations

import math

import pytest

from domino_arena.server.analysis import MatchAnalysis, analyse_match
from tests.fakes.analysed import greedy_record

RECORD = greedy_record("passing", 3, steps=24)


def test_the_mean_loss_reaches_the_game_precision_when_the_budget_allows() -> None:
    analysis = analyse_match(
        RECORD, "m", seats=[0], precision=0.01, game_precision=1.0, max_samples=400
    )
    mine = analysis.for_seat(0)
    assert len(mine) >= 3
    errors = [d.stderr for d in mine]
    reported = analysis.mean_loss_stderr(0)
    assert reported == pytest.approx(math.sqrt(sum(e * e for e in errors)) / len(errors))
    assert reported <= 1.0
    assert analysis.game_precision == 1.0
    # Sampled to the game's target, not each decision's: no decision is at its own 0.01, and
    # the decisions were not all given the same number of samples.
    assert all(d.stderr > 0.01 and 16 <= d.samples < 400 for d in mine)
    assert len({d.samples for d in mine}) > 1
    # A looser target costs fewer samples.
    loose = analyse_match(
        RECORD, "m", seats=[0], precision=0.01, game_precision=3.0, max_samples=400
    )
    assert loose.mean_loss_stderr(0) <= 3.0
    assert sum(d.samples for d in loose.decisions) < sum(d.samples for d in mine)


def test_a_budget_too_small_stops_every_decision_at_it() -> None:
    analysis = analyse_match(
        RECORD, "m", seats=[0], game_precision=0.001, max_samples=32, min_samples=16
    )
    assert all(d.samples == 32 for d in analysis.decisions)
    assert analysis.mean_loss_stderr(0) > 0.001


def test_the_same_seed_gives_the_same_analysis_and_it_survives_json() -> None:
    def run(seed: int) -> dict[str, object]:
        return analyse_match(
            RECORD, "m", seats=[0, 1], game_precision=2.0, max_samples=96, seed=seed
        ).to_json()

    first = run(4)
    assert run(4) == first
    assert run(5) != first
    assert first["game_precision"] == 2.0
    assert MatchAnalysis.from_json(first).to_json() == first


@pytest.mark.parametrize("value", [0.0, -1.0, math.nan, math.inf])
def test_a_bad_game_precision_is_refused_naming_it(value: float) -> None:
    with pytest.raises(ValueError, match="game_precision"):
        analyse_match(RECORD, "m", seats=[0], game_precision=value)

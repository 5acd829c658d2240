"""``domino-arena tournament plan`` (server/cli/tournament_plan.py): no referee needed."""

from __future__ import annotations

import pytest

from tests.cli.harness import cli


def test_plan_prints_games_duration_and_precision(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(
        capsys,
        "tournament plan doubles --players 4 --format balanced --entrants 40 "
        "--games-per-entrant 48 --time-control 2s+10s",
    )
    assert code == 0
    assert "format: balanced, 40 entrants, 4 seats" in out
    assert "games: 480 (48 per entrant)" in out
    assert "at the full move time (2 s)" in out
    assert "precision: +-" in out


def test_plan_sizes_for_a_precision(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(
        capsys, "tournament plan moon --format balanced --entrants 1000 --precision 40"
    )
    assert code == 0
    assert "format: balanced, 1000 entrants, 3 seats" in out


def test_a_round_robin_too_big_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "tournament plan doubles --players 4 --entrants 40")
    assert code != 0
    assert "use --format balanced --games-per-entrant" in err

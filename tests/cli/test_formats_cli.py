"""``tournament create --format ... --games-per-entrant N`` and the format's lines of
``tournament status`` (docs/tournaments.md: formats), against the admin API on port 0."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.admin_server import AdminServer

from .harness import admin, admin_server, run

BOTS = tuple(f"bot-{i:02d}" for i in range(40))


@pytest.fixture
def referee(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AdminServer]:
    with admin_server(tmp_path, monkeypatch, bots=BOTS) as server:
        server.arena.storage.update_course("default", baselines=(("greedy", 1500.0),))
        yield server


def created_id(out: str) -> str:
    match = re.match(r"tournament (\w+) created: ", out)
    assert match, out
    return match.group(1)


def test_a_balanced_tournament_is_created_and_shows_its_balance(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    out = admin(
        capsys,
        referee,
        *("tournament", "create", "passing", "--players", "4", "--bots", ",".join(BOTS)),
        *("--format", "balanced", "--games-per-entrant", "20", "--seed", "4"),
    )
    assert "created, 0/200 games" in out
    assert "  format: balanced, 20 games per entrant\n" in out
    assert re.search(r"\n  balance: each entrant 5 tables; pairs meet \d", out), out
    status = admin(capsys, referee, "tournament", "status", created_id(out))
    assert "  format: balanced, 20 games per entrant\n" in status
    assert "  balance: each entrant 5 tables" in status


def test_precision_sizes_a_balanced_tournament(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    out = admin(
        capsys,
        referee,
        *("tournament", "create", "passing", "--players", "3", "--bots", ",".join(BOTS)),
        *("--format", "balanced", "--precision", "100"),
    )
    sized = re.search(r"sized for \+-100 Elo: (\d+) games per entrant", out)
    assert sized, out
    assert f"  format: balanced, {sized.group(1)} games per entrant\n" in out


def test_a_gauntlet_is_created_against_the_baselines(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    out = admin(
        capsys,
        referee,
        *("tournament", "create", "passing", "--bots", "bot-00,bot-01,bot-02"),
        *("--baselines", "greedy", "--format", "gauntlet"),
    )
    assert "created, 0/6 games" in out  # each entrant against greedy from both seats
    assert "  format: gauntlet, 2 games per entrant\n" in out
    assert "  balance: each entrant 1 table" in out


def test_a_round_robin_too_big_is_refused_with_the_balanced_one_to_play(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    code, out, err = run(
        capsys,
        *("tournament", "create", "passing", "--players", "4", "--bots", ",".join(BOTS)),
        *("--server", referee.address),
    )
    assert (code, out) == (2, "")
    assert "INVALID_ARGUMENT: entrants: a round robin of 40 entrants makes 365560 games" in err
    assert "--format balanced --games-per-entrant 100" in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--format", "ladder"), "argument --format: invalid choice: 'ladder'"),
        (("--games-per-entrant", "0"), "--games-per-entrant: must be at least 1, got 0"),
        (("--format", "balanced"), "games_per_entrant: a balanced tournament needs its size"),
    ],
)
def test_bad_values_are_refused_naming_the_option(
    capsys: pytest.CaptureFixture[str],
    referee: AdminServer,
    extra: tuple[str, ...],
    message: str,
) -> None:
    code, _, err = run(
        capsys,
        *("tournament", "create", "passing", "--bots", "bot-00,bot-01,bot-02", *extra),
        *("--server", referee.address),
    )
    assert code == 2 and message in err, err

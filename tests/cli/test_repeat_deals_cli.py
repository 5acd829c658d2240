"""``tournament status`` and ``standings --repeat-deals`` print the repeat-deal table and name
the flagged bots, against the admin API on port 0 (real servicers, real SQLite storage)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.admin_server import AdminServer
from tests.fakes.tournaments import memorizing_rows

from .harness import admin, admin_server

BOTS = ("alice", "bob", "carol", "dave")


@pytest.fixture
def referee(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AdminServer]:
    with admin_server(tmp_path, monkeypatch, BOTS) as server:
        yield server


def repeat_rows(out: str) -> dict[str, list[str]]:
    """The repeat-deal table's lines by bot (cells two or more spaces apart)."""
    after = out[out.index("repeat deals") :]
    rows = [re.split(r"\s{2,}", line.strip()) for line in after.splitlines()[1:]]
    return {row[0]: row for row in rows if row and row[0] in BOTS}


def tournament_played(capsys: pytest.CaptureFixture[str], referee: AdminServer) -> str:
    """Create a tournament of ``BOTS`` and store its games (alice remembers deals); its id."""
    out = admin(capsys, referee, "tournament", "create", "passing", "--bots", ",".join(BOTS))
    created = re.match(r"tournament (\w+) created", out)
    assert created, out
    for row in memorizing_rows(created.group(1)):
        assert referee.arena.storage.save_match(row)
    return created.group(1)


def test_tournament_status_shows_the_check_and_marks_the_flagged_bot(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    t_id = tournament_played(capsys, referee)
    out = admin(capsys, referee, "tournament", "status", t_id)
    rows = repeat_rows(out)
    assert rows["alice"][:6] == ["alice", "12", "0.000", "1.000", "+1.000", "4.8e-07"]
    assert rows["alice"][6].startswith("FLAGGED")
    assert rows["carol"][1:6] == ["24", "0.500", "0.500", "+0.000", "0.5"]
    assert len(rows["carol"]) == 6  # not flagged: no mark
    assert "flagged as remembering deals across games: alice" in out


def test_standings_show_the_check_only_when_asked(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    tournament_played(capsys, referee)
    assert "repeat deals" not in admin(capsys, referee, "standings", "passing")
    out = admin(capsys, referee, "standings", "passing", "--repeat-deals")
    rows = repeat_rows(out)
    assert sorted(rows) == sorted(BOTS)
    assert rows["alice"][6].startswith("FLAGGED")
    assert "flagged as remembering deals across games: alice" in out

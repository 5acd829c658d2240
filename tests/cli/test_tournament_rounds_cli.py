"""``tournament create --format swiss|knockout`` with its size and seeding, the status lines of
a Swiss's round and a knockout's stage and champion, and ``tournament rounds`` (tables,
byes, the bracket; JSON), against the admin API on port 0 after a real runner played the
rounds (docs/tournaments.md: Swiss, knockout)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.admin_server import AdminServer
from tests.fakes.rounds import play_to_end

from .harness import admin, admin_server, run, table_rows

BOTS = (*(f"bot-{i:02d}" for i in range(7)), "bot-09")


@pytest.fixture
def referee(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AdminServer]:
    with admin_server(tmp_path, monkeypatch, bots=BOTS) as server:
        yield server


def created_id(out: str) -> str:
    match = re.match(r"tournament (\w+) created: ", out)
    assert match, out
    return match.group(1)


def create(capsys: pytest.CaptureFixture[str], referee: AdminServer, *flags: str) -> str:
    return admin(
        capsys,
        referee,
        *("tournament", "create", "passing", "--players", "2", "--seed", "3"),
        *flags,
    )


def test_a_swiss_tournament_shows_its_round_and_its_rounds(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    bots = ",".join(BOTS[:7])  # an odd field: one bye a round
    out = create(capsys, referee, "--bots", bots, "--format", "swiss", "--rounds", "2")
    assert "  format: swiss, round 0 of 2\n" in out
    t = created_id(out)
    play_to_end(referee.arena.storage, t)
    status = admin(capsys, referee, "tournament", "status", t)
    assert "  format: swiss, round 2 of 2\n" in status
    assert "finished, 12/12 games" in status  # 3 tables x 2 rotations, twice
    rounds = admin(capsys, referee, "tournament", "rounds", t)
    assert "round 1 of 2: games 0-5, 6/6 stored" in rounds
    assert "round 2 of 2: games 6-11, 6/6 stored" in rounds
    assert rounds.count("  byes: bot-") == 2
    rows = [row for row in table_rows(rounds) if len(row) == 5 and row[0].isdigit()]
    assert len(rows) == 6  # the first seat of each table carries its number
    assert all(row[4] == "2" for row in rows)  # each table played its 2 games
    document = json.loads(admin(capsys, referee, "tournament", "rounds", t, "--json"))
    assert [r["number"] for r in document["rounds"]] == [1, 2]
    assert len(document["rounds"][0]["tables"]) == 3 and "bracket" not in document


def test_a_knockout_shows_its_bracket_and_champion(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    seeding = ",".join(reversed(BOTS[4:]))  # bot-09 first
    out = create(
        capsys,
        referee,
        *("--bots", ",".join(BOTS[4:]), "--format", "knockout", "--sets", "1"),
        *("--max-sets", "2", "--seeding", seeding),
    )
    assert "  format: knockout, 1 set a tie, up to 2 while level\n" in out
    assert "  seeding: bot-09, bot-06, bot-05, bot-04\n" in out
    t = created_id(out)
    play_to_end(referee.arena.storage, t)
    status = admin(capsys, referee, "tournament", "status", t)
    assert "  champion: bot-09 (after 2 stages)\n" in status
    rounds = admin(capsys, referee, "tournament", "rounds", t)
    assert "stage 1\n" in rounds and "stage 2 (final)\n" in rounds
    ties = [row for row in table_rows(rounds) if row[0] in ("1", "2") and len(row) == 5]
    assert ["1", "bot-09, bot-04", "1", "bot-04", "points"] in ties
    assert "champion: bot-09\n" in rounds
    assert "final order: bot-09, bot-06\n" in rounds
    document = json.loads(admin(capsys, referee, "tournament", "rounds", t, "--json"))
    assert document["bracket"]["champion"] == "bot-09"


def test_seeding_from_and_bad_sizes(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    first = created_id(
        create(capsys, referee, "--bots", ",".join(BOTS[:4]), "--format", "swiss", "--rounds", "1")
    )
    play_to_end(referee.arena.storage, first)
    out = create(
        capsys,
        referee,
        *("--bots", ",".join(BOTS[:6]), "--format", "knockout", "--seeding-from", first),
    )
    seeded = re.search(r"\n  seeding: (.*)\n", out)
    assert seeded, out
    assert seeded.group(1).split(", ")[4:] == ["bot-04", "bot-05"]  # not in the first
    code, _, err = run(
        capsys,
        *("tournament", "create", "passing", "--bots", "bot-00,bot-01", "--format", "swiss"),
        *("--rounds", "0", "--server", referee.address),
    )
    assert (code, err.strip()) == (2, "domino-arena: error: --rounds: must be at least 1, got 0")
    code, _, err = run(
        capsys,
        "tournament",
        "rounds",
        created_id(create(capsys, referee, "--bots", "bot-00,bot-01")),
        "--server",
        referee.address,
    )
    assert code == 2 and "only a Swiss or knockout tournament plays rounds" in err

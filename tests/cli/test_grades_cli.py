"""``domino-arena grades``: the gradebook as CSV (a header, one row per owner's bot, six columns
per baseline) and as JSON (format 1, proto names), to stdout or a file, anonymous, and the
referee's refusals as one line. The referee is the admin API on port 0 over a real SQLite
storage holding a finished term's games (tests/fakes/graded.py)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from domino_arena.server.cli.grades import BASELINE_COLUMNS, COLUMNS
from domino_arena.server.store.tournaments import TournamentState
from tests.fakes.admin_server import AdminServer
from tests.fakes.graded import a_term

from .harness import admin, admin_server, run


@pytest.fixture
def referee(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AdminServer]:
    with admin_server(tmp_path, monkeypatch, bots=()) as server:
        storage = server.arena.storage
        storage.create_course("cs101")
        storage.create_bot("ace", course="cs101", owner="alice")
        storage.create_bot("eve", course="cs101", owner="evelyn")
        for tournament, matches in (
            a_term("t1", deals=10),
            a_term("open", deals=1, state=TournamentState.RUNNING),
        ):
            storage.add_tournament(tournament)
            for match in matches:
                storage.save_match(match)
        yield server


def rows_of(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_csv_has_a_row_per_bot_and_six_columns_per_baseline(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    out = admin(capsys, referee, "grades", "t1", "--rounds", "20")
    header, *rows = rows_of(out)
    expected = list(COLUMNS)
    for baseline in ("greedy", "random"):
        expected += [f"vs_{baseline}_{column}" for column in BASELINE_COLUMNS]
    assert header == expected
    assert [row[:2] for row in rows] == [["alice", "ace"], ["evelyn", "eve"]]
    ace = dict(zip(header, rows[0], strict=True))
    assert float(ace["rating_low"]) < float(ace["rating"]) < float(ace["rating_high"])
    assert int(ace["games"]) == int(ace["wins"]) + int(ace["draws"]) + int(ace["losses"]) == 60
    assert float(ace["points"]) == int(ace["wins"]) + int(ace["draws"]) / 2
    assert ace["vs_random_verdict"] == "better"
    assert float(ace["vs_random_p"]) < 0.05
    assert 0.5 < float(ace["vs_random_score"]) <= 1
    assert (
        float(ace["vs_random_low"]) <= float(ace["vs_random_elo"]) <= float(ace["vs_random_high"])
    )
    assert {row[header.index("vs_greedy_verdict")] for row in rows} <= {
        "better",
        "worse",
        "not significant",
    }


def test_json_is_the_grades_answer_by_proto_names(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    out = admin(capsys, referee, "grades", "t1", "--format", "json", "--rounds", "20")
    document = json.loads(out)
    assert document["format"] == 1
    assert (document["course"], document["game"], document["tournament_ids"]) == (
        "cs101",
        "passing",
        ["t1"],
    )
    assert document["baselines"] == [
        {"bot": "greedy", "rating": 1500.0},
        {"bot": "random", "rating": 1000.0},
    ]
    first = document["grades"][0]
    assert set(first) >= {"owner", "bot", "rank", "rating", "rating_low", "rating_high", "faults"}
    assert [b["baseline"] for b in first["baselines"]] == ["greedy", "random"]
    assert set(first["baselines"][0]) >= {"score", "elo", "elo_low", "p_value", "verdict", "los"}
    assert document["rounds"] == 20 and document["anonymous"] is False


def test_output_to_a_file_and_anonymous(
    capsys: pytest.CaptureFixture[str], referee: AdminServer, tmp_path: Path
) -> None:
    target = tmp_path / "grades.csv"
    out = admin(capsys, referee, "grades", "t1", "--anonymous", "--rounds", "20", "-o", str(target))
    assert out == ""
    _, *rows = rows_of(target.read_text(encoding="utf-8"))
    assert [row[:2] for row in rows] == [["Student 1", "Bot 1"], ["Student 2", "Bot 2"]]


def test_a_refusal_is_one_line_and_writes_no_file(
    capsys: pytest.CaptureFixture[str], referee: AdminServer, tmp_path: Path
) -> None:
    target = tmp_path / "grades.csv"
    code, out, err = run(
        capsys, "grades", "t1", "open", "-o", str(target), "--server", referee.address
    )
    assert (code, out) == (2, "")
    assert "FAILED_PRECONDITION: tournament_ids[1]: 'open' is running" in err
    assert not target.exists()
    code, _, err = run(capsys, "grades", "t1", "--rounds", "0", "--server", referee.address)
    assert code == 2 and "--rounds: must be 1 to 2000, got 0" in err

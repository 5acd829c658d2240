"""``domino-arena grades``: the gradebook as CSV (a header, one row per owner's bot or "no
submission", the JSON's fields as columns) and as JSON (format 1, proto names), to stdout or a
file, anonymous, with a grade scale, as a Canvas/Moodle gradebook, and the referee's refusals as
one line. The referee is the admin API on port 0 over a real SQLite
storage holding a finished term's games (tests/fakes/graded.py)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from domino_arena.server.cli.grades import BASELINE_COLUMNS, COLUMNS
from domino_arena.server.store.analyses import save_analysis
from domino_arena.server.store.tournaments import TournamentState
from domino_arena.v1 import admin_pb2
from tests.analysis.records import analysis
from tests.fakes.admin_server import AdminServer
from tests.fakes.graded import a_regrade, a_term

from .harness import admin, admin_server, run


@pytest.fixture
def referee(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AdminServer]:
    with admin_server(tmp_path, monkeypatch, bots=()) as server:
        storage = server.arena.storage
        storage.create_course("cs101", baselines=(("greedy", 1500.0), ("random", 1000.0)))
        storage.create_bot("ace", course="cs101", owner="alice")
        storage.create_bot("eve", course="cs101", owner="evelyn")
        storage.create_bot("zed-v1", course="cs101", owner="zoe")  # never entered
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


def test_csv_has_a_row_per_bot_and_the_columns_of_each_baseline(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    out = admin(capsys, referee, "grades", "t1", "--rounds", "20")
    header, *rows = rows_of(out)
    expected = list(COLUMNS)
    for baseline in ("greedy", "random"):
        expected += [f"vs_{baseline}_{column}" for column in BASELINE_COLUMNS]
    assert header == expected
    assert [row[:3] for row in rows] == [
        ["alice", "ace", "graded"],
        ["evelyn", "eve", "graded"],
        ["zoe", "", "no submission"],
    ]
    assert rows[2][3:] == [""] * (len(header) - 3)
    ace = dict(zip(header, rows[0], strict=True))
    assert float(ace["rating_low"]) < float(ace["rating"]) < float(ace["rating_high"])
    assert int(ace["games"]) == int(ace["wins"]) + int(ace["draws"]) + int(ace["losses"]) == 60
    assert float(ace["points"]) == int(ace["wins"]) + int(ace["draws"]) / 2
    assert ace["vs_random_verdict"] == "better"
    assert float(ace["vs_random_p_value"]) < 0.05
    assert int(ace["vs_random_games"]) == 2 * int(ace["vs_random_sets"]) == 20
    assert 0.975 <= float(ace["vs_random_los"]) <= 1
    assert 0.5 < float(ace["vs_random_score"]) <= 1
    assert (
        float(ace["vs_random_elo_low"])
        <= float(ace["vs_random_elo"])
        <= float(ace["vs_random_elo_high"])
    )
    assert {row[header.index("vs_greedy_verdict")] for row in rows[:2]} <= {
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


def test_the_csv_carries_every_field_of_a_json_row() -> None:
    row = {f.name for f in admin_pb2.OwnerGrade.DESCRIPTOR.fields} - {"baselines"}
    baseline = {f.name for f in admin_pb2.BaselineResult.DESCRIPTOR.fields} - {"baseline"}
    assert (set(COLUMNS), set(BASELINE_COLUMNS)) == (row, baseline)


def test_a_scale_grades_every_bot_and_the_gradebook_has_a_row_per_student(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    scale = "A:beats greedy+random,B:beats random,F"
    out = admin(capsys, referee, "grades", "t1", "--rounds", "20", "--scale", scale)
    header, *rows = rows_of(out)
    grade = {row[0]: row[header.index("grade")] for row in rows}
    assert grade == {"alice": "A", "evelyn": "B", "zoe": ""}
    document = json.loads(
        admin(
            capsys, referee, "grades", "t1", "--rounds", "20", "--scale", scale, "--format", "json"
        )
    )
    assert document["scale"] == scale
    assert [(g["owner"], g["grade"]) for g in document["grades"]] == [
        ("alice", "A"),
        ("evelyn", "B"),
        ("zoe", ""),
    ]
    book = admin(
        capsys, referee, "grades", "t1", "--rounds", "20", "--scale", "A:1700,B:1300,F",
        "--format", "gradebook", "--assignment", "Bots 1",
    )  # fmt: skip
    assert rows_of(book) == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Bots 1"],
        ["alice", "", "", "alice", "", "A"],
        ["evelyn", "", "", "evelyn", "", "B"],
        ["zoe", "", "", "zoe", "", ""],
    ]
    unscaled = rows_of(admin(capsys, referee, "grades", "t1", "--format", "gradebook"))
    assert unscaled[0][-1] == "Domino Arena"
    assert int(unscaled[1][-1]) > 1700 and unscaled[3][-1] == ""


@pytest.mark.parametrize(
    ("scale", "message"),
    [
        ("A:1500,B:1600", "scale entry 2 ('B:1600'): cut-off 1600 is not below the 1500"),
        ("A:beats search", "'search' is not a baseline of the graded tournaments"),
        ("F,A:1500", "scale entry 1 ('F'): a grade without a rule is for everyone else"),
        ("A:better than greedy", "expected 'beats BASELINE' or a rating cut-off"),
        ("A:1500,A:1400", "grade 'A' is listed twice"),
        ("A B:1500", "the grade must be 1-16 letters"),
    ],
)
def test_a_bad_scale_is_one_line(
    capsys: pytest.CaptureFixture[str], referee: AdminServer, scale: str, message: str
) -> None:
    code, out, err = run(capsys, "grades", "t1", "--scale", scale, "--server", referee.address)
    assert (code, out) == (2, "")
    assert message in err and len(err.strip().splitlines()) == 1


def test_output_to_a_file_and_anonymous(
    capsys: pytest.CaptureFixture[str], referee: AdminServer, tmp_path: Path
) -> None:
    target = tmp_path / "grades.csv"
    out = admin(capsys, referee, "grades", "t1", "--anonymous", "--rounds", "20", "-o", str(target))
    assert out == ""
    _, *rows = rows_of(target.read_text(encoding="utf-8"))
    assert [row[:2] for row in rows] == [
        ["Student 1", "Bot 1"],
        ["Student 2", "Bot 2"],
        ["Student 3", ""],
    ]


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


def test_a_graded_tournament_states_its_precision_and_warns_at_one_game_per_pairing(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    graded = (
        "tournament",
        "create",
        "straight",
        "--course",
        "cs101",
        "--baselines",
        "greedy,random",
    )
    out = admin(capsys, referee, *graded, "--bots", "ace,eve")
    assert "expected precision (95% intervals at equal strength, for 4 entrants" in out
    assert "no interval per baseline comparison (1 duplicate set); 12 games in all" in out
    assert (
        "warning: each baseline comparison is 1 duplicate set: it has no interval (its Elo is "
        "clamped at the ends) and every verdict will be 'not significant'; size it with "
        "--precision 150"
    ) in out
    sized = admin(capsys, referee, *graded, "--bots", "ace,eve", "--precision", "150")
    chosen = int(sized.split("sized for +-150 Elo: ")[1].split(" games per pairing")[0])
    assert chosen > 1 and f"{chosen} games per pairing" in sized and "warning" not in sized
    half_width = float(sized.split("Elo per baseline comparison")[0].rsplit("+-", 1)[1].split()[0])
    assert half_width <= 150
    # latest: the course's three owners are expected at the start, with the two baselines
    later = admin(capsys, referee, *graded, "--entrant-policy", "latest")
    assert "for 5 entrants with the baselines" in later
    code, _, err = run(
        capsys, *graded, "--bots", "ace,eve", "--precision", "1", "--server", referee.address
    )
    assert code == 2 and "INVALID_ARGUMENT: precision: expected 5 to 1000 Elo, got 1" in err
    code, _, err = run(
        capsys, *graded, "--bots", "ace,eve", "--precision", "100", "--games-per-pairing", "3"
    )
    assert code == 2 and "--precision: it chooses the games per pairing" in err
    code, _, err = run(capsys, *graded, "--bots", "ace,eve", "--precision", "0")
    assert code == 2 and "--precision: expected 5 to 1000 Elo, got 0" in err


def test_a_regrade_graded_with_its_original_is_counted_once_and_says_what_it_carried(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    storage = referee.arena.storage
    storage.create_bot("eve-v2", course="cs101", owner="evelyn")
    original, played = a_term("t1", deals=10)
    regrade, replayed = a_regrade(original, played, {"eve": "eve-v2"})
    storage.add_tournament(regrade)
    for match in replayed:
        storage.save_match(match)
    code, out, err = run(
        capsys, "grades", "t1", "t1-regrade", "--rounds", "20", "--server", referee.address
    )
    assert code == 0
    assert err.splitlines() == [
        "regrade t1-regrade of t1: replaced eve by eve-v2; 60 games carried over unplayed, "
        "60 of them graded once, as the original's games"
    ]
    header, *rows = rows_of(out)
    games = {row[1]: row[header.index("games")] for row in rows}
    assert games == {"ace": "80", "eve": "60", "eve-v2": "60", "": ""}  # "": zoe, no submission
    status = admin(capsys, referee, "tournament", "status", "t1-regrade")
    assert "  regrade of t1: replaced eve by eve-v2; played again on the original's deals" in status
    assert "  carried over unplayed from t1: 60 games (20-59, 100-119), counted once" in status


def test_grades_from_too_few_sets_say_so(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    tournament, matches = a_term("tiny", deals=1)
    referee.arena.storage.add_tournament(tournament)
    for match in matches:
        referee.arena.storage.save_match(match)
    code, out, err = run(capsys, "grades", "tiny", "--rounds", "20", "--server", referee.address)
    assert code == 0 and out
    assert err.splitlines() == [
        "warning: 2 of 2 bots have fewer than 2 duplicate sets against a baseline: those "
        "comparisons have no interval (their Elo is clamped at the ends) and say 'not "
        "significant' whatever the games; grade a bigger tournament (tournament create "
        "--precision, docs/courses.md: precision)"
    ]


def test_a_bots_analysed_games_carry_its_mean_loss_and_accuracy(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    storage = referee.arena.storage
    losses = {"t1-0": 1.0, "t1-1": 0.5}  # mean loss per decision of each game, 2 decisions each
    for match_id, loss in losses.items():
        match = storage.match(match_id)
        assert match is not None
        seat = match.seats.index("ace")
        save_analysis(storage.engine, analysis(match_id, {seat: loss}, names=match.seats))
    out = admin(capsys, referee, "grades", "t1", "--rounds", "20")
    header, *rows = rows_of(out)
    by_bot = {row[1]: dict(zip(header, row, strict=True)) for row in rows}
    ace = by_bot["ace"]
    assert (ace["analysed_games"], ace["mean_loss"], ace["accuracy"]) == ("2", "0.750", "92.5")
    assert (by_bot["eve"]["analysed_games"], by_bot["eve"]["mean_loss"]) == ("", "")
    assert by_bot[""]["accuracy"] == ""  # no submission
    out = admin(capsys, referee, "grades", "t1", "--format", "json", "--rounds", "20")
    first = json.loads(out)["grades"][0]
    assert (first["bot"], first["analysed_games"], first["mean_loss"]) == ("ace", 2, 0.75)

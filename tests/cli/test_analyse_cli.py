"""``domino-arena analyse`` on a real SQLite database with real worker processes, and
``course update --analyse-tournaments`` through a real referee's admin API."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from domino_arena.server.analysis.report import MatchAnalysis
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.store import analysis_jobs
from domino_arena.server.store.analyses import load_analysis
from tests.analysis.records import QUICK, played
from tests.fakes.referee_server import ADMIN_TOKEN, Referee
from tests.fakes.store import running_tournament

from .harness import run, table_rows


@pytest.fixture
def database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, RatedStorage]]:
    monkeypatch.delenv("DOMINO_ARENA_DB", raising=False)
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    storage = RatedStorage(url)
    storage.open()
    storage.save_match(played("m1", seed=9))
    storage.add_tournament(running_tournament("cup", ("alice", "bob")))
    for index in range(3):
        storage.save_match(
            dataclasses.replace(
                played(f"t1-{index:05d}", seed=index + 1), tournament_id="t1", game_index=index
            )
        )
    yield url, storage
    storage.close()


def test_a_match_is_analysed_stored_and_printed(
    capsys: pytest.CaptureFixture[str], database: tuple[str, RatedStorage]
) -> None:
    url, storage = database
    code, out, err = run(capsys, "analyse", "m1", "--precision", str(QUICK), "--db", url)
    assert (code, err) == (0, "")
    stored = load_analysis(storage.engine, "m1")
    assert stored is not None and stored.seats == (0, 1)
    rows = table_rows(out)
    assert ["step", "seat", "phase", "chosen", "best", "loss", "severity"] in rows
    steps = [row for row in rows if row[0].isdigit() and len(row) >= 6 and row[2] == "play"]
    assert [int(row[0]) for row in steps] == [d.step for d in stored.decisions]
    header = rows.index(["seat", "name", "decisions", "mean loss", "accuracy", "severities"])
    seats = rows[header + 1 :]
    assert [row[:2] for row in seats] == [["0", "alice"], ["1", "bob"]]
    assert [int(row[2]) for row in seats] == [s.decisions for s in stored.summaries]


def test_a_game_precision_is_reached_on_the_seats_mean_loss(
    capsys: pytest.CaptureFixture[str], database: tuple[str, RatedStorage]
) -> None:
    url, storage = database
    argv = ("analyse", "m1", "--seat", "0", "--json", "--game-precision", "1.5", "--db", url)
    code, out, err = run(capsys, *argv)
    assert (code, err) == (0, "")
    printed = MatchAnalysis.from_json(json.loads(out))
    assert printed.game_precision == 1.5
    assert printed.mean_loss_stderr(0) <= 1.5
    assert load_analysis(storage.engine, "m1") == printed


def test_one_seat_as_json(
    capsys: pytest.CaptureFixture[str], database: tuple[str, RatedStorage]
) -> None:
    url, storage = database
    argv = ("analyse", "m1", "--seat", "1", "--json", "--precision", str(QUICK), "--db", url)
    code, out, err = run(capsys, *argv)
    assert (code, err) == (0, "")
    printed = MatchAnalysis.from_json(json.loads(out))
    assert printed.seats == (1,) and {d.seat for d in printed.decisions} == {1}
    assert load_analysis(storage.engine, "m1") == printed


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("nope",), "MATCH_ID: no stored match has id 'nope' in the database"),
        (("m1", "--seat", "2"), "--seat: match m1 has seats 0 to 1, got 2"),
        (("m1", "--seat", "-1"), "--seat: match m1 has seats 0 to 1, got -1"),
        (("m1", "--precision", "0"), "--precision: expected a number of points above 0, got 0"),
        (("m1", "--precision", "nan"), "--precision: expected a number of points above 0"),
        ((), "give a MATCH_ID or --tournament ID (one of them)"),
        (("m1", "--tournament", "t1"), "give a MATCH_ID or --tournament ID (one of them)"),
        (("--tournament", "t9"), "--tournament: no tournament has id 't9' in the database"),
        (("--tournament", "t1", "--seat", "0"), "--seat: a tournament's matches are analysed"),
        (("m1", "--game-precision", "-1"), "--game-precision: expected a number of points above"),
        (("--tournament", "t1", "--game-precision", "1"), "--game-precision: a tournament's"),
    ],
)
def test_bad_input_is_one_line_naming_the_field(
    capsys: pytest.CaptureFixture[str],
    database: tuple[str, RatedStorage],
    argv: tuple[str, ...],
    message: str,
) -> None:
    url, storage = database
    code, out, err = run(capsys, "analyse", *argv, "--db", url)
    assert (code, out) == (2, "")
    assert err.startswith(f"domino-arena: error: {message}") and err.count("\n") == 1
    assert load_analysis(storage.engine, "m1") is None


def test_a_tournament_is_queued_and_its_progress_shown(
    capsys: pytest.CaptureFixture[str], database: tuple[str, RatedStorage]
) -> None:
    url, _ = database
    code, out, err = run(capsys, "analyse", "t1-00000", "--precision", str(QUICK), "--db", url)
    assert code == 0
    code, out, err = run(capsys, "analyse", "--tournament", "t1", "--db", url)
    assert (code, err) == (0, "")
    assert out == (
        "tournament t1: 1 of 3 matches analysed; queued now 2; waiting 2, running 0, failed 0\n"
    )
    code, out, _ = run(capsys, "analyse", "--tournament", "t1", "--json", "--db", url)
    document = json.loads(out)
    assert (document["analysed"], document["total"], document["queued"]) == (1, 3, 0)
    assert document["jobs"][analysis_jobs.PENDING] == 2


def test_an_organizer_turns_a_courses_analyses_on_and_off(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("DOMINO_ARENA_SERVER", "DOMINO_ARENA_TOKEN", "DOMINO_ARENA_ADMIN_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    storage = RatedStorage(f"sqlite:///{tmp_path / 'cli.db'}")
    storage.open()
    storage.create_course("cs101")
    referee = Referee(storage)
    try:
        admin = ("--admin-token", ADMIN_TOKEN, "--server", referee.address)
        code, out, err = run(capsys, "course", "show", "cs101", *admin)
        assert code == 0 and "tournaments analysed as they end: off" in out
        argv = ("course", "update", "cs101", "--analyse-tournaments", "on")
        code, out, err = run(capsys, *argv, "--json", *admin)
        assert (code, err) == (0, "")
        assert json.loads(out)["analyse_tournaments"] is True
        course = storage.course("cs101")
        assert course is not None and course.analyse_tournaments
        code, out, _ = run(capsys, "course", "update", "cs101", "--title", "CS", *admin)
        assert code == 0 and "tournaments analysed as they end: on" in out
        code, out, _ = run(capsys, *argv[:-1], "off", *admin)
        assert code == 0 and "tournaments analysed as they end: off" in out
        code, _, err = run(capsys, *argv[:-1], "yes", *admin)
        assert code == 2 and "--analyse-tournaments: invalid choice: 'yes'" in err
    finally:
        referee.close()
        storage.close()

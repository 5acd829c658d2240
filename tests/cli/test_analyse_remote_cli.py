"""``domino-arena analyse ... --server``: the analyses through a real admin API (over real
SQLite), with the admin's or an organizer's token; the ``--db`` path is test_analyse_cli.py's."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from domino_arena.server.analysis.report import MatchAnalysis
from domino_arena.server.store import analysis_jobs
from domino_arena.server.store.analyses import load_analysis, save_analysis
from tests.analysis.records import analysis, played
from tests.fakes.admin_server import AdminServer
from tests.fakes.store import running_tournament

from .harness import admin, admin_server, run, table_rows


@pytest.fixture
def referee(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AdminServer]:
    with admin_server(tmp_path, monkeypatch, bots=()) as server:
        storage = server.arena.storage
        storage.create_course("cs101")
        storage.save_match(dataclasses.replace(played("m1", seed=9), course="cs101"))
        storage.save_match(dataclasses.replace(played("m2", seed=3), course="cs101"))
        storage.add_tournament(running_tournament("cup", ("alice", "bob")))
        for index in range(2):
            stored = played(f"t1-{index:05d}", seed=index + 1)
            storage.save_match(dataclasses.replace(stored, tournament_id="t1", game_index=index))
        save_analysis(storage.engine, analysis("m1", {0: 0.5, 1: 2.0}))
        yield server


def test_a_stored_analysis_is_printed_for_the_courses_organizer(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    token = referee.arena.storage.rotate_organizer_token("cs101").token
    out = admin(capsys, referee, "analyse", "m1", "--admin-token", token)
    rows = table_rows(out)
    header = rows.index(["seat", "name", "decisions", "mean loss", "accuracy", "severities"])
    assert [row[:3] for row in rows[header + 1 :]] == [["0", "alice", "2"], ["1", "bob", "2"]]
    printed = MatchAnalysis.from_json(json.loads(admin(capsys, referee, "analyse", "m1", "--json")))
    stored = load_analysis(referee.arena.storage.engine, "m1")
    assert stored is not None and printed.decisions == stored.decisions
    assert analysis_jobs.job(referee.arena.storage.engine, "m1") is None  # read, not queued


def test_a_match_without_analysis_is_queued_then_reported_pending(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    out = admin(capsys, referee, "analyse", "m2", "--seat", "1", "--precision", "0.5")
    assert out.startswith("match m2: queued for the referee's analysis workers (precision 0.5)")
    engine = referee.arena.storage.engine
    job = analysis_jobs.job(engine, "m2")
    assert job is not None and (job.seats, job.precision, job.state) == ((1,), 0.5, "pending")
    code, out, err = run(capsys, "analyse", "m2", "--server", referee.address)
    assert code == 2 and "FAILED_PRECONDITION" in err and "is pending" in err
    status = json.loads(admin(capsys, referee, "analyse", "m2", "--again", "--json"))
    assert (status["state"], status["seats"], status["precision"]) == (
        "ANALYSIS_JOB_STATE_PENDING",
        [],
        0.05,
    )


def test_a_tournament_is_queued_and_its_progress_printed(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    out = admin(capsys, referee, "analyse", "--tournament", "t1")
    assert out == (
        "tournament t1: 0 of 2 matches analysed; queued now 2; waiting 2, running 0, failed 0\n"
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("m2", "--seat", "5"), "seats[0]: match m2 has seats 0 to 1, got 5"),
        (("nope",), "match_id: no stored match has id 'nope'"),
        (("m2", "--game-precision", "1"), "--game-precision: not with --server"),
        (("--tournament", "zz"), "tournament_id: no tournament has id 'zz'"),
    ],
)
def test_a_refusal_is_one_line_naming_the_field(
    capsys: pytest.CaptureFixture[str],
    referee: AdminServer,
    extra: tuple[str, ...],
    message: str,
) -> None:
    code, out, err = run(capsys, "analyse", *extra, "--server", referee.address)
    assert (code, out) == (2, "")
    assert message in err and err.count("\n") == 1

"""GetAnalysis, AnalyseMatch and AnalyseTournament at the wire: a stored analysis read back,
jobs queued in the real database for the referee's workers, each refusal with its status and
the field it names, and the organizer's scope (another course's match or tournament is
NOT_FOUND, exactly as a missing one)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import grpc
import pytest

from domino_arena.server.net.analysis_wire import analysis_from_proto
from domino_arena.server.store import analysis_jobs
from domino_arena.server.store.analyses import load_analysis, save_analysis
from domino_arena.v1 import admin_pb2 as admin_pb
from tests.analysis.records import analysis, played
from tests.fakes.admin_server import TOKEN, AdminServer, refused, served_over
from tests.fakes.referee_server import WAIT
from tests.fakes.store import running_tournament

ADMIN: Final = (("authorization", f"Bearer {TOKEN}"),)
Metadata = tuple[tuple[str, str], ...]


@dataclasses.dataclass
class Arena:
    server: AdminServer
    organizer: Metadata
    stranger: Metadata

    def get(self, match_id: str, metadata: Metadata = ADMIN) -> admin_pb.MatchAnalysis:
        request = admin_pb.GetAnalysisRequest(match_id=match_id)
        answer: admin_pb.MatchAnalysis = self.server.admin.GetAnalysis(
            request, metadata=metadata, timeout=WAIT
        )
        return answer

    def analyse(self, metadata: Metadata = ADMIN, **fields: Any) -> admin_pb.AnalysisJobStatus:
        request = admin_pb.AnalyseMatchRequest(**fields)
        answer: admin_pb.AnalysisJobStatus = self.server.admin.AnalyseMatch(
            request, metadata=metadata, timeout=WAIT
        )
        return answer

    def tournament(self, metadata: Metadata = ADMIN, **fields: Any) -> admin_pb.AnalysisProgress:
        request = admin_pb.AnalyseTournamentRequest(**fields)
        answer: admin_pb.AnalysisProgress = self.server.admin.AnalyseTournament(
            request, metadata=metadata, timeout=WAIT
        )
        return answer


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[Arena]:
    with served_over(tmp_path / "analyses.db") as server:
        storage = server.arena.storage
        mine = storage.create_course("cs101").token
        theirs = storage.create_course("cs102").token
        for match_id, seed in (("m1", 9), ("m2", 3)):
            storage.save_match(dataclasses.replace(played(match_id, seed=seed), course="cs101"))
        storage.save_match(dataclasses.replace(played("bare"), course="cs101", record=None))
        storage.save_match(dataclasses.replace(played("x1"), course="cs102"))
        storage.add_tournament(
            dataclasses.replace(running_tournament("cup", ("alice", "bob")), course="cs101")
        )
        for index in range(3):
            stored = played(f"t1-{index:05d}", seed=index + 1)
            storage.save_match(
                dataclasses.replace(stored, tournament_id="t1", game_index=index, course="cs101")
            )
        save_analysis(storage.engine, analysis("m1", {0: 0.5, 1: 2.0}))
        save_analysis(storage.engine, analysis("t1-00000", {0: 0.25}))
        yield Arena(
            server,
            (("authorization", f"Bearer {mine}"),),
            (("authorization", f"Bearer {theirs}"),),
        )


def test_a_stored_analysis_reads_back_for_the_admin_and_the_organizer(arena: Arena) -> None:
    stored = load_analysis(arena.server.arena.storage.engine, "m1")
    assert stored is not None
    answer = arena.get("m1")
    assert arena.get("m1", arena.organizer) == answer
    assert (answer.match_id, answer.game, list(answer.seats)) == ("m1", "passing", [0, 1])
    assert not answer.HasField("game_precision")
    read = analysis_from_proto(answer)
    assert (read.decisions, read.pars, read.precision, read.seed) == (
        stored.decisions,
        stored.pars,
        stored.precision,
        stored.seed,
    )
    bob = answer.summaries[1]
    assert (bob.name, bob.mean_loss_points, bob.mistakes, bob.blunders) == ("bob", 2.0, 1, 0)
    assert dict(bob.mean_loss_by_phase) == {"play": 2.0}
    assert math.isclose(bob.mean_loss_stderr, stored.mean_loss_stderr(1))
    severities = [d.severity for d in answer.decisions]
    assert admin_pb.ANALYSIS_SEVERITY_MISTAKE in severities
    assert admin_pb.ANALYSIS_SEVERITY_UNSPECIFIED in severities


def test_a_missing_match_or_analysis_is_not_found_and_a_queued_one_not_yet(arena: Arena) -> None:
    assert refused(lambda: arena.get("nope")) == (
        grpc.StatusCode.NOT_FOUND,
        "match_id: no stored match has id 'nope'",
    )
    code, message = refused(lambda: arena.get("m2"))
    assert code is grpc.StatusCode.NOT_FOUND and "'m2' has no analysis" in message
    arena.analyse(match_id="m2")
    code, message = refused(lambda: arena.get("m2"))
    assert code is grpc.StatusCode.FAILED_PRECONDITION and "is pending" in message
    engine = arena.server.arena.storage.engine
    assert analysis_jobs.claim_next(engine) is not None
    analysis_jobs.finish_job(engine, "m2", "step 4: the record does not replay")
    code, message = refused(lambda: arena.get("m2"))
    assert code is grpc.StatusCode.FAILED_PRECONDITION
    assert message.endswith("failed: step 4: the record does not replay")
    assert refused(lambda: arena.get("")) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "match_id: missing; expected a match id",
    )


def test_an_organizer_sees_nothing_of_another_course(arena: Arena) -> None:
    missing = refused(lambda: arena.get("nope", arena.stranger))
    hidden = refused(lambda: arena.get("m1", arena.stranger))
    assert hidden == (grpc.StatusCode.NOT_FOUND, missing[1].replace("nope", "m1"))
    assert refused(lambda: arena.analyse(arena.stranger, match_id="m2"))[0] is (
        grpc.StatusCode.NOT_FOUND
    )
    assert refused(lambda: arena.tournament(arena.stranger, tournament_id="t1")) == (
        grpc.StatusCode.NOT_FOUND,
        "tournament_id: no tournament has id 't1'",
    )
    engine = arena.server.arena.storage.engine
    assert analysis_jobs.job(engine, "m2") is None
    assert analysis_jobs.job_counts(engine, "t1")[analysis_jobs.PENDING] == 0
    assert arena.analyse(arena.stranger, match_id="x1").state == (
        admin_pb.ANALYSIS_JOB_STATE_PENDING
    )


def test_a_match_is_queued_with_its_seats_and_the_default_precision(arena: Arena) -> None:
    status = arena.analyse(arena.organizer, match_id="m2", seats=[1])
    assert (status.match_id, status.state, list(status.seats), status.error) == (
        "m2",
        admin_pb.ANALYSIS_JOB_STATE_PENDING,
        [1],
        "",
    )
    assert status.precision == 0.05
    job = analysis_jobs.job(arena.server.arena.storage.engine, "m2")
    assert job is not None and (job.seats, job.precision, job.state) == ((1,), 0.05, "pending")
    assert arena.server.arena.calls == [("wake analysis", "")]  # the runner starts it at once
    again = arena.analyse(match_id="m2", precision=0.5)
    assert (list(again.seats), again.precision) == ([], 0.5)
    code, message = refused(lambda: arena.analyse(match_id="bare"))
    assert code is grpc.StatusCode.FAILED_PRECONDITION and "without a record" in message


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"seats": [2]}, "seats[0]: match m2 has seats 0 to 1, got 2"),
        ({"seats": [0, -1]}, "seats[1]: match m2 has seats 0 to 1, got -1"),
        ({"seats": [1, 1]}, "seats[1]: seat 1 is listed twice"),
        ({"precision": -0.5}, "precision: expected a finite number of points above 0"),
        ({"precision": math.nan}, "precision: expected a finite number of points above 0"),
        ({"precision": math.inf}, "precision: expected a finite number of points above 0"),
    ],
)
def test_a_bad_seat_or_precision_names_its_field(
    arena: Arena, fields: dict[str, Any], message: str
) -> None:
    code, details = refused(lambda: arena.analyse(match_id="m2", **fields))
    assert code is grpc.StatusCode.INVALID_ARGUMENT
    assert details.startswith(message)
    assert analysis_jobs.job(arena.server.arena.storage.engine, "m2") is None


def test_a_tournament_is_queued_and_its_progress_shown(arena: Arena) -> None:
    progress = arena.tournament(arena.organizer, tournament_id="t1")
    assert (progress.tournament_id, progress.analysed, progress.total) == ("t1", 1, 3)
    assert (progress.queued_now, progress.waiting, progress.running, progress.failed) == (
        2,
        2,
        0,
        0,
    )
    engine = arena.server.arena.storage.engine
    job = analysis_jobs.claim_next(engine)
    assert job is not None and job.precision == 0.05
    analysis_jobs.finish_job(engine, job.match_id, "a worker died")
    assert arena.server.arena.calls == [("wake analysis", "")]
    seen = arena.tournament(tournament_id="t1", progress_only=True)
    assert arena.server.arena.calls == [("wake analysis", "")]  # nothing queued: not woken
    assert (seen.queued_now, seen.waiting, seen.running, seen.failed) == (0, 1, 0, 1)
    assert [(f.match_id, f.error) for f in seen.failures] == [(job.match_id, "a worker died")]
    again = arena.tournament(tournament_id="t1", precision=1.0)
    assert (again.queued_now, again.waiting, again.failed, list(again.failures)) == (1, 2, 0, [])
    retried = analysis_jobs.job(engine, job.match_id)
    assert retried is not None and (retried.state, retried.precision) == ("pending", 1.0)
    code, details = refused(lambda: arena.tournament(tournament_id="t1", precision=-1.0))
    assert code is grpc.StatusCode.INVALID_ARGUMENT and details.startswith("precision: ")
    assert refused(lambda: arena.tournament(tournament_id="none"))[0] is grpc.StatusCode.NOT_FOUND

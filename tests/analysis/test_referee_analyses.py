"""The whole referee runs the analysis queue: a match queued before it starts, or through its
admin API while it serves, is analysed by its worker process and stored (server/app.py;
tests/fakes/referee_server.py)."""

from __future__ import annotations

import queue
from pathlib import Path

from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.store import analysis_jobs
from domino_arena.server.store.analyses import load_analysis
from domino_arena.v1 import admin_pb2 as admin_pb
from tests.analysis.records import QUICK, played
from tests.fakes.referee_server import WAIT, Referee

LIMIT = 120.0
"""Seconds the test waits for the worker at most before it fails (never a sleep)."""


def test_a_queued_match_is_analysed_by_the_serving_referee(tmp_path: Path) -> None:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'arena.db'}")
    storage.open()
    storage.save_match(played("m0"))
    storage.save_match(played("m1", seed=8, minute=1))
    analysis_jobs.queue_matches(storage.engine, ["m0"], seats=[0], precision=QUICK)
    analysis_jobs.queue_matches(storage.engine, ["m1"], seats=[9], precision=QUICK)
    ended: queue.Queue[tuple[str, str | None]] = queue.Queue()
    referee = Referee(storage, on_analysed=lambda match_id, error: ended.put((match_id, error)))
    try:
        told = dict(ended.get(timeout=LIMIT) for _ in range(2))
    finally:
        referee.close()
        storage.close()
    assert told["m0"] is None
    assert told["m1"] is not None and "seats: expected seat numbers 0 to 1, got 9" in told["m1"]
    storage.open()
    try:
        stored = load_analysis(storage.engine, "m0")
        assert stored is not None and stored.seats == (0,)
        failed = analysis_jobs.job(storage.engine, "m1")
        assert failed is not None and failed.state == analysis_jobs.FAILED
    finally:
        storage.close()


def test_a_match_queued_through_the_admin_api_is_analysed_and_read_back(tmp_path: Path) -> None:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'arena.db'}")
    storage.open()
    storage.save_match(played("m0"))
    ended: queue.Queue[tuple[str, str | None]] = queue.Queue()
    referee = Referee(storage, on_analysed=lambda match_id, error: ended.put((match_id, error)))
    try:
        request = admin_pb.AnalyseMatchRequest(match_id="m0", seats=[1], precision=QUICK)
        status = referee.admin.AnalyseMatch(request, timeout=WAIT)
        assert status.state == admin_pb.ANALYSIS_JOB_STATE_PENDING
        # The servicer wakes the runner (Arena.wake_analysis): it need not wait for its poll.
        assert ended.get(timeout=LIMIT) == ("m0", None)
        answer = referee.admin.GetAnalysis(admin_pb.GetAnalysisRequest(match_id="m0"), timeout=WAIT)
    finally:
        referee.close()
        storage.close()
    assert (answer.match_id, list(answer.seats), answer.precision) == ("m0", [1], QUICK)
    assert [s.name for s in answer.summaries] == ["bob"]
    assert answer.decisions and {d.seat for d in answer.decisions} == {1}

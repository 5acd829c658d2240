"""The analysis pool (real worker processes) and the job runner that feeds it from the database
(server/analysis/pool.py, jobs.py, server/store/analysis_jobs.py)."""

from __future__ import annotations

import dataclasses
import functools
import multiprocessing
from collections.abc import Iterator
from multiprocessing.managers import SyncManager
from pathlib import Path
from typing import Any

import pytest
import trio

from domino_arena.sdk.match.records import parse_record
from domino_arena.server.analysis.jobs import JobRunner
from domino_arena.server.analysis.match import analyse_match
from domino_arena.server.analysis.pool import (
    AnalysisPool,
    AnalysisRequest,
    PoolFullError,
    analyse_request,
)
from domino_arena.server.analysis.report import MatchAnalysis
from domino_arena.server.store import analysis_jobs
from domino_arena.server.store.analyses import analysis_progress, load_analysis
from domino_arena.server.store.analysis_jobs import AnalysisJob
from domino_arena.server.store.storage import Storage
from tests.analysis.records import QUICK, played, record_text
from tests.fakes.store import running_tournament

LIMIT = 120.0
"""Seconds a test waits for its workers at most before it fails (never a sleep)."""


def held(gate: Any, request: AnalysisRequest) -> MatchAnalysis:
    """A worker's job that waits for the test to open ``gate`` first."""
    gate.wait(LIMIT)
    return analyse_request(request)


@pytest.fixture(scope="module")
def manager() -> Iterator[SyncManager]:
    with multiprocessing.get_context("spawn").Manager() as started:
        yield started


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[Storage]:
    opened = Storage(f"sqlite:///{tmp_path / 'arena.db'}")
    opened.open()
    yield opened
    opened.close()


def test_a_worker_process_analyses_as_the_engine_does_in_process() -> None:
    text = record_text(seed=11)
    request = AnalysisRequest("m1", text, seats=(1,), precision=QUICK, seed=3)
    with AnalysisPool(workers=1) as pool:
        analysed = pool.run(request)
    expected = analyse_match(parse_record(text), "m1", seats=(1,), precision=QUICK, seed=3)
    assert analysed == expected
    assert analysed.seats == (1,) and analysed.decisions
    assert {d.seat for d in analysed.decisions} == {1}


def test_a_full_pool_refuses_at_once_and_takes_again_once_one_ends(
    manager: SyncManager,
) -> None:
    gate = manager.Event()
    request = AnalysisRequest("m1", record_text(), precision=QUICK)
    with AnalysisPool(workers=1, queue=1, work=functools.partial(held, gate)) as pool:
        first, second = pool.submit(request), pool.submit(request)
        assert pool.taken == 2
        with pytest.raises(PoolFullError, match=r"full: 2 matches running or waiting \(1 "):
            pool.submit(request)
        gate.set()
        assert first.result(LIMIT) == second.result(LIMIT)
        assert pool.taken == 0
        assert pool.submit(request).result(LIMIT).match_id == "m1"


def test_an_analysis_error_comes_back_from_the_worker_naming_the_field() -> None:
    with (
        AnalysisPool() as pool,
        pytest.raises(ValueError, match="seats: expected seat numbers 0 to 1, got 5"),
    ):
        pool.run(AnalysisRequest("m1", record_text(), seats=(5,), precision=QUICK))


def test_a_pool_refuses_bad_bounds() -> None:
    with pytest.raises(ValueError, match="workers: expected at least 1, got 0"):
        AnalysisPool(workers=0)
    with pytest.raises(ValueError, match="queue: expected 0 or more, got -1"):
        AnalysisPool(queue=-1)


async def _run_until(runner: JobRunner, ended: trio.MemoryReceiveChannel[Any], n: int) -> list[Any]:
    """Run ``runner`` until it has ended ``n`` jobs; return them as it told them."""
    done: list[Any] = []
    with trio.fail_after(LIMIT):
        async with trio.open_nursery() as nursery:
            await nursery.start(runner.run)
            runner.wake()
            while len(done) < n:
                done.append(await ended.receive())
            nursery.cancel_scope.cancel()
    return done


def _runner(storage: Storage, pool: AnalysisPool) -> tuple[JobRunner, Any]:
    send, receive = trio.open_memory_channel[tuple[AnalysisJob, str | None]](100)
    runner = JobRunner(
        storage.engine,
        pool,
        poll_seconds=3600,  # only woken: the test never waits for a poll
        precision=QUICK,
        on_done=lambda job, error: send.send_nowait((job, error)),
    )
    return runner, receive


def test_the_runner_analyses_the_queued_matches_and_keeps_failures(storage: Storage) -> None:
    for index in range(2):
        storage.save_match(played(f"m{index}", seed=index + 3, minute=index))
    engine = storage.engine
    assert analysis_jobs.queue_matches(engine, ["m0"], precision=QUICK) == 1
    assert analysis_jobs.queue_matches(engine, ["m1"], seats=[7], precision=QUICK) == 1
    with pytest.raises(ValueError, match="match_id: no stored match has id 'nope'"):
        analysis_jobs.queue_matches(engine, ["nope"], precision=QUICK)
    with pytest.raises(ValueError, match="precision: expected a number of points above 0"):
        analysis_jobs.queue_matches(engine, ["m0"], precision=0)

    with AnalysisPool(workers=1) as pool:
        runner, ended = _runner(storage, pool)
        done = trio.run(_run_until, runner, ended, 2)

    errors = {job.match_id: error for job, error in done}
    assert errors["m0"] is None
    assert errors["m1"] is not None and "seats: expected seat numbers 0 to 1, got 7" in errors["m1"]
    stored = load_analysis(engine, "m0")
    assert stored is not None and stored.seats == (0, 1) and stored.precision == QUICK
    assert [s.name for s in stored.summaries] == ["alice", "bob"]
    assert load_analysis(engine, "m1") is None
    first, second = analysis_jobs.job(engine, "m0"), analysis_jobs.job(engine, "m1")
    assert first is not None and first.state == analysis_jobs.DONE and first.error == ""
    assert second is not None and second.state == analysis_jobs.FAILED
    assert second.error.startswith("ValueError: seats:")


def test_a_job_left_running_by_a_stop_is_analysed_at_the_next_start(storage: Storage) -> None:
    storage.save_match(played("m0"))
    engine = storage.engine
    analysis_jobs.queue_matches(engine, ["m0"], seats=[1], precision=QUICK)
    claimed = analysis_jobs.claim_next(engine)  # the worker that took it stopped with it
    assert claimed is not None and claimed.state == analysis_jobs.RUNNING
    assert analysis_jobs.claim_next(engine) is None

    with AnalysisPool(workers=1) as pool:
        runner, ended = _runner(storage, pool)
        [(job, error)] = trio.run(_run_until, runner, ended, 1)
    assert (job.match_id, job.seats, error) == ("m0", (1,), None)
    stored = load_analysis(engine, "m0")
    assert stored is not None and stored.seats == (1,)


def test_a_tournament_of_a_course_that_asks_is_queued_when_it_ends(storage: Storage) -> None:
    storage.add_tournament(running_tournament("cup", ("alice", "bob")))
    for index in range(2):
        storage.save_match(
            dataclasses.replace(
                played(f"t1-{index:05d}", seed=index + 1), tournament_id="t1", game_index=index
            )
        )
    engine = storage.engine

    async def finished(runner: JobRunner) -> None:
        await runner.tournament_finished("t1")

    with AnalysisPool(workers=1) as pool:
        runner, ended = _runner(storage, pool)
        trio.run(finished, runner)  # the default course does not ask
        assert analysis_jobs.job_counts(engine, "t1")[analysis_jobs.PENDING] == 0

        analysis_jobs.set_course_analysis(engine, "default", True)
        assert storage.course("default") is not None
        assert storage.course("default").analyse_tournaments  # type: ignore[union-attr]
        trio.run(finished, runner)
        assert analysis_jobs.job_counts(engine, "t1")[analysis_jobs.PENDING] == 2
        assert analysis_progress(engine, "t1") == (0, 2)
        done = trio.run(_run_until, runner, ended, 2)

    assert all(error is None for _, error in done)
    assert analysis_progress(engine, "t1") == (2, 2)
    assert analysis_jobs.job_counts(engine, "t1")[analysis_jobs.DONE] == 2
    assert analysis_jobs.queue_tournament(engine, "t1", precision=QUICK) == 0  # all analysed
    with pytest.raises(KeyError, match="no course is named 'nope'"):
        analysis_jobs.set_course_analysis(engine, "nope", True)

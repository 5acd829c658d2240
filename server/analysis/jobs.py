"""The runner of the analysis queue: it hands the pool the jobs the database holds.

The queue is the table ``analysis_jobs`` (server/store/analysis_jobs.py), so it survives a
restart; the runner is a trio task of the referee (server/app.py). It claims a pending job only
when a worker of the pool is free, reads the match's record, hands it to a worker process
(:mod:`.pool`) and waits for it in a thread (``trio.to_thread``), so the trio loop never runs
an analysis nor blocks on one; then it stores the analysis and marks the job done, or failed
with the error. A job left running by a stop is pending again at the next start.

New jobs wake it (:meth:`JobRunner.wake`); it also looks at the table every ``poll_seconds``,
for jobs queued by another process (``domino-arena analyse --tournament ID``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import trio
from sqlalchemy.engine import Engine

from domino_arena.server.analysis.pool import DEFAULT_PRECISION, AnalysisPool, AnalysisRequest
from domino_arena.server.store import analysis_jobs, matches
from domino_arena.server.store.analyses import in_duplicate_set, save_analysis
from domino_arena.server.store.analysis_jobs import AnalysisJob
from domino_arena.server.store.engine import error_reason

LOG: Final = logging.getLogger("domino_arena.server")

DEFAULT_POLL_SECONDS: Final = 30.0

Done = Callable[[AnalysisJob, str | None], None]
"""Told each job the runner ends: the job and its error (None: stored)."""


def request_of(engine: Engine, job: AnalysisJob) -> AnalysisRequest:
    """What a worker needs to analyse ``job``'s match: its stored record.

    Raises:
        ValueError: the match is gone, or has no record.
    """
    found = matches.match(engine, job.match_id)
    if found is None:
        raise ValueError(f"match_id: no stored match has id {job.match_id!r}")
    if found.record is None:
        raise ValueError(f"record: match {job.match_id} was stored without a record")
    return AnalysisRequest(
        match_id=job.match_id,
        record=found.record,
        seats=job.seats,
        precision=job.precision,
        pars=in_duplicate_set(engine, job.match_id),
    )


@dataclass
class JobRunner:
    """Feeds ``pool`` the jobs of ``engine``'s queue, at most one per worker at a time."""

    engine: Engine
    pool: AnalysisPool
    poll_seconds: float = DEFAULT_POLL_SECONDS
    precision: float = DEFAULT_PRECISION
    """The precision of the tournaments it queues (:meth:`tournament_finished`)."""
    on_done: Done | None = None

    def __post_init__(self) -> None:
        self._wake = trio.Event()

    def wake(self) -> None:
        """Look at the queue now (a job was queued). Call it from the trio thread."""
        self._wake.set()

    async def tournament_finished(self, tournament_id: str) -> None:
        """A tournament ended: queue its matches if its course asks for analyses
        (``courses.analyse_tournaments``, docs/courses.md: analysis)."""
        engine = self.engine
        if not await trio.to_thread.run_sync(
            analysis_jobs.analyses_tournaments, engine, tournament_id
        ):
            return
        queued = await trio.to_thread.run_sync(
            lambda: analysis_jobs.queue_tournament(engine, tournament_id, precision=self.precision)
        )
        LOG.info("analysis: tournament %s queued, %d matches", tournament_id, queued)
        self.wake()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Run the queue until cancelled; started once the jobs left running are pending."""
        try:
            requeued = await trio.to_thread.run_sync(analysis_jobs.requeue_running, self.engine)
        except Exception as exc:  # the database is away: they wait for the next start
            LOG.warning("analysis: the jobs left running not queued again: %s", error_reason(exc))
            requeued = 0
        if requeued:
            LOG.info("analysis: %d jobs left running by the last stop queued again", requeued)
        task_status.started()
        free = trio.Semaphore(self.pool.workers)
        async with trio.open_nursery() as nursery:
            while True:
                await free.acquire()
                self._wake = trio.Event()  # before the look: a job queued after it wakes us
                try:
                    job = await trio.to_thread.run_sync(analysis_jobs.claim_next, self.engine)
                except Exception as exc:  # the database is away: look again later
                    LOG.warning("analysis: the queue cannot be read: %s", error_reason(exc))
                    job = None
                if job is None:
                    free.release()
                    with trio.move_on_after(self.poll_seconds):
                        await self._wake.wait()
                    continue
                nursery.start_soon(self._analyse, job, free, name=f"analysis {job.match_id}")

    async def _analyse(self, job: AnalysisJob, free: trio.Semaphore) -> None:
        engine = self.engine
        error: str | None = None
        try:
            request = await trio.to_thread.run_sync(request_of, engine, job)
            future = self.pool.submit(request)
            # A stop abandons the wait; the job stays running, pending again at the next start.
            analysis = await trio.to_thread.run_sync(future.result, abandon_on_cancel=True)
            await trio.to_thread.run_sync(save_analysis, engine, analysis)
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            LOG.warning("analysis of match %s failed: %s", job.match_id, error)
        finally:
            free.release()
        try:
            await trio.to_thread.run_sync(analysis_jobs.finish_job, engine, job.match_id, error)
        except Exception as exc:  # left running: pending again at the next start
            LOG.warning("analysis: job %s not marked ended: %s", job.match_id, error_reason(exc))
        if self.on_done is not None:
            self.on_done(job, error)

"""The admin API's analyses of matches: GetAnalysis, AnalyseMatch, AnalyseTournament
(admin.proto; docs/analysis.md, docs/admin.md: analyses).

The analyses run in the referee's analysis workers (server/analysis/service/jobs.py), never in
a gRPC handler: AnalyseMatch and AnalyseTournament only queue jobs in the database and wake
the runner (``Arena.wake_analysis``), which hands them to its workers as they are free, and
GetAnalysis reads what the workers stored. Every storage call blocks, so each runs in a worker
thread.

Scoped as every admin call (:mod:`.admin_scope`): a match or tournament of a course the caller
does not manage is NOT_FOUND with the message of one that does not exist.

The refusals: INVALID_ARGUMENT naming the field (no id, a seat out of the match's range or
listed twice, a precision that is not a finite number above 0), NOT_FOUND (no such match or
tournament; a match with neither an analysis nor a job), FAILED_PRECONDITION (a match stored
without a record; GetAnalysis of a match whose analysis is queued, running or failed, with its
state and error).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import Final, Protocol

from sqlalchemy.engine import Engine

from domino_arena.server.analysis.service.pool import DEFAULT_PRECISION
from domino_arena.server.net.admin_requests import id_of, invalid, not_found, not_now
from domino_arena.server.net.admin_scope import caller
from domino_arena.server.net.admin_serving import Context, Serving
from domino_arena.server.net.analysis_wire import analysis_to_proto
from domino_arena.server.store import analysis_jobs
from domino_arena.server.store.analyses import load_analysis
from domino_arena.server.store.analysis_jobs import AnalysisJob
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tournaments import StoredTournament
from domino_arena.v1 import admin_pb2 as admin_pb

_STATES: Final = {
    analysis_jobs.PENDING: admin_pb.ANALYSIS_JOB_STATE_PENDING,
    analysis_jobs.RUNNING: admin_pb.ANALYSIS_JOB_STATE_RUNNING,
    analysis_jobs.DONE: admin_pb.ANALYSIS_JOB_STATE_DONE,
    analysis_jobs.FAILED: admin_pb.ANALYSIS_JOB_STATE_FAILED,
}


class AnalysisArena(Protocol):
    """What the analysis RPCs need of the arena: its storage, and to wake the runner."""

    @property
    def storage(self) -> AnalysisStorage: ...

    async def wake_analysis(self) -> None:
        """Tell the referee's analysis runner that jobs were queued (``Arena.wake_analysis``)."""


class AnalysisStorage(Protocol):
    """The storage calls of the analysis RPCs (all blocking: run in worker threads)."""

    def match(self, match_id: str) -> StoredMatch | None: ...
    def tournament(self, tournament_id: str) -> StoredTournament | None: ...
    @property
    def engine(self) -> Engine: ...


class AnalysisAdmin:
    """The three handlers over the arena's storage."""

    def __init__(self, arena: AnalysisArena) -> None:
        self.arena = arena
        self.storage = arena.storage

    async def get_analysis(self, request: admin_pb.GetAnalysisRequest) -> admin_pb.MatchAnalysis:
        match = await self._seen_match(request.match_id)
        engine = self.storage.engine
        analysis = await asyncio.to_thread(load_analysis, engine, match.id)
        if analysis is not None:
            return analysis_to_proto(analysis)
        job = await asyncio.to_thread(analysis_jobs.job, engine, match.id)
        if job is None or job.state == analysis_jobs.DONE:
            raise not_found(
                f"match_id: match {match.id!r} has no analysis (queue one: AnalyseMatch)"
            )
        if job.state == analysis_jobs.FAILED:
            raise not_now(f"match_id: the analysis of match {match.id!r} failed: {job.error}")
        raise not_now(
            f"match_id: the analysis of match {match.id!r} is {job.state} (queued for the "
            "referee's analysis workers); ask again once it is done"
        )

    async def analyse_match(
        self, request: admin_pb.AnalyseMatchRequest
    ) -> admin_pb.AnalysisJobStatus:
        precision = precision_of(request.precision)
        match = await self._seen_match(request.match_id)
        seats = _seats_of(request.seats, match)
        if match.record is None:
            raise not_now(
                f"match_id: match {match.id!r} was stored without a record: nothing to analyse"
            )

        def queue() -> AnalysisJob | None:
            engine = self.storage.engine
            analysis_jobs.queue_matches(engine, [match.id], seats=seats, precision=precision)
            return analysis_jobs.job(engine, match.id)

        job = await asyncio.to_thread(queue)
        assert job is not None, "a queued match has a job"
        await self.arena.wake_analysis()
        return job_status(job)

    async def analyse_tournament(
        self, request: admin_pb.AnalyseTournamentRequest
    ) -> admin_pb.AnalysisProgress:
        precision = precision_of(request.precision)
        tournament_id = id_of(request.tournament_id, "tournament_id", "a tournament id")
        message = f"tournament_id: no tournament has id {tournament_id[:80]!r}"
        found = await asyncio.to_thread(self.storage.tournament, tournament_id)
        if found is None:
            raise not_found(message)
        caller().check_sees(found.course, message)
        queue = not request.progress_only
        progress: admin_pb.AnalysisProgress = await asyncio.to_thread(
            self._queue_tournament, tournament_id, precision, queue
        )
        if progress.queued_now:
            await self.arena.wake_analysis()
        return progress

    def _queue_tournament(
        self, tournament_id: str, precision: float, queue: bool
    ) -> admin_pb.AnalysisProgress:
        engine = self.storage.engine
        queued = (
            analysis_jobs.queue_tournament(engine, tournament_id, precision=precision)
            if queue
            else 0
        )
        status = analysis_jobs.tournament_status(engine, tournament_id)
        return admin_pb.AnalysisProgress(
            tournament_id=tournament_id,
            analysed=status.analysed,
            total=status.total,
            queued_now=queued,
            waiting=status.jobs[analysis_jobs.PENDING],
            running=status.jobs[analysis_jobs.RUNNING],
            failed=status.jobs[analysis_jobs.FAILED],
            failures=[
                admin_pb.AnalysisFailure(match_id=j.match_id, error=j.error) for j in status.failed
            ],
        )

    async def _seen_match(self, match_id: str) -> StoredMatch:
        """The stored match ``match_id`` if the caller sees its course; NOT_FOUND otherwise."""
        id_of(match_id, "match_id", "a match id")
        match = await asyncio.to_thread(self.storage.match, match_id)
        message = f"match_id: no stored match has id {match_id!r}"
        if match is None:
            raise not_found(message)
        caller().check_sees(match.course, message)
        return match


def precision_of(value: float, field: str = "precision") -> float:
    """A request's precision: :data:`DEFAULT_PRECISION` for 0 (unset), else a finite number
    above 0 (INVALID_ARGUMENT naming ``field`` otherwise)."""
    if value == 0:
        return DEFAULT_PRECISION
    if not (value > 0 and math.isfinite(value)):
        raise invalid(
            f"{field}: expected a finite number of points above 0 (0: {DEFAULT_PRECISION}), "
            f"got {value}"
        )
    return value


def _seats_of(seats: Sequence[int], match: StoredMatch) -> list[int] | None:
    """The seats to analyse (None: every seat), each one of ``match``'s and listed once."""
    if not seats:
        return None
    last = len(match.seats) - 1
    for index, seat in enumerate(seats):
        if not 0 <= seat <= last:
            raise invalid(f"seats[{index}]: match {match.id} has seats 0 to {last}, got {seat}")
        if seat in seats[:index]:
            raise invalid(f"seats[{index}]: seat {seat} is listed twice")
    return list(seats)


def job_status(job: AnalysisJob) -> admin_pb.AnalysisJobStatus:
    """The ``AnalysisJobStatus`` of a stored job."""
    return admin_pb.AnalysisJobStatus(
        match_id=job.match_id,
        state=_STATES.get(job.state, admin_pb.ANALYSIS_JOB_STATE_UNSPECIFIED),
        error=job.error,
        seats=job.seats or (),
        precision=job.precision,
        tournament_id=job.tournament_id or "",
    )


# -- the RPCs, mixed into AdminServicer ---------------------------------------------------------


class AnalysisRpcs:
    """GetAnalysis, AnalyseMatch, AnalyseTournament: the caller's token and scope first
    (``AdminServicer._serve``), then :class:`AnalysisAdmin` over the arena's storage."""

    async def GetAnalysis(  # noqa: N802
        self: Serving, request: admin_pb.GetAnalysisRequest, context: Context
    ) -> admin_pb.MatchAnalysis:
        return await self._serve(context, AnalysisAdmin(self.arena).get_analysis, request)

    async def AnalyseMatch(  # noqa: N802
        self: Serving, request: admin_pb.AnalyseMatchRequest, context: Context
    ) -> admin_pb.AnalysisJobStatus:
        return await self._serve(context, AnalysisAdmin(self.arena).analyse_match, request)

    async def AnalyseTournament(  # noqa: N802
        self: Serving, request: admin_pb.AnalyseTournamentRequest, context: Context
    ) -> admin_pb.AnalysisProgress:
        handler = AnalysisAdmin(self.arena).analyse_tournament
        return await self._serve(context, handler, request)

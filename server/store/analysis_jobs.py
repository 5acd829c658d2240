"""The queue of matches to analyse, kept in the database so a restart goes on with it.

A job is one match (with the seats asked for, and the precision): ``pending`` until the
runner (server/analysis/service/jobs.py) claims it, ``running`` while a worker analyses it,
then ``done`` or ``failed`` (with the error). Queueing a match again makes its job pending
again, whatever it was; a restart makes the jobs left running pending (:func:`requeue_running`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from domino_arena.server.store.analyses import analysis_progress
from domino_arena.server.store.courses import UnknownCourseError
from domino_arena.server.store.engine import writing
from domino_arena.server.store.tables import (
    ANALYSES,
    ANALYSIS_JOBS,
    COURSES,
    MATCHES,
    TOURNAMENTS,
    now,
    utc,
)

PENDING: Final = "pending"
RUNNING: Final = "running"
DONE: Final = "done"
FAILED: Final = "failed"
STATES: Final = (PENDING, RUNNING, DONE, FAILED)
MAX_ERROR: Final = 2000
"""Characters of an error kept with a failed job."""


@dataclass(frozen=True, slots=True)
class AnalysisJob:
    """One match to analyse."""

    match_id: str
    tournament_id: str | None
    seats: tuple[int, ...] | None
    """None: every seat."""
    precision: float
    state: str
    error: str
    created: dt.datetime
    updated: dt.datetime


def queue_matches(
    engine: Engine,
    match_ids: Sequence[str],
    *,
    seats: Sequence[int] | None = None,
    precision: float,
) -> int:
    """Queue the stored matches ``match_ids`` (pending again if queued before); a match
    without a record cannot be analysed and is skipped. Return how many were queued.

    Raises:
        ValueError: ``precision`` not above 0, or a match id that is not stored (named).
    """
    _check_precision(precision)
    chosen = None if seats is None else sorted(set(seats))
    with writing(engine) as connection:
        found = {
            row.id: row
            for row in connection.execute(
                sa.select(
                    MATCHES.c.id,
                    MATCHES.c.tournament_id,
                    MATCHES.c.record.is_(None).label("missing"),
                ).where(MATCHES.c.id.in_(set(match_ids)))
            )
        }
        unknown = [m for m in match_ids if m not in found]
        if unknown:
            raise ValueError(f"match_id: no stored match has id {unknown[0]!r}")
        ready = [found[m] for m in dict.fromkeys(match_ids) if not found[m].missing]
        _upsert(connection, ready, chosen, precision)
    return len(ready)


def queue_tournament(engine: Engine, tournament_id: str, *, precision: float) -> int:
    """Queue every match of ``tournament_id`` that has a record and is neither analysed nor
    queued already (pending or running); return how many were queued."""
    _check_precision(precision)
    waiting = sa.select(ANALYSIS_JOBS.c.match_id).where(
        ANALYSIS_JOBS.c.state.in_((PENDING, RUNNING, DONE))
    )
    with writing(engine) as connection:
        rows = connection.execute(
            sa.select(MATCHES.c.id, MATCHES.c.tournament_id).where(
                MATCHES.c.tournament_id == tournament_id,
                MATCHES.c.record.is_not(None),
                MATCHES.c.id.not_in(waiting),
                MATCHES.c.id.not_in(sa.select(ANALYSES.c.match_id)),
            )
        ).all()
        _upsert(connection, rows, None, precision)
    return len(rows)


def analyses_tournaments(engine: Engine, tournament_id: str) -> bool:
    """Whether the course of ``tournament_id`` asks for its tournaments to be analysed
    (``courses.analyse_tournaments``); False for an unknown tournament."""
    query = (
        sa.select(COURSES.c.analyse_tournaments)
        .select_from(TOURNAMENTS.join(COURSES, COURSES.c.name == TOURNAMENTS.c.course))
        .where(TOURNAMENTS.c.id == tournament_id)
    )
    with engine.connect() as connection:
        return bool(connection.execute(query).scalar_one_or_none())


def set_course_analysis(engine: Engine, course: str, on: bool) -> None:
    """Have the tournaments of ``course`` that end from now on analysed (``on``), or not.

    Raises:
        UnknownCourseError: no such course.
    """
    with engine.begin() as connection:
        changed = connection.execute(
            COURSES.update().where(COURSES.c.name == course).values(analyse_tournaments=on)
        ).rowcount
    if not changed:
        raise UnknownCourseError(f"no course is named '{course}'")


def claim_next(engine: Engine) -> AnalysisJob | None:
    """Take the oldest pending job: it is running from now on. None: nothing is pending."""
    with writing(engine) as connection:
        row = connection.execute(
            sa.select(ANALYSIS_JOBS)
            .where(ANALYSIS_JOBS.c.state == PENDING)
            .order_by(ANALYSIS_JOBS.c.created, ANALYSIS_JOBS.c.match_id)
            .limit(1)
            .with_for_update(skip_locked=True)
        ).one_or_none()
        if row is None:
            return None
        moment = now()
        connection.execute(
            ANALYSIS_JOBS.update()
            .where(ANALYSIS_JOBS.c.match_id == row.match_id)
            .values(state=RUNNING, updated=moment)
        )
    return dataclasses.replace(_job(row._mapping), state=RUNNING, updated=moment)


def finish_job(engine: Engine, match_id: str, error: str | None = None) -> None:
    """Mark the job of ``match_id`` done, or failed with ``error`` (cut to
    :data:`MAX_ERROR`)."""
    values: dict[str, Any] = {"state": DONE, "error": "", "updated": now()}
    if error is not None:
        values.update(state=FAILED, error=error[:MAX_ERROR] or "failed")
    with engine.begin() as connection:
        connection.execute(
            ANALYSIS_JOBS.update().where(ANALYSIS_JOBS.c.match_id == match_id).values(values)
        )


def requeue_running(engine: Engine) -> int:
    """Make every running job pending again (a restart: no worker holds them any more);
    return how many."""
    with engine.begin() as connection:
        return int(
            connection.execute(
                ANALYSIS_JOBS.update()
                .where(ANALYSIS_JOBS.c.state == RUNNING)
                .values(state=PENDING, updated=now())
            ).rowcount
        )


def job(engine: Engine, match_id: str) -> AnalysisJob | None:
    """The job of ``match_id``, or None."""
    with engine.connect() as connection:
        row = connection.execute(
            sa.select(ANALYSIS_JOBS).where(ANALYSIS_JOBS.c.match_id == match_id)
        ).one_or_none()
    return None if row is None else _job(row._mapping)


def job_counts(engine: Engine, tournament_id: str) -> dict[str, int]:
    """The jobs of ``tournament_id`` by state (every state named, 0 when none)."""
    with engine.connect() as connection:
        rows = connection.execute(
            sa.select(ANALYSIS_JOBS.c.state, sa.func.count())
            .where(ANALYSIS_JOBS.c.tournament_id == tournament_id)
            .group_by(ANALYSIS_JOBS.c.state)
        ).all()
    counts = dict.fromkeys(STATES, 0)
    counts.update({str(state): int(count) for state, count in rows})
    return counts


def failed_jobs(engine: Engine, tournament_id: str, limit: int = 10) -> list[AnalysisJob]:
    """The failed jobs of ``tournament_id``, latest first: what went wrong."""
    with engine.connect() as connection:
        rows = connection.execute(
            sa.select(ANALYSIS_JOBS)
            .where(ANALYSIS_JOBS.c.tournament_id == tournament_id, ANALYSIS_JOBS.c.state == FAILED)
            .order_by(ANALYSIS_JOBS.c.updated.desc())
            .limit(limit)
        ).all()
    return [_job(row._mapping) for row in rows]


@dataclass(frozen=True, slots=True)
class TournamentAnalysis:
    """How far the analysis of a tournament's matches has got: what the command line, the
    admin API and the tournament's page all show."""

    analysed: int
    """Its stored matches with an analysis of at least one seat."""
    total: int
    """Its stored matches."""
    jobs: dict[str, int]
    """Its jobs by state (every state named, 0 when none)."""
    failed: list[AnalysisJob]
    """Its newest failed jobs (at most ten): what went wrong."""

    @property
    def asked(self) -> bool:
        """Whether its analysis was ever asked for (anything analysed, or a job not done)."""
        return self.analysed > 0 or any(self.jobs[state] for state in (PENDING, RUNNING, FAILED))


def tournament_status(engine: Engine, tournament_id: str) -> TournamentAnalysis:
    """How far the analysis of ``tournament_id``'s matches has got."""
    analysed, total = analysis_progress(engine, tournament_id)
    return TournamentAnalysis(
        analysed, total, job_counts(engine, tournament_id), failed_jobs(engine, tournament_id)
    )


def _check_precision(precision: float) -> None:
    if not precision > 0:
        raise ValueError(f"precision: expected a number of points above 0, got {precision}")


def _upsert(
    connection: sa.Connection,
    matches: Sequence[Any],
    seats: list[int] | None,
    precision: float,
) -> None:
    if not matches:
        return
    ids = [row.id for row in matches]
    connection.execute(ANALYSIS_JOBS.delete().where(ANALYSIS_JOBS.c.match_id.in_(ids)))
    moment = now()
    connection.execute(
        ANALYSIS_JOBS.insert(),
        [
            {
                "match_id": row.id,
                "tournament_id": row.tournament_id,
                "seats": seats,
                "precision": precision,
                "state": PENDING,
                "error": "",
                "created": moment,
                "updated": moment,
            }
            for row in matches
        ],
    )


def _job(row: sa.RowMapping) -> AnalysisJob:
    seats = row["seats"]
    return AnalysisJob(
        match_id=row["match_id"],
        tournament_id=row["tournament_id"],
        seats=None if seats is None else tuple(int(s) for s in seats),
        precision=float(row["precision"]),
        state=row["state"],
        error=row["error"],
        created=utc(row["created"]),
        updated=utc(row["updated"]),
    )

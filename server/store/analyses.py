"""Analyses of matches, kept: one row per analysed seat (docs/analysis.md: where it runs).

An analysis (:class:`~domino_arena.server.analysis.report.MatchAnalysis`) is saved seat by seat,
so analysing one seat again replaces that seat's row and leaves the others; reading a match's
analysis merges every stored seat back into one. Each row keeps the seat's own analysis as JSON
(``MatchAnalysis.to_json`` of that seat alone, with the match's pars) and copies the figures a
bot's page and the grades read (its summary's decisions, mean loss and accuracy) into columns.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from domino_arena.server.analysis.report import MatchAnalysis, SeatSummary
from domino_arena.server.store.engine import writing
from domino_arena.server.store.matches import SUMMARY_COLUMNS, stored_match
from domino_arena.server.store.tables import ANALYSES, MATCH_LOGS, MATCHES, now, utc


class UnknownMatchError(KeyError):
    """No stored match has that id."""

    def __str__(self) -> str:  # KeyError would show the message quoted
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True, slots=True)
class BotAnalysis:
    """One analysed game of a bot: the figures of the seat it had."""

    match_id: str
    game: str
    played_at: dt.datetime
    """When the match ended (its ``created``)."""
    version: int | None
    """The hosted version that played it; None when the bot is not hosted or no log says."""
    seat: int
    summary: SeatSummary
    won: bool | None
    """Whether its side won; None when no side won (a draw, or a match cut short)."""


@dataclass(frozen=True, slots=True)
class AnalysedFigures:
    """A bot's figures over its analysed games of one tournament (the grades' columns)."""

    games: int
    decisions: int
    mean_loss_points: float
    """Per decision, over every decision of those games."""
    accuracy: float
    """The mean of each game's accuracy."""


def save_analysis(engine: Engine, analysis: MatchAnalysis) -> None:
    """Store ``analysis``: one row per seat it analysed, replacing that seat's earlier one.

    Raises:
        UnknownMatchError: no stored match has its id.
        ValueError: a seat it analysed has no summary, or is no seat of the match (named).
    """
    with writing(engine) as connection:
        row = connection.execute(
            sa.select(*SUMMARY_COLUMNS).where(MATCHES.c.id == analysis.match_id)
        ).one_or_none()
        if row is None:
            raise UnknownMatchError(f"match_id: no stored match has id {analysis.match_id!r}")
        match = stored_match(row._mapping)
        summaries = {s.seat: s for s in analysis.summaries}
        rows = []
        moment = now()
        for seat in sorted(set(analysis.seats)):
            if not 0 <= seat < len(match.seats):
                raise ValueError(
                    f"seats: match {match.id} has seats 0-{len(match.seats) - 1}, got {seat}"
                )
            summary = summaries.get(seat)
            if summary is None:
                raise ValueError(f"summaries: seat {seat} was analysed but has no summary")
            alone = MatchAnalysis(
                match_id=analysis.match_id,
                game=analysis.game,
                seats=(seat,),
                precision=analysis.precision,
                seed=analysis.seed,
                decisions=tuple(analysis.for_seat(seat)),
                summaries=(summary,),
                pars=analysis.pars,
                game_precision=analysis.game_precision,
            )
            rows.append(
                {
                    "match_id": match.id,
                    "seat": seat,
                    "bot": match.seats[seat],
                    "game": analysis.game,
                    "played": match.created,
                    "analysed": moment,
                    "decisions": summary.decisions,
                    "mean_loss_points": summary.mean_loss_points,
                    "accuracy": summary.accuracy,
                    "body": json.dumps(alone.to_json(), separators=(",", ":")),
                }
            )
        if not rows:
            return
        connection.execute(
            ANALYSES.delete().where(
                ANALYSES.c.match_id == match.id, ANALYSES.c.seat.in_([r["seat"] for r in rows])
            )
        )
        connection.execute(ANALYSES.insert(), rows)


def load_analysis(engine: Engine, match_id: str) -> MatchAnalysis | None:
    """The stored analysis of ``match_id``, every analysed seat merged into one (decisions
    ordered by step, then seat); None when no seat of it is analysed. The precision is the
    coarsest of the seats' (each seat may have been analysed on its own), the seed the lowest
    seat's, the pars the latest analysis's."""
    with engine.connect() as connection:
        rows = connection.execute(
            sa.select(ANALYSES.c.body, ANALYSES.c.analysed)
            .where(ANALYSES.c.match_id == match_id)
            .order_by(ANALYSES.c.seat)
        ).all()
    if not rows:
        return None
    parts = [MatchAnalysis.from_json(json.loads(row.body)) for row in rows]
    latest = max(zip(rows, parts, strict=True), key=lambda pair: utc(pair[0].analysed))[1]
    return MatchAnalysis(
        match_id=match_id,
        game=parts[0].game,
        seats=tuple(seat for part in parts for seat in part.seats),
        precision=max(part.precision for part in parts),
        seed=parts[0].seed,
        decisions=tuple(
            sorted((d for part in parts for d in part.decisions), key=lambda d: (d.step, d.seat))
        ),
        summaries=tuple(s for part in parts for s in part.summaries),
        pars=latest.pars,
        game_precision=_coarsest([part.game_precision for part in parts]),
    )


def bot_analyses(engine: Engine, bot: str, *, limit: int = 200) -> list[BotAnalysis]:
    """The analysed games of ``bot`` (each seat it had in an analysed match), newest first,
    at most ``limit``: a bot page's loss per decision over time, per phase and per version."""
    if limit < 1:
        raise ValueError(f"limit: expected at least 1, got {limit}")
    query = (
        sa.select(
            ANALYSES.c.match_id,
            ANALYSES.c.seat,
            ANALYSES.c.game,
            ANALYSES.c.played,
            ANALYSES.c.body,
            MATCHES.c.winner,
            MATCHES.c.side_of_seat,
            MATCH_LOGS.c.version,
        )
        .select_from(
            ANALYSES.join(MATCHES, MATCHES.c.id == ANALYSES.c.match_id).outerjoin(
                MATCH_LOGS,
                sa.and_(
                    MATCH_LOGS.c.match_id == ANALYSES.c.match_id,
                    MATCH_LOGS.c.bot == ANALYSES.c.bot,
                ),
            )
        )
        .where(ANALYSES.c.bot == bot)
        .order_by(ANALYSES.c.played.desc(), ANALYSES.c.match_id.desc(), ANALYSES.c.seat)
        .limit(limit)
    )
    with engine.connect() as connection:
        rows = connection.execute(query).all()
    found = []
    for row in rows:
        part = MatchAnalysis.from_json(json.loads(row.body))
        # A match stored without sides has one side per seat (.matches.sides_of).
        side = row.side_of_seat[row.seat] if row.side_of_seat else row.seat
        found.append(
            BotAnalysis(
                match_id=row.match_id,
                game=row.game,
                played_at=utc(row.played),
                version=None if row.version is None else int(row.version),
                seat=int(row.seat),
                summary=part.summaries[0],
                won=None if row.winner is None else side == row.winner,
            )
        )
    return found


def analysis_progress(engine: Engine, tournament_id: str) -> tuple[int, int]:
    """``(analysed, total)``: of the stored matches of ``tournament_id``, how many have an
    analysis of at least one seat, and how many there are."""
    analysed = (
        sa.select(sa.func.count(sa.distinct(ANALYSES.c.match_id)))
        .select_from(ANALYSES.join(MATCHES, MATCHES.c.id == ANALYSES.c.match_id))
        .where(MATCHES.c.tournament_id == tournament_id)
    )
    total = sa.select(sa.func.count()).where(MATCHES.c.tournament_id == tournament_id)
    with engine.connect() as connection:
        return (
            int(connection.execute(analysed).scalar_one()),
            int(connection.execute(total).scalar_one()),
        )


def analysed_figures(engine: Engine, tournament_ids: Sequence[str]) -> dict[str, AnalysedFigures]:
    """Each bot's figures over its analysed games of the tournaments ``tournament_ids``, by
    name (a bot with no analysed game is absent): the grades' mean loss per decision and
    accuracy."""
    query = (
        sa.select(
            ANALYSES.c.bot,
            sa.func.count().label("games"),
            sa.func.sum(ANALYSES.c.decisions).label("decisions"),
            sa.func.sum(ANALYSES.c.mean_loss_points * ANALYSES.c.decisions).label("loss"),
            sa.func.avg(ANALYSES.c.accuracy).label("accuracy"),
        )
        .select_from(ANALYSES.join(MATCHES, MATCHES.c.id == ANALYSES.c.match_id))
        .where(MATCHES.c.tournament_id.in_(list(tournament_ids)))
        .group_by(ANALYSES.c.bot)
    )
    with engine.connect() as connection:
        rows = connection.execute(query).all()
    return {
        row.bot: AnalysedFigures(
            games=int(row.games),
            decisions=int(row.decisions or 0),
            mean_loss_points=float(row.loss or 0.0) / row.decisions if row.decisions else 0.0,
            accuracy=float(row.accuracy),
        )
        for row in rows
    }


def analysed_seats(engine: Engine, match_id: str) -> list[int]:
    """The seats of ``match_id`` that have an analysis stored."""
    with engine.connect() as connection:
        return [
            int(seat)
            for seat in connection.execute(
                sa.select(ANALYSES.c.seat)
                .where(ANALYSES.c.match_id == match_id)
                .order_by(ANALYSES.c.seat)
            ).scalars()
        ]


def in_duplicate_set(engine: Engine, match_id: str) -> bool:
    """Whether another game of the tournament of ``match_id`` was dealt the same deal (a
    duplicate set: its analysis carries each hand's par, docs/analysis.md)."""
    other = MATCHES.alias("other")
    query = (
        sa.select(sa.func.count())
        .select_from(
            MATCHES.join(
                other,
                sa.and_(
                    other.c.tournament_id == MATCHES.c.tournament_id,
                    other.c.deal_id == MATCHES.c.deal_id,
                    other.c.id != MATCHES.c.id,
                ),
            )
        )
        .where(MATCHES.c.id == match_id)
    )
    with engine.connect() as connection:
        return bool(connection.execute(query).scalar_one())


def _coarsest(precisions: list[float | None]) -> float | None:
    """The coarsest of the seats' game precisions; None when a seat was analysed without one."""
    if any(p is None for p in precisions):
        return None
    return max(p for p in precisions if p is not None)

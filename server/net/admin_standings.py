"""The admin API's official standings: a GetStandings request's batch options checked, and the
batch fit of a pool or a tournament (``server/ladder/batch.py``) as a ``BatchStandings`` answer.

Kept beside ``admin_answers`` (what every answer shares) so the servicer stays a thin list of
RPCs; the fit itself runs in a worker thread, as every blocking call of the servicer does.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from domino_arena.server.ladder.batch import (
    BOOTSTRAP_SEED,
    MAX_BATCH_MATCHES,
    MAX_ROUNDS,
    BatchStandings,
    PoolKey,
    batch_standings,
    counted,
)
from domino_arena.server.ladder.elo import INITIAL_RATING
from domino_arena.server.ladder.fit_bootstrap import DEFAULT_ROUNDS
from domino_arena.server.ladder.official import OfficialRow
from domino_arena.server.net.admin_requests import invalid, not_now
from domino_arena.server.store.matches import StoredMatch
from domino_arena.v1 import admin_pb2 as admin_pb


@dataclass(frozen=True, slots=True)
class BatchOptions:
    """What a GetStandings request asks of the batch fit."""

    key: PoolKey | None
    anchor: str | None
    anchor_rating: float
    rounds: int
    los: bool


def batch_options(request: admin_pb.GetStandingsRequest) -> BatchOptions:
    """The batch fit's keyword arguments from a request (pool, anchor, rounds).

    Raises:
        RequestError: INVALID_ARGUMENT naming the field.
    """
    rounds = request.bootstrap_rounds or DEFAULT_ROUNDS
    if rounds > MAX_ROUNDS:
        raise invalid(f"bootstrap_rounds: must be at most {MAX_ROUNDS}, got {rounds}")
    if not math.isfinite(request.anchor_rating):
        raise invalid(f"anchor_rating: must be a finite rating, got {request.anchor_rating}")
    if request.partnerships and request.players != 4:
        raise invalid(
            f"partnerships: only 4-player games have partners, got players {request.players}"
        )
    if request.players and not 2 <= request.players <= 4:
        raise invalid(
            f"players: must be 2 to 4 (or 0: the pool with most games), got {request.players}"
        )
    key = PoolKey(request.players, request.partnerships) if request.players else None
    return BatchOptions(
        key=key,
        anchor=request.anchor or None,
        anchor_rating=(
            request.anchor_rating if request.HasField("anchor_rating") else INITIAL_RATING
        ),
        rounds=rounds,
        los=request.los,
    )


async def batch_answer(
    matches: Callable[..., list[StoredMatch]],
    request: admin_pb.GetStandingsRequest,
    pool: str,
    tournament_id: str | None,
    fixed: Mapping[str, float] | None = None,
) -> admin_pb.BatchStandings:
    """The official standings of a request: the batch fit of the tournament's games, or of the
    pool's newest, read with the storage's ``matches`` and fitted in worker threads. ``fixed``:
    a tournament's frozen baselines (seat name -> rating), which anchor the scale unless the
    request names an anchor of its own.

    Raises:
        RequestError: as :func:`batch_options` and :func:`batch_message` do.
    """
    options = batch_options(request)
    if tournament_id is not None:
        found = await asyncio.to_thread(
            matches, MAX_BATCH_MATCHES, tournament_id=tournament_id, records=False
        )
    else:
        found = await asyncio.to_thread(matches, MAX_BATCH_MATCHES, game=pool, records=False)
    return await asyncio.to_thread(
        batch_message,
        found,
        pool,
        options,
        ladder=tournament_id is None,
        fixed=None if options.anchor is not None else fixed,
    )


def batch_message(
    matches: list[StoredMatch],
    game: str,
    options: BatchOptions,
    *,
    ladder: bool,
    fixed: Mapping[str, float] | None = None,
) -> admin_pb.BatchStandings:
    """Fit ``matches`` (a pool's newest, or a tournament's) and answer with the standings.

    Raises:
        RequestError: INVALID_ARGUMENT for a bad anchor or pool, FAILED_PRECONDITION when the
            games cannot be fitted yet (none counted).
    """
    chosen = counted(matches, ladder=ladder)
    try:
        standings = batch_standings(
            chosen,
            game=game,
            key=options.key,
            anchor=options.anchor,
            anchor_rating=options.anchor_rating,
            rounds=options.rounds,
            seed=BOOTSTRAP_SEED,
            fixed=fixed,
            apart=True,
        )
    except ValueError as exc:
        text = str(exc)
        if text.startswith(("anchor", "players", "bootstrap_rounds")):
            raise invalid(text) from None
        raise not_now(text) from None
    return standings_message(standings, los=options.los)


def standings_message(standings: BatchStandings, *, los: bool) -> admin_pb.BatchStandings:
    """The ``BatchStandings`` message of a fit (``los``: with the LOS matrix)."""
    point, spread = standings.point, standings.spread
    rows = standings.table
    message = admin_pb.BatchStandings(
        model=point.model,
        games=standings.games,
        sets=point.units,
        rounds=spread.rounds,
        pool=standings.label,
        anchor=point.anchor or "",
        anchor_rating=point.anchor_rating,
        other_pools=[key.label(standings.game) for key in standings.other_pools],
        players=point.players,
        fixed=[
            admin_pb.Baseline(bot=bot, rating=rating) for bot, rating in sorted(point.fixed.items())
        ],
    )
    message.rows.extend(batch_row(row) for row in rows)
    message.seats.extend(
        admin_pb.SeatAdvantage(seat=r.position, elo=r.elo, low=r.low, high=r.high, label=r.label)
        for r in standings.seat_rows()
    )
    message.pairs.extend(
        admin_pb.PairRow(
            first=row.partners[0],
            second=row.partners[1],
            games=row.games,
            score=row.score / row.games,
            expected=row.expected / row.games,
        )
        for row in standings.pairs
    )
    if los:
        order = [row.bot for row in rows if row.fitted]  # a part that never met: no LOS
        message.los.extend(
            admin_pb.LosRow(
                bot=bot,
                los=[0.5 if other == bot else spread.los[bot][other] for other in order],
            )
            for bot in order
        )
    return message


def batch_row(row: OfficialRow) -> admin_pb.BatchRow:
    """A row of the official table as the API sends it (rank 0: unranked)."""
    return admin_pb.BatchRow(
        rank=row.rank or 0,
        bot=row.bot,
        rating=row.rating,
        low=row.low,
        high=row.high,
        games=row.games,
        provisional=row.provisional,
        unbounded=row.unbounded,
        rating_text=row.text,
        note=row.note,
    )

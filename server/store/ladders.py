"""The settings of the ladders a cluster's match hosts run, kept so a ladder outlives its host.

A single referee keeps its ladder in memory only (a restart stops it). A cluster's match host
that starts a ladder writes its settings here (:func:`save`, everything ``StartLadder`` set,
the seed drawn if none was given) beside the pool's lease (``ownership.py``: ``ladder_key``).
When that host dies its lease expires, and another host's steward finds the row
(:func:`all_ladders`), claims the lease and runs the ladder again from these settings
(``server/play/ladder_settings.py``). ``StopLadder`` deletes the row (:func:`delete`), on
whichever host it is called: the owner, which reads the rows at every renewal of its leases,
stops it.

The functions block (run them in a worker thread).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine, RowMapping

from domino_arena.server.store import tables
from domino_arena.server.store.engine import writing
from domino_arena.server.store.tables import LADDERS


@dataclass(frozen=True, slots=True)
class StoredLadder:
    """A running ladder's settings: its pool (``course``, ``game``: the game's name) and what
    it plays (the game's ``options``, the time control in milliseconds, the faults)."""

    course: str
    game: str
    options: dict[str, Any]
    time_control_ms: tuple[int, int, int]
    """Move, bank and grace, in milliseconds."""
    fault_policy: str
    max_strikes: int
    max_deals: int
    concurrency: int
    seed: int
    started: dt.datetime


def save(engine: Engine, ladder: StoredLadder) -> None:
    """Store ``ladder``'s settings, replacing those of an earlier ladder of its pool."""
    move, bank, grace = ladder.time_control_ms
    with writing(engine) as connection:
        connection.execute(_pool(ladder.course, ladder.game))
        connection.execute(
            LADDERS.insert().values(
                course=ladder.course,
                game=ladder.game,
                options=ladder.options,
                move_ms=move,
                bank_ms=bank,
                grace_ms=grace,
                fault_policy=ladder.fault_policy,
                max_strikes=ladder.max_strikes,
                max_deals=ladder.max_deals,
                concurrency=ladder.concurrency,
                seed=ladder.seed,
                started=ladder.started,
            )
        )


def delete(engine: Engine, course: str, game: str) -> bool:
    """Forget the ladder of ``game`` in ``course`` (it was stopped); return whether one was
    stored."""
    with writing(engine) as connection:
        return bool(connection.execute(_pool(course, game)).rowcount)


def all_ladders(engine: Engine) -> list[StoredLadder]:
    """Every stored ladder, by course and game."""
    with engine.connect() as connection:
        rows = connection.execute(
            sa.select(LADDERS).order_by(LADDERS.c.course, LADDERS.c.game)
        ).mappings()
        return [_stored(row) for row in rows]


def _pool(course: str, game: str) -> sa.Delete:
    return LADDERS.delete().where(LADDERS.c.course == course, LADDERS.c.game == game)


def _stored(row: RowMapping) -> StoredLadder:
    return StoredLadder(
        course=row["course"],
        game=row["game"],
        options=dict(row["options"]),
        time_control_ms=(int(row["move_ms"]), int(row["bank_ms"]), int(row["grace_ms"])),
        fault_policy=row["fault_policy"],
        max_strikes=int(row["max_strikes"]),
        max_deals=int(row["max_deals"]),
        concurrency=int(row["concurrency"]),
        seed=int(row["seed"]),
        started=tables.utc(row["started"]),
    )

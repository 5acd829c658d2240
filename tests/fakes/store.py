"""Databases for the storage tests: each test on SQLite (a temporary file) and on PostgreSQL.

PostgreSQL is the machine's local server (:data:`POSTGRES_URL`, trust auth). Each test gets its
own schema there, dropped afterwards, so parallel workers and repeated runs never see each
other's rows. The fixtures are registered for every test in ``tests/conftest.py``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Final, TypeVar

import pytest

from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.storage import Storage
from domino_arena.server.store.tournaments import StoredTournament, TournamentState

POSTGRES_URL: Final = "postgresql://postgres@127.0.0.1:5432/test"

S = TypeVar("S", bound=Storage)


@pytest.fixture(params=["sqlite", "postgresql"])
def url_and_schema(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str | None]:
    """A database URL and, on PostgreSQL, a fresh schema name: once per database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'arena.db'}", None
    return POSTGRES_URL, f"test_storage_{uuid.uuid4().hex[:12]}"


def _opened(kind: type[S], url_and_schema: tuple[str, str | None]) -> Iterator[S]:
    url, schema = url_and_schema
    storage = kind(url, schema=schema)
    storage.open()
    yield storage
    if schema is not None:
        storage.drop()
    storage.close()


@pytest.fixture
def storage(url_and_schema: tuple[str, str | None]) -> Iterator[Storage]:
    """An opened :class:`Storage` (no ratings) on each database."""
    yield from _opened(Storage, url_and_schema)


@pytest.fixture
def rated_storage(url_and_schema: tuple[str, str | None]) -> Iterator[RatedStorage]:
    """An opened :class:`RatedStorage` (the storage with the Elo ladder) on each database."""
    yield from _opened(RatedStorage, url_and_schema)


def a_match(match_id: str, *, seed: int = 42, minute: int = 0) -> StoredMatch:
    """A finished, unrated two-player Passing Game match, stamped 2026-01-02 03:``minute``."""
    return StoredMatch(
        id=match_id,
        game="passing",
        options={"players": 2, "partnerships": False, "target_rule": "gamerules"},
        seats=("alice", "bob"),
        seed=seed,
        termination="normal",
        winner=1,
        scores=(30, 117),
        faulted_seat=None,
        fault=None,
        detail="side 1 reached 117",
        record='{"type": "header"}\n{"type": "result"}\n',
        created=dt.datetime(2026, 1, 2, 3, minute, 5, tzinfo=dt.UTC),
    )


def rated(
    match_id: str,
    seats: tuple[str, ...],
    scores: tuple[int, ...],
    winner: int | None,
    *,
    game: str = "passing",
    side_of_seat: tuple[int, ...] = (),
    termination: str = "normal",
    faulted_seat: int | None = None,
    faults: tuple[int, ...] = (),
    minute: int = 0,
) -> StoredMatch:
    """A rated match ``match_id`` of ``seats`` with these scores, winner and faults."""
    return dataclasses.replace(
        a_match(match_id, minute=minute),
        game=game,
        seats=seats,
        scores=scores,
        winner=winner,
        side_of_seat=side_of_seat,
        termination=termination,
        faulted_seat=faulted_seat,
        fault="timeout" if faulted_seat is not None else None,
        faults=faults,
        rated=True,
    )


def running_tournament(
    name: str, entrants: tuple[str, ...], baselines: tuple[tuple[str, float], ...] = ()
) -> StoredTournament:
    """The rated passing tournament ``t1``, running, with ``entrants`` (and ``baselines``)."""
    moment = a_match("x").created
    return StoredTournament(
        id="t1",
        name=name,
        game="passing",
        options={},
        entrants=entrants,
        games_per_pairing=1,
        deals="fresh",
        time_control_ms=(1000, 10000, 250),
        fault_policy="forfeit",
        max_strikes=3,
        concurrency=1,
        wait_seconds=0.0,
        seed=1,
        rated=True,
        state=TournamentState.RUNNING,
        created=moment,
        updated=moment,
        baselines=baselines,
    )

"""The ladder writer (server/store/writer.py) against databases that really fail, on MockClock.

The failures are real, never mocks of SQLAlchemy: on SQLite another connection holds the
file's write lock (the writer's storage waits 10 ms, then hears "database is locked"); on
PostgreSQL the writer logs in as a role of its own that is refused log-in (and its sessions
ended) while the database is "away", or the server ends the writer's session in the middle of a
transaction. MockClock makes the backoff's waits instant and exact.
"""

from __future__ import annotations

import dataclasses
import sqlite3
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, Final, TypeVar

import pytest
import sqlalchemy as sa
import trio
from psycopg.pq import TransactionStatus
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from trio.testing import MockClock

from domino_arena.server.ladder import elo
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.storage import Storage
from domino_arena.server.store.writer import MAX_DELAY, Writer, backoff, is_transient
from tests.fakes.store import POSTGRES_URL, a_match

T = TypeVar("T")

ADMIN_URL: Final = POSTGRES_URL.replace("postgresql://", "postgresql+psycopg://")


def run(fn: Callable[[], Awaitable[T]]) -> T:
    """Run ``fn`` under a fresh MockClock that starts at 0 and jumps whenever all tasks wait."""
    return trio.run(fn, clock=MockClock(autojump_threshold=0))


class Outage:
    """A storage whose database can be made unreachable (:meth:`start`) and back (:meth:`end`)."""

    storage: RatedStorage

    def start(self) -> None:
        raise NotImplementedError

    def end(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class SqliteOutage(Outage):
    """Another connection holds the file's write lock; the storage gives up after 10 ms."""

    def __init__(self, path: Path) -> None:
        self.storage = RatedStorage(f"sqlite:///{path}?timeout=0.01")
        self.storage.open()
        self._holder = sqlite3.connect(path, isolation_level=None)

    def start(self) -> None:
        self._holder.execute("BEGIN EXCLUSIVE")

    def end(self) -> None:
        if self._holder.in_transaction:
            self._holder.execute("COMMIT")

    def close(self) -> None:
        self.end()
        self._holder.close()
        self.storage.close()


class PostgresOutage(Outage):
    """The storage logs in as its own role; the outage forbids log-in and ends its sessions."""

    def __init__(self) -> None:
        suffix = uuid.uuid4().hex[:12]
        self.role = f"test_writer_{suffix}"
        self.admin = sa.create_engine(ADMIN_URL, isolation_level="AUTOCOMMIT")
        with self.admin.connect() as connection:
            connection.exec_driver_sql(f"CREATE ROLE {self.role} LOGIN")
            connection.exec_driver_sql(f"GRANT CREATE ON DATABASE test TO {self.role}")
        url = f"postgresql://{self.role}@127.0.0.1:5432/test"
        self.storage = RatedStorage(url, schema=f"test_writer_{suffix}")
        self.storage.open()

    def start(self) -> None:
        with self.admin.connect() as connection:
            connection.exec_driver_sql(f"ALTER ROLE {self.role} NOLOGIN")
            connection.execute(
                sa.text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = :role"
                ),
                {"role": self.role},
            )

    def end(self) -> None:
        with self.admin.connect() as connection:
            connection.exec_driver_sql(f"ALTER ROLE {self.role} LOGIN")

    def close(self) -> None:
        self.end()
        self.storage.drop()
        self.storage.close()
        with self.admin.connect() as connection:
            connection.exec_driver_sql(f"REVOKE CREATE ON DATABASE test FROM {self.role}")
            connection.exec_driver_sql(f"DROP ROLE {self.role}")
        self.admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def outage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Outage]:
    sqlite = request.param == "sqlite"
    built = SqliteOutage(tmp_path / "arena.db") if sqlite else PostgresOutage()
    yield built
    built.close()


def rated(match_id: str) -> StoredMatch:
    """A rated match as it reads back: the storage names the model it fed."""
    return dataclasses.replace(
        a_match(match_id), seats=("ann", "bob"), rated=True, rating_model=elo.MODEL
    )


class Retries:
    """An ``on_retry`` hook that notes when each failed try happened, and can end the outage."""

    def __init__(self, outage: Outage | None = None, *, end_after: int = 0) -> None:
        self.outage = outage
        self.end_after = end_after
        self.times: list[float] = []
        self.errors: list[BaseException] = []

    def __call__(self, attempt: int, error: BaseException) -> None:
        assert attempt == len(self.times) + 1
        self.times.append(trio.current_time())
        self.errors.append(error)
        if self.outage is not None and attempt == self.end_after:
            self.outage.end()

    @property
    def waits(self) -> list[float]:
        return [later - earlier for earlier, later in zip(self.times, self.times[1:], strict=False)]


# -- backoff --------------------------------------------------------------------------------------


def test_the_backoff_doubles_from_half_a_second_to_a_cap() -> None:
    assert [backoff(n) for n in range(1, 10)] == [0.5, 1, 2, 4, 8, 16, 30, 30, 30]
    assert backoff(10_000) == MAX_DELAY
    assert [backoff(n, first=1, cap=5) for n in (1, 2, 3, 4)] == [1, 2, 4, 5]
    with pytest.raises(ValueError, match="attempt: expected 1 or more, got 0"):
        backoff(0)


def test_a_writer_needs_a_positive_first_delay_below_the_cap(tmp_path: Path) -> None:
    storage = Storage(f"sqlite:///{tmp_path / 'arena.db'}")
    with pytest.raises(ValueError, match=r"first_delay: expected more than 0 and at most max_"):
        Writer(storage, first_delay=0)
    with pytest.raises(ValueError, match="first_delay"):
        Writer(storage, first_delay=5, max_delay=1)


# -- outages --------------------------------------------------------------------------------------


def test_a_database_away_for_a_while_delays_the_match_but_stores_it_once(outage: Outage) -> None:
    retries = Retries(outage, end_after=9)
    writer = Writer(outage.storage, on_retry=retries)
    outage.start()

    async def main() -> bool:
        return await writer.save_match(rated("m1"))

    assert run(main)
    assert len(retries.times) == 9
    assert retries.waits == [0.5, 1, 2, 4, 8, 16, 30, 30]
    assert all(is_transient(error) for error in retries.errors)
    assert outage.storage.match("m1") == rated("m1")
    assert len(outage.storage.rated_games("passing")) == 1
    assert writer.pending == 0
    assert not run(main)  # a second save of it (a retry after a lost answer) writes nothing
    assert len(outage.storage.rated_games("passing")) == 1


def test_saves_queue_one_behind_the_other_while_the_database_is_away(outage: Outage) -> None:
    writer = Writer(outage.storage)
    outage.start()
    results: dict[str, bool] = {}
    pending: list[int] = []

    async def save(match_id: str) -> None:
        results[match_id] = await writer.save_match(rated(match_id))

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            for match_id in ("m1", "m2", "m3"):
                nursery.start_soon(save, match_id)
                await trio.sleep(0.1)  # virtual: fixes the order the saves queue in
            await trio.sleep(60)
            pending.append(writer.pending)
            outage.end()

    run(main)
    assert pending == [3]
    assert results == {"m1": True, "m2": True, "m3": True}
    assert writer.pending == 0
    stored = outage.storage.rated_games("passing")
    assert [game.bots for game in stored] == [("ann", "bob")] * 3
    assert [m.id for m in outage.storage.matches()] == ["m1", "m2", "m3"]  # same time: by id


def test_a_save_cancelled_while_the_database_is_away_stores_nothing(outage: Outage) -> None:
    scope = trio.CancelScope()
    tries: list[int] = []

    def on_retry(attempt: int, _error: BaseException) -> None:
        tries.append(attempt)
        if attempt == 3:
            scope.cancel()

    writer = Writer(outage.storage, on_retry=on_retry)
    outage.start()

    async def main() -> None:
        with scope:
            await writer.save_match(rated("m1"))

    run(main)
    assert scope.cancelled_caught
    assert tries == [1, 2, 3]
    assert writer.pending == 0
    outage.end()
    assert outage.storage.match("m1") is None


# -- errors that a retry cannot fix ---------------------------------------------------------------


def test_an_error_that_is_no_outage_propagates_at_once(outage: Outage) -> None:
    retries = Retries()
    writer = Writer(outage.storage, on_retry=retries)

    async def save(match: StoredMatch) -> bool:
        return await writer.save_match(match)

    with pytest.raises(ValueError, match="seed: must be from 0 to"):
        run(lambda: save(dataclasses.replace(a_match("m1"), seed=-1)))
    with pytest.raises(IntegrityError):  # a game of a tournament nobody added
        run(lambda: save(dataclasses.replace(a_match("m2"), tournament_id="t", game_index=0)))
    with outage.storage.engine.begin() as connection:
        connection.execute(sa.text("ALTER TABLE ratings RENAME TO ratings_gone"))
    try:
        with pytest.raises(SQLAlchemyError, match="ratings") as caught:
            run(lambda: save(rated("m3")))
    finally:
        with outage.storage.engine.begin() as connection:
            connection.execute(sa.text("ALTER TABLE ratings_gone RENAME TO ratings"))
    assert not is_transient(caught.value)
    assert retries.times == []
    assert writer.pending == 0
    assert outage.storage.matches() == []


# -- PostgreSQL: the server ends the session in the middle of a save ------------------------------


def test_a_session_ended_by_the_server_mid_save_is_retried() -> None:
    outage = PostgresOutage()
    try:
        retries = Retries()
        writer = Writer(outage.storage, on_retry=retries)
        killed: list[int] = []

        def end_the_session_before_its_insert(
            _connection: sa.Connection, cursor: Any, statement: str, *_: Any
        ) -> None:
            """Inside the save's transaction (its look for the match done), just before the
            insert, once: the server ends the writer's session, and says so to its client.

            ``pg_terminate_backend(pid, timeout)`` returns once the session is gone (no poll)."""
            if killed or not statement.startswith("INSERT INTO matches "):
                return
            pid = cursor.connection.info.backend_pid
            assert cursor.connection.info.transaction_status == TransactionStatus.INTRANS
            with outage.admin.connect() as admin:
                ended = admin.execute(
                    sa.text("SELECT pg_terminate_backend(:pid, 60000)"), {"pid": pid}
                ).scalar_one()
            assert ended, "the writer's session outlived its termination"
            killed.append(pid)

        sa.event.listen(
            outage.storage.engine, "before_cursor_execute", end_the_session_before_its_insert
        )

        async def main() -> bool:
            return await writer.save_match(rated("m1"))

        assert run(main)
        assert len(killed) == 1
        assert len(retries.times) == 1
        assert is_transient(retries.errors[0])
        assert "terminat" in str(retries.errors[0])
        assert outage.storage.match("m1") == rated("m1")
        assert len(outage.storage.rated_games("passing")) == 1
    finally:
        outage.close()

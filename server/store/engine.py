"""Opening the referee's database: the URL, the SQLAlchemy engine, SQLite's settings, migrating.

SQLAlchemy Core over a synchronous engine, so the same code runs on the default SQLite file and
on PostgreSQL by URL (docs/decisions.md: decision 12). :func:`open_engine` connects and runs the
versioned migrations; :func:`writing` is the transaction every write of a finished match uses.
Errors name the database with its password hidden (:func:`display_url`), in one line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, SQLAlchemyError

from domino_arena.server.store import migrations
from domino_arena.server.store.tables import METADATA

_SCHEMA_PATTERN: Final = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

# Set on a connection to make its next SQLite transaction take the write lock at BEGIN, the
# SQLite counterpart of PostgreSQL's SELECT ... FOR UPDATE.
_SQLITE_IMMEDIATE: Final = "domino_arena_sqlite_immediate"

SQLITE_SYNCHRONOUS: Final = "NORMAL"
"""SQLite's ``synchronous`` setting on every connection (PRAGMA synchronous reads it as 1)."""

PLAN_CACHE_MODE: Final = "force_custom_plan"
"""PostgreSQL's ``plan_cache_mode`` on every connection (see ``_create_engine``)."""

_MIGRATION_LOCK: Final = 0x646F6D696E6F  # "domino": the advisory lock id of migrations


class StorageError(Exception):
    """The database cannot be opened or reached; the message names it (password hidden)."""


def display_url(url: str) -> str:
    """Return ``url`` fit to print: the password hidden, or the text itself if it is no URL."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


def error_reason(exc: BaseException) -> str:
    """The first line of what the driver said, without SQLAlchemy's background links."""
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    return first.removeprefix("(Background on this error at: ").strip()


def check_schema(schema: str | None) -> None:
    """Raise ``ValueError`` unless ``schema`` is None or a plain PostgreSQL identifier."""
    if schema is not None and not _SCHEMA_PATTERN.match(schema):
        raise ValueError(
            f"schema: expected 1-63 lowercase letters, digits or '_', not starting with a "
            f"digit, got {schema!r}"
        )


def open_engine(url: str, schema: str | None) -> Engine:
    """Connect to ``url`` and migrate it to the newest schema; return the engine.

    A database made by the first release (no version table) is recognised and upgraded with
    its rows. Two processes opening a new database at once both succeed.

    Raises:
        StorageError: the URL is bad, its driver is missing, or the database cannot be
            reached, opened or migrated; the message names the database and the reason, in
            one line.
    """
    where = display_url(url)
    try:
        engine = _create_engine(url, schema)
    except (ArgumentError, NoSuchModuleError, ImportError, ValueError) as exc:
        raise StorageError(f"cannot open the database {where}: {error_reason(exc)}") from None
    attempts = 3
    for attempt in range(1, attempts + 1):
        try:
            with engine.connect() as connection:
                _migrate(connection, schema)
            break
        except (SQLAlchemyError, migrations.MigrationError) as exc:
            # Two processes opening a new database at once race to create the tables; the
            # loser's next look finds the winner's revision and goes on from there.
            if attempt < attempts and isinstance(exc, SQLAlchemyError) and _is_race(exc):
                continue
            engine.dispose()
            raise StorageError(f"cannot open the database {where}: {error_reason(exc)}") from None
    return engine


def drop(engine: Engine, schema: str | None) -> None:
    """Drop the tables, the version table and ``schema`` if given: for tests sharing a server."""
    with engine.begin() as connection:
        METADATA.drop_all(connection)
        connection.execute(sa.text(f"DROP TABLE IF EXISTS {migrations.VERSION_TABLE}"))
        if schema is not None:
            connection.execute(sa.schema.DropSchema(schema, cascade=True))


@contextmanager
def writing(engine: Engine) -> Iterator[sa.Connection]:
    """A transaction that takes SQLite's write lock at once (BEGIN IMMEDIATE), for one that
    reads and then writes while others may do the same (a deferred BEGIN would fail at once
    with "database is locked" instead of waiting); PostgreSQL locks rows (SELECT ... FOR
    UPDATE)."""
    with engine.connect() as connection:
        connection.execution_options(**{_SQLITE_IMMEDIATE: True})
        with connection.begin():
            yield connection


def _create_engine(url_text: str, schema: str | None) -> Engine:
    url = make_url(url_text)
    if url.drivername == "postgresql":
        url = url.set(drivername="postgresql+psycopg")
    connect_args: dict[str, Any] = {}
    options = []
    if schema is not None:
        if not url.drivername.startswith("postgresql"):
            raise ValueError(f"schema {schema!r} is for PostgreSQL only")
        options.append(f"-c search_path={schema}")
    if url.drivername.startswith("postgresql"):
        # psycopg prepares a statement run five times, and PostgreSQL may then plan it once for
        # any parameters: the ladder writer's "which of these ids are stored" went to a scan of
        # every match, 6 ms -> 240 ms a batch at 30,000 rows (bench/README.md: ladder_bench).
        # Plan each run for its own parameters; the statements stay prepared (parsed once).
        options.append(f"-c plan_cache_mode={PLAN_CACHE_MODE}")
    if options:
        connect_args["options"] = " ".join(options)
    engine = sa.create_engine(url, pool_pre_ping=True, connect_args=connect_args)
    if engine.dialect.name == "sqlite":
        sa.event.listen(engine, "connect", _sqlite_connect)
        sa.event.listen(engine, "begin", _sqlite_begin)
    return engine


def _migrate(connection: sa.Connection, schema: str | None) -> None:
    postgres = connection.dialect.name == "postgresql"
    # SQLite openers take the write lock as they begin, so they wait for each other
    # (a deferred BEGIN that reads and then writes fails at once when another one did).
    connection.execution_options(**{_SQLITE_IMMEDIATE: True})
    if schema is not None:
        connection.execute(sa.schema.CreateSchema(schema, if_not_exists=True))
        connection.commit()
    if postgres:
        # Openers of one database wait for each other here instead of racing.
        connection.execute(sa.select(sa.func.pg_advisory_lock(_MIGRATION_LOCK)))
        connection.commit()
    try:
        migrations.upgrade(connection)
    finally:
        if postgres and not connection.invalidated:
            connection.rollback()
            connection.execute(sa.select(sa.func.pg_advisory_unlock(_MIGRATION_LOCK)))
            connection.commit()


def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    # pysqlite would begin transactions itself, after DDL; let the "begin" event do it, so DDL
    # (the migrations) is transactional too, and enforce foreign keys as PostgreSQL does.
    dbapi_connection.isolation_level = None
    dbapi_connection.execute("PRAGMA foreign_keys=ON")
    # Write-ahead logging: readers (the admin API, the CLI, another process) never block the
    # referee's writes, nor do they wait for them. A no-op for an in-memory database.
    dbapi_connection.execute("PRAGMA journal_mode=WAL")
    # The durability promise (docs/deploy.md: what a stored game survives): with WAL, NORMAL
    # syncs the log at each checkpoint, not at each commit, so a committed game survives the
    # process's death (SIGKILL, a crash: it is in the operating system's hands) and the file
    # is never left corrupt, but a power cut or a kernel crash may lose the last transactions.
    dbapi_connection.execute(f"PRAGMA synchronous={SQLITE_SYNCHRONOUS}")


def _sqlite_begin(connection: sa.Connection) -> None:
    immediate = connection.get_execution_options().get(_SQLITE_IMMEDIATE, False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def _is_race(exc: SQLAlchemyError) -> bool:
    """Whether ``exc`` looks like another process creating the same tables at the same time."""
    text = str(exc).lower()
    return any(word in text for word in ("exist", "duplicate", "locked"))

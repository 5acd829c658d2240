"""The storage's versioned schema: Alembic revisions run from code (DESIGN.md decision 12).

There is no ``alembic.ini``: :func:`upgrade` builds the Alembic configuration here and hands
Alembic the caller's connection, so migrations run on exactly the database (and PostgreSQL
``search_path``) that :class:`~domino_arena.server.store.storage.Storage` opened. Each revision runs
in its own transaction, so a failure leaves the database at the last revision that completed.

Revisions live in ``versions/``, one file each, named by number (``0001``, ``0002``, ...); a
new one copies the shape of the last and must leave the database equal to ``tables.METADATA``
(a test compares them on SQLite and PostgreSQL).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Final

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

FOLDER: Final = Path(__file__).resolve().parent

BASELINE: Final = "0001"
"""The revision of the schema the first release created with ``create_all`` (no version table)."""

VERSION_TABLE: Final = "alembic_version"

_MIGRATING: Final = threading.Lock()


def config(connection: sa.Connection) -> Config:
    """Return an Alembic configuration that migrates through ``connection``."""
    alembic_config = Config()
    alembic_config.set_main_option("script_location", str(FOLDER))
    alembic_config.attributes["connection"] = connection
    return alembic_config


def head() -> str:
    """Return the newest revision."""
    revision = ScriptDirectory(str(FOLDER)).get_current_head()
    assert revision is not None, "no migration revisions found"
    return revision


def current(connection: sa.Connection) -> str | None:
    """Return the revision the database is at, or None for a database never migrated."""
    return MigrationContext.configure(connection).get_current_revision()


def upgrade(connection: sa.Connection) -> None:
    """Bring the database behind ``connection`` to the newest revision.

    A database the first release made (``bots`` and ``matches``, no version table) is stamped
    as :data:`BASELINE` first, so its rows are kept and only the later revisions run. The
    connection must not be in a transaction: each revision commits its own.
    """
    # Alembic keeps the running migration in module globals (``alembic.context``, ``op``), so
    # two threads of one process migrate one after the other; processes each have their own.
    with _MIGRATING:
        _upgrade(connection)


def _upgrade(connection: sa.Connection) -> None:
    tables = set(sa.inspect(connection).get_table_names())
    connection.rollback()  # the inspection began a transaction; every revision starts its own
    sqlite = connection.dialect.name == "sqlite"
    if sqlite:
        # SQLite rebuilds a table to alter it ("batch" mode); enforced foreign keys would make
        # dropping the old copy delete or refuse rows that other tables reference.
        _sqlite_pragma(connection, "foreign_keys=OFF")
    try:
        alembic_config = config(connection)
        if VERSION_TABLE not in tables and {"bots", "matches"} <= tables:
            command.stamp(alembic_config, BASELINE)
        command.upgrade(alembic_config, "head")
    finally:
        if sqlite:
            connection.rollback()
            _sqlite_pragma(connection, "foreign_keys=ON")


def _sqlite_pragma(connection: sa.Connection, setting: str) -> None:
    """Set a SQLite pragma outside any transaction (inside one, SQLite ignores it)."""
    driver_connection: Any = connection.connection.driver_connection
    driver_connection.execute(f"PRAGMA {setting}")

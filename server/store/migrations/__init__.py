"""The storage's versioned schema: Alembic revisions run from code (docs/decisions.md: decision 12).

There is no ``alembic.ini``: :func:`upgrade` builds the Alembic configuration here and hands
Alembic the caller's connection, so migrations run on exactly the database (and PostgreSQL
``search_path``) that :class:`~domino_arena.server.store.storage.Storage` opened. On PostgreSQL
each revision runs in its own transaction, so a failure leaves the database at the last revision
that completed; on SQLite they all run in one, which holds the write lock from its start, so
processes opening one new file migrate one after the other (``env.py``).

Revisions live in ``versions/``, one file each, named by number (``0001``, ``0002``, ...); a
new one copies the shape of the last and must leave the database equal to ``tables.METADATA``
(a test compares them on SQLite and PostgreSQL). A revision's id is its file's number, so the
newest one is known from the file names (:func:`newest`, checked against Alembic's head by a
test).

Alembic (and Mako, which it imports) are imported only when a database must be migrated: a
referee that opens a database already at the newest revision reads the version table with a
plain query and never loads them (about 12 MiB of a referee's memory).
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import sqlalchemy as sa

if TYPE_CHECKING:
    from alembic.config import Config

FOLDER: Final = Path(__file__).resolve().parent
_REVISION_FILE: Final = re.compile(r"^(\d{4})_\w+\.py$")

BASELINE: Final = "0001"
"""The revision of the schema the first release created with ``create_all`` (no version table)."""

VERSION_TABLE: Final = "alembic_version"

_MIGRATING: Final = threading.Lock()


class MigrationError(Exception):
    """Alembic cannot migrate the database (e.g. it is at a revision this release does not
    know); the message is Alembic's."""


def config(connection: sa.Connection) -> Config:
    """Return an Alembic configuration that migrates through ``connection``."""
    from alembic.config import Config  # noqa: PLC0415  # only when migrating (module docstring)

    alembic_config = Config()
    alembic_config.set_main_option("script_location", str(FOLDER))
    alembic_config.attributes["connection"] = connection
    return alembic_config


def head() -> str:
    """Return the newest revision, as Alembic reads it from the revisions' chain."""
    from alembic.script import ScriptDirectory  # noqa: PLC0415

    revision = ScriptDirectory(str(FOLDER)).get_current_head()
    assert revision is not None, "no migration revisions found"
    return revision


def newest() -> str:
    """Return the newest revision from the file names alone (``versions/0008_courses.py``:
    ``"0008"``), without importing Alembic."""
    numbers = [
        match.group(1)
        for path in (FOLDER / "versions").iterdir()
        if (match := _REVISION_FILE.match(path.name))
    ]
    assert numbers, "no migration revisions found"
    return max(numbers)


def current(connection: sa.Connection) -> str | None:
    """Return the revision the database is at, or None for a database never migrated.

    Read with a plain query (Alembic's ``MigrationContext`` would import Alembic).

    Raises:
        MigrationError: the version table holds several revisions (branches: never ours).
    """
    if not sa.inspect(connection).has_table(VERSION_TABLE):
        return None
    rows = connection.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}")).all()
    if len(rows) > 1:
        found = ", ".join(sorted(str(row[0]) for row in rows))
        raise MigrationError(f"the version table holds several revisions: {found}")
    return str(rows[0][0]) if rows else None


def upgrade(connection: sa.Connection) -> None:
    """Bring the database behind ``connection`` to the newest revision.

    A database the first release made (``bots`` and ``matches``, no version table) is stamped
    as :data:`BASELINE` first, so its rows are kept and only the later revisions run. The
    connection must not be in a transaction: the revisions commit their own. A database at
    :func:`newest` is left as it is, without importing Alembic.

    Raises:
        MigrationError: Alembic refused (e.g. the database is at an unknown revision).
    """
    at = current(connection)
    connection.rollback()  # the look began a transaction; the revisions start their own
    if at == newest():
        return
    # Alembic keeps the running migration in module globals (``alembic.context``, ``op``), so
    # two threads of one process migrate one after the other; processes each have their own.
    with _MIGRATING:
        _upgrade(connection)


def _upgrade(connection: sa.Connection) -> None:
    from alembic import command  # noqa: PLC0415  # only when migrating (module docstring)
    from alembic.util import CommandError  # noqa: PLC0415

    tables = set(sa.inspect(connection).get_table_names())
    connection.rollback()  # the inspection began a transaction; the revisions start their own
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
    except CommandError as exc:
        raise MigrationError(str(exc)) from exc
    finally:
        if sqlite:
            connection.rollback()
            _sqlite_pragma(connection, "foreign_keys=ON")


def _sqlite_pragma(connection: sa.Connection, setting: str) -> None:
    """Set a SQLite pragma outside any transaction (inside one, SQLite ignores it)."""
    driver_connection: Any = connection.connection.driver_connection
    driver_connection.execute(f"PRAGMA {setting}")

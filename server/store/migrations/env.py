"""Alembic's entry point: migrate through the connection that :func:`.upgrade` passes in."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import context

from domino_arena.server.store.tables import METADATA

connection = context.config.attributes.get("connection")
if not isinstance(connection, sa.Connection):
    raise RuntimeError(
        "the migrations run from code: call Storage(url).open() "
        "(or domino_arena.server.store.migrations.upgrade(connection)), not the alembic command"
    )
# PostgreSQL commits each revision on its own, so a failure keeps the ones before it; its
# openers wait for each other on an advisory lock (engine._migrate). SQLite runs them all in
# one transaction, whose BEGIN IMMEDIATE takes the write lock before Alembic reads the version:
# a second process opening the same new file waits there, then finds the newest revision
# (with a transaction per revision it could read the version between two commits of the first
# and find it moved: "expected to match one row").
context.configure(
    connection=connection,
    target_metadata=METADATA,
    transaction_per_migration=connection.dialect.name != "sqlite",
    # Storage's SQLite connections begin real transactions (alembic assumes they cannot).
    transactional_ddl=True,
    render_as_batch=True,
)
with context.begin_transaction():
    context.run_migrations()

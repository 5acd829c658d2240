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
context.configure(
    connection=connection,
    target_metadata=METADATA,
    transaction_per_migration=True,
    # Storage's SQLite connections begin real transactions (alembic assumes they cannot).
    transactional_ddl=True,
    render_as_batch=True,
)
with context.begin_transaction():
    context.run_migrations()

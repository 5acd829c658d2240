"""PostgreSQL compresses match records with lz4 instead of pglz, where the server has it.

Revision ID: 0009
Revises: 0008

A record is 13-35 kB of JSON Lines, so storing one is mostly compressing it out of line
(TOAST); pglz does that several times slower than lz4 (issue 14: storing 100,000 results).
Only new values are compressed the new way: the rows stored already keep theirs, and read the
same either way. A server built without lz4 (it says so in ``default_toast_compression``'s
choices) keeps pglz; SQLite stores records as they are, so there is nothing to do there.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision: str | None = "0008"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    _set_compression("lz4")


def downgrade() -> None:
    _set_compression("pglz")


def _set_compression(method: str) -> None:
    connection = op.get_bind()
    if connection.dialect.name != "postgresql" or not _has_lz4(connection):
        return
    op.execute(f"ALTER TABLE matches ALTER COLUMN record SET COMPRESSION {method}")


def _has_lz4(connection: sa.Connection) -> bool:
    choices = connection.execute(
        sa.text("SELECT enumvals FROM pg_settings WHERE name = 'default_toast_compression'")
    ).scalar()
    return choices is not None and "lz4" in choices

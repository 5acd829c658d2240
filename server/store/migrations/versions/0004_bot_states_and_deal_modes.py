"""Bot states and token dates; a tournament's deal mode instead of a duplicate-deals flag.

Revision ID: 0004
Revises: 0003

Every bot of 0003 becomes enabled, its token issued when it was created. A tournament that had
``duplicate_deals`` on deals in the ``duplicate`` mode, one that had it off in ``fresh``.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision: str | None = "0003"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("bots") as batch:
        batch.add_column(
            sa.Column("state", sa.String(16), nullable=False, server_default="enabled")
        )
        batch.add_column(sa.Column("token_issued", sa.DateTime(timezone=True), nullable=True))
    op.execute("UPDATE bots SET token_issued = created")
    with op.batch_alter_table("tournaments") as batch:
        batch.add_column(
            sa.Column("deals", sa.String(16), nullable=False, server_default="duplicate")
        )
    op.execute("UPDATE tournaments SET deals = 'fresh' WHERE NOT duplicate_deals")
    with op.batch_alter_table("tournaments") as batch:
        batch.drop_column("duplicate_deals")


def downgrade() -> None:
    with op.batch_alter_table("tournaments") as batch:
        batch.add_column(
            sa.Column("duplicate_deals", sa.Boolean, nullable=False, server_default=sa.true())
        )
    op.execute("UPDATE tournaments SET duplicate_deals = (deals <> 'fresh')")
    with op.batch_alter_table("tournaments") as batch:
        batch.drop_column("deals")
    with op.batch_alter_table("bots") as batch:
        batch.drop_column("token_issued")
        batch.drop_column("state")

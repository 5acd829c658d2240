"""The first release's schema: bots with hashed tokens, finished matches.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "bots",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(64), nullable=False, unique=True),
        sa.Column("token_hash", sa.String(255), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "matches",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("options", sa.JSON, nullable=False),
        sa.Column("seats", sa.JSON, nullable=False),
        sa.Column("seed", sa.BigInteger, nullable=False),
        sa.Column("termination", sa.String(16), nullable=False),
        sa.Column("winner", sa.Integer, nullable=True),
        sa.Column("scores", sa.JSON, nullable=False),
        sa.Column("faulted_seat", sa.Integer, nullable=True),
        sa.Column("fault", sa.String(16), nullable=True),
        sa.Column("detail", sa.Text, nullable=False),
        sa.Column("record", sa.Text, nullable=True),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("matches")
    op.drop_table("bots")

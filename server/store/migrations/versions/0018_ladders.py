"""The running ladders' settings, so a cluster's surviving match host takes a ladder over.

Revision ID: 0018
Revises: 0017

Adds the table ``ladders``: one row per ladder a cluster's match host runs (its course and game
name, the pool its lease names), with everything ``StartLadder`` set, written when it starts
and deleted when ``StopLadder`` stops it. docs/cluster.md: ladders taken over.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision: str | None = "0017"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "ladders",
        sa.Column("course", sa.String(64), primary_key=True),
        sa.Column("game", sa.String(32), primary_key=True),
        sa.Column("options", sa.JSON, nullable=False),
        sa.Column("move_ms", sa.Integer, nullable=False),
        sa.Column("bank_ms", sa.Integer, nullable=False),
        sa.Column("grace_ms", sa.Integer, nullable=False),
        sa.Column("fault_policy", sa.String(16), nullable=False),
        sa.Column("max_strikes", sa.Integer, nullable=False),
        sa.Column("max_deals", sa.Integer, nullable=False),
        sa.Column("concurrency", sa.Integer, nullable=False),
        sa.Column("seed", sa.BigInteger, nullable=False),
        sa.Column("started", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("ladders")

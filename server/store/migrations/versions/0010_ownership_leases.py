"""A cluster's match hosts lease tournaments and ladder pools one by one.

Revision ID: 0010
Revises: 0009

A new table only; every row of 0009 is kept (``server/store/ownership.py``).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision: str | None = "0009"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "ownership_leases",
        sa.Column("key", sa.String(200), primary_key=True),
        sa.Column("holder", sa.String(36), nullable=False),
        sa.Column("node", sa.String(255), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer, nullable=False),
        sa.Column("acquired_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("renewed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_ownership_leases_holder", "ownership_leases", ["holder"])


def downgrade() -> None:
    op.drop_index("ix_ownership_leases_holder", "ownership_leases")
    op.drop_table("ownership_leases")

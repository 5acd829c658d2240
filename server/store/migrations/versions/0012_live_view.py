"""Spectating can be made private: a live view per course and per tournament.

Revision ID: 0012
Revises: 0011

Adds ``courses.live_view`` (``public``, ``signed-in`` or ``none``; every course stored before
it stays ``public``, as every live match was) and ``tournaments.live_view`` (one of those, or
NULL: the course's, which every tournament stored before it keeps). docs/courses.md: live view.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision: str | None = "0011"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    # Plain ADD COLUMN, not a batch copy (see 0006): rows of other tables refer to these.
    op.add_column(
        "courses",
        sa.Column("live_view", sa.String(16), nullable=False, server_default="public"),
    )
    op.add_column("tournaments", sa.Column("live_view", sa.String(16), nullable=True))


def downgrade() -> None:
    op.drop_column("tournaments", "live_view")
    op.drop_column("courses", "live_view")

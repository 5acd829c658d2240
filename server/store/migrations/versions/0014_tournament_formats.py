"""Tournament formats: which fixed schedule a tournament plays and how big it is.

Revision ID: 0014
Revises: 0013

Adds ``tournaments.format`` (``round-robin``, ``balanced`` or ``gauntlet``: how its tables are
chosen, server/tournaments/lifecycle/schedule.py) and ``tournaments.games_per_entrant`` (the games
each entrant plays in a balanced or gauntlet tournament; NULL for a round robin). Every
tournament stored before it is a round robin and keeps its schedule. docs/tournaments.md:
formats.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision: str | None = "0013"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    # Plain ADD COLUMN, not a batch copy (see 0006): rows of other tables refer to these.
    op.add_column(
        "tournaments",
        sa.Column("format", sa.String(16), nullable=False, server_default="round-robin"),
    )
    op.add_column("tournaments", sa.Column("games_per_entrant", sa.Integer, nullable=True))


def downgrade() -> None:
    op.drop_column("tournaments", "games_per_entrant")
    op.drop_column("tournaments", "format")

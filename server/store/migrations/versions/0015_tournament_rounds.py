"""Swiss and knockout: a tournament's rounds, stored before their games.

Revision ID: 0015
Revises: 0014

Adds ``tournaments.rounds`` (a Swiss tournament's rounds), ``tournaments.knockout`` (a knockout
one's sets per tie, JSON) and ``tournaments.seeding`` (its entrants best first, JSON), and the
table ``tournament_rounds``: each round's tables, byes and game indexes, written before the
round's first game starts so a restart plays the same round (docs/tournaments.md: Swiss,
knockout). Tournaments stored before it have none of these and keep their schedules.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision: str | None = "0014"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    # Plain ADD COLUMN, not a batch copy (see 0006): rows of other tables refer to these.
    op.add_column("tournaments", sa.Column("rounds", sa.Integer, nullable=True))
    op.add_column("tournaments", sa.Column("knockout", sa.Text, nullable=True))
    op.add_column("tournaments", sa.Column("seeding", sa.JSON, nullable=True))
    op.create_table(
        "tournament_rounds",
        sa.Column(
            "tournament_id",
            sa.String(64),
            sa.ForeignKey("tournaments.id", name="fk_tournament_rounds_tournament"),
            primary_key=True,
        ),
        sa.Column("number", sa.Integer, primary_key=True),
        sa.Column("tables", sa.JSON, nullable=False),
        sa.Column("byes", sa.JSON, nullable=False),
        sa.Column("first_index", sa.Integer, nullable=False),
        sa.Column("games", sa.Integer, nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("tournament_rounds")
    op.drop_column("tournaments", "seeding")
    op.drop_column("tournaments", "knockout")
    op.drop_column("tournaments", "rounds")

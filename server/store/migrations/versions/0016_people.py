"""People at the table: a course's human clock, and bots that let people play them.

Revision ID: 0016
Revises: 0015

Adds ``courses.human_move_ms`` (a person's time per move in the course's practice matches; 0,
every course stored before it: the default, 60 s) and ``bots.allow_people`` (its owner lets
people of its course play against it; false for every bot stored before it). docs/people.md.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision: str | None = "0015"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    # Plain ADD COLUMN, not a batch copy (see 0006): rows of other tables refer to these.
    op.add_column(
        "courses",
        sa.Column("human_move_ms", sa.Integer, nullable=False, server_default="0"),
    )
    op.add_column(
        "bots",
        sa.Column("allow_people", sa.Boolean, nullable=False, server_default=sa.false()),
    )


def downgrade() -> None:
    op.drop_column("bots", "allow_people")
    op.drop_column("courses", "human_move_ms")

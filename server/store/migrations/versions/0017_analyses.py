"""Analyses of matches, the queue of matches to analyse, and a course's setting for it.

Revision ID: 0017
Revises: 0016

Adds the table ``analyses`` (one row per analysed seat of a match: its decisions and summary),
the table ``analysis_jobs`` (the matches waiting to be analysed, kept over a restart) and
``courses.analyse_tournaments`` (false for every course stored before it: nothing is analysed
unless its organizer asks). docs/analysis.md, docs/courses.md: analysis.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision: str | None = "0016"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    # Plain ADD COLUMN, not a batch copy (see 0006): rows of other tables refer to courses.
    op.add_column(
        "courses",
        sa.Column("analyse_tournaments", sa.Boolean, nullable=False, server_default=sa.false()),
    )
    op.create_table(
        "analyses",
        sa.Column(
            "match_id",
            sa.String(64),
            sa.ForeignKey("matches.id", name="fk_analyses_match"),
            primary_key=True,
        ),
        sa.Column("seat", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("bot", sa.String(64), nullable=False),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("played", sa.DateTime(timezone=True), nullable=False),
        sa.Column("analysed", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decisions", sa.Integer, nullable=False),
        sa.Column("mean_loss_points", sa.Double, nullable=False),
        sa.Column("accuracy", sa.Double, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
    )
    op.create_index("ix_analyses_bot_played", "analyses", ["bot", "played", "match_id"])
    op.create_table(
        "analysis_jobs",
        sa.Column(
            "match_id",
            sa.String(64),
            sa.ForeignKey("matches.id", name="fk_analysis_jobs_match"),
            primary_key=True,
        ),
        sa.Column("tournament_id", sa.String(64), nullable=True),
        sa.Column("seats", sa.JSON, nullable=True),
        sa.Column("precision", sa.Double, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("error", sa.Text, nullable=False, server_default=""),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_analysis_jobs_state_created", "analysis_jobs", ["state", "created"])
    op.create_index("ix_analysis_jobs_tournament", "analysis_jobs", ["tournament_id"])


def downgrade() -> None:
    op.drop_table("analysis_jobs")
    op.drop_table("analyses")
    op.drop_column("courses", "analyse_tournaments")

"""Courses: named spaces with their own bots, tournaments and organizer token; invites.

Revision ID: 0008
Revises: 0007

Adds ``courses`` (with the row of the course ``default``, which every existing bot, match and
tournament belongs to) and ``invites``; bots gain ``course`` and ``owner``; tournaments gain
their course, entrant policy, scheduled start, regrade links, the seating rule's input and
their frozen baselines; matches gain ``course`` and ``carried_from`` (a regrade's game carried
over from the original). Rating pools stay per game: a bot belongs to one course and meets
only its course's bots and the frozen baselines, whose ratings are never stored.
"""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision: str | None = "0007"
branch_labels: str | None = None
depends_on: str | None = None

DEFAULT_COURSE = "default"

_TOURNAMENT_COLUMNS = (
    ("course", sa.String(64), {"nullable": False, "server_default": DEFAULT_COURSE}),
    ("entrant_policy", sa.String(16), {"nullable": False, "server_default": "listed"}),
    ("start_at", sa.DateTime(timezone=True), {"nullable": True}),
    ("regrade_of", sa.String(64), {"nullable": True}),
    ("replaced", sa.JSON, {"nullable": True}),
    ("owners", sa.JSON, {"nullable": True}),
    ("allow_same_owner_tables", sa.Boolean, {"nullable": False, "server_default": sa.false()}),
    ("allow_same_owner_partners", sa.Boolean, {"nullable": False, "server_default": sa.false()}),
    ("baselines", sa.JSON, {"nullable": True}),
)


def upgrade() -> None:
    courses = op.create_table(
        "courses",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("organizer_token_hash", sa.String(255), nullable=False, server_default=""),
        sa.Column("organizer_token_issued", sa.DateTime(timezone=True), nullable=True),
        sa.Column("anonymous", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("allow_same_owner_tables", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column(
            "allow_same_owner_partners", sa.Boolean, nullable=False, server_default=sa.false()
        ),
        sa.Column("baselines", sa.JSON, nullable=False, server_default=sa.text("'[]'")),
    )
    op.bulk_insert(
        courses,
        [
            {
                "name": DEFAULT_COURSE,
                "title": "Default",
                "created": dt.datetime.now(dt.UTC),
                "organizer_token_hash": "",
                "anonymous": False,
                "allow_same_owner_tables": False,
                "allow_same_owner_partners": False,
                "baselines": [],
            }
        ],
    )
    op.create_table(
        "invites",
        sa.Column("id", sa.String(16), primary_key=True),
        sa.Column(
            "course",
            sa.String(64),
            sa.ForeignKey("courses.name", name="fk_invites_course"),
            nullable=False,
        ),
        sa.Column("code_hash", sa.String(255), nullable=False),
        sa.Column("uses", sa.Integer, nullable=False),
        sa.Column("used", sa.Integer, nullable=False, server_default=sa.text("0")),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked", sa.Boolean, nullable=False, server_default=sa.false()),
    )
    op.create_index("ix_invites_course_created", "invites", ["course", "created"])
    # Plain ADD COLUMN, not a batch copy (see 0006): rows of other tables refer to these.
    op.add_column(
        "bots",
        sa.Column("course", sa.String(64), nullable=False, server_default=DEFAULT_COURSE),
    )
    op.add_column("bots", sa.Column("owner", sa.String(64), nullable=False, server_default=""))
    op.create_index("ix_bots_course_owner", "bots", ["course", "owner"])
    for name, kind, options in _TOURNAMENT_COLUMNS:
        op.add_column("tournaments", sa.Column(name, kind, **options))
    op.create_index("ix_tournaments_course", "tournaments", ["course", "created"])
    op.add_column(
        "matches",
        sa.Column("course", sa.String(64), nullable=False, server_default=DEFAULT_COURSE),
    )
    op.add_column("matches", sa.Column("carried_from", sa.String(64), nullable=True))
    op.create_index("ix_matches_course_created", "matches", ["course", "created", "id"])


def downgrade() -> None:
    op.drop_index("ix_matches_course_created", "matches")
    op.drop_column("matches", "carried_from")
    op.drop_column("matches", "course")
    op.drop_index("ix_tournaments_course", "tournaments")
    for name, _, _ in reversed(_TOURNAMENT_COLUMNS):
        op.drop_column("tournaments", name)
    op.drop_index("ix_bots_course_owner", "bots")
    op.drop_column("bots", "owner")
    op.drop_column("bots", "course")
    op.drop_index("ix_invites_course_created", "invites")
    op.drop_table("invites")
    op.drop_table("courses")

"""Owners are accounts of a course: a table of them, made from the bots' free-text owners.

Revision ID: 0011
Revises: 0010

Adds ``owners`` (docs/courses.md: owners). Every distinct (course, owner) of the bots stored
before it becomes an owner without a token (``token_hash`` ""), created when its first bot
was, so the organizer sees it, can disable it and issues it a token (``owner issue-token``)
before its student registers another bot. ``bots.owner`` stays the owner's name.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision: str | None = "0010"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "owners",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "course",
            sa.String(64),
            sa.ForeignKey("courses.name", name="fk_owners_course"),
            nullable=False,
        ),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("token_hash", sa.String(255), nullable=False, server_default=""),
        sa.Column("token_issued", sa.DateTime(timezone=True), nullable=True),
        sa.Column("state", sa.String(16), nullable=False, server_default="enabled"),
        sa.Column("invite_id", sa.String(16), nullable=True),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("course", "name", name="uq_owners_course_name"),
    )
    op.create_index("ix_owners_invite", "owners", ["invite_id"])
    # Only owners of courses that exist (0008 gave every bot one, but a hand-edited row may not).
    op.execute(
        "INSERT INTO owners (course, name, token_hash, state, created) "
        "SELECT bots.course, bots.owner, '', 'enabled', MIN(bots.created) FROM bots "
        "JOIN courses ON courses.name = bots.course "
        "WHERE bots.owner <> '' GROUP BY bots.course, bots.owner"
    )


def downgrade() -> None:
    op.drop_index("ix_owners_invite", "owners")
    op.drop_table("owners")

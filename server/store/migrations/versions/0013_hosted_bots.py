"""Hosted bots: the versions a bot's owner submits, their logs per match, and the settings.

Revision ID: 0013
Revises: 0012

Adds ``bot_versions`` (every submitted version of a bot, its archive and its verdict) and
``match_logs`` (what a hosted bot wrote to stderr in a match, bounded), plus
``bots.runner_token_hash`` (the hosted runner's token for the bot, "" for none),
``tournaments.version_pins`` (JSON {bot: version number}: the organizer's pins and the
versions frozen at the start; NULL for none), and ``courses.hosting_limits`` and
``tournaments.hosting_limits`` (JSON of the sandbox limits set; NULL: the defaults, or the
course's). Every row stored before it keeps its meaning: no bot is hosted, no tournament has
pins. docs/hosting.md, docs/tournaments.md: versions.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision: str | None = "0012"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "bot_versions",
        sa.Column(
            "bot",
            sa.String(64),
            sa.ForeignKey("bots.name", name="fk_bot_versions_bot"),
            primary_key=True,
        ),
        sa.Column("number", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("entry", sa.String(1000), nullable=False),
        sa.Column("games", sa.String(255), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("unpacked_bytes", sa.BigInteger, nullable=False),
        sa.Column("files", sa.Integer, nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("submitter", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("report", sa.Text, nullable=False, server_default=""),
        sa.Column("crash_streak", sa.Integer, nullable=False, server_default=sa.text("0")),
        # Last: SQLite reads a row's columns in order, and every column after a large value
        # would walk its overflow pages (the versions are listed without their archives).
        sa.Column("archive", sa.LargeBinary, nullable=False),
    )
    op.create_index("ix_bot_versions_status", "bot_versions", ["status", "created"])
    op.create_table(
        "match_logs",
        sa.Column("match_id", sa.String(64), primary_key=True),
        sa.Column("bot", sa.String(64), primary_key=True),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("crashed", sa.Boolean, nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("text", sa.Text, nullable=False),  # last, as bot_versions.archive
    )
    # Plain ADD COLUMN, not a batch copy (see 0006): rows of other tables refer to these.
    op.add_column(
        "bots",
        sa.Column("runner_token_hash", sa.String(255), nullable=False, server_default=""),
    )
    op.add_column("tournaments", sa.Column("version_pins", sa.Text, nullable=True))
    op.add_column("tournaments", sa.Column("hosting_limits", sa.Text, nullable=True))
    op.add_column("courses", sa.Column("hosting_limits", sa.Text, nullable=True))


def downgrade() -> None:
    op.drop_column("courses", "hosting_limits")
    op.drop_column("tournaments", "hosting_limits")
    op.drop_column("tournaments", "version_pins")
    op.drop_column("bots", "runner_token_hash")
    op.drop_table("match_logs")
    op.drop_index("ix_bot_versions_status", "bot_versions")
    op.drop_table("bot_versions")

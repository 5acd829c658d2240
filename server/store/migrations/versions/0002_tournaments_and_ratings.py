"""Tournaments, the Elo ladder, and the tournament and rating fields of a match.

Revision ID: 0002
Revises: 0001

Rows of 0001 are kept: their new columns say "not part of a tournament, not rated".
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "tournaments",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("options", sa.JSON, nullable=False),
        sa.Column("entrants", sa.JSON, nullable=False),
        sa.Column("games_per_pairing", sa.Integer, nullable=False),
        sa.Column("duplicate_deals", sa.Boolean, nullable=False),
        sa.Column("move_ms", sa.Integer, nullable=False),
        sa.Column("bank_ms", sa.Integer, nullable=False),
        sa.Column("grace_ms", sa.Integer, nullable=False),
        sa.Column("fault_policy", sa.String(16), nullable=False),
        sa.Column("max_strikes", sa.Integer, nullable=False),
        sa.Column("concurrency", sa.Integer, nullable=False),
        sa.Column("wait_seconds", sa.Double, nullable=False),
        sa.Column("seed", sa.BigInteger, nullable=False),
        sa.Column("rated", sa.Boolean, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated", sa.DateTime(timezone=True), nullable=False),
    )
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("tournament_id", sa.String(64), nullable=True))
        batch.add_column(sa.Column("game_index", sa.Integer, nullable=True))
        batch.add_column(sa.Column("deal_id", sa.Integer, nullable=True))
        batch.add_column(sa.Column("rotation", sa.Integer, nullable=True))
        batch.add_column(
            sa.Column("side_of_seat", sa.JSON, nullable=False, server_default=sa.text("'[]'"))
        )
        batch.add_column(
            sa.Column("faults", sa.JSON, nullable=False, server_default=sa.text("'[]'"))
        )
        batch.add_column(sa.Column("rated", sa.Boolean, nullable=False, server_default=sa.false()))
        batch.create_foreign_key("fk_matches_tournament", "tournaments", ["tournament_id"], ["id"])
        batch.create_unique_constraint(
            "uq_matches_tournament_game", ["tournament_id", "game_index"]
        )
        batch.create_index("ix_matches_created", ["created"])
    op.create_table(
        "ratings",
        sa.Column("pool", sa.String(32), primary_key=True),
        sa.Column("bot", sa.String(64), primary_key=True),
        sa.Column("rating", sa.Double, nullable=False),
        sa.Column("games", sa.Integer, nullable=False),
        sa.Column("wins", sa.Integer, nullable=False),
        sa.Column("draws", sa.Integer, nullable=False),
        sa.Column("losses", sa.Integer, nullable=False),
        sa.Column("faults", sa.Integer, nullable=False),
        sa.Column("information", sa.Double, nullable=False),
    )
    op.create_table(
        "rated_games",
        sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("pool", sa.String(32), nullable=False),
        sa.Column(
            "match_id",
            sa.String(64),
            sa.ForeignKey("matches.id", name="fk_rated_games_match"),
            nullable=False,
            unique=True,
        ),
    )
    op.create_index("ix_rated_games_pool_seq", "rated_games", ["pool", "seq"])


def downgrade() -> None:
    op.drop_index("ix_rated_games_pool_seq", "rated_games")
    op.drop_table("rated_games")
    op.drop_table("ratings")
    with op.batch_alter_table("matches") as batch:
        batch.drop_index("ix_matches_created")
        batch.drop_constraint("uq_matches_tournament_game", type_="unique")
        batch.drop_constraint("fk_matches_tournament", type_="foreignkey")
        for column in ("rated", "faults", "side_of_seat", "rotation", "deal_id", "game_index"):
            batch.drop_column(column)
        batch.drop_column("tournament_id")
    op.drop_table("tournaments")

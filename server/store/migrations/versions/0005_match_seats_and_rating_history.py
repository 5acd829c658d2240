"""Indexes for big databases: who sat in each match, per-game and per-tournament lists, and
each bot's rating after each rated game.

Revision ID: 0005
Revises: 0004

``match_seats`` is filled from every stored match's ``seats`` here. ``rating_history`` starts
empty: the ratings come from the Elo ladder, which the storage does not import, so the ladder
rebuilds a pool's history from its rated games when it opens a database that lacks it
(``server/ladder/ratings_store.py``).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.drop_index("ix_matches_created", "matches")
    op.create_index("ix_matches_created", "matches", ["created", "id"])
    op.create_index("ix_matches_game_created", "matches", ["game", "created", "id"])
    op.create_index("ix_matches_tournament_created", "matches", ["tournament_id", "created", "id"])
    op.create_table(
        "match_seats",
        sa.Column(
            "match_id",
            sa.String(64),
            sa.ForeignKey("matches.id", name="fk_match_seats_match"),
            primary_key=True,
        ),
        sa.Column("seat", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("bot", sa.String(64), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "INSERT INTO match_seats (match_id, seat, bot, created) "
            "SELECT m.id, s.ordinality - 1, s.value, m.created "
            "FROM matches m, jsonb_array_elements_text(m.seats::jsonb) WITH ORDINALITY s"
        )
    else:
        op.execute(
            "INSERT INTO match_seats (match_id, seat, bot, created) "
            "SELECT m.id, s.key, s.value, m.created FROM matches m, json_each(m.seats) s"
        )
    op.create_index("ix_match_seats_bot", "match_seats", ["bot", "created", "match_id"])
    op.create_table(
        "rating_history",
        sa.Column(
            "seq",
            sa.Integer,
            sa.ForeignKey("rated_games.seq", name="fk_rating_history_seq"),
            primary_key=True,
            autoincrement=False,
        ),
        sa.Column("bot", sa.String(64), primary_key=True),
        sa.Column("pool", sa.String(32), nullable=False),
        sa.Column("rating", sa.Double, nullable=False),
    )
    op.create_index("ix_rating_history_pool_bot_seq", "rating_history", ["pool", "bot", "seq"])


def downgrade() -> None:
    op.drop_index("ix_rating_history_pool_bot_seq", "rating_history")
    op.drop_table("rating_history")
    op.drop_index("ix_match_seats_bot", "match_seats")
    op.drop_table("match_seats")
    op.drop_index("ix_matches_tournament_created", "matches")
    op.drop_index("ix_matches_game_created", "matches")
    op.drop_index("ix_matches_created", "matches")
    op.create_index("ix_matches_created", "matches", ["created"])

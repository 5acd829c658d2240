"""Numbers you can trust: the deal cap, provable deals, comparisons and the rating model.

Revision ID: 0006
Revises: 0005

Tournaments gain ``max_deals`` (the referee's cap on deals, after which a game is adjudicated),
``seed_commitment`` and ``seed_salt`` (the published SHA-256 commitment to the master seed and
the salt revealed with it), ``deal_scheme`` (how deal seeds follow from the master seed: 1 for
the tournaments stored before this revision), ``kind`` with ``plan`` and ``verdict`` (a paired
comparison of two bots is a tournament of its own kind). Matches gain ``rating_model``: the
rating model and version that the game fed (empty for older games).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision: str | None = "0005"
branch_labels: str | None = None
depends_on: str | None = None


_TOURNAMENT_COLUMNS = (
    ("max_deals", sa.Integer, {"nullable": True}),
    ("seed_commitment", sa.String(64), {"nullable": False, "server_default": ""}),
    ("seed_salt", sa.String(64), {"nullable": False, "server_default": ""}),
    ("deal_scheme", sa.Integer, {"nullable": False, "server_default": sa.text("1")}),
    ("kind", sa.String(16), {"nullable": False, "server_default": "round_robin"}),
    ("plan", sa.JSON, {"nullable": True}),
    ("verdict", sa.JSON, {"nullable": True}),
)


def upgrade() -> None:
    # Plain ADD COLUMN, not a batch copy: SQLite would rebuild the tables, and the rows of
    # ``matches`` and ``match_seats`` that refer to them stop the copy's DROP.
    for name, kind, options in _TOURNAMENT_COLUMNS:
        op.add_column("tournaments", sa.Column(name, kind, **options))
    op.add_column(
        "matches", sa.Column("rating_model", sa.String(32), nullable=False, server_default="")
    )


def downgrade() -> None:
    op.drop_column("matches", "rating_model")
    for name, _, _ in reversed(_TOURNAMENT_COLUMNS):
        op.drop_column("tournaments", name)

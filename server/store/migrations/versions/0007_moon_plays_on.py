"""Moon plays on by the rules: the retired ``deal_limit`` option leaves the stored rows.

Revision ID: 0007
Revises: 0006

The rules engine no longer has a deal limit (docs/rules.md 7.2): the cap on deals is the
referee's ``max_deals``. Stored Moon matches and tournaments lose the option from their
``options``; a tournament that had a limit keeps it as its ``max_deals`` (when it had none of
its own), so its remaining games stop after as many deals, adjudicated. Records keep their
text as played: one with a nonzero ``deal_limit`` in its header says so when read.
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision: str | None = "0006"
branch_labels: str | None = None
depends_on: str | None = None

RETIRED = "deal_limit"


def upgrade() -> None:
    connection = op.get_bind()
    for table in ("matches", "tournaments"):
        rows = connection.execute(
            sa.text(f"SELECT id, options FROM {table} WHERE game = 'moon'")
        ).all()
        for row_id, raw in rows:
            options: dict[str, Any] = _options(raw)
            if RETIRED not in options:
                continue
            limit = options.pop(RETIRED)
            values: dict[str, Any] = {"options": options}
            changes = "options = :options"
            if table == "tournaments" and isinstance(limit, int) and limit > 0:
                changes += ", max_deals = COALESCE(max_deals, :limit)"
                values["limit"] = limit
            connection.execute(
                sa.text(f"UPDATE {table} SET {changes} WHERE id = :id").bindparams(
                    sa.bindparam("options", type_=sa.JSON)
                ),
                {**values, "id": row_id},
            )


def downgrade() -> None:
    """Nothing to put back: the limits the rows had are not kept (``{}`` is Moon's default
    under revision 0006 too)."""


def _options(raw: Any) -> dict[str, Any]:
    """A row's options as a dict, whether the driver hands JSON back decoded or as text."""
    if isinstance(raw, dict):
        return dict(raw)
    loaded = json.loads(raw) if isinstance(raw, str | bytes) else raw
    return dict(loaded) if isinstance(loaded, dict) else {}

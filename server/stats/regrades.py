"""What a regrade is, read from stored rows (server/tournaments/lifecycle/regrade.py makes and
plays them): whether it played on fresh deals, and what it carried over, as the command line,
the admin API and the web page say it (docs/courses.md: deadlines and regrading)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # types only: the client's light install (no SQLAlchemy) imports this module
    from domino_arena.server.store.tournaments import StoredTournament


def fresh_deals(regrade: StoredTournament, original: StoredTournament | None) -> bool:
    """Whether ``regrade`` plays on deals of its own (its commitment is not its original's)."""
    return (
        regrade.regrade_of is not None
        and original is not None
        and regrade.seed_commitment != original.seed_commitment
    )


def index_ranges(indexes: Iterable[int]) -> str:
    """Game indexes as short ranges, for people: ``0-13, 20, 27-30`` ("none" for none)."""
    spans: list[list[int]] = []
    for index in sorted(set(indexes)):
        if spans and index == spans[-1][1] + 1:
            spans[-1][1] = index
        else:
            spans.append([index, index])
    return ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in spans) or "none"


def regrade_summary(
    t: StoredTournament, original: StoredTournament | None, carried: Sequence[int]
) -> dict[str, object] | None:
    """What a regrade's page says of it (None for a tournament that is no regrade): the
    original, the bots replaced, whether it played on fresh deals, and the game indexes carried
    over (``carried``, from its stored games)."""
    if t.regrade_of is None:
        return None
    return {
        "of": t.regrade_of,
        "replaced": [{"bot": old, "by": new} for old, new in t.replaced],
        "fresh_deals": fresh_deals(t, original),
        "carried": len(carried),
        "carried_games": index_ranges(carried),
    }

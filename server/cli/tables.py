"""Terminal tables of the command line and the main job (rich, imported on first use).

Kept apart from :mod:`.cli` so the main job prints its standings exactly as ``domino-arena
standings`` does, and so ``play`` and ``replay`` still start without loading rich.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

STANDINGS_COLUMNS = ("#", "bot", "Elo", "±95%", "games", "wins", "draws", "losses", "faults")


class Standing(Protocol):
    """A bot's line of the ladder: an Elo ``Rating`` or a ``StandingsRow`` message."""

    @property
    def rating(self) -> float: ...
    @property
    def uncertainty(self) -> float: ...
    @property
    def games(self) -> int: ...
    @property
    def wins(self) -> int: ...
    @property
    def draws(self) -> int: ...
    @property
    def losses(self) -> int: ...
    @property
    def faults(self) -> int: ...


def table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence[object]]) -> Any:
    """A table whose columns after the first two text ones are right-aligned numbers."""
    from rich import box  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415

    result = Table(title=title, box=box.SIMPLE, title_justify="left")
    for index, column in enumerate(columns):
        numeric = column[:1].isupper() is False and column not in {"bot", "name", "opponent"}
        result.add_column(column, justify="right" if numeric and index > 0 else "left")
    for row in rows:
        result.add_row(*(str(cell) for cell in row))
    return result


def standings_table(title: str, ranked: Iterable[tuple[str, Standing]]) -> Any:
    """The ladder, best first: rank, bot, Elo with its 95% uncertainty, record and faults."""
    return table(
        title,
        STANDINGS_COLUMNS,
        (
            (
                rank,
                name,
                f"{row.rating:.0f}",
                "-" if math.isinf(row.uncertainty) else f"{row.uncertainty:.0f}",
                row.games,
                row.wins,
                row.draws,
                row.losses,
                row.faults,
            )
            for rank, (name, row) in enumerate(ranked, 1)
        ),
    )

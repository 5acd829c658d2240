"""Terminal tables of the command line and the main job (rich, imported on first use).

Kept apart from :mod:`.cli` so the main job prints its standings exactly as ``domino-arena
standings`` does, and so ``play`` and ``replay`` still start without loading rich.

Terminal output is text: every cell and title is shown through ``logs.escape`` (the one helper
for a stored or untrusted string on a terminal or in a log line), so a control character in a
stored name or id (``\x1b[2J`` clears a screen, ``\r`` rewrites a row, U+202E reverses one)
prints as a visible escape (``\u001b[2J``), never as itself. The commands' plain lines that
show stored strings use the same helper.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Sequence
from typing import Any, Final, Protocol

from domino_arena.server.logs import escape

STANDINGS_COLUMNS = ("#", "bot", "live Elo", "±95%", "games", "wins", "draws", "losses", "faults")


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


def terminal() -> bool:
    """Whether stdout is a terminal: only then do tables get rich's lines and colours."""
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty())


TEXT_COLUMNS: Final = frozenset(
    {"bot", "name", "opponent", "note", "entrants", "out", "decided by"}
)
"""Lower-case column names that hold text, left-aligned (every other lower-case one is a number)."""


def table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence[object]]) -> Any:
    """A table whose columns after the first two text ones are right-aligned numbers.

    Cells are text, never rich markup (a bot named ``[b]x`` shows as it is), with control
    characters escaped (``logs.escape``); off a terminal the table is plain aligned text (no
    box, no edge padding).
    """
    from rich import box  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415
    from rich.text import Text  # noqa: PLC0415

    fancy = terminal()
    result = Table(
        title=None if title is None else Text(escape(title)),
        box=box.SIMPLE if fancy else None,
        pad_edge=fancy,
        title_justify="left",
        title_style="table.title" if fancy else "",
        header_style="table.header" if fancy else "",
    )
    for index, column in enumerate(columns):
        numeric = column[:1].isupper() is False and column not in TEXT_COLUMNS
        result.add_column(
            Text(escape(column)), justify="right" if numeric and index > 0 else "left"
        )
    for row in rows:
        result.add_row(*(Text(escape(str(cell))) for cell in row))
    return result


def standings_table(title: str, ranked: Iterable[tuple[str, Standing]]) -> Any:
    """The live ladder, best first: rank, bot, live Elo (named so: it is not the official fit)
    with its 95% uncertainty, record and faults."""
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

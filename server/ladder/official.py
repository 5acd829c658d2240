"""The rows of an official table: one function that every surface shows, so they agree.

docs/ratings.md (what the standings don't know). A batch fit (``fit.py``) gives every bot a
number; this module says how much of it to believe, once, for the command line, the admin
API's JSON and the web pages:

* **provisional**: a bot with fewer than :data:`MIN_GAMES` games. Its number is mostly the
  prior and the luck of a few deals, so it is listed below the table, unranked, never above an
  established bot.
* **one-sided**: a bot whose games bound its rating on one side only (``separation.py``): it
  never finished behind the rest of the pool (shown "≥ L", L its lower bound) or never ahead of
  it ("≤ H"). A bot the games bound on neither side is shown "?" and is unranked too: its
  number says nothing about where it stands.
* the others: the fit's rating with its bootstrap interval, ranked by rating (1 = best).

Frozen baselines are held at their ratings (constants of the fit), so they are always ranked
and two-sided, whatever their number of games.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from domino_arena.server.ladder.fit import FitGame, FitResult
from domino_arena.server.ladder.separation import Bound, Separation, separation

MIN_GAMES: Final = 10
"""A bot with fewer games than this is provisional: listed below the table, unranked.

Ten games between equals still leave an interval of about ±215 Elo, but below ten a single
deal's luck moves a rating by more than the gap between most bots of a class (one game:
±680). Chess federations draw the line at 5 (FIDE) to 25 (USCF) games."""


@dataclass(frozen=True, slots=True)
class OfficialRow:
    """One bot's line of an official table."""

    bot: str
    rating: float
    """The fit's point rating (for a one-sided bot, the prior's finite stand-in)."""
    low: float
    """The low end of its 95% interval, or its lower bound; -inf when unbounded below."""
    high: float
    """The high end of its 95% interval, or its upper bound; inf when unbounded above."""
    games: int
    rank: int | None
    """1 = best among the ranked bots; None for a provisional or unbounded bot."""
    provisional: bool
    bound: Bound
    interval: bool = True
    """False when no interval was computed (a point fit without a bootstrap): a two-sided
    row then has ``low`` and ``high`` at its rating."""
    fitted: bool = True
    """False for a bot of a part of the pool that never met the fitted part
    (:func:`.separation.main_part`): its ``rating`` is NaN."""

    @property
    def unbounded(self) -> bool:
        """Whether the games bound the rating on fewer than two sides."""
        return self.bound is not Bound.BOTH

    @property
    def text(self) -> str:
        """The rating as shown: ``1853``, ``≥ 2100``, ``≤ 900`` or ``?``."""
        return rating_text(self.rating, self.low, self.high, self.bound)

    @property
    def interval_text(self) -> str:
        """The interval as shown: ``1775 to 1932``, ``2100 and above``, ``900 and below``,
        ``unbounded``, or ``-`` when none was computed."""
        if self.bound is Bound.LOWER:
            return f"{self.low:.0f} and above"
        if self.bound is Bound.UPPER:
            return f"{self.high:.0f} and below"
        if self.bound is Bound.NONE or math.isinf(self.low) or math.isinf(self.high):
            return "unbounded"
        return f"{self.low:.0f} to {self.high:.0f}" if self.interval else "-"

    @property
    def note(self) -> str:
        """Why the row is marked, in a few words; empty for an established two-sided row."""
        parts = []
        if self.provisional:
            parts.append(
                f"provisional: {self.games} game{'' if self.games == 1 else 's'}, "
                f"fewer than {MIN_GAMES}"
            )
        if self.bound is Bound.LOWER:
            parts.append("one-sided: never behind")
        elif self.bound is Bound.UPPER:
            parts.append("one-sided: never ahead")
        elif not self.fitted:
            parts.append("unbounded: it never met the bots of this table, even through others")
        elif self.bound is Bound.NONE:
            parts.append("unbounded: its games do not place it against the pool")
        return "; ".join(parts)


def rating_text(rating: float, low: float, high: float, bound: Bound | None = None) -> str:
    """A rating as shown, from its interval when ``bound`` is not given (an infinite end is
    the unbounded side): ``1853``, ``≥ 2100``, ``≤ 900`` or ``?``."""
    if bound is None:
        bound = bound_of(low, high)
    if bound is Bound.LOWER:
        return f"≥ {low:.0f}"
    if bound is Bound.UPPER:
        return f"≤ {high:.0f}"
    if bound is Bound.NONE:
        return "?"
    return f"{rating:.0f}"


def bound_of(low: float, high: float) -> Bound:
    """Which sides an interval bounds (an infinite end is open)."""
    if math.isinf(low) and math.isinf(high):
        return Bound.NONE
    if math.isinf(high):
        return Bound.LOWER
    if math.isinf(low):
        return Bound.UPPER
    return Bound.BOTH


def official_rows(
    games: Sequence[FitGame],
    point: FitResult,
    intervals: Mapping[str, tuple[float, float]] | None,
    *,
    found: Separation | None = None,
    apart: Mapping[str, int] | None = None,
) -> list[OfficialRow]:
    """The table of ``point`` (the fit of ``games``): the ranked bots best first, then the
    provisional and unbounded ones, best first too (equal ratings by name), then the bots of
    ``apart`` by name (parts of the pool that never met the fitted one, with their games:
    :func:`.separation.main_part`).

    ``intervals``: the bootstrap's (``fit_bootstrap.Bootstrap.intervals``), or None for a
    point fit alone (its two-sided rows then have no interval). ``found``: the separation of
    these games when already computed (:func:`.separation.separation`).
    """
    found = found if found is not None else separation(games, point)
    rows: list[OfficialRow] = []
    for bot, rating in point.standings():
        bound = Bound.BOTH if bot in point.fixed else found.bounds[bot]
        if bound is Bound.LOWER:
            low, high = found.limits[bot], math.inf
        elif bound is Bound.UPPER:
            low, high = -math.inf, found.limits[bot]
        elif bound is Bound.NONE:
            low, high = -math.inf, math.inf
        elif intervals is None:
            low, high = rating, rating
        else:
            low, high = intervals[bot]
            if math.isinf(low) or math.isinf(high):  # rated in no bootstrap round
                bound = Bound.NONE
        games_played = point.games[bot]
        provisional = bot not in point.fixed and games_played < MIN_GAMES
        rows.append(
            OfficialRow(
                bot=bot,
                rating=rating,
                low=low,
                high=high,
                games=games_played,
                rank=None,
                provisional=provisional,
                bound=bound,
                interval=intervals is not None,
            )
        )
    ranked = [r for r in rows if not r.provisional and r.bound is not Bound.NONE]
    others = [r for r in rows if r.provisional or r.bound is Bound.NONE]
    never = [
        OfficialRow(
            bot=bot,
            rating=math.nan,
            low=-math.inf,
            high=math.inf,
            games=played,
            rank=None,
            provisional=played < MIN_GAMES,
            bound=Bound.NONE,
            interval=intervals is not None,
            fitted=False,
        )
        for bot, played in sorted((apart or {}).items())
    ]
    return [
        *(dataclasses.replace(row, rank=rank) for rank, row in enumerate(ranked, start=1)),
        *others,
        *never,
    ]


def performance_data(row: OfficialRow | None) -> dict[str, object] | None:
    """A tournament entrant's performance as the web face shows it: its row of the
    tournament's own fit (``batch.point_table``) as ``rating``, ``text`` ("1620", "≥ 1400"),
    ``rank`` (null: unranked), ``provisional``, ``unbounded`` and ``note``; None without one."""
    if row is None:
        return None
    return {
        "rating": row.rating if row.fitted else None,
        "text": row.text,
        "rank": row.rank,
        "provisional": row.provisional,
        "unbounded": row.unbounded,
        "note": row.note,
    }

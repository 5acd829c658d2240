"""A tournament's results: each entrant's score and performance, computed from its stored games.

Pure (no I/O): the admin API (``server/net/admin_answers.py``) turns these rows into messages
and the web face (``server/web``) into pages, so both show the same numbers. The performance is
the entrant's row of the tournament's own official fit (``batch.point_table``; docs/ratings.md),
never a live Elo: one-sided and provisional as the official table says.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from domino_arena.sdk.match.results import Termination
from domino_arena.server.ladder import elo
from domino_arena.server.ladder.ratings_store import rated_game_of
from domino_arena.server.store.matches import StoredMatch

if TYPE_CHECKING:  # the fit's module loads NumPy and SciPy, which a serving referee never needs
    from domino_arena.server.ladder.official import OfficialRow


@dataclass(frozen=True, slots=True)
class EntrantResult:
    """One entrant's line of a tournament's results table."""

    bot: str
    games: int
    wins: int
    draws: int
    losses: int
    faults: int
    points: float
    """A win is 1, a draw 1/2."""
    performance: OfficialRow | None
    """Its row of the tournament's own official fit; None when it has none (no counted game,
    or games that cannot be fitted)."""


def counted_games(
    matches: Sequence[StoredMatch], baselines: Sequence[tuple[str, float]] = ()
) -> list[elo.RatedGame]:
    """The games of ``matches`` that count (normal ends and forfeits, rated or not), in the
    order they were stored (by time, then schedule position); ``baselines`` are the
    tournament's frozen baselines (house bot name, fixed rating), which their opponents'
    performance is measured against."""
    counted = [m for m in matches if Termination(m.termination).rated]
    counted.sort(key=lambda m: (m.created, m.game_index if m.game_index is not None else -1))
    return [rated_game_of(m, baselines) for m in counted]


def entrant_results(
    entrants: Sequence[str],
    games: Sequence[elo.RatedGame],
    performance: Mapping[str, OfficialRow] | None = None,
) -> list[EntrantResult]:
    """Return the results per entrant of the counted ``games``: most points first, then the
    best performance (its row of ``performance``, the tournament's own fit: ranked rows by
    rating, then the others), then by name."""
    ratings = elo.replay(games)
    fitted = performance or {}
    rows = []
    for bot in entrants:
        rating = _frozen(bot, games) if elo.is_house(bot) else ratings.get(bot, elo.Rating())
        rows.append(
            EntrantResult(
                bot=bot,
                games=rating.games,
                wins=rating.wins,
                draws=rating.draws,
                losses=rating.losses,
                faults=rating.faults,
                points=rating.wins + rating.draws / 2,
                performance=fitted.get(bot),
            )
        )
    rows.sort(key=lambda r: (-r.points, *_performance_key(r.performance), r.bot))
    return rows


def _performance_key(row: OfficialRow | None) -> tuple[int, float]:
    """Ranked rows first, by rating; then unranked ones by rating; then those never fitted
    (a part of the tournament that never met the rest), then none."""
    if row is None:
        return (3, 0.0)
    if not row.fitted:
        return (2, 0.0)
    return (0 if row.rank is not None else 1, -row.rating)


def _frozen(bot: str, games: Sequence[elo.RatedGame]) -> elo.Rating:
    """A house bot's line: the Elo never rates it (a frozen baseline), so its record is
    counted here."""
    record = {"win": 0, "draw": 0, "loss": 0}
    faults, rating = 0, elo.INITIAL_RATING
    for game in games:
        if bot in game.bots:
            seat = game.bots.index(bot)
            record[game.outcome(seat)] += 1
            faults += game.faults[seat]
            rating = dict(game.fixed).get(bot, rating)
    return elo.Rating(
        rating=rating,
        games=sum(record.values()),
        wins=record["win"],
        draws=record["draw"],
        losses=record["loss"],
        faults=faults,
    )

"""The standings page's data: a game's official standings (the ladder's batch fit, with its
intervals and seat advantage) above its Elo table, for all its player counts or for one.

The ladder keeps one rating pool per game (``ratings``), which mixes, say, Straight for two and
for four. A table for one player count is the same Elo (:func:`elo.rate_game`, game after
game) over the pool's rated games with that many seats, in the order they were rated.
Replaying a whole pool takes seconds at 100,000 matches, longer than a page may, so the tables
of every player count are kept with the last rated game they include, and each request rates
only the games rated since (rated games are only ever added, in ``seq`` order).

The official standings are :func:`batch.batch_standings` of the pool's newest rated games, as
the admin API's ``GetStandings`` reads them, with :data:`FIT_ROUNDS` bootstrap rounds. Each
round is a refit, so the answer is kept beside the Elo tables with the pool's latest rated
``seq``: the next rated game makes the next request fit again, and until then every request
(any sort or page) shows the kept one.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from domino_arena.sdk.rules import GAMES, configurations
from domino_arena.server.ladder import elo
from domino_arena.server.ladder.batch import (
    BOOTSTRAP_SEED,
    MAX_BATCH_MATCHES,
    BatchStandings,
    batch_standings,
    counted,
)
from domino_arena.server.ladder.official import OfficialRow
from domino_arena.server.store.tables import DEFAULT_COURSE
from domino_arena.server.web.params import Paging, bad_request, not_found
from domino_arena.server.web.scoped import baseline_seat
from domino_arena.server.web.views import WebStorage, interval

SORTS: Final[dict[str, tuple[str, bool]]] = {
    "rating": ("rating", True),
    "bot": ("bot", False),
    "games": ("games", True),
    "wins": ("wins", True),
    "draws": ("draws", True),
    "losses": ("losses", True),
    "faults": ("faults", True),
    "interval": ("uncertainty_sort", False),
}
"""The standings' sort keys: the row field each sorts by and whether it runs high to low."""
FIT_ROUNDS: Final = 100
"""Bootstrap rounds of the page's fit (each is a refit; ``domino-arena standings`` runs 200)."""
STRONG: Final = 0.95
"""A likelihood of superiority at least this (or at most 1 - it) is shaded strong."""
LIKELY: Final = 0.8
"""A likelihood of superiority at least this (or at most 1 - it) is shaded light."""
LOS_MATRIX_MOST: Final = 16
"""The most fitted bots whose LOS matrix the page draws (one more would be a wall of digits:
the admin API's ``GetStandings`` with ``los`` gives any pool's)."""


@dataclass(frozen=True, slots=True)
class _Official:
    """A pool's official standings as the page shows them (or why there are none), fitted
    over its games rated up to ``seq``."""

    seq: int
    official: dict[str, Any] | None
    note: str | None


@dataclass
class _Tables:
    """A pool's ratings per player count, replayed up to its rated game ``seq``, and its
    official standings per player count (None: all) and course, each with the ``seq`` it was
    fitted at."""

    seq: int = 0
    by_players: dict[int, dict[str, elo.Rating]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    fits: dict[tuple[int | None, str], _Official] = field(default_factory=dict)
    fit_lock: threading.Lock = field(default_factory=threading.Lock)


_KEPT: Final[weakref.WeakKeyDictionary[Any, dict[str, _Tables]]] = weakref.WeakKeyDictionary()
_KEPT_LOCK: Final = threading.Lock()


def player_counts(game: str) -> list[int]:
    """The player counts ``game`` can be played with (Moon: 3 only)."""
    return sorted({g.num_players for g in configurations([game])})


def _tables(storage: WebStorage, game: str) -> tuple[_Tables, int]:
    """``game``'s kept tables, brought up to date by rating the games rated since they were
    (one at a time per pool: the first request after a start replays the whole pool, the
    others wait for it), and the latest rated ``seq`` they include."""
    with _KEPT_LOCK:
        tables = _KEPT.setdefault(storage, {}).setdefault(game, _Tables())
    with tables.lock:
        for seq, rated in storage.rated_games_after(game, tables.seq):
            ratings = tables.by_players.setdefault(len(rated.bots), {})
            ratings.update(elo.rate_game(ratings, rated))
            tables.seq = seq
        return tables, tables.seq


def by_players(storage: WebStorage, game: str, players: int) -> dict[str, elo.Rating]:
    """The ratings of ``game``'s pool from its ``players``-seat games alone (brought up to
    date as :func:`_tables` says)."""
    tables, _ = _tables(storage, game)
    with tables.lock:
        return dict(tables.by_players.get(players, {}))


def official(
    storage: WebStorage,
    game: str,
    players: int | None,
    course: str = DEFAULT_COURSE,
    baselines: tuple[tuple[str, float], ...] = (),
) -> tuple[dict[str, Any] | None, str | None]:
    """``game``'s official standings over ``course``'s games (of its ``players``-seat games
    only, when given) and None, or None and why the pool cannot be fitted
    (:func:`batch.batch_standings`' words). A course's frozen ``baselines`` (house bot, fixed
    rating) anchor the scale: each that played is held at its rating (see :func:`_fit`).

    Kept with the pool's latest rated ``seq``: a request at the same seq gets the kept
    answer; the first after a newer rated game fits again (a bootstrap of :data:`FIT_ROUNDS`
    refits, seconds on a big pool). While one request fits, the others get the answer kept
    before (some games behind, its ``games`` says how many it fitted) when there is one, and
    wait for the fit when there is none, so no two requests fit the same pool at once."""
    tables, seq = _tables(storage, game)
    key = (players, course)
    with tables.lock:
        kept = tables.fits.get(key)
    if kept is None:
        tables.fit_lock.acquire()
    elif kept.seq >= seq or not tables.fit_lock.acquire(blocking=False):
        return kept.official, kept.note
    try:
        with tables.lock:
            kept = tables.fits.get(key)
        if kept is None or kept.seq < seq:
            kept = _fit(storage, game, players, seq, course=course, baselines=baselines)
            with tables.lock:
                tables.fits[key] = kept
        return kept.official, kept.note
    finally:
        tables.fit_lock.release()


def _fit(
    storage: WebStorage,
    game: str,
    players: int | None,
    seq: int,
    *,
    course: str,
    baselines: tuple[tuple[str, float], ...],
) -> _Official:
    """Fit the pool's newest rated games of ``course`` (those with ``players`` seats, when
    given; the pool of them with most games) as the admin API does, the course's frozen
    ``baselines`` held at their fixed ratings (:func:`batch.batch_standings`' ``fixed``; those
    that played none of the pool's games are left out)."""
    found = storage.matches(MAX_BATCH_MATCHES, course=course, game=game, records=False)
    chosen = counted(found, ladder=True)
    if players is not None:
        chosen = [m for m in chosen if len(m.seats) == players]
    fixed = {baseline_seat(bot): rating for bot, rating in baselines}
    try:
        fitted = batch_standings(
            chosen,
            game=game,
            rounds=FIT_ROUNDS,
            seed=BOOTSTRAP_SEED,
            fixed=fixed or None,
            apart=True,
        )
    except ValueError as exc:  # no games yet
        return _Official(seq, None, str(exc))
    return _Official(seq, official_data(fitted), None)


def shade(los: float) -> str:
    """The class that shades a cell of likelihood of superiority ``los``, as ACPC shades its
    crosstables: at least :data:`STRONG` (0.95) strong green, at least :data:`LIKELY` (0.8)
    light green, at most 0.2 light red, at most 0.05 strong red, else none (style.css;
    docs/web.md: look and accessibility). The value is always written in the cell too."""
    if los >= STRONG:
        return "sig-strong-win"
    if los >= LIKELY:
        return "sig-win"
    if los <= round(1.0 - STRONG, 9):
        return "sig-strong-loss"
    if los <= round(1.0 - LIKELY, 9):
        return "sig-loss"
    return ""


def record_los(wins: int, draws: int, losses: int) -> float:
    """The likelihood that a bot with this head-to-head record is the stronger of the two: the
    normal approximation over the decisive games, ``Φ((w - l) / √(w + l))`` (a draw says
    nothing about which is stronger; no decisive game: 0.5)."""
    del draws
    decisive = wins + losses
    if decisive == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * decisive)))


def significance(cell: Mapping[str, int] | None) -> dict[str, Any] | None:
    """A crosstable cell's (``wins``, ``draws``, ``losses``; None: never met) likelihood of
    superiority, its ``shade`` and its ``text`` ("LOS 97%"), for the template."""
    if cell is None:
        return None
    los = record_los(cell["wins"], cell["draws"], cell["losses"])
    return {"los": los, "shade": shade(los), "text": f"LOS {los:.0%}"}


def los_matrix(fitted: BatchStandings) -> list[dict[str, Any]]:
    """The fit's bootstrap LOS of each fitted bot against each other (``spread.los``), in the
    table's order, each cell with its shade; None on the diagonal. Empty above
    :data:`LOS_MATRIX_MOST` bots."""
    order = [row.bot for row in fitted.table if row.fitted]
    if len(order) > LOS_MATRIX_MOST or len(order) < 2:
        return []
    los = fitted.spread.los
    return [
        {
            "bot": bot,
            "against": [
                None if other == bot else {"los": los[bot][other], "shade": shade(los[bot][other])}
                for other in order
            ],
        }
        for bot in order
    ]


def row_data(row: OfficialRow) -> dict[str, Any]:
    """A row of an official table as the pages and ``/api`` show it (``official.py``): the
    rating as a number (null for a bot that never met the fitted part) and as shown
    (``text``: "1853", "≥ 2100", "≤ 900", "?"), ``low`` and ``high`` (null on an unbounded
    side), ``interval`` (both ends, or null when either is open), ``rank`` (null: unranked),
    ``provisional``, ``unbounded`` and ``note``."""
    low = None if math.isinf(row.low) else row.low
    high = None if math.isinf(row.high) else row.high
    return {
        "rank": row.rank,
        "bot": row.bot,
        "rating": row.rating if row.fitted else None,
        "text": row.text,
        "low": low,
        "high": high,
        "interval": None if low is None or high is None or not row.interval else [low, high],
        "interval_text": row.interval_text,
        "games": row.games,
        "provisional": row.provisional,
        "unbounded": row.unbounded,
        "note": row.note,
    }


def official_data(fitted: BatchStandings) -> dict[str, Any]:
    """The page's ``official`` of a batch fit: its table, seat advantage and pairs, its LOS
    matrix (:func:`los_matrix`), and the frozen baselines held at their ratings (``fixed``;
    empty: the pool's mean is 1500)."""
    point, spread = fitted.point, fitted.spread
    return {
        "pool": fitted.label,
        "model": point.model,
        "games": fitted.games,
        "sets": point.units,
        "rounds": spread.rounds,
        "rows": [row_data(row) for row in fitted.table],
        "seats": [
            {
                "seat": row.position,
                "label": row.label,
                "elo": row.elo,
                "interval": [row.low, row.high],
                "uncertainty": (row.high - row.low) / 2,
            }
            for row in fitted.seat_rows()
        ],
        "seats_are_sides": fitted.key.partnerships,
        "pairs": [
            {
                "first": row.partners[0],
                "second": row.partners[1],
                "games": row.games,
                "score": row.score / row.games,
                "expected": row.expected / row.games,
            }
            for row in fitted.pairs
        ],
        "los": los_matrix(fitted),
        "other_pools": [key.label(fitted.game) for key in fitted.other_pools],
        "fixed": [
            {"bot": bot, "rating": rating} for bot, rating in sorted(fitted.point.fixed.items())
        ],
    }


def _rows(ratings: Mapping[str, elo.Rating], sort: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = [
        {
            "rank": rank,
            "bot": bot,
            "rating": rating.rating,
            "interval": interval(rating),
            "uncertainty": None if math.isinf(rating.uncertainty) else rating.uncertainty,
            "games": rating.games,
            "wins": rating.wins,
            "draws": rating.draws,
            "losses": rating.losses,
            "faults": rating.faults,
        }
        for rank, (bot, rating) in enumerate(elo.standings(ratings), start=1)
    ]
    field, high_first = SORTS[sort]
    if field == "uncertainty_sort":
        rows.sort(key=lambda r: (r["uncertainty"] is None, r["uncertainty"] or 0.0, r["rank"]))
    elif high_first:
        rows.sort(key=lambda r: (-r[field], r["rank"]))
    else:
        rows.sort(key=lambda r: (r[field], r["rank"]))
    return rows


def standings(
    storage: WebStorage,
    game: str,
    sort: str,
    paging: Paging,
    players: int | None = None,
) -> dict[str, Any]:
    """One game's official standings (:func:`official`) and its Elo standings (of its
    ``players``-seat games only, when given): ranked by rating, sorted by ``sort``, one page
    of them."""
    if game not in GAMES:
        raise not_found(f"no game is called {game!r}; the games are {', '.join(GAMES)}")
    counts = player_counts(game)
    if players is not None and players not in counts:
        raise bad_request(
            f"players: {game} is played by {', '.join(map(str, counts))} players, got {players}"
        )
    if players is None or len(counts) == 1:
        ratings = storage.ratings(game)
        fitted, note = official(storage, game, None)
    else:
        ratings = by_players(storage, game, players)
        fitted, note = official(storage, game, players)
    # The global pages show the default course: the ladder's pool also holds other courses' bots.
    elsewhere = {b.name for b in storage.bots(include_deleted=True) if b.course != DEFAULT_COURSE}
    rows = _rows({bot: r for bot, r in ratings.items() if bot not in elsewhere}, sort)
    start = paging.offset
    return {
        "game": game,
        "title": GAMES[game].title,
        "players": players,
        "player_counts": counts,
        "official": fitted,
        "official_note": note,
        "sort": sort,
        "page": paging.page,
        "per_page": paging.per_page,
        "total": len(rows),
        "has_next": start + paging.per_page < len(rows),
        "rows": rows[start : start + paging.per_page],
    }

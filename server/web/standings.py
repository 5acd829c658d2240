"""The standings page's data: a game's Elo table, for all its player counts or for one.

The ladder keeps one rating pool per game (``ratings``), which mixes, say, Straight for two and
for four. A table for one player count is the same Elo (:func:`elo.rate_game`, game after
game) over the pool's rated games with that many seats, in the order they were rated.
Replaying a whole pool takes seconds at 100,000 matches, longer than a page may, so the tables
of every player count are kept with the last rated game they include, and each request rates
only the games rated since (rated games are only ever added, in ``seq`` order).
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
from domino_arena.server.web.params import Paging, bad_request, not_found
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


@dataclass
class _Tables:
    """A pool's ratings per player count, replayed up to its rated game ``seq``."""

    seq: int = 0
    by_players: dict[int, dict[str, elo.Rating]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


_KEPT: Final[weakref.WeakKeyDictionary[Any, dict[str, _Tables]]] = weakref.WeakKeyDictionary()
_KEPT_LOCK: Final = threading.Lock()


def player_counts(game: str) -> list[int]:
    """The player counts ``game`` can be played with (Moon: 3 only)."""
    return sorted({g.num_players for g in configurations([game])})


def by_players(storage: WebStorage, game: str, players: int) -> dict[str, elo.Rating]:
    """The ratings of ``game``'s pool from its ``players``-seat games alone, brought up to
    date by rating the games rated since the kept tables were (one at a time per pool: the
    first request after a start replays the whole pool, the others wait for it)."""
    with _KEPT_LOCK:
        tables = _KEPT.setdefault(storage, {}).setdefault(game, _Tables())
    with tables.lock:
        for seq, rated in storage.rated_games_after(game, tables.seq):
            ratings = tables.by_players.setdefault(len(rated.bots), {})
            ratings.update(elo.rate_game(ratings, rated))
            tables.seq = seq
        return dict(tables.by_players.get(players, {}))


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
    """One game's Elo standings (of its ``players``-seat games only, when given): ranked by
    rating, sorted by ``sort``, one page of them."""
    if game not in GAMES:
        raise not_found(f"no game is called {game!r}; the games are {', '.join(GAMES)}")
    counts = player_counts(game)
    if players is not None and players not in counts:
        raise bad_request(
            f"players: {game} is played by {', '.join(map(str, counts))} players, got {players}"
        )
    if players is None or len(counts) == 1:
        ratings = storage.ratings(game)
    else:
        ratings = by_players(storage, game, players)
    rows = _rows(ratings, sort)
    start = paging.offset
    return {
        "game": game,
        "title": GAMES[game].title,
        "players": players,
        "player_counts": counts,
        "sort": sort,
        "page": paging.page,
        "per_page": paging.per_page,
        "total": len(rows),
        "has_next": start + paging.per_page < len(rows),
        "rows": rows[start : start + paging.per_page],
    }

"""The standings page's data: a game's Elo table, for all its player counts or for one.

The ladder keeps one rating pool per game (``ratings``), which mixes, say, Straight for two and
for four. A table for one player count is the same Elo (:func:`elo.replay`) over the pool's
rated games with that many seats, in the order they were rated. Replaying a pool takes longer
than a page may, so the tables of every player count are computed together and kept until
the pool's next rated game (its stamp: the games summed over its ratings, which grows with
each one).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

from domino_arena.sdk.rules import GAMES, configurations
from domino_arena.server.ladder import elo
from domino_arena.server.web.kept import Kept
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
POOLS_KEPT: Final = 8
"""Pools whose per-player-count tables each storage keeps in memory."""

_BY_PLAYERS: Final = Kept[dict[int, dict[str, elo.Rating]]](POOLS_KEPT)


def player_counts(game: str) -> list[int]:
    """The player counts ``game`` can be played with (Moon: 3 only)."""
    return sorted({g.num_players for g in configurations([game])})


def _by_players(storage: WebStorage, game: str) -> dict[int, dict[str, elo.Rating]]:
    """The pool's ratings replayed per player count (kept until its next rated game)."""
    stamp = sum(r.games for r in storage.ratings(game).values())

    def compute() -> dict[int, dict[str, elo.Rating]]:
        games: dict[int, list[elo.RatedGame]] = {}
        for rated in storage.rated_games(game):
            games.setdefault(len(rated.bots), []).append(rated)
        return {players: elo.replay(played) for players, played in games.items()}

    return _BY_PLAYERS.get(storage, game, stamp, compute)


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
    storage: WebStorage, game: str, sort: str, paging: Paging, players: int | None = None
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
        ratings = _by_players(storage, game).get(players, {})
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

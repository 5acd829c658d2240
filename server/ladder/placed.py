"""A stored game as a Swiss or knockout round counts it (server/tournaments/rounds.py).

The places are the ladder's (:func:`.ratings_store.rated_game_of`: winner first, a forfeiting
side last, the rest by score), so a round's match points never disagree with the ratings the
same games give.
"""

from __future__ import annotations

from domino_arena.server.ladder.ratings_store import rated_game_of
from domino_arena.server.store.matches import SeatedResult
from domino_arena.server.tournaments.rounds import PlacedGame


def placed_game_of(match: SeatedResult) -> PlacedGame | None:
    """``match`` with each side's place and score; None for a game that ended without a
    result (aborted: it counts for no one, as it moves no rating)."""
    try:
        rated = rated_game_of(match)
    except ValueError:
        return None
    return PlacedGame(rated.bots, rated.side_of_seat, rated.standing, tuple(match.scores))

"""A tournament's life, from its request to its last game (docs/tournaments.md).

The formats below this package (``server/tournaments``) only decide who sits where; this package
turns a request into a stored tournament (``request.py``), derives its schedule and its games'
matches from the row (``schedule.py``; round by round for Swiss and knockout: ``adaptive.py``),
chooses its entrants when it starts (``start.py``), plays its games (``runner.py``), and holds
the kinds that play another tournament again (a regrade: ``regrade.py``) or two bots against
each other (a paired comparison: ``compare.py``). The director (``director.py``) owns every
tournament's life on a referee: create, start at once or at its ``start_at``, resume after a
restart, pause, cancel. The arena below it only runs matches (``Arena.play``).

Callers import the names they share from here; the runner's (``Progress``,
``TournamentRunner``) from ``runner.py``, which plays games under trio: the web face's process
imports this package for a tournament's schedule and has no use for trio (issue 34: 4 MiB).
"""

from domino_arena.server.tournaments.lifecycle.adaptive import games_of
from domino_arena.server.tournaments.lifecycle.request import new_tournament
from domino_arena.server.tournaments.lifecycle.schedule import (
    MAX_GAMES,
    TournamentError,
    check_schedule,
    deal_seed,
    game_of,
    match_id_of,
    match_spec,
    max_deals_of,
    schedule_of,
)

__all__ = [
    "MAX_GAMES",
    "TournamentError",
    "check_schedule",
    "deal_seed",
    "game_of",
    "games_of",
    "match_id_of",
    "match_spec",
    "max_deals_of",
    "new_tournament",
    "schedule_of",
]

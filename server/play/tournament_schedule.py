"""A tournament's schedule and its games' matches, from its row alone (the runner and its
callers share them; ``server/play/tournament.py`` re-exports every name).

The same row always gives the same schedule (:func:`schedule_of`), the same match id
(:func:`match_id_of`) and seed (:func:`deal_seed`) for every game: that is what makes a
tournament resumable and a regrade reproducible.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import Game, make_game
from domino_arena.server.play import compare, provable
from domino_arena.server.play.match_spec import DEFAULT_MAX_DEALS, MatchSpec
from domino_arena.server.play.scheduler import DealMode, ScheduledGame, round_robin
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store.tournaments import StoredTournament

MAX_GAMES: Final = 100_000
"""The largest schedule a tournament may have (a request beyond it is surely a mistake)."""


class TournamentError(ValueError):
    """An impossible tournament request; the message says which field and why."""


def check_schedule(t: StoredTournament) -> None:
    """Raise :class:`TournamentError` unless ``t`` has a schedule (the seating rule may leave
    none) of at most :data:`MAX_GAMES` games."""
    try:
        games = len(_round_robin(t))
    except ValueError as exc:  # SeatingError, or too few entrants
        raise TournamentError(str(exc)) from None
    if games > MAX_GAMES:
        raise TournamentError(
            f"entrants: {len(t.entrants)} entrants make {games} games, more than the "
            f"{MAX_GAMES} a tournament may have"
        )


def max_deals_of(t: StoredTournament) -> int:
    """The cap on deals of ``t``'s games (rows from before the cap was stored: the default)."""
    return DEFAULT_MAX_DEALS if t.max_deals is None else t.max_deals


def game_of(t: StoredTournament) -> Game:
    """Return the game a stored tournament plays."""
    return make_game(t.game, **t.options)


def schedule_of(t: StoredTournament) -> list[ScheduledGame]:
    """Return the tournament's schedule; the same row always gives the same schedule.

    A tournament whose entrants are chosen at its start (``entrant_policy`` not ``listed``)
    has no schedule while its entrants make none: [] (not started yet, or cancelled at its
    start for want of entrants; once chosen, they always make one).
    """
    game = game_of(t)
    if t.kind == "compare":
        return compare.compare_schedule(compare.plan_of(t), game.num_players)
    if t.entrant_policy != "listed":
        try:
            return _round_robin(t)
        except ValueError:
            return []
    return _round_robin(t)


def _round_robin(t: StoredTournament) -> list[ScheduledGame]:
    game = game_of(t)
    return round_robin(
        t.entrants,
        game.num_players,
        games_per_pairing=t.games_per_pairing,
        partnerships=partnerships_of(game),
        deals=DealMode(t.deals),
        owners=t.owners,
        allow_same_owner_tables=t.allow_same_owner_tables,
        allow_same_owner_partners=t.allow_same_owner_partners,
    )


def deal_seed(t: StoredTournament, deal_id: int) -> int:
    """Return the seed of deal ``deal_id`` of ``t`` by its deal scheme (play/provable.py)."""
    return provable.deal_seed(t.deal_scheme, t.seed, deal_id)


def match_id_of(t: StoredTournament, index: int) -> str:
    """Return the match id of game ``index``: the same on every replay of it."""
    return f"{t.id}-{index:05d}"


def match_spec(
    t: StoredTournament,
    g: ScheduledGame,
    *,
    absent: Sequence[str] = (),
    game: Game | None = None,
) -> MatchSpec:
    """Return the match of game ``g`` of ``t``: every rotation of a deal gets the same seed.

    ``absent`` names the bots waited for in vain: they get no reconnect grace until they
    connect. ``game`` saves rebuilding the tournament's game for every spec.
    """
    return MatchSpec(
        game=game if game is not None else game_of(t),
        bots=g.seats,
        seed=deal_seed(t, g.deal_id),
        time_control=TimeControl.from_ms(*t.time_control_ms),
        fault_policy=FaultPolicy(t.fault_policy),
        max_strikes=t.max_strikes,
        max_deals=max_deals_of(t),
        match_id=match_id_of(t, g.index),
        rated=t.rated,
        absent=tuple(absent),
        tournament_id=t.id,
        game_index=g.index,
        deal_id=g.deal_id,
        rotation=g.rotation,
        course=t.course,
    )


def partnerships_of(game: Game) -> bool:
    return len(game.sides) != game.num_players


def schedule_size(entrants: int, seats: int, partnerships: bool, repeats: int) -> int:
    tables = math.comb(entrants, seats) * (3 if partnerships else 1)
    return tables * seats * repeats

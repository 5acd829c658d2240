"""A graded tournament's expected precision in the admin API (docs/courses.md: precision):
``Tournament.precision`` for a tournament with baselines, and ``CreateTournament.precision``,
which sizes a tournament (its games per pairing) to reach a half-width asked for.

The numbers are ``server/stats/precision.py``'s; this module counts the entrants they are for.
Before a tournament whose entrants are chosen at its start has started, they are a guess:
those listed and the baselines, plus each owner of the course (``latest``: one bot each) or each
enabled bot of the course (``connected``: at most all of them).
"""

from __future__ import annotations

from collections.abc import Sequence

from domino_arena.sdk.rules import Game
from domino_arena.server.net.admin_grades import OwnerStorage, course_owners
from domino_arena.server.net.admin_requests import invalid
from domino_arena.server.play.scheduler import DealMode
from domino_arena.server.play.tournament_schedule import partnerships_of
from domino_arena.server.stats.precision import Precision, sized
from domino_arena.server.store.bots import BotState, StoredBot
from domino_arena.v1 import admin_pb2 as admin_pb

MIN_PRECISION = 5.0
MAX_PRECISION = 1000.0


def chosen_later(policy: str, storage: OwnerStorage, course: str, bots: Sequence[StoredBot]) -> int:
    """How many entrants a policy other than ``listed`` is expected to add at the start."""
    if policy == "latest":
        return len(course_owners(storage, course))
    if policy == "connected":
        return sum(b.state is BotState.ENABLED for b in bots)
    return 0


def games_per_pairing_for(
    half_width: float, game: Game, entrants: int, *, baselines: bool, deals: DealMode
) -> int:
    """The games per pairing a CreateTournament ``precision`` asks for (INVALID_ARGUMENT if
    out of range or out of reach)."""
    if not MIN_PRECISION <= half_width <= MAX_PRECISION:
        raise invalid(
            f"precision: expected {MIN_PRECISION:g} to {MAX_PRECISION:g} Elo, got {half_width:g}"
        )
    try:
        return sized(
            game.name,
            seats=game.num_players,
            partnerships=partnerships_of(game),
            entrants=entrants,
            half_width=half_width,
            baselines=baselines,
            fresh=deals is DealMode.FRESH,
        ).games_per_pairing
    except ValueError as exc:
        raise invalid(str(exc)) from None


def precision_message(p: Precision) -> admin_pb.GradePrecision:
    return admin_pb.GradePrecision(
        entrants=p.entrants,
        games_per_pairing=p.games_per_pairing,
        games_per_entrant=p.games_per_entrant,
        games=p.games,
        sets_per_baseline=p.sets_per_baseline,
        rating_half_width=p.rating_half_width,
        baseline_half_width=p.baseline_half_width,
        threshold=p.threshold,
        warning=p.warning,
        sd_per_game=p.sd_per_game,
    )

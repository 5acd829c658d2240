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
from domino_arena.server.net.admin_requests import deal_mode_of, invalid
from domino_arena.server.stats.precision import Precision, sized, sized_balanced
from domino_arena.server.store.bots import BotState, StoredBot
from domino_arena.server.tournaments import planner
from domino_arena.server.tournaments.lifecycle.schedule import (
    DEFAULT_GAMES_PER_ENTRANT,
    partnerships_of,
    too_big,
)
from domino_arena.server.tournaments.planner import MAX_ROUND_ROBIN_GAMES, schedule_size
from domino_arena.server.tournaments.scheduler import DealMode
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


def check_range(half_width: float) -> None:
    """INVALID_ARGUMENT for a ``precision`` outside what a tournament may ask for."""
    if not MIN_PRECISION <= half_width <= MAX_PRECISION:
        raise invalid(
            f"precision: expected {MIN_PRECISION:g} to {MAX_PRECISION:g} Elo, got {half_width:g}"
        )


def games_per_pairing_for(
    half_width: float, game: Game, entrants: int, *, baselines: bool, deals: DealMode
) -> int:
    """The games per pairing a CreateTournament ``precision`` asks for (INVALID_ARGUMENT if
    out of range or out of reach)."""
    check_range(half_width)
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


def games_per_entrant_for(
    half_width: float,
    game: Game,
    entrants: int,
    *,
    baselines: bool,
    deals: DealMode,
    games_per_pairing: int = 1,
) -> int:
    """The games per entrant of a balanced tournament a ``precision`` asks for
    (INVALID_ARGUMENT if out of range or out of reach)."""
    check_range(half_width)
    try:
        return sized_balanced(
            game.name,
            seats=game.num_players,
            partnerships=partnerships_of(game),
            entrants=entrants,
            half_width=half_width,
            baselines=baselines,
            games_per_pairing=games_per_pairing,
            fresh=deals is DealMode.FRESH,
        ).games_per_entrant
    except ValueError as exc:
        raise invalid(str(exc)) from None


def refuse_big_round_robin(
    game: Game,
    entrants: int,
    games_per_pairing: int,
    precision: float,
    *,
    baselines: bool,
    deals: DealMode,
) -> None:
    """INVALID_ARGUMENT for a round robin of more than ``MAX_ROUND_ROBIN_GAMES`` games, with the
    balanced tournament that gives the precision asked for (none asked: 100 games each)."""
    games = schedule_size(entrants, game.num_players, partnerships_of(game), games_per_pairing)
    if games <= MAX_ROUND_ROBIN_GAMES:
        return
    suggested = DEFAULT_GAMES_PER_ENTRANT
    if precision:
        suggested = games_per_entrant_for(
            precision, game, entrants, baselines=baselines, deals=deals
        )
    raise invalid(too_big(entrants, games, suggested))


def sized_by_precision(
    request: admin_pb.CreateTournamentRequest,
    game: Game,
    format: str,
    entrants: int,
    *,
    listed: bool,
) -> tuple[int, int | None]:
    """The games per pairing (a round robin) or per entrant (a balanced or Swiss tournament:
    the Swiss's by the planner, ``planner.games_per_entrant_for``) that a
    CreateTournament's ``precision`` asks for, for ``entrants`` (baselines and those chosen at
    the start included). A round robin that would be too big is refused with the balanced
    tournament of that precision (:func:`refuse_big_round_robin`)."""
    graded, deals = bool(request.baselines), deal_mode_of(request.deals)
    entrants = max(entrants, game.num_players)
    if format == "balanced":
        per_pairing = request.games_per_pairing or 1
        per_entrant = games_per_entrant_for(
            request.precision,
            game,
            entrants,
            games_per_pairing=per_pairing,
            baselines=graded,
            deals=deals,
        )
        return per_pairing, per_entrant
    if format == "swiss":
        if request.rounds:
            raise invalid(
                "precision: give precision or rounds, not both (precision chooses the rounds)"
            )
        check_range(request.precision)
        per_pairing = request.games_per_pairing or 1
        try:
            per_entrant = planner.games_per_entrant_for(
                "swiss",
                game.name,
                entrants,
                request.precision,
                seats=game.num_players,
                partnerships=partnerships_of(game),
                games_per_pairing=per_pairing,
            )
        except ValueError as exc:
            raise invalid(str(exc)) from None
        return per_pairing, per_entrant
    if format != "round-robin":
        raise invalid(
            "precision: sizes a round-robin, balanced or Swiss tournament, not a "
            f"{format[:20]!r} one (give games_per_entrant)"
        )
    per_pairing = games_per_pairing_for(
        request.precision, game, entrants, baselines=graded, deals=deals
    )
    if listed:
        refuse_big_round_robin(
            game, entrants, per_pairing, request.precision, baselines=graded, deals=deals
        )
    return per_pairing, None


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

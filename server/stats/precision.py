"""How precise a graded tournament's grades will be, before it is played (docs/courses.md:
precision), and how big it must be for a precision asked for.

Pure arithmetic over the schedule's shape (server/tournaments/scheduler.py lays it out the same way)
and the game's measured variance (``tournaments/game_sd.SD_PER_GAME``):

* a bot and a baseline meet at ``C(n-2, k-2)`` tables of ``k`` seats among ``n`` entrants
  (baselines included; with partnerships, 2 of the 3 team pairings of each four seat them as
  opponents), each played on ``games_per_pairing`` deals under every rotation: each deal is one
  duplicate set, the paired unit of the grades' comparison (``grades.against``). With fresh
  deals every game is its own unit;
* a unit of ``g`` games has a score whose standard deviation is ``sd / sqrt(g)``, ``sd`` the
  game's measured standard deviation per game for its deal mode; over ``S`` units the mean
  score's 95% half-width is ``1.96 sd / sqrt(g S)``, and at equal strength one point of score
  is ``1600 / ln 10`` (695) Elo, so the comparison's half-width is that times 695. Fewer than two
  units give no interval at all (``paired.estimate`` clamps the Elo at its ends): infinity;
* an entrant's rating rests on all its units against every other entrant, each giving ``k - 1``
  pairwise results: the same formula over those (a lower bound: the opponents' ratings are
  estimated too, and the batch fit's bootstrap interval comes out somewhat wider).

* a balanced design (docs/tournaments.md: formats) seats each entrant at ``t`` tables, so its
  units are its ``t`` tables (times ``games_per_pairing`` deals) of ``k - 1`` pairwise results
  each, whoever its opponents are (:func:`expected_balanced`); a bot meets a baseline at
  ``t (k - 1) / (n - 1)`` of them (partnerships: ``2 t / (n - 1)``, two opponents a table).

The fair seating rule may leave tables out (fewer units than these); the estimate ignores it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from domino_arena.sdk.rules import make_game
from domino_arena.server.store.tournaments import StoredTournament, TournamentState
from domino_arena.server.tournaments.game_sd import ELO_PER_SCORE, SD_PER_GAME, UNMEASURED, Z95

THRESHOLD: Final = 150.0
"""The half-width (Elo) of a baseline comparison above which a tournament is warned about: a
bot must then be more than that far from a baseline for its verdict to be significant, and
the course's baselines are a few hundred Elo apart."""
MAX_GAMES_PER_PAIRING: Final = 1000
MAX_TABLES_PER_ENTRANT: Final = 10_000
"""The most tables per entrant :func:`sized_balanced` considers."""


@dataclass(frozen=True, slots=True)
class Precision:
    """What a graded tournament's schedule promises (half-widths of 95% intervals, in Elo)."""

    entrants: int
    games_per_pairing: int
    games_per_entrant: int
    games: int
    """In the whole schedule."""
    sets_per_baseline: int
    rating_half_width: float
    baseline_half_width: float
    sd_per_game: float
    threshold: float = THRESHOLD

    def as_json(self) -> dict[str, object]:
        """Its fields and warning for a JSON document (a half-width without interval: null)."""

        def finite(value: float) -> float | None:
            return value if math.isfinite(value) else None

        return {
            "entrants": self.entrants,
            "games_per_pairing": self.games_per_pairing,
            "games_per_entrant": self.games_per_entrant,
            "games": self.games,
            "sets_per_baseline": self.sets_per_baseline,
            "rating_half_width": finite(self.rating_half_width),
            "baseline_half_width": finite(self.baseline_half_width),
            "sd_per_game": self.sd_per_game,
            "threshold": self.threshold,
            "warning": self.warning,
        }

    @property
    def warning(self) -> str:
        """Empty, or what the teacher should know before it starts, in one sentence."""
        sets = self.sets_per_baseline
        if sets < 2:
            return (
                f"each baseline comparison is {sets} duplicate set{'' if sets == 1 else 's'}: it "
                "has no interval (its Elo "
                "is clamped at the ends) and every verdict will be 'not significant'"
            )
        if self.baseline_half_width > self.threshold:
            return (
                f"each baseline comparison is {sets} duplicate sets: +-"
                f"{self.baseline_half_width:.0f} Elo, so a bot within that of a baseline gets "
                "'not significant'"
            )
        return ""


def expected(
    game: str,
    *,
    seats: int,
    partnerships: bool,
    entrants: int,
    games_per_pairing: int,
    fresh: bool = False,
) -> Precision:
    """The precision of a round robin of ``entrants`` (baselines included) at ``seats`` seats.

    Raises:
        ValueError: fewer entrants than seats, or games_per_pairing below 1.
    """
    if entrants < seats:
        raise ValueError(f"entrants: {entrants} cannot fill a {seats}-seat table")
    if games_per_pairing < 1:
        raise ValueError(f"games_per_pairing: must be at least 1, got {games_per_pairing}")
    sd, per_unit = _spread(game, seats, fresh)
    both = math.comb(entrants - 2, seats - 2) * (2 if partnerships else 1)
    mine = math.comb(entrants - 1, seats - 1) * (3 if partnerships else 1)
    deals_together = both * games_per_pairing
    units = deals_together * (seats if fresh else 1)
    own_units = mine * games_per_pairing * (seats if fresh else 1)
    return Precision(
        entrants=entrants,
        games_per_pairing=games_per_pairing,
        games_per_entrant=mine * seats * games_per_pairing,
        games=math.comb(entrants, seats) * (3 if partnerships else 1) * seats * games_per_pairing,
        sets_per_baseline=units,
        rating_half_width=_half_width(sd, per_unit, own_units * (seats - 1)),
        baseline_half_width=_half_width(sd, per_unit, units),
        sd_per_game=sd,
    )


def expected_balanced(
    game: str,
    *,
    seats: int,
    partnerships: bool,
    entrants: int,
    tables_per_entrant: int,
    games_per_pairing: int = 1,
    fresh: bool = False,
) -> Precision:
    """The precision of a balanced design of ``entrants`` (baselines included), each at
    ``tables_per_entrant`` tables (module doc).

    Raises:
        ValueError: fewer entrants than seats, or no table or game per pairing.
    """
    if entrants < seats:
        raise ValueError(f"entrants: {entrants} cannot fill a {seats}-seat table")
    if tables_per_entrant < 1 or games_per_pairing < 1:
        raise ValueError(
            "tables_per_entrant, games_per_pairing: must be at least 1, got "
            f"{tables_per_entrant}, {games_per_pairing}"
        )
    sd, per_unit = _spread(game, seats, fresh)
    per_set = seats if fresh else 1
    own_units = tables_per_entrant * games_per_pairing * per_set
    opponents = 2 if partnerships else seats - 1
    units = tables_per_entrant * opponents * games_per_pairing * per_set // (entrants - 1)
    return Precision(
        entrants=entrants,
        games_per_pairing=games_per_pairing,
        games_per_entrant=tables_per_entrant * seats * games_per_pairing,
        games=math.ceil(entrants * tables_per_entrant / seats) * seats * games_per_pairing,
        sets_per_baseline=units,
        rating_half_width=_half_width(sd, per_unit, own_units * (seats - 1)),
        baseline_half_width=_half_width(sd, per_unit, units),
        sd_per_game=sd,
    )


def sized_balanced(
    game: str,
    *,
    seats: int,
    partnerships: bool,
    entrants: int,
    half_width: float,
    baselines: bool,
    games_per_pairing: int = 1,
    fresh: bool = False,
) -> Precision:
    """The smallest balanced design whose ratings (with baselines: baseline comparisons) reach
    ``half_width``, at most :data:`MAX_TABLES_PER_ENTRANT` tables per entrant.

    Raises:
        ValueError: not reachable within that many tables (the message says what the most
            give), or a bad size (:func:`expected_balanced`).
    """

    def at(n: int) -> Precision:
        return expected_balanced(
            game,
            seats=seats,
            partnerships=partnerships,
            entrants=entrants,
            tables_per_entrant=n,
            games_per_pairing=games_per_pairing,
            fresh=fresh,
        )

    return _smallest(
        at,
        MAX_TABLES_PER_ENTRANT,
        half_width,
        baselines,
        lambda most: (most.games_per_entrant, "games per entrant"),
    )


def of_tournament(t: StoredTournament, later: int = 0) -> Precision | None:
    """The expected precision of a graded round robin (baselines seated), ``later`` more
    entrants expected at its start when they are chosen then (counted by the caller); None for
    other tournaments, or too few entrants to say."""
    if not t.baselines or t.kind != "round_robin":
        return None
    game = make_game(t.game, **t.options)
    waiting = t.state is TournamentState.CREATED and t.entrant_policy != "listed"
    entrants = len(t.entrants) + (later if waiting else 0)
    if entrants < game.num_players:
        return None
    if t.format == "balanced":
        return expected_balanced(
            t.game,
            seats=game.num_players,
            partnerships=len(game.sides) != game.num_players,
            entrants=entrants,
            tables_per_entrant=math.ceil(
                (t.games_per_entrant or 1) / (game.num_players * t.games_per_pairing)
            ),
            games_per_pairing=t.games_per_pairing,
            fresh=t.deals == "fresh",
        )
    if t.format != "round-robin":  # a gauntlet: the planner's (docs/tournaments.md: formats)
        return None
    return expected(
        t.game,
        seats=game.num_players,
        partnerships=len(game.sides) != game.num_players,
        entrants=entrants,
        games_per_pairing=t.games_per_pairing,
        fresh=t.deals == "fresh",
    )


def sized(
    game: str,
    *,
    seats: int,
    partnerships: bool,
    entrants: int,
    half_width: float,
    baselines: bool,
    fresh: bool = False,
) -> Precision:
    """The smallest schedule whose baseline comparisons (without baselines: ratings) reach
    ``half_width``, at most :data:`MAX_GAMES_PER_PAIRING` games per pairing.

    Raises:
        ValueError: not reachable within that many games per pairing (the message says what
            the most gives), or a bad schedule (:func:`expected`).
    """

    def at(n: int) -> Precision:
        return expected(
            game,
            seats=seats,
            partnerships=partnerships,
            entrants=entrants,
            games_per_pairing=n,
            fresh=fresh,
        )

    return _smallest(
        at,
        MAX_GAMES_PER_PAIRING,
        half_width,
        baselines,
        lambda most: (MAX_GAMES_PER_PAIRING, "games per pairing"),
    )


def _smallest(
    at: Callable[[int], Precision],
    most: int,
    half_width: float,
    baselines: bool,
    size: Callable[[Precision], tuple[int, str]],
) -> Precision:
    """The precision at the smallest ``n`` in 1..``most`` whose baseline comparisons (without
    baselines: ratings) reach ``half_width``; the half-width falls as ``n`` grows.

    Raises:
        ValueError: ``most`` does not reach it (the message says what the largest gives, its
            ``size``: a count and what it counts).
    """

    def reached(p: Precision) -> bool:
        return (p.baseline_half_width if baselines else p.rating_half_width) <= half_width

    largest = at(most)
    if not reached(largest):
        best = largest.baseline_half_width if baselines else largest.rating_half_width
        count, unit = size(largest)
        raise ValueError(
            f"precision: +-{half_width:g} Elo needs more than {count} {unit} "
            f"({count} give +-{best:.1f}); ask for less"
        )
    low, high = 1, most
    while low < high:
        middle = (low + high) // 2
        if reached(at(middle)):
            high = middle
        else:
            low = middle + 1
    return at(low)


def _spread(game: str, seats: int, fresh: bool) -> tuple[float, int]:
    """The game's score SD per game and the games of one independent unit: a duplicate set
    (the deal under every rotation: ``seats`` games) or, on fresh deals, a single game."""
    duplicate_sd, fresh_sd = SD_PER_GAME.get(game, UNMEASURED)
    return (fresh_sd, 1) if fresh else (duplicate_sd, seats)


def _half_width(sd: float, games_per_unit: int, units: int) -> float:
    if units < 2:
        return math.inf
    return Z95 * sd / math.sqrt(games_per_unit * units) * ELO_PER_SCORE

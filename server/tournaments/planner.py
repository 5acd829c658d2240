"""What a tournament will cost and give before it starts: games, duration and precision.

docs/tournaments.md (Planning a tournament) shows what ``domino-arena tournament plan`` prints.

* **Games.** Round robin: every ``seats`` of the entrants (each four in its three pairings with
  partnerships) under every rotation, ``games_per_pairing`` deals each, as
  ``server/tournaments/scheduler.py`` lays it out. Balanced: ``ceil(entrants x tables_per_entrant /
  seats)`` tables, each under every rotation on ``games_per_pairing`` deals, where
  ``tables_per_entrant = ceil(games_per_entrant / (seats x games_per_pairing))``. Gauntlet: each
  entrant at ``tables_per_entrant`` tables of itself and baselines, likewise expanded. Swiss:
  ``rounds x floor(entrants / seats)`` tables (the rest sit out each round), each under every
  rotation on ``games_per_pairing`` deals; ``rounds`` defaults to the tables per entrant of
  ``games_per_entrant``. Knockout: from the fewest to the most table-sets its ties can play
  (``knockout.sets_bounds``), each set every rotation on ``games_per_pairing`` deals.
* **Duration.** Games times the moves of a game (:data:`MOVES_PER_GAME`: greedy bots, measured)
  times a second per move: with instant bots the referee's own cost per move
  (:data:`REFEREE_SECONDS_PER_MOVE`, one process, so concurrency does not divide it), at the
  full move time every move of ``concurrency`` games at once takes the time control's move.
* **Precision.** An entrant's rating rests on its pairwise results: ``seats - 1`` a game (one
  with partnerships, whose side strength is the mean of two: twice the half-width). With the
  game's per-game score SD ``sd`` (``server/tournaments/game_sd.py``: ``SD_PER_GAME``), the 95%
  half-width is ``1.96 sd / sqrt(results) x 695`` Elo, times :func:`correction`: three
  factors fitted together, per seating, to ``bench/tournament_designs.py``'s simulations
  (opponents estimated too, true strengths spread with SD 200, the seat terms fitted):
  :data:`CORRECTION`, the large-sample ratio of the measured half-width to the formula;
  ``1 + c / results`` with ``c`` from :data:`FEW_RESULTS`, the small-sample term (with few
  results an entrant's rating is far from normal and its opponents' errors weigh more, so the
  half-width shrinks faster than ``1 / sqrt(results)`` at first); and for a Swiss
  :data:`SWISS_FACTOR` (its tables seat like ranks together, so its ratings rest on a chain of
  near-even games, wider than a balanced tournament's of as many games). A knockout has none:
  it ranks by elimination, not by rating.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from domino_arena.server.tournaments.game_sd import ELO_PER_SCORE, SD_PER_GAME, UNMEASURED, Z95
from domino_arena.server.tournaments.knockout import KnockoutRules, sets_bounds

FORMATS: Final = ("round-robin", "balanced", "gauntlet", "swiss", "knockout")
MAX_ROUND_ROBIN_GAMES: Final = 50_000
"""A round robin above this is refused, naming the format and size that fit."""

MOVES_PER_GAME: Final[dict[tuple[str, int, bool], float]] = {
    ("doubles", 2, False): 369.0,
    ("doubles", 3, False): 234.0,
    ("doubles", 4, False): 282.0,
    ("moon", 3, False): 252.0,
    ("passing", 2, False): 403.0,
    ("passing", 3, False): 312.0,
    ("passing", 4, False): 151.0,
    ("passing", 4, True): 241.0,
    ("straight", 2, False): 141.0,
    ("straight", 3, False): 134.0,
    ("straight", 4, False): 154.0,
    ("straight", 4, True): 92.0,
}
"""(game, seats, partnerships) -> decisions in a whole game to its target between greedy bots
(30 seeded games each, default options: ``bench/tournament_designs.py --moves``)."""
FEW_GAMES: Final = 24
"""The fewest games per entrant the simulation measured; below it the plan says so."""
DEFAULT_MOVES: Final = 300.0
REFEREE_SECONDS_PER_MOVE: Final = 620e-6
"""The referee's CPU per move with instant bots (bench/README.md: watchers_bench, 0 watchers):
about 6 games a second of 250 moves, the issue's "~4 games a second" on a busy machine."""

CORRECTION: Final[dict[tuple[int, bool], float]] = {
    (2, False): 1.33,
    (3, False): 1.22,
    (4, False): 1.33,
    (4, True): 0.92,
}
"""(seats, partnerships) -> the measured half-width over the formula's when results are many,
in ``bench/tournament_designs.py``'s simulations (true Elo normal with SD 200). Fitted together
with :data:`FEW_RESULTS` and :data:`SWISS_FACTOR` to every row of bench/README.md's run
(balanced, gauntlet, round robin and Swiss; 40, 200 and 1,000 entrants; 24 to 960 games per
entrant) by least squares of the log ratio, then rounded. Above 1: games between entrants far
apart say less than even games, and the opponents are estimated too. Partnerships come out
lower than twice the single seat's formula once results are many."""
FEW_RESULTS: Final[dict[tuple[int, bool], float]] = {
    (2, False): 3.0,
    (3, False): 12.0,
    (4, False): 22.0,
    (4, True): 22.0,
}
"""(seats, partnerships) -> ``c`` of the small-sample term ``1 + c / results`` (pairwise
results of an entrant): with few results the ratings of the extreme entrants are far from
normal and the errors of their few opponents weigh more, so the half-width starts wider and
falls faster than ``1 / sqrt(results)``. The term at 24 games per entrant: 1.13 (2 seats) to
1.92 (partnerships); at 96: 1.03 to 1.23."""
SWISS_FACTOR: Final = 1.05
"""A Swiss's measured half-width over a balanced tournament's of as many games per entrant,
every seating and field (its folded rounds, ``swiss.FOLD_EVERY``, keep it near 1: without them
it was 2-3x at 200 and 1,000 entrants)."""


@dataclass(frozen=True, slots=True)
class Plan:
    """A tournament's size, duration and precision, before it starts."""

    format: str
    entrants: int
    seats: int
    games: int
    games_per_entrant: float
    seconds: float
    """At the given concurrency with instant bots (the referee's cost per move)."""
    half_width: float
    """Expected 95% half-width of an entrant's rating, official (Elo) scale."""
    full_seconds: float = 0.0
    """At the given concurrency when every move takes the time control's full move time."""
    concurrency: int = 8
    move_seconds: float = 1.0
    partnerships: bool = False
    games_high: int = 0
    """A knockout: the most games its ties can play (``games`` the fewest); 0 otherwise."""
    rounds: int = 0
    """A Swiss: its rounds; 0 otherwise."""

    def lines(self) -> list[str]:
        """What ``tournament plan`` and ``tournament create`` print."""
        width = "no interval" if not math.isfinite(self.half_width) else f"+-{self.half_width:.0f}"
        caveat = []
        if self.games_per_entrant < FEW_GAMES:
            caveat = [
                f"  below {FEW_GAMES} games per entrant the estimate is unmeasured "
                "(bench/tournament_designs.py): read it as a rough guide"
            ]
        games = f"{self.games:,} ({round(self.games_per_entrant, 1):g} per entrant)"
        precision = f"precision: {width} Elo (95% interval of an entrant's rating)"
        if self.rounds:
            mean = round(self.games_per_entrant, 1)
            games = f"{self.games:,} in {self.rounds} rounds ({mean:g} per entrant)"
            precision += f", {SWISS_FACTOR:.2f}x a balanced tournament's of as many games"
        ranged = self.games_high > self.games
        if ranged:
            games = f"{self.games:,} to {self.games_high:,} (as its ties are decided)"
        if self.games_high:
            precision, caveat = "precision: none (a knockout ranks by elimination)", []
        return [
            f"format: {self.format}, {self.entrants} entrants, {self.seats} seats"
            + (" in partnerships" if self.partnerships else ""),
            f"games: {games}",
            f"duration at {self.concurrency} games at once: {'up to ' if ranged else ''}"
            f"{duration_text(self.seconds)} with instant bots, {duration_text(self.full_seconds)} "
            f"at the full move time ({self.move_seconds:g} s)",
            precision,
            *caveat,
        ]


def duration_text(seconds: float) -> str:
    """``seconds`` as the largest sensible unit: 45 s, 12 min, 3.5 h, 2.1 days."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def sides_of(seats: int, partnerships: bool) -> int:
    return 2 if partnerships else seats


def tables_per_entrant(games_per_entrant: int, seats: int, games_per_pairing: int = 1) -> int:
    """The tables an entrant must sit at to play ``games_per_entrant`` (every rotation)."""
    return max(1, math.ceil(games_per_entrant / (seats * games_per_pairing)))


def schedule_size(entrants: int, seats: int, partnerships: bool, repeats: int) -> int:
    """The games of a round robin: every table (with partnerships, each of the 3 pairings of
    every four), every rotation, ``repeats`` deals each."""
    tables = math.comb(entrants, seats) * (3 if partnerships else 1)
    return tables * seats * repeats


def gauntlet_games_per_entrant(
    baselines: int, seats: int, partnerships: bool, games_per_pairing: int = 1
) -> int:
    """A gauntlet's default size: one table with each combination of ``seats - 1`` baselines
    (with partnerships, each under every pairing of the entrant with one of them)."""
    groups = math.comb(baselines, seats - 1) * (seats - 1 if partnerships else 1)
    return groups * seats * games_per_pairing


def fixed_games(
    format: str, playing: int, seats: int, tables: int, games_per_pairing: int = 1
) -> int:
    """The games of a balanced or gauntlet design of ``tables`` tables per entrant, every
    rotation on ``games_per_pairing`` deals: a balanced design's entrants share their tables,
    a gauntlet's sit one a table (with baselines)."""
    tables_in_all = math.ceil(playing * tables / (1 if format == "gauntlet" else seats))
    return tables_in_all * seats * games_per_pairing


def half_width(
    format: str,
    game: str,
    games_per_entrant: float,
    *,
    seats: int,
    partnerships: bool = False,
) -> float:
    """The expected 95% half-width (Elo) of an entrant's rating over ``games_per_entrant``."""
    sd = SD_PER_GAME.get(game, UNMEASURED)[0]
    results = games_per_entrant * (sides_of(seats, partnerships) - 1)
    if results < 1:
        return math.inf
    dilution = 2.0 if partnerships else 1.0
    factor = correction(format, results, seats=seats, partnerships=partnerships)
    return factor * dilution * Z95 * sd / math.sqrt(results) * ELO_PER_SCORE


def correction(format: str, results: float, *, seats: int, partnerships: bool = False) -> float:
    """The measured half-width over the bare formula's (module doc: Precision) for an entrant
    of ``results`` pairwise results: ``CORRECTION x (1 + c / results)``, times
    ``SWISS_FACTOR`` for a Swiss."""
    key = (seats, partnerships)
    factor = CORRECTION.get(key, 1.0) * (1 + FEW_RESULTS.get(key, 0.0) / results)
    return factor * (SWISS_FACTOR if format == "swiss" else 1.0)


def _check(format: str, entrants: int, seats: int, partnerships: bool, baselines: int) -> None:
    if format not in FORMATS:
        raise ValueError(f"format: expected one of {', '.join(FORMATS)}, got {format!r}")
    if not 2 <= seats <= 4:
        raise ValueError(f"seats: expected 2 to 4, got {seats}")
    if partnerships and seats != 4:
        raise ValueError(f"partnerships: need 4 seats, got {seats}")
    if entrants < (1 if format == "gauntlet" else seats):
        raise ValueError(f"entrants: {entrants} cannot fill a {seats}-seat table")
    if format == "knockout" and partnerships:
        raise ValueError("format: a knockout eliminates entrants, not teams (no partnerships)")
    if format == "gauntlet" and baselines < seats - 1:
        raise ValueError(
            f"baselines: a {seats}-seat gauntlet needs at least {seats - 1} baselines, "
            f"got {baselines}"
        )


def plan(
    format: str,
    game: str,
    entrants: int,
    *,
    seats: int,
    partnerships: bool = False,
    games_per_entrant: int | None = None,
    games_per_pairing: int = 1,
    baselines: int = 0,
    concurrency: int = 8,
    move_seconds: float = 1.0,
    rounds: int | None = None,
    sets: int = 1,
    max_sets: int | None = None,
) -> Plan:
    """The plan of a tournament of ``entrants`` (baselines not counted for a gauntlet).

    ``games_per_entrant`` sizes balanced and gauntlet tournaments (default: a round robin's
    worth for balanced, capped at 100; one table per baseline combination for a gauntlet) and
    a Swiss without ``rounds``; a knockout's ties play ``sets`` to ``max_sets`` sets.

    Raises:
        ValueError: an unknown format, a bad size, or a round robin above
            :data:`MAX_ROUND_ROBIN_GAMES` games (the message names a balanced size that fits).
    """
    _check(format, entrants, seats, partnerships, baselines)
    if games_per_pairing < 1:
        raise ValueError(f"games_per_pairing: must be at least 1, got {games_per_pairing}")
    if concurrency < 1:
        raise ValueError(f"concurrency: must be at least 1, got {concurrency}")
    pairings = 3 if partnerships else 1
    high = 0
    per_entrant: float
    if format == "swiss":
        if rounds is None:
            if games_per_entrant is None:
                raise ValueError("rounds: a Swiss needs its rounds or its games per entrant")
            rounds = tables_per_entrant(games_per_entrant, seats, games_per_pairing)
        if rounds < 1:
            raise ValueError(f"rounds: must be at least 1, got {rounds}")
        games = rounds * (entrants // seats) * seats * games_per_pairing
        per_entrant = games * seats / entrants  # the mean: byes and the eliminated play fewer
    elif format == "knockout":
        rules = KnockoutRules(seats, sets, sets if max_sets is None else max_sets)
        low, most = sets_bounds(entrants, rules)
        games, high = (n * seats * games_per_pairing for n in (low, most))
        per_entrant = games * seats / entrants  # the mean: byes and the eliminated play fewer
    elif format == "round-robin":
        games = schedule_size(entrants, seats, partnerships, games_per_pairing)
        per_entrant = math.comb(entrants - 1, seats - 1) * pairings * seats
        per_entrant *= games_per_pairing
        if games > MAX_ROUND_ROBIN_GAMES:
            fit = min(100, MAX_ROUND_ROBIN_GAMES * seats // entrants)
            raise ValueError(
                f"format: a round robin of {entrants} entrants at {seats} seats is {games:,} "
                f"games, above {MAX_ROUND_ROBIN_GAMES:,}; use --format balanced "
                f"--games-per-entrant {fit} ({entrants * fit // seats:,} games)"
            )
    else:
        if games_per_entrant is None:
            games_per_entrant = (
                100
                if format == "balanced"
                else gauntlet_games_per_entrant(baselines, seats, partnerships, games_per_pairing)
            )
        if games_per_entrant < 1:
            raise ValueError(f"games_per_entrant: must be at least 1, got {games_per_entrant}")
        tables = tables_per_entrant(games_per_entrant, seats, games_per_pairing)
        per_entrant = tables * seats * games_per_pairing
        games = fixed_games(format, entrants, seats, tables, games_per_pairing)
    moves = MOVES_PER_GAME.get((game, seats, partnerships), DEFAULT_MOVES)
    instant = max(games, high) * moves * REFEREE_SECONDS_PER_MOVE
    full = max(games, high) / concurrency * moves * move_seconds
    return Plan(
        format=format,
        entrants=entrants,
        seats=seats,
        games=games,
        games_per_entrant=per_entrant,
        seconds=instant,
        half_width=math.inf
        if format == "knockout"
        else half_width(format, game, per_entrant, seats=seats, partnerships=partnerships),
        full_seconds=full,
        concurrency=concurrency,
        move_seconds=move_seconds,
        partnerships=partnerships,
        games_high=high,
        rounds=rounds or 0,
    )


def games_per_entrant_for(
    format: str,
    game: str,
    entrants: int,
    half_width_elo: float,
    *,
    seats: int,
    partnerships: bool = False,
    games_per_pairing: int = 1,
) -> int:
    """The fewest games per entrant (whole rotations) whose expected half-width is at most
    ``half_width_elo``.

    Raises:
        ValueError: a half-width that is not a positive number.
    """
    if not (math.isfinite(half_width_elo) and half_width_elo > 0):
        raise ValueError(f"precision: expected a positive number of Elo, got {half_width_elo}")
    _check(format, entrants, seats, partnerships, seats - 1)
    step = seats * games_per_pairing

    def width(games: int) -> float:
        return half_width(format, game, games, seats=seats, partnerships=partnerships)

    # without the small-sample term the width falls as 1 / sqrt(games): a lower bound to start
    results = sides_of(seats, partnerships) - 1
    bare = width(1) / correction(format, results, seats=seats, partnerships=partnerships)
    large = bare * correction(format, math.inf, seats=seats, partnerships=partnerships)
    games = max(step, math.ceil((large / half_width_elo) ** 2 / step - 1e-9) * step)
    while width(games) > half_width_elo:
        games += step
    return games

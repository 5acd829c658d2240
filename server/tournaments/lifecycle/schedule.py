"""A tournament's schedule and its games' matches, from its row alone (the runner and its
callers share them; the package, ``server/tournaments/lifecycle``, re-exports every name).

The same row always gives the same schedule (:func:`schedule_of`), the same match id
(:func:`match_id_of`) and seed (:func:`deal_seed`) for every game: that is what makes a
tournament resumable and a regrade reproducible.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import Game, make_game
from domino_arena.server.play import provable
from domino_arena.server.play.match_spec import DEFAULT_MAX_DEALS, MatchSpec
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store.tables import HOUSE_PREFIX
from domino_arena.server.store.tournaments import MAX_ROUNDS, StoredTournament
from domino_arena.server.tournaments.designs import Allowed, Design, balanced, gauntlet
from domino_arena.server.tournaments.knockout import KnockoutRules
from domino_arena.server.tournaments.lifecycle import compare
from domino_arena.server.tournaments.planner import (
    FORMATS,
    MAX_ROUND_ROBIN_GAMES,
    fixed_games,
    gauntlet_games_per_entrant,
    schedule_size,
)
from domino_arena.server.tournaments.planner import tables_per_entrant as tables_per_entrant_of
from domino_arena.server.tournaments.rounds import ADAPTIVE_FORMATS
from domino_arena.server.tournaments.scheduler import (
    DealMode,
    ScheduledGame,
    expand,
    round_robin,
    seating_allowed,
)

MAX_GAMES: Final = 100_000
"""The largest schedule a tournament may have (a request beyond it is surely a mistake)."""
DEFAULT_GAMES_PER_ENTRANT: Final = 100
"""What a refused round robin suggests for a balanced tournament when no precision was asked."""


class TournamentError(ValueError):
    """An impossible tournament request; the message says which field and why."""


def check_schedule(t: StoredTournament) -> None:
    """Raise :class:`TournamentError` unless ``t`` has a schedule (the seating rule may leave
    none) of at most :data:`MAX_GAMES` games; a Swiss or knockout tournament seats its rounds
    as it goes (:func:`checked_format` checked its size)."""
    if t.format in ADAPTIVE_FORMATS:
        return
    if t.format == "round-robin":
        game = game_of(t)
        games = schedule_size(
            len(t.entrants), game.num_players, partnerships_of(game), t.games_per_pairing
        )
        if games > MAX_ROUND_ROBIN_GAMES:
            raise TournamentError(too_big(len(t.entrants), games))
    try:
        games = len(_schedule(t))
    except ValueError as exc:  # SeatingError, or too few entrants or baselines
        raise TournamentError(str(exc)) from None
    if games > MAX_GAMES:
        raise TournamentError(
            f"entrants: {len(t.entrants)} entrants make {games} games, more than the "
            f"{MAX_GAMES} a tournament may have"
        )


def too_big(entrants: int, games: int, suggested: int = DEFAULT_GAMES_PER_ENTRANT) -> str:
    """The refusal of a round robin of more than :data:`MAX_ROUND_ROBIN_GAMES` games: its size
    and the balanced tournament to play instead (docs/tournaments.md: formats)."""
    return (
        f"entrants: a round robin of {entrants} entrants makes {games} games, more than the "
        f"{MAX_ROUND_ROBIN_GAMES} a round robin may have; play a balanced tournament instead "
        f"(--format balanced --games-per-entrant {suggested}: about {entrants * suggested:,} "
        "game seats, each pair of entrants meeting about equally often; docs/tournaments.md: "
        "formats)"
    )


def checked_format(
    format: str,
    games_per_entrant: int | None,
    *,
    game: Game,
    entrants: Sequence[str],
    games_per_pairing: int,
    listed: bool,
) -> int | None:
    """Check a tournament's format and size; return its games per entrant (a gauntlet's
    default: every combination of baselines once; a round robin's: None).

    Raises:
        TournamentError: an unknown format, a size it cannot take, too few baselines, or a
            schedule too big (a round robin: :func:`too_big`).
    """
    if format not in FORMATS:
        raise TournamentError(f"format: expected one of {', '.join(FORMATS)}, got {format!r}")
    if games_per_entrant is not None and games_per_entrant < 1:
        raise TournamentError(f"games_per_entrant: must be at least 1, got {games_per_entrant}")
    if format in ADAPTIVE_FORMATS:  # sized by checked_rounds
        return games_per_entrant
    seats, partnerships = game.num_players, partnerships_of(game)
    if format == "round-robin":
        if games_per_entrant is not None:
            raise TournamentError(
                "games_per_entrant: a round robin plays every table; it sizes a balanced or "
                "gauntlet tournament (or give games_per_pairing)"
            )
        games = schedule_size(len(entrants), seats, partnerships, games_per_pairing)
        if listed and games > MAX_ROUND_ROBIN_GAMES:
            raise TournamentError(too_big(len(entrants), games))
        return None
    own, baselines = split_baselines(entrants)
    if format == "balanced" and games_per_entrant is None:
        raise TournamentError(
            "games_per_entrant: a balanced tournament needs its size: the games per entrant "
            "(--games-per-entrant N) or a precision (--precision ELO)"
        )
    if format == "gauntlet":
        if len(baselines) < seats - 1:
            raise TournamentError(
                f"baselines: a {seats}-seat gauntlet seats each entrant with {seats - 1} "
                f"baseline{'s' if seats > 2 else ''}; got {len(baselines)} (--baselines B1,B2)"
            )
        if listed and not own:
            raise TournamentError("entrants: a gauntlet needs entrants besides its baselines")
        if games_per_entrant is None:
            games_per_entrant = gauntlet_games_per_entrant(
                len(baselines), seats, partnerships, games_per_pairing
            )
    assert games_per_entrant is not None
    tables = tables_per_entrant_of(games_per_entrant, seats, games_per_pairing)
    playing = len(own) if format == "gauntlet" else len(entrants)
    games = fixed_games(format, playing, seats, tables, games_per_pairing)
    if listed and games > MAX_GAMES:
        raise TournamentError(
            f"games_per_entrant: {playing} entrants at {games_per_entrant} games each make "
            f"{games} games, more than the {MAX_GAMES} a tournament may have"
        )
    return games_per_entrant


def checked_rounds(
    format: str,
    *,
    rounds: int | None,
    games_per_entrant: int | None,
    sets: int | None,
    max_sets: int | None,
    game: Game,
    games_per_pairing: int,
) -> tuple[int | None, dict[str, int] | None]:
    """Check the size of a Swiss or knockout tournament; return its rounds (a Swiss: ``rounds``,
    or the tables each entrant sits at to play ``games_per_entrant`` games) and its sets per
    tie (a knockout: {"sets", "max_sets"}); (None, None) for a fixed format, which takes
    neither.

    Raises:
        TournamentError: a size given to a format that takes none, or missing or out of range.
    """
    if format not in ADAPTIVE_FORMATS:
        if rounds is not None or sets is not None or max_sets is not None:
            raise TournamentError(
                "rounds, knockout_sets: only a Swiss (rounds) or knockout (sets) tournament "
                f"takes them, not a {format} one"
            )
        return None, None
    if format == "swiss":
        if sets is not None or max_sets is not None:
            raise TournamentError("knockout_sets: a Swiss tournament plays rounds, not ties")
        if rounds is None:
            if games_per_entrant is None:
                raise TournamentError(
                    "rounds: a Swiss tournament needs its size: the rounds (--rounds N) or the "
                    "games per entrant (--games-per-entrant N)"
                )
            rounds = tables_per_entrant_of(games_per_entrant, game.num_players, games_per_pairing)
        if not 1 <= rounds <= MAX_ROUNDS:
            raise TournamentError(f"rounds: expected 1-{MAX_ROUNDS}, got {rounds}")
        return rounds, None
    if partnerships_of(game):
        raise TournamentError(
            f"format: a knockout eliminates entrants, not teams; {game.describe()} is played "
            "in partnerships (play it Swiss or balanced)"
        )
    if rounds is not None or games_per_entrant is not None:
        raise TournamentError(
            "rounds, games_per_entrant: a knockout plays until its champion; size its ties with "
            "knockout_sets and knockout_max_sets"
        )
    low = 1 if sets is None else sets
    high = low if max_sets is None else max_sets
    try:
        KnockoutRules(table_size=game.num_players, sets=low, max_sets=high)
    except ValueError as exc:
        raise TournamentError(f"knockout_sets: {exc}") from None
    return None, {"sets": low, "max_sets": high}


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
    start for want of entrants; once chosen, they always make one). A Swiss or knockout
    tournament's games are those of its stored rounds (``tournament_rounds.schedule_of_rounds``):
    none follow from the row alone, [].
    """
    if t.format in ADAPTIVE_FORMATS:
        return []
    game = game_of(t)
    if t.kind == "compare":
        return compare.compare_schedule(compare.plan_of(t), game.num_players)
    if t.entrant_policy != "listed":
        try:
            return _schedule(t)
        except ValueError:
            return []
    return _schedule(t)


def tables_per_entrant(t: StoredTournament) -> int:
    """The tables each entrant of a balanced or gauntlet ``t`` sits at: its games per entrant
    over the games of one table (every rotation on ``games_per_pairing`` deals), rounded up."""
    return tables_per_entrant_of(
        t.games_per_entrant or 1, game_of(t).num_players, t.games_per_pairing
    )


def split_baselines(entrants: Sequence[str]) -> tuple[list[str], list[str]]:
    """A gauntlet's entrants and its baselines (the ``house:NAME`` entrants)."""
    own = [e for e in entrants if not e.startswith(HOUSE_PREFIX)]
    return own, [e for e in entrants if e.startswith(HOUSE_PREFIX)]


def design_of(t: StoredTournament) -> Design | None:
    """The tables of a balanced or gauntlet ``t`` and the balance they reach (None for a round
    robin). They follow from the entrants' order, the sizes and the seating rule alone (design
    seed 0, not the master seed): the same row gives the same design, and a regrade, even on
    fresh deals, the same tables with its replacements in the replaced bots' places.

    Raises:
        ValueError: too few entrants or baselines, or the seating rule leaves no design.
    """
    if t.format == "round-robin":
        return None
    key = _key(t)
    if key not in _DESIGNS:
        _keep(_DESIGNS, key, _design(t))
    return _DESIGNS[key]


_KEPT: Final = 8
_DESIGNS: Final[dict[tuple[object, ...], Design]] = {}
_SCHEDULES: Final[dict[tuple[object, ...], tuple[ScheduledGame, ...]]] = {}
"""The latest designs and schedules of balanced and gauntlet tournaments, by everything they
follow from: a big field's takes seconds, and the admin API counts every listed tournament's
games (docs/tournaments.md: the same row gives the same schedule)."""


def _key(t: StoredTournament) -> tuple[object, ...]:
    return (
        t.id, t.format, t.entrants, t.game, repr(sorted(t.options.items())),
        t.games_per_entrant, t.games_per_pairing, t.deals, repr(sorted((t.owners or {}).items())),
        t.allow_same_owner_tables, t.allow_same_owner_partners,
    )  # fmt: skip


def _keep(kept: dict[tuple[object, ...], Any], key: tuple[object, ...], value: object) -> None:
    if len(kept) >= _KEPT:
        del kept[next(iter(kept))]
    kept[key] = value


def seating_rule(t: StoredTournament) -> Allowed:
    """The fair seating rule of ``t`` (two bots of one owner apart, unless its course allows
    them together) as a test of one table: what a design's and a Swiss round's tables keep."""
    partnerships = partnerships_of(game_of(t))

    def allowed(table: tuple[str, ...]) -> bool:
        return seating_allowed(
            table,
            t.owners,
            partnerships=partnerships,
            allow_same_owner_tables=t.allow_same_owner_tables,
            allow_same_owner_partners=t.allow_same_owner_partners,
        )

    return allowed


def _design(t: StoredTournament) -> Design:
    game = game_of(t)
    seats, partnerships = game.num_players, partnerships_of(game)
    allowed = seating_rule(t)
    per = tables_per_entrant(t)
    if t.format == "gauntlet":
        own, baselines = split_baselines(t.entrants)
        if not own:
            raise ValueError("entrants: a gauntlet needs entrants besides its baselines")
        return gauntlet(
            own,
            baselines,
            seats,
            tables_per_entrant=per,
            partnerships=partnerships,
            allowed=allowed,
        )
    return balanced(
        t.entrants,
        seats,
        tables_per_entrant=per,
        partnerships=partnerships,
        allowed=allowed,
    )


def _schedule(t: StoredTournament) -> list[ScheduledGame]:
    """The games of ``t`` by its format: the design's tables (or every table, for a round
    robin) expanded by ``scheduler.expand``, one way for every format."""
    design = design_of(t)
    if design is None:
        return _round_robin(t)
    key = _key(t)
    if key in _SCHEDULES:
        return list(_SCHEDULES[key])
    game = game_of(t)
    _, baselines = split_baselines(t.entrants)
    games = expand(
        t.entrants,
        game.num_players,
        design.tables,
        games_per_pairing=t.games_per_pairing,
        partnerships=partnerships_of(game),
        deals=DealMode(t.deals),
        owners=t.owners,
        allow_same_owner_tables=t.allow_same_owner_tables,
        allow_same_owner_partners=t.allow_same_owner_partners,
        shared=baselines if t.format == "gauntlet" else (),
    )
    _keep(_SCHEDULES, key, tuple(games))
    return games


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

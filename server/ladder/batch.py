"""The official standings of a game's ladder or of one tournament: which games, one fit, its spread.

docs/ratings.md. The batch fit (``fit.py``) and its bootstrap (``fit_bootstrap.py``) read
one *pool*: games with the same number of seats and the same seating (free-for-all or
partnerships), since a seat term means something only among games of one shape. This module
picks the pool from stored matches, fits it, and returns everything a surface shows (the admin
API, the command line, the web face), so all three show the same numbers: the table's rows,
with what they don't know (provisional and one-sided ratings), are ``official.py``'s.

Which games: a tournament's counted games (normal ends, forfeits and adjudications, rated or
not: its own standings); for a game's ladder, the games that moved its ratings. A pool is named
by its seat count and seating, e.g. ``straight 4p partnerships``; when the caller names none,
the pool with the most games is fitted and the others are listed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist, pstdev
from typing import Final

from domino_arena.sdk.match.results import Termination
from domino_arena.server.ladder.elo import INITIAL_RATING
from domino_arena.server.ladder.fit import FitGame, FitResult, fit, fit_game_of
from domino_arena.server.ladder.fit_bootstrap import DEFAULT_ROUNDS, Bootstrap, bootstrap
from domino_arena.server.ladder.official import OfficialRow, official_rows
from domino_arena.server.ladder.pairs import PairRow, pair_table
from domino_arena.server.ladder.separation import main_part
from domino_arena.server.store.matches import StoredMatch, sides_of
from domino_arena.server.store.tables import HOUSE_PREFIX

MAX_ROUNDS: Final = 2000
"""The most bootstrap rounds one request may ask for (each is a refit)."""
MAX_BATCH_MATCHES: Final = 100_000
"""The newest matches of a pool (or a tournament) one batch fit reads."""
BOOTSTRAP_SEED: Final = 0
"""The bootstrap's seed: the same games always give the same intervals."""


@dataclass(frozen=True, slots=True, order=True)
class PoolKey:
    """The shape of a pool's games: seats per game, and whether partners share a side."""

    players: int
    partnerships: bool

    def label(self, game: str) -> str:
        """E.g. ``straight 4p partnerships`` or ``moon 3p``."""
        return f"{game} {self.players}p{' partnerships' if self.partnerships else ''}"


@dataclass(frozen=True, slots=True)
class SeatRow:
    """One line of the seat advantage as the surfaces show it."""

    label: str
    """E.g. ``seat 1``, or ``the first starter's side`` in a partnership pool."""
    position: int
    """The seat position measured (0 for a partnership side, whose seats are 0 and 2)."""
    elo: float
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class BatchStandings:
    """One pool's batch fit and its bootstrap, ready to show."""

    game: str
    key: PoolKey
    point: FitResult
    spread: Bootstrap
    games: int
    """Games fitted."""
    pairs: tuple[PairRow, ...]
    """Partnership pools: each pair of partners against its members' ratings; else empty."""
    other_pools: tuple[PoolKey, ...]
    """The pools of the same matches that were not fitted (other seat counts or seatings)."""
    table: tuple[OfficialRow, ...]
    """The official table: ranked bots best first, then provisional and unbounded ones
    (:func:`.official.official_rows`: what every surface shows)."""

    @property
    def label(self) -> str:
        return self.key.label(self.game)

    def seat_rows(self) -> tuple[SeatRow, ...]:
        """The seat advantage that the games measure, with its interval.

        Free-for-all: one row per seat position after the first starter's. Partnership pools:
        a side's strength is its seats' mean, so only the difference between the first
        starter's side (positions 0 and 2) and the other (1 and 3) is measured; the positions'
        single terms are the prior's split of it, and are not shown.
        """
        point, spread = self.point.seat_advantage, self.spread
        if not point:
            return ()
        if not self.key.partnerships:
            return tuple(
                SeatRow(f"seat {position}", position, elo, low, high)
                for position, (elo, (low, high)) in enumerate(
                    zip(point, spread.seat_intervals, strict=True)
                )
                if position > 0
            )
        weights = [0.5 if position % 2 == 0 else -0.5 for position in range(len(point))]
        elo = sum(w * x for w, x in zip(weights, point, strict=True))
        draws = [sum(w * x for w, x in zip(weights, row, strict=True)) for row in spread.seat_draws]
        half = NormalDist().inv_cdf(0.5 + spread.level / 2) * (pstdev(draws) if draws else 0.0)
        label = "the first starter's side (seats 0 and 2 against 1 and 3)"
        return (SeatRow(label, 0, elo, elo - half, elo + half),)

    def row(self, bot: str) -> OfficialRow | None:
        """``bot``'s row of :attr:`table`; None when it played none of the pool's games."""
        return next((row for row in self.table if row.bot == bot), None)


def pool_key(match: StoredMatch) -> PoolKey:
    """The pool a stored match belongs to."""
    sides = len(set(sides_of(match)))
    return PoolKey(players=len(match.seats), partnerships=sides != len(match.seats))


def counted(matches: Sequence[StoredMatch], *, ladder: bool) -> list[StoredMatch]:
    """The matches a fit reads: those that moved ratings (``ladder``), or every counted one."""
    if ladder:
        return [m for m in matches if m.moves_ratings]
    return [m for m in matches if Termination(m.termination).rated]


def batch_standings(
    matches: Sequence[StoredMatch],
    *,
    game: str,
    key: PoolKey | None = None,
    anchor: str | None = None,
    anchor_rating: float = INITIAL_RATING,
    rounds: int = DEFAULT_ROUNDS,
    seed: int = 0,
    fixed: Mapping[str, float] | None = None,
    apart: bool = False,
) -> BatchStandings:
    """Fit the pool ``key`` of ``matches`` (counted ones: see :func:`counted`) and bootstrap it.

    ``key`` None takes the pool with the most games. ``seed`` seeds the bootstrap, so the same
    games give the same intervals. ``fixed`` holds frozen baselines at their ratings (bot ->
    rating, :func:`.fit.fit`); those that played none of the pool's games are left out.
    ``apart``: list the bots of parts that never met the part that fixes the scale
    (:func:`.separation.main_part`) in the table, unranked and unbounded, instead of refusing
    the pool (the standings do; grades, which must give every bot a grade, refuse).

    Raises:
        ValueError: no games, no games in ``key`` (the message lists the pools there are), an
            anchor that played none of them, bots in parts that never met (unless ``apart``),
            or a round count outside 1..MAX_ROUNDS; the message names the field.
    """
    if not 1 <= rounds <= MAX_ROUNDS:
        raise ValueError(f"bootstrap_rounds: must be 1 to {MAX_ROUNDS}, got {rounds}")
    if not matches:
        raise ValueError(f"{game}: no rated games to fit yet")
    pools = Counter(pool_key(m) for m in matches)
    if key is None:
        key = min(pools, key=lambda k: (-pools[k], k))
    elif key not in pools:
        there = ", ".join(k.label(game) for k in sorted(pools))
        raise ValueError(f"players: no {key.label(game)} games to fit; there are: {there}")
    every: list[FitGame] = [fit_game_of(m) for m in matches if pool_key(m) == key]
    games, others_of = main_part(every, anchor=anchor, fixed=fixed or ()) if apart else (every, {})
    played = {bot for item in games for bot in item.game.bots}
    present = {bot: rating for bot, rating in (fixed or {}).items() if bot in played} or None
    try:
        point = fit(games, anchor=anchor, anchor_rating=anchor_rating, fixed=present)
    except ValueError as exc:
        text = str(exc)
        raise ValueError(
            text if text.startswith(("anchor", "games", "fixed")) else f"games: {text}"
        ) from None
    spread = bootstrap(games, point, rounds=rounds, seed=seed)
    others = tuple(sorted(k for k in pools if k != key))
    pairs = tuple(pair_table(games, point)) if key.partnerships else ()
    table = tuple(official_rows(games, point, spread.intervals, apart=others_of))
    return BatchStandings(game, key, point, spread, len(games), pairs, others, table)


def point_table(
    matches: Sequence[StoredMatch], baselines: Sequence[tuple[str, float]] = ()
) -> dict[str, OfficialRow]:
    """The official rows of a tournament's own fit, without its bootstrap: what its results
    table shows as each entrant's performance (docs/ratings.md). ``matches`` are the
    tournament's stored games (the counted ones are fitted, the pool with most games);
    ``baselines`` its frozen baselines (house bot name, fixed rating), held at their ratings.
    Empty when there are no counted games (or a damaged one)."""
    chosen = counted(matches, ladder=False)
    if not chosen:
        return {}
    pools = Counter(pool_key(m) for m in chosen)
    key = min(pools, key=lambda k: (-pools[k], k))
    try:
        every = [fit_game_of(m) for m in chosen if pool_key(m) == key]
    except ValueError:  # a damaged row or record: the results table still shows the rest
        return {}
    seats = {
        (name if name.startswith(HOUSE_PREFIX) else HOUSE_PREFIX + name): rating
        for name, rating in baselines
    }
    games, apart = main_part(every, fixed=seats)
    played = {bot for item in games for bot in item.game.bots}
    fixed = {seat: rating for seat, rating in seats.items() if seat in played}
    point = fit(games, fixed=fixed or None)
    return {row.bot: row for row in official_rows(games, point, None, apart=apart)}

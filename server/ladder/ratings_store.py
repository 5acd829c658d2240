"""The rating transaction: a rated match, its rating change and its place in the pool, at once.

A finished match and the rating change it causes are written in one transaction, and a match
is never rated twice (docs/referee.md: storing results). :func:`store_and_rate` is that step,
and the ladder holds it: it opens the transaction, has the store insert the batch's match rows
(:func:`domino_arena.server.store.matches.insert_batch`) and then, in that same transaction,
rates the rated games that were newly stored: it creates the bots' rating rows if missing,
locks them (``SELECT ... FOR UPDATE``; SQLite's write lock is taken at BEGIN), moves them in
memory by :func:`.elo.rate_game`, game after game in the batch's order (so the ratings are
those that saving the games one by one gives), appends the matches to ``rated_games`` and each
bot's new rating to ``rating_history`` (the points of a bot's rating chart), and writes each
moved rating once. :class:`RatedStorage` is the storage with the Elo ladder on top: its
:meth:`~RatedStorage.save_matches` is that step (:meth:`~RatedStorage.save_match` a batch of
one).
Frozen baselines (``house:NAME`` seats) get no rating row and no history: their opponents move
against the fixed ratings of the match's tournament (its ``baselines``), read in the same
transaction, and the replays read them likewise, so a replay still equals what was stored.
The call goes downward only: the ladder imports the store and the store never calls the ladder
(it knows no rating, and runs no step of its callers inside its writes).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Engine, Row, RowMapping
from sqlalchemy.exc import IntegrityError

from domino_arena.sdk.match.results import Termination
from domino_arena.server.ladder import elo
from domino_arena.server.store import matches
from domino_arena.server.store.engine import writing
from domino_arena.server.store.matches import SeatedResult, StoredMatch, sides_of
from domino_arena.server.store.storage import Storage
from domino_arena.server.store.tables import (
    HOUSE_PREFIX,
    MATCHES,
    RATED_GAMES,
    RATING_HISTORY,
    RATINGS,
    TOURNAMENTS,
)

_RATED_TERMINATIONS: Final = sorted(t.value for t in Termination if t.rated)
_REPLAY_ROWS: Final = 5_000
"""Rows fetched at a time when a pool is replayed (PostgreSQL streams them from the server)."""
_HISTORY_BATCH: Final = 5_000
"""Rows inserted per statement when a pool's history is rebuilt."""


def rated_game_of(
    match: SeatedResult, baselines: Sequence[tuple[str, float]] = ()
) -> elo.RatedGame:
    """Return ``match`` as the ladder rates it: its standing by score and winner, forfeits last.

    ``baselines`` are its tournament's frozen baselines (house bot name, fixed rating): those
    seated become the game's :attr:`~.elo.RatedGame.fixed` ratings.

    Raises:
        ValueError: the match did not end normally or by forfeit, or its fields disagree (a
            forfeit without a faulted seat, a bot in two seats, ...).
    """
    if match.termination not in _RATED_TERMINATIONS:
        raise ValueError(
            f"match {match.id}: termination {match.termination!r} is never rated; "
            f"expected one of {_RATED_TERMINATIONS}"
        )
    sides = sides_of(match)
    forfeited_side = None
    if match.termination == Termination.FORFEIT:
        if match.faulted_seat is None or not 0 <= match.faulted_seat < len(match.seats):
            raise ValueError(
                f"match {match.id}: faulted_seat: a forfeit needs the seat that forfeited "
                f"(0..{len(match.seats) - 1}), got {match.faulted_seat}"
            )
        forfeited_side = sides[match.faulted_seat]
    return elo.RatedGame(
        bots=match.seats,
        side_of_seat=sides,
        standing=elo.standing(match.scores, match.winner, forfeited_side),
        faults=match.faults or (0,) * len(match.seats),
        fixed=tuple(
            (seat, float(rating))
            for name, rating in sorted(baselines)
            if (seat := HOUSE_PREFIX + name) in match.seats
        ),
    )


def store_and_rate(engine: Engine, batch: Sequence[StoredMatch]) -> list[bool]:
    """Store the finished matches of ``batch``, then rate those newly stored that count for
    the ladder, in ONE transaction.

    One transaction because a finished match and its rating change are one fact
    (docs/referee.md: "stored in one transaction (its row, its record and its bots' rating
    change)"): a crash or an error leaves neither or both, so no rated match is ever stored
    unrated and no rating moves for a match that is not stored. Only the matches the insert
    found new are rated, so a resent match (a retry after a lost acknowledgement) writes
    nothing and rates nothing. The rated ones move their pool's ratings in ``batch``'s order,
    each from the ratings the ones before it left, exactly as saving them one by one would.

    Returns:
        For each match: True when written, False when it was stored already (nothing of it is
        written then).

    Raises:
        ValueError: a field out of range, or a rated match the ladder cannot rate (the message
            names the match, the field and why); nothing is written.
        Exception: what the database raised; nothing is written.
    """
    # A damaged match is refused before the transaction; a game outside a tournament is
    # rated as found here (a tournament's baselines are read in the transaction).
    games: dict[str, elo.RatedGame] = {}
    for match in batch:
        matches.check_match(match)
        if match.moves_ratings:
            games[match.id] = rated_game_of(match)
    try:
        with writing(engine) as connection:
            # Each rated match's row names the model that rates it (elo.MODEL).
            fresh = matches.insert_batch(connection, batch, rating_model=elo.MODEL)
            stored = [match for match, new in zip(batch, fresh, strict=True) if new]
            _rate_batch(connection, stored, games)
    except IntegrityError:
        if matches.stored_meanwhile(engine, batch):
            return [False]
        raise
    return fresh


class RatedStorage(Storage):
    """The referee's storage with its Elo ladder: rated matches move ratings as they are saved.

    Built and opened as :class:`~domino_arena.server.store.storage.Storage` is; every other
    call is the storage's.
    """

    def open(self) -> None:
        """Open and migrate as the storage does, then rebuild the rating history of every pool
        that lacks some of it (:meth:`rebuild_rating_history`): a database migrated from 0004
        has rated games and no history yet."""
        super().open()
        for pool in self._pools_missing_history():
            self.rebuild_rating_history(pool)

    def save_match(self, match: StoredMatch) -> bool:
        """Store a finished match and, if it is rated, its bots' new ratings, in one
        transaction: a batch of one (:meth:`save_matches`).

        Returns:
            True when written; False when the match was stored already (same id, or the same
            game of the same tournament): nothing is written then, so a retry after a commit
            whose acknowledgement was lost counts no game twice.

        Raises:
            ValueError: a field out of range, or a rated match the ladder cannot rate (the
                message says which field and why); nothing is written.
        """
        return self.save_matches((match,))[0]

    def save_matches(self, batch: Sequence[StoredMatch]) -> list[bool]:
        """Store the finished matches of ``batch`` and the rating changes of those rated, in
        one transaction: all of it or nothing (:func:`store_and_rate`; the ladder writer's
        group commit).

        Returns:
            For each match: True when written, False when it was stored already (nothing of it
            is written then).

        Raises:
            ValueError: a field out of range, or a rated match the ladder cannot rate (the
                message names the match, the field and why); nothing is written.
        """
        return store_and_rate(self.engine, batch)

    def ratings(self, pool: str) -> dict[str, elo.Rating]:
        """Return every rated bot's rating in ``pool`` (a game type), by bot name."""
        with self.engine.connect() as connection:
            rows = connection.execute(
                sa.select(RATINGS).where(RATINGS.c.pool == pool).order_by(RATINGS.c.bot)
            ).all()
        return {row.bot: _rating(row._mapping) for row in rows}

    def rated_games(self, pool: str) -> list[elo.RatedGame]:
        """Return the games rated in ``pool``, in the order they were rated."""
        return [game for _, game in self.rated_games_after(pool, 0)]

    def rated_games_after(self, pool: str, seq: int) -> list[tuple[int, elo.RatedGame]]:
        """Return the games rated in ``pool`` after its ``rated_games`` row ``seq`` (0: all),
        in the order they were rated, each with its seq: a reader that keeps ratings replayed
        up to a seq asks for the games since (the seq is the primary key: an index read)."""
        with self.engine.connect() as connection:
            rows = connection.execute(_rated_after(pool, seq)).all()
            baselines = _baselines(connection)
        return [(int(row.seq), _game_of_row(row, baselines)) for row in rows]

    def recompute_ratings(self, pool: str) -> dict[str, elo.Rating]:
        """Return the ratings of ``pool`` replayed from its rated games: what it should hold.

        Reads only the columns a game is rated from, and rates the rows as they come."""
        with self.engine.connect() as connection:
            baselines = _baselines(connection)
            rows = connection.execution_options(yield_per=_REPLAY_ROWS).execute(
                _rated_after(pool, 0)
            )
            return elo.replay(_game_of_row(row, baselines) for row in rows)

    def rating_history(self, pool: str, bot: str) -> list[tuple[int, float]]:
        """Return ``bot``'s rating after each rated game it played in ``pool``, oldest first,
        as (the game's ``rated_games`` seq, the rating then)."""
        query = (
            sa.select(RATING_HISTORY.c.seq, RATING_HISTORY.c.rating)
            .where(RATING_HISTORY.c.pool == pool, RATING_HISTORY.c.bot == bot)
            .order_by(RATING_HISTORY.c.seq)
        )
        with self.engine.connect() as connection:
            return [(int(seq), float(rating)) for seq, rating in connection.execute(query)]

    def rebuild_rating_history(self, pool: str) -> None:
        """Write ``pool``'s rating history again from its rated games, replayed in order with
        :func:`.elo.rate_game` (the arithmetic that wrote the ratings), in one transaction that
        holds the pool's rating rows locked, as rating a match does."""
        with writing(self.engine) as connection:
            connection.execute(
                sa.select(RATINGS.c.bot).where(RATINGS.c.pool == pool).with_for_update()
            ).all()
            connection.execute(RATING_HISTORY.delete().where(RATING_HISTORY.c.pool == pool))
            ratings: dict[str, elo.Rating] = {}
            batch: list[dict[str, Any]] = []
            baselines = _baselines(connection)
            for row in connection.execute(_rated_after(pool, 0)).all():
                changed = elo.rate_game(ratings, _game_of_row(row, baselines))
                ratings.update(changed)
                batch.extend(_history_rows(pool, row.seq, changed))
                if len(batch) >= _HISTORY_BATCH:
                    connection.execute(RATING_HISTORY.insert(), batch)
                    batch = []
            if batch:
                connection.execute(RATING_HISTORY.insert(), batch)

    def _pools_missing_history(self) -> list[str]:
        """The pools with a rated game that has no history row."""
        missing = (
            sa.select(RATED_GAMES.c.pool)
            .where(~sa.exists().where(RATING_HISTORY.c.seq == RATED_GAMES.c.seq))
            .distinct()
            .order_by(RATED_GAMES.c.pool)
        )
        with self.engine.connect() as connection:
            return list(connection.execute(missing).scalars())

    def pools(self) -> list[str]:
        """Return the game types that have ratings, sorted."""
        with self.engine.connect() as connection:
            return list(
                connection.execute(
                    sa.select(RATINGS.c.pool).distinct().order_by(RATINGS.c.pool)
                ).scalars()
            )


def _baselines(
    connection: sa.Connection, tournament_ids: Collection[str] | None = None
) -> dict[str, tuple[tuple[str, float], ...]]:
    """Tournament id -> its frozen baselines, for the tournaments that seat some (only those
    of ``tournament_ids`` when given; none for a match outside a tournament)."""
    query = sa.select(TOURNAMENTS.c.id, TOURNAMENTS.c.baselines)
    if tournament_ids is not None:
        query = query.where(TOURNAMENTS.c.id.in_(sorted(tournament_ids)))
    return {
        row.id: tuple((b["bot"], float(b["rating"])) for b in row.baselines)
        for row in connection.execute(query)
        if row.baselines
    }


@dataclass(frozen=True, slots=True)
class _RatedColumns:
    """The columns of a rated game's row that the ladder rates it from (:data:`_RATED_COLUMNS`):
    the replays read these alone, never the record nor the rest of the row."""

    id: str
    seats: tuple[str, ...]
    termination: str
    winner: int | None
    scores: tuple[int, ...]
    faulted_seat: int | None
    side_of_seat: tuple[int, ...]
    faults: tuple[int, ...]


_RATED_COLUMNS: Final = (
    MATCHES.c.id,
    sa.cast(MATCHES.c.seats, sa.Text).label("seats"),
    MATCHES.c.termination,
    MATCHES.c.winner,
    sa.cast(MATCHES.c.scores, sa.Text).label("scores"),
    MATCHES.c.faulted_seat,
    sa.cast(MATCHES.c.side_of_seat, sa.Text).label("side_of_seat"),
    sa.cast(MATCHES.c.faults, sa.Text).label("faults"),
    MATCHES.c.tournament_id,
)
"""The JSON arrays are read as their text, and parsed by :func:`_array` (once per distinct
text), not by the driver or SQLAlchemy once per row."""

_DISTINCT_ARRAYS: Final = 8_192
"""Distinct JSON arrays a replay keeps parsed: a pool's rows repeat few of them (its bots'
seatings, the sides, the faults; scores vary more)."""


@functools.lru_cache(maxsize=_DISTINCT_ARRAYS)
def _array(text: str) -> tuple[Any, ...]:
    """A JSON array column's text as a tuple (immutable, so one parse serves every row)."""
    return tuple(json.loads(text))


def _game_of_row(
    row: Row[Any], baselines: dict[str, tuple[tuple[str, float], ...]]
) -> elo.RatedGame:
    """A rated game's row (:func:`_rated_after`) as the ladder rates it, with its tournament's
    baselines."""
    columns = _RatedColumns(
        row.id,
        _array(row.seats),
        row.termination,
        row.winner,
        _array(row.scores),
        row.faulted_seat,
        _array(row.side_of_seat),
        _array(row.faults),
    )
    return rated_game_of(columns, baselines.get(row.tournament_id or "", ()))


def _rate_batch(
    connection: sa.Connection, written: Sequence[StoredMatch], found: dict[str, elo.RatedGame]
) -> None:
    """Move the ratings of the rated matches of ``written`` (those just stored), in order,
    inside :func:`store_and_rate`'s transaction: their bots' rows (in each match's pool,
    ``match.game``) are created if missing, then locked and read once, moved in memory game
    after game, and written once; each game gets its ``rated_games`` row and its bots'
    ``rating_history``. House bots (frozen) get no row. ``found``: match id -> its game as
    rated without baselines; a game of a tournament with frozen baselines is rated again
    with them."""
    rated = [match for match in written if match.moves_ratings]
    if not rated:
        return
    tournaments = {match.tournament_id for match in rated if match.tournament_id is not None}
    baselines = _baselines(connection, tournaments) if tournaments else {}
    games = [
        rated_game_of(m, baselines[m.tournament_id])
        if m.tournament_id in baselines
        else found[m.id]
        for m in rated
    ]
    current = _locked_ratings(
        connection,
        {
            (match.game, bot)
            for match, game in zip(rated, games, strict=True)
            for bot in game.bots
            if not elo.is_house(bot)
        },
    )
    seqs = _append_rated(connection, rated)
    history: list[dict[str, Any]] = []
    moved: dict[tuple[str, str], elo.Rating] = {}
    for match, game, seq in zip(rated, games, seqs, strict=True):
        pool = current.setdefault(match.game, {})
        changed = elo.rate_game(pool, game)
        pool.update(changed)
        history.extend(_history_rows(match.game, seq, changed))
        moved.update(((match.game, bot), rating) for bot, rating in changed.items())
    if moved:
        # Each moved rating is written once; the rows' other keys are the columns to set.
        same = (RATINGS.c.pool == sa.bindparam("at_pool"), RATINGS.c.bot == sa.bindparam("at_bot"))
        connection.execute(
            RATINGS.update().where(*same),
            [
                {"at_pool": pool, "at_bot": bot, **_rating_values(rating)}
                for (pool, bot), rating in sorted(moved.items())
            ],
        )
    if history:
        connection.execute(RATING_HISTORY.insert(), history)


def _locked_ratings(
    connection: sa.Connection, keys: set[tuple[str, str]]
) -> dict[str, dict[str, elo.Rating]]:
    """Pool -> bot -> rating of the (pool, bot) ``keys``: each row created (fresh) if missing,
    then all locked (``SELECT ... FOR UPDATE``, in (pool, bot) order, so two writers lock in
    the same order) and read."""
    fresh = _rating_values(elo.Rating())
    # Each dialect's module is imported when used: a referee on SQLite never loads
    # PostgreSQL's (about 2.5 MiB of resident memory), nor one on PostgreSQL SQLite's.
    insert: sa.Insert
    if connection.dialect.name == "postgresql":
        from sqlalchemy.dialects import postgresql  # noqa: PLC0415

        insert = postgresql.insert(RATINGS).on_conflict_do_nothing()
    else:
        from sqlalchemy.dialects import sqlite  # noqa: PLC0415

        insert = sqlite.insert(RATINGS).on_conflict_do_nothing()
    if keys:
        new_rows = [{"pool": pool, "bot": bot, **fresh} for pool, bot in sorted(keys)]
        connection.execute(insert, new_rows)
    current: dict[str, dict[str, elo.Rating]] = {}
    for pool in sorted({pool for pool, _ in keys}):
        bots = sorted(bot for p, bot in keys if p == pool)
        rows = connection.execute(
            sa.select(RATINGS)
            .where(RATINGS.c.pool == pool, RATINGS.c.bot.in_(bots))
            .order_by(RATINGS.c.bot)
            .with_for_update()
        ).all()
        current[pool] = {row.bot: _rating(row._mapping) for row in rows}
    return current


def _append_rated(connection: sa.Connection, rated: Sequence[StoredMatch]) -> list[int]:
    """Append ``rated`` to ``rated_games`` in order; return their seqs (increasing).

    PostgreSQL gives them with one ordered ``INSERT ... RETURNING``. SQLite would insert one
    row per statement to keep that order, so there the seqs are given: the transaction holds
    the file's write lock since BEGIN, so the next seqs are the largest one's followers,
    exactly what SQLite would pick."""
    if connection.dialect.name == "sqlite":
        last = connection.execute(sa.select(sa.func.max(RATED_GAMES.c.seq))).scalar_one()
        first = (last or 0) + 1
        seqs = list(range(first, first + len(rated)))
        connection.execute(
            RATED_GAMES.insert(),
            [
                {"seq": seq, "pool": match.game, "match_id": match.id}
                for seq, match in zip(seqs, rated, strict=True)
            ],
        )
        return seqs
    inserted = connection.execute(
        RATED_GAMES.insert().returning(RATED_GAMES.c.seq, sort_by_parameter_order=True),
        [{"pool": match.game, "match_id": match.id} for match in rated],
    )
    return [int(seq) for seq in inserted.scalars()]


def _rated_after(pool: str, seq: int) -> sa.Select[Any]:
    """The rows of ``pool``'s games rated after its ``rated_games`` row ``seq``, in rating
    order: the seq and the columns the ladder rates a match from (:data:`_RATED_COLUMNS`)."""
    return (
        sa.select(RATED_GAMES.c.seq, *_RATED_COLUMNS)
        .select_from(MATCHES.join(RATED_GAMES, RATED_GAMES.c.match_id == MATCHES.c.id))
        .where(RATED_GAMES.c.pool == pool, RATED_GAMES.c.seq > seq)
        .order_by(RATED_GAMES.c.seq)
    )


def _history_rows(pool: str, seq: int, changed: dict[str, elo.Rating]) -> list[dict[str, Any]]:
    """The ``rating_history`` rows of one rated game: each of its bots' rating after it."""
    return [
        {"seq": seq, "bot": bot, "pool": pool, "rating": rating.rating}
        for bot, rating in changed.items()
    ]


def _rating(row: RowMapping) -> elo.Rating:
    return elo.Rating(
        rating=float(row["rating"]),
        games=row["games"],
        wins=row["wins"],
        draws=row["draws"],
        losses=row["losses"],
        faults=row["faults"],
        information=float(row["information"]),
    )


def _rating_values(rating: elo.Rating) -> dict[str, Any]:
    return {
        "rating": rating.rating,
        "games": rating.games,
        "wins": rating.wins,
        "draws": rating.draws,
        "losses": rating.losses,
        "faults": rating.faults,
        "information": rating.information,
    }

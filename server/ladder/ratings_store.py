"""The rating transaction: a rated match, its rating change and its place in the pool, at once.

DESIGN.md decisions 11 and 12: a finished match and the rating change it causes are written in
one transaction, and a match is never rated twice. :class:`RatedStorage` is the storage with
the Elo ladder on top: its :meth:`~RatedStorage.save_match` stores the match row through
:func:`domino_arena.server.store.matches.save` and, inside that same transaction, creates the
bots' rating rows if missing, locks them (``SELECT ... FOR UPDATE``; SQLite's write lock is
taken at BEGIN), moves them by :func:`.elo.rate_game`, appends the match to ``rated_games`` and
each bot's new rating to ``rating_history`` (the points of a bot's rating chart).
Frozen baselines (``house:NAME`` seats) get no rating row and no history: their opponents move
against the fixed ratings of the match's tournament (its ``baselines``), read in the same
transaction, and the replays read them likewise, so a replay still equals what was stored.
The storage stays free of ratings (it does not import the ladder); the ladder imports it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import RowMapping

from domino_arena.sdk.match.results import Termination
from domino_arena.server.ladder import elo
from domino_arena.server.store import matches
from domino_arena.server.store.engine import writing
from domino_arena.server.store.matches import (
    SUMMARY_COLUMNS,
    StoredMatch,
    sides_of,
    stored_match,
)
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
_HISTORY_BATCH: Final = 5_000
"""Rows inserted per statement when a pool's history is rebuilt."""


def rated_game_of(match: StoredMatch, baselines: Sequence[tuple[str, float]] = ()) -> elo.RatedGame:
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
        """Store a finished match and, if it is rated, its bots' new ratings, in one transaction.

        Returns:
            True when written; False when the match was stored already (same id, or the same
            game of the same tournament): nothing is written then, so a retry after a commit
            whose acknowledgement was lost counts no game twice.

        Raises:
            ValueError: a field out of range, or a rated match the ladder cannot rate (the
                message says which field and why); nothing is written.
        """
        matches.check_match(match)
        if not match.moves_ratings:
            return matches.save(self.engine, match)
        match = dataclasses.replace(match, rating_model=elo.MODEL)
        rated_game_of(match)  # refuse a damaged match before the transaction

        def rate(connection: sa.Connection) -> None:
            if match.tournament_id is None:
                _rate(connection, match, rated_game_of(match))
                return
            baselines = _baselines(connection, match.tournament_id)
            _rate(connection, match, rated_game_of(match, baselines.get(match.tournament_id, ())))

        return matches.save(self.engine, match, rate)

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
        return [(int(row.seq), _game_of_row(row._mapping, baselines)) for row in rows]

    def recompute_ratings(self, pool: str) -> dict[str, elo.Rating]:
        """Return the ratings of ``pool`` replayed from its rated games: what it should hold."""
        return elo.replay(self.rated_games(pool))

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
                changed = elo.rate_game(ratings, _game_of_row(row._mapping, baselines))
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
    connection: sa.Connection, tournament_id: str | None = None
) -> dict[str, tuple[tuple[str, float], ...]]:
    """Tournament id -> its frozen baselines, for the tournaments that seat some (only
    ``tournament_id``'s when given; none for a match outside a tournament)."""
    query = sa.select(TOURNAMENTS.c.id, TOURNAMENTS.c.baselines)
    if tournament_id is not None:
        query = query.where(TOURNAMENTS.c.id == tournament_id)
    return {
        row.id: tuple((b["bot"], float(b["rating"])) for b in row.baselines)
        for row in connection.execute(query)
        if row.baselines
    }


def _game_of_row(
    row: RowMapping, baselines: dict[str, tuple[tuple[str, float], ...]]
) -> elo.RatedGame:
    """A rated game's row as the ladder rates it, with its tournament's baselines."""
    match = stored_match(row)
    return rated_game_of(match, baselines.get(match.tournament_id or "", ()))


def _rate(connection: sa.Connection, match: StoredMatch, game: elo.RatedGame) -> None:
    """Move the ratings of ``game``'s bots in the pool ``match.game``, inside the caller's
    transaction: their rows are created if missing, then locked, read, rated and written.
    House bots (frozen) get no row."""
    pool, bots = match.game, sorted(bot for bot in game.bots if not elo.is_house(bot))
    fresh = elo.Rating()
    new_rows = [{"pool": pool, "bot": bot, **_rating_values(fresh)} for bot in bots]
    insert = (
        postgresql.insert(RATINGS)
        if connection.dialect.name == "postgresql"
        else sqlite.insert(RATINGS)
    )
    if new_rows:
        connection.execute(insert.on_conflict_do_nothing(), new_rows)
    rows = connection.execute(
        sa.select(RATINGS)
        .where(RATINGS.c.pool == pool, RATINGS.c.bot.in_(bots))
        .order_by(RATINGS.c.bot)
        .with_for_update()
    ).all()
    current = {row.bot: _rating(row._mapping) for row in rows}
    changed = elo.rate_game(current, game)
    for bot, rating in changed.items():
        connection.execute(
            RATINGS.update()
            .where(RATINGS.c.pool == pool, RATINGS.c.bot == bot)
            .values(_rating_values(rating))
        )
    inserted = connection.execute(RATED_GAMES.insert().values(pool=pool, match_id=match.id))
    key = inserted.inserted_primary_key
    if key is None:  # pragma: no cover - an insert of one row always has its key
        raise RuntimeError(f"match {match.id}: the database gave no rated_games seq")
    seq = int(key[0])
    if changed:
        connection.execute(RATING_HISTORY.insert(), _history_rows(pool, seq, changed))


def _rated_after(pool: str, seq: int) -> sa.Select[Any]:
    """The rows of ``pool``'s games rated after its ``rated_games`` row ``seq``, in rating
    order: each match's row without its record, and the seq."""
    return (
        sa.select(RATED_GAMES.c.seq, *SUMMARY_COLUMNS)
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

"""Finished matches: the row each one leaves (:class:`StoredMatch`), saving it once, reading it.

A match is never stored twice (same id, or same tournament game): a retry after a lost
acknowledgement finds it and writes nothing (docs/referee.md: storing results).
:func:`insert_batch` is the store's whole part of saving: it writes a batch's rows inside a
transaction its caller holds, and says which were new. The ladder
(``server/ladder/ratings_store.py``) holds that transaction and rates the new rated games in
it; :func:`save_many` is the same insert in a transaction of its own, for the matches that move
no rating. The store runs no step of its callers: it only writes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

import sqlalchemy as sa
from sqlalchemy.engine import Engine, RowMapping
from sqlalchemy.exc import IntegrityError

from domino_arena.sdk.match.results import FaultKind, Termination
from domino_arena.sdk.match.seeds import check_seed
from domino_arena.server.store.engine import writing
from domino_arena.server.store.tables import DEFAULT_COURSE, MATCH_SEATS, MATCHES, utc

_TERMINATIONS: Final = tuple(termination.value for termination in Termination)
_RATED_TERMINATIONS: Final = frozenset(t.value for t in Termination if t.rated)
_FAULT_KINDS: Final = tuple(kind.value for kind in FaultKind)
SUMMARY_COLUMNS: Final = (
    *(column for column in MATCHES.c if column.name != "record"),
    sa.null().label("record"),
)
"""Every column of ``matches`` but the record (read as None): a row's result without its bulk."""


@dataclass(frozen=True, slots=True)
class StoredMatch:
    """One row of ``matches``: how a match ended, and its record when there is one."""

    id: str
    game: str
    options: dict[str, Any]
    seats: tuple[str, ...]
    seed: int
    termination: str
    """A :class:`~domino_arena.sdk.match.results.Termination` value."""
    winner: int | None
    """The winning side, None when nobody won."""
    scores: tuple[int, ...]
    """Per side."""
    faulted_seat: int | None
    fault: str | None
    """A :class:`~domino_arena.sdk.match.results.FaultKind` value, or None."""
    detail: str
    record: str | None
    """The match record as JSON Lines; None when the referee could not write one."""
    created: dt.datetime
    tournament_id: str | None = None
    game_index: int | None = None
    """The game's position in its tournament's schedule; unique within the tournament."""
    deal_id: int | None = None
    """Games of a tournament with the same deal id are played from the same seed."""
    rotation: int | None = None
    side_of_seat: tuple[int, ...] = ()
    """The side of each seat; empty means one side per seat, in seat order."""
    faults: tuple[int, ...] = ()
    """Faults charged to each seat; empty means none."""
    rated: bool = False
    """Counts for the Elo ladder of its game (when it ended normally or by forfeit)."""
    rating_model: str = ""
    """The rating model and version the game fed (e.g. ``elo-pairwise-k24/1``); empty when it
    fed none (unrated) or was stored before models were named."""
    course: str = DEFAULT_COURSE
    """The course it was played in (docs/courses.md)."""
    carried_from: str | None = None
    """A regrade's game carried over unplayed: the id of the original tournament's match."""

    @property
    def moves_ratings(self) -> bool:
        """Whether saving it moves ratings: marked rated, and ended in a rated way (a
        termination that is none is no rated way: :func:`check_match` refuses it)."""
        return self.rated and self.termination in _RATED_TERMINATIONS


class SeatedResult(Protocol):
    """What a match's result is made of, for those that read only that (the ladder's replay
    reads these columns alone): a :class:`StoredMatch` is one."""

    @property
    def id(self) -> str: ...
    @property
    def seats(self) -> tuple[str, ...]: ...
    @property
    def termination(self) -> str: ...
    @property
    def winner(self) -> int | None: ...
    @property
    def scores(self) -> tuple[int, ...]: ...
    @property
    def faulted_seat(self) -> int | None: ...
    @property
    def side_of_seat(self) -> tuple[int, ...]: ...
    @property
    def faults(self) -> tuple[int, ...]: ...


def sides_of(match: SeatedResult) -> tuple[int, ...]:
    """Return the side of each seat of ``match`` (one side per seat when it does not say)."""
    if match.side_of_seat:
        return match.side_of_seat
    if len(match.scores) != len(match.seats):
        raise ValueError(
            f"match {match.id}: side_of_seat is empty but there are {len(match.scores)} scores "
            f"for {len(match.seats)} seats; expected the side of each seat"
        )
    return tuple(range(len(match.seats)))


def check_match(match: StoredMatch) -> None:
    """Raise ``ValueError`` naming the field of ``match`` that no row may hold."""
    check_seed(match.seed, f"match {match.id}: seed")
    if match.termination not in _TERMINATIONS:
        raise ValueError(
            f"match {match.id}: termination: expected one of {list(_TERMINATIONS)}, "
            f"got {match.termination!r}"
        )
    if match.fault is not None and match.fault not in _FAULT_KINDS:
        raise ValueError(
            f"match {match.id}: fault: expected one of {list(_FAULT_KINDS)} or none, "
            f"got {match.fault!r}"
        )
    seats = len(match.seats)
    for field, values in (("side_of_seat", match.side_of_seat), ("faults", match.faults)):
        if values and len(values) != seats:
            raise ValueError(
                f"match {match.id}: {field}: expected one entry per seat ({seats}) or none, "
                f"got {values!r}"
            )
    if (match.tournament_id is None) != (match.game_index is None):
        raise ValueError(
            f"match {match.id}: tournament_id and game_index go together; got "
            f"tournament_id={match.tournament_id!r}, game_index={match.game_index!r}"
        )


def insert_batch(
    connection: sa.Connection, batch: Sequence[StoredMatch], *, rating_model: str = ""
) -> list[bool]:
    """Insert the matches of ``batch`` that are not stored yet, in order, in the transaction
    the caller holds on ``connection``: with one statement per table, whatever the batch's size.

    ``rating_model``, when given, is stored as the rating model of each match that
    :attr:`~StoredMatch.moves_ratings` (the ladder names the model it rates them by; the store
    knows none), without copying the matches.

    A match stored already (same id, or the same game of the same tournament, also earlier in
    ``batch``) is skipped: it is written once, so a retry writes nothing twice.

    Returns:
        For each match of ``batch``: True when inserted now, False when it was stored already.

    Raises:
        ValueError: a field out of range (:func:`check_match`); nothing is inserted.
        IntegrityError: the database refused a row (a game of an unknown tournament), or
            another transaction stored one of them between this one's look and its insert;
            the caller's transaction is to be rolled back (:func:`stored_meanwhile` then tells
            a lost race of one match from a bad row).
    """
    for match in batch:
        check_match(match)
    fresh = _not_stored(connection, batch)
    written = [match for match, new in zip(batch, fresh, strict=True) if new]
    if written:
        rows = [match_row(match) for match in written]
        if rating_model:
            for match, row in zip(written, rows, strict=True):
                if match.moves_ratings:
                    row["rating_model"] = rating_model
        connection.execute(MATCHES.insert(), rows)
        seats = [row for match in written for row in seat_rows(match)]
        connection.execute(MATCH_SEATS.insert(), seats)
    return fresh


def save_many(engine: Engine, batch: Sequence[StoredMatch]) -> list[bool]:
    """Store the matches of ``batch`` in one transaction of their own (:func:`insert_batch`):
    all of them or none. For matches that move no rating; the ladder stores rated ones with
    their rating change in one transaction it holds itself.

    Returns:
        For each match of ``batch``: True when written, False when it was stored already.

    Raises:
        ValueError: a field out of range (:func:`check_match`); nothing is written.
        Exception: what the database raised; nothing is written.
    """
    for match in batch:
        check_match(match)  # before the write lock is waited for
    try:
        with writing(engine) as connection:
            return insert_batch(connection, batch)
    except IntegrityError:
        if stored_meanwhile(engine, batch):
            return [False]
        raise


def stored_meanwhile(engine: Engine, batch: Sequence[StoredMatch]) -> bool:
    """After :func:`insert_batch` raised ``IntegrityError`` and its transaction rolled back:
    whether ``batch`` is one match that someone else stored between the look and the insert
    (it is stored once, so saving it is a duplicate: False). A batch of several is stored
    again one by one by its writer (``server/store/writer.py``), each match finding out alone.
    """
    if len(batch) != 1:
        return False
    with engine.connect() as connection:
        return _not_stored(connection, batch) == [False]


def match(engine: Engine, match_id: str) -> StoredMatch | None:
    """Return the stored match ``match_id``, or None."""
    with engine.connect() as connection:
        row = connection.execute(sa.select(MATCHES).where(MATCHES.c.id == match_id)).one_or_none()
    return None if row is None else stored_match(row._mapping)


def matches(
    engine: Engine,
    limit: int = 100,
    *,
    tournament_id: str | None = None,
    bot: str | None = None,
    game: str | None = None,
    offset: int = 0,
    records: bool = True,
    course: str | None = None,
) -> list[StoredMatch]:
    """Return the latest ``limit`` matches, newest first, of those that fit every filter.

    Args:
        offset: skip this many of them first (a page further down the list).
        records: False leaves each match's record unread (``record`` None): a list that shows
            results only reads a small part of each row.
        tournament_id: only the games of this tournament.
        bot: only matches where this bot had a seat.
        game: only matches of this game type (a pool).
        course: only the matches of this course (without a bot, through the index
            ``ix_matches_course_created``).
    """
    if bot is not None:
        # A bot's matches, newest first, from match_seats' index alone (a match's game is
        # read from its row's first columns, never past its record).
        seats = MATCH_SEATS.join(MATCHES, MATCHES.c.id == MATCH_SEATS.c.match_id)
        page = (
            sa.select(MATCH_SEATS.c.match_id)
            .select_from(seats)
            .where(MATCH_SEATS.c.bot == bot)
            .order_by(MATCH_SEATS.c.created.desc(), MATCH_SEATS.c.match_id)
        )
    else:
        page = sa.select(MATCHES.c.id).order_by(MATCHES.c.created.desc(), MATCHES.c.id)
    if tournament_id is not None:
        page = page.where(MATCHES.c.tournament_id == tournament_id)
    if game is not None:
        page = page.where(MATCHES.c.game == game)
    if course is not None:
        page = page.where(MATCHES.c.course == course)
    # The page's ids first (an index scan, however deep the offset), then only their rows.
    ids = page.limit(limit).offset(offset).scalar_subquery()
    columns = MATCHES.c if records else SUMMARY_COLUMNS
    query = (
        sa.select(*columns)
        .where(MATCHES.c.id.in_(ids))
        .order_by(MATCHES.c.created.desc(), MATCHES.c.id)
    )
    with engine.connect() as connection:
        rows = connection.execute(query).all()
    return [stored_match(row._mapping) for row in rows]


def stored_match(row: RowMapping) -> StoredMatch:
    """Return the :class:`StoredMatch` of a row of ``matches``."""
    return StoredMatch(
        id=row["id"],
        game=row["game"],
        options=dict(row["options"]),
        seats=tuple(row["seats"]),
        seed=int(row["seed"]),
        termination=row["termination"],
        winner=row["winner"],
        scores=tuple(row["scores"]),
        faulted_seat=row["faulted_seat"],
        fault=row["fault"],
        detail=row["detail"],
        record=row["record"],
        created=utc(row["created"]),
        tournament_id=row["tournament_id"],
        game_index=row["game_index"],
        deal_id=row["deal_id"],
        rotation=row["rotation"],
        side_of_seat=tuple(row["side_of_seat"]),
        faults=tuple(row["faults"]),
        rated=bool(row["rated"]),
        rating_model=row["rating_model"],
        course=row["course"],
        carried_from=row["carried_from"],
    )


def _not_stored(connection: sa.Connection, batch: Sequence[StoredMatch]) -> list[bool]:
    """For each match of ``batch``: True when neither it (its id) nor its tournament game is
    stored yet, nor earlier in ``batch``."""
    ids = set(
        connection.execute(
            sa.select(MATCHES.c.id).where(MATCHES.c.id.in_({match.id for match in batch}))
        ).scalars()
    )
    games: set[tuple[str | None, int | None]] = set()
    tournaments = {match.tournament_id for match in batch if match.tournament_id is not None}
    if tournaments:
        indexes = {match.game_index for match in batch if match.tournament_id is not None}
        query = sa.select(MATCHES.c.tournament_id, MATCHES.c.game_index).where(
            MATCHES.c.tournament_id.in_(tournaments), MATCHES.c.game_index.in_(indexes)
        )
        games = {(row.tournament_id, row.game_index) for row in connection.execute(query)}
    fresh = []
    for match in batch:
        game = (match.tournament_id, match.game_index)
        new = match.id not in ids and (match.tournament_id is None or game not in games)
        if new:
            ids.add(match.id)
            games.add(game)
        fresh.append(new)
    return fresh


def seat_rows(match: StoredMatch) -> list[dict[str, Any]]:
    """The rows of ``match_seats`` that go with ``match``: one per seat."""
    return [
        {"match_id": match.id, "seat": seat, "bot": bot, "created": match.created}
        for seat, bot in enumerate(match.seats)
    ]


def match_row(match: StoredMatch) -> dict[str, Any]:
    """The row of ``matches`` that stores ``match`` (with :func:`seat_rows`, what
    :func:`insert_batch` inserts)."""
    return {
        "id": match.id,
        "game": match.game,
        "options": match.options,
        "seats": list(match.seats),
        "seed": match.seed,
        "termination": match.termination,
        "winner": match.winner,
        "scores": list(match.scores),
        "faulted_seat": match.faulted_seat,
        "fault": match.fault,
        "detail": match.detail,
        "record": match.record,
        "created": match.created,
        "tournament_id": match.tournament_id,
        "game_index": match.game_index,
        "deal_id": match.deal_id,
        "rotation": match.rotation,
        "side_of_seat": list(match.side_of_seat),
        "faults": list(match.faults),
        "rated": match.rated,
        "rating_model": match.rating_model,
        "course": match.course,
        "carried_from": match.carried_from,
    }

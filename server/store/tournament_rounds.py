"""The rounds of a Swiss or knockout tournament, each stored before its games start.

An adaptive format chooses a round's tables from the results so far, so a restart could not
derive them again if the results were not yet all stored, or if a game of the round finished
after the choice. The round is written first (:func:`add_round`) and read back on resume
(:func:`rounds`): the referee then plays exactly the stored round's games that are missing, and
seats the next round only once every game of this one is stored (docs/tournaments.md: Swiss,
knockout).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Engine, RowMapping
from sqlalchemy.exc import IntegrityError

from domino_arena.server.store.tables import TOURNAMENT_ROUNDS, now, utc


@dataclass(frozen=True, slots=True)
class StoredRound:
    """One round of a tournament: its tables and the game indexes they fill.

    Raises:
        ValueError: a field out of its range (the message names the field and the rule).
    """

    tournament_id: str
    number: int
    """From 0, in the order played."""
    tables: tuple[tuple[str, ...], ...]
    """Each table's entrants, in seat order before rotation."""
    byes: tuple[str, ...]
    """The entrants sitting the round out."""
    first_index: int
    """The game index of the round's first game; its games follow without a gap."""
    games: int
    created: dt.datetime

    def __post_init__(self) -> None:
        if self.number < 0:
            raise ValueError(f"number: expected at least 0, got {self.number}")
        if self.first_index < 0 or self.games < 1:
            raise ValueError(
                f"first_index, games: expected at least 0 and 1, got {self.first_index}, "
                f"{self.games}"
            )
        if not self.tables:
            raise ValueError("tables: a round seats at least one table")

    @property
    def indexes(self) -> range:
        """The game indexes of the round."""
        return range(self.first_index, self.first_index + self.games)


def add_round(engine: Engine, stored: StoredRound) -> StoredRound:
    """Store ``stored`` unless its tournament has that round already; return the round stored.

    Two referees that seat the same round at once (a lease handed over mid-choice) keep the
    first one written: the loser gets the winner's round back and plays it.

    Raises:
        ValueError: the round does not follow the stored ones (a gap in numbers or indexes).
    """
    existing = rounds(engine, stored.tournament_id)
    if stored.number < len(existing):
        return existing[stored.number]
    expected = existing[-1].first_index + existing[-1].games if existing else 0
    if stored.number != len(existing) or stored.first_index != expected:
        raise ValueError(
            f"round {stored.number} of {stored.tournament_id}: expected round {len(existing)} "
            f"from game {expected}, got round {stored.number} from game {stored.first_index}"
        )
    row = {
        "tournament_id": stored.tournament_id,
        "number": stored.number,
        "tables": [list(table) for table in stored.tables],
        "byes": list(stored.byes),
        "first_index": stored.first_index,
        "games": stored.games,
        "created": stored.created,
    }
    try:
        with engine.begin() as connection:
            connection.execute(TOURNAMENT_ROUNDS.insert().values(row))
    except IntegrityError:
        return rounds(engine, stored.tournament_id)[stored.number]
    return stored


def rounds(engine: Engine, tournament_id: str) -> list[StoredRound]:
    """The stored rounds of ``tournament_id``, first first (none for a fixed format)."""
    query = (
        sa.select(TOURNAMENT_ROUNDS)
        .where(TOURNAMENT_ROUNDS.c.tournament_id == tournament_id)
        .order_by(TOURNAMENT_ROUNDS.c.number)
    )
    with engine.connect() as connection:
        return [_stored_round(row._mapping) for row in connection.execute(query)]


def new_round(
    tournament_id: str,
    number: int,
    *,
    tables: tuple[tuple[str, ...], ...],
    byes: tuple[str, ...],
    first_index: int,
    games: int,
) -> StoredRound:
    """A round to store now (its ``created`` time is now)."""
    return StoredRound(tournament_id, number, tables, byes, first_index, games, created=now())


def _stored_round(row: RowMapping) -> StoredRound:
    return StoredRound(
        tournament_id=row["tournament_id"],
        number=int(row["number"]),
        tables=tuple(tuple(str(name) for name in table) for table in row["tables"]),
        byes=tuple(str(name) for name in row["byes"]),
        first_index=int(row["first_index"]),
        games=int(row["games"]),
        created=utc(row["created"]),
    )

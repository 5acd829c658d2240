"""Swiss and knockout tournaments stored as the referee stores them: the tournament's row, each
round before its games (``Storage.add_tournament_round``) and the round's games, two-seat
Passing Games of two rotations per table (``tournaments.two_seat_row``), through the real
store API. For the web face's pages of rounds and brackets.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Final

from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.ladder.rounds import knockout_bracket, results_of
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tables import DEFAULT_COURSE
from domino_arena.server.store.tournament_rounds import StoredRound
from domino_arena.server.store.tournaments import StoredTournament, TournamentState

from .tournaments import two_seat_row
from .web import START, a_tournament

GAMES_PER_TABLE: Final = 2
"""Each table plays one deal under both rotations."""

Outcomes = Mapping[tuple[str, ...], Sequence[str | None]]
"""Per table (its entrants, in seat order): the winner of each of its games stored so far, in
order (None: a draw); fewer than :data:`GAMES_PER_TABLE` leaves the table playing."""


def round_tournament(
    tournament_id: str,
    entrants: tuple[str, ...],
    *,
    format: str,
    name: str = "rounds",
    course: str = DEFAULT_COURSE,
    rounds: int | None = None,
    knockout: dict[str, int] | None = None,
    seeding: tuple[str, ...] = (),
) -> StoredTournament:
    """A running two-seat Passing tournament of ``format`` ("swiss" with ``rounds``,
    "knockout" with ``knockout`` {"sets", "max_sets"})."""
    return dataclasses.replace(
        a_tournament(name),
        id=tournament_id,
        entrants=entrants,
        games_per_pairing=1,
        course=course,
        format=format,
        rounds=rounds,
        knockout=knockout,
        seeding=seeding,
        state=TournamentState.RUNNING,
    )


def round_rows(
    t: StoredTournament, first_index: int, tables: Sequence[tuple[str, ...]], outcomes: Outcomes
) -> list[StoredMatch]:
    """The stored games of one round's ``tables`` from ``first_index``: table ``n``'s game
    ``k`` has index ``first_index + n * GAMES_PER_TABLE + k``, its seats rotated ``k``."""
    rows = []
    for number, table in enumerate(tables):
        for k, winner in enumerate(outcomes.get(table, ())):
            first, second = table  # two seats
            seats = (first, second) if k % 2 == 0 else (second, first)
            index = first_index + number * GAMES_PER_TABLE + k
            row = two_seat_row(t.id, index, seats, None if winner is None else seats.index(winner))
            rows.append(dataclasses.replace(row, course=t.course))
    return rows


def store_round(
    storage: RatedStorage,
    t: StoredTournament,
    number: int,
    tables: Sequence[tuple[str, ...]],
    outcomes: Outcomes,
    *,
    byes: tuple[str, ...] = (),
) -> StoredRound:
    """Store round ``number`` of ``t`` (after the rounds stored before it) and its games."""
    before = storage.tournament_rounds(t.id)
    first = before[-1].first_index + before[-1].games if before else 0
    stored = storage.add_tournament_round(
        StoredRound(
            t.id,
            number,
            tuple(tables),
            byes,
            first,
            GAMES_PER_TABLE * len(tables),
            START,
        )
    )
    for row in round_rows(t, first, tables, outcomes):
        storage.save_match(row)
    return stored


def play_knockout(storage: RatedStorage, t: StoredTournament, rounds: int | None = None) -> None:
    """Store the rounds of the knockout ``t`` as its bracket seats them, the better seed
    winning both games of every tie, until its champion (or ``rounds`` rounds in all)."""
    while True:
        stored = storage.tournament_rounds(t.id)
        matches = storage.matches(100_000, tournament_id=t.id, records=False)
        tables = knockout_bracket(t, results_of(stored, matches)).next_tables()
        if not tables or (rounds is not None and len(stored) >= rounds):
            return
        outcomes = {table: [table[0]] * GAMES_PER_TABLE for table in tables}
        store_round(storage, t, len(stored), tables, outcomes)

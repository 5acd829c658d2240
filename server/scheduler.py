"""Pure pairing: which entrants sit where in a round robin (cutechess's tournament split).

Every table of a game's size is seated with every rotation of its entrants, so each entrant
plays each seat equally often. With duplicate deals (the default) every rotation of a table is
played on the same deal, so the luck of the deal cancels out: the games of one table and one
deal share a ``deal_id`` and differ in ``rotation``.

>>> [g.seats for g in round_robin(["a", "b"], seats=2)]
[('a', 'b'), ('b', 'a')]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations


@dataclass(frozen=True, slots=True)
class ScheduledGame:
    """One game of a round robin."""

    index: int
    """Position in the schedule, from 0."""
    seats: tuple[str, ...]
    """The entrant in each seat."""
    deal_id: int
    """Games with the same deal id are played from the same seed."""
    rotation: int
    """Which rotation of the table this is (0 = the table as first listed)."""


def tables(
    entrants: Sequence[str], seats: int, *, partnerships: bool = False
) -> Iterator[tuple[str, ...]]:
    """Yield every table of ``seats`` entrants, in seat order before rotation.

    With partnerships (4 seats, seats 0+2 against 1+3) every pairing of two teams is a table.
    """
    if len(set(entrants)) != len(entrants):
        raise ValueError("entrant names must be unique")
    if len(entrants) < seats:
        raise ValueError(
            f"a {seats}-seat game needs at least {seats} entrants, got {len(entrants)}"
        )
    for group in combinations(entrants, seats):
        if not partnerships:
            yield group
            continue
        first, *rest = group
        for partner in rest:
            a, b = (e for e in rest if e != partner)
            yield (first, a, partner, b)


def round_robin(
    entrants: Sequence[str],
    seats: int,
    *,
    games_per_pairing: int = 1,
    partnerships: bool = False,
    duplicate_deals: bool = True,
) -> list[ScheduledGame]:
    """Return the schedule: every table, every rotation, ``games_per_pairing`` deals each.

    Raises:
        ValueError: fewer entrants than seats, repeated names, or no games requested.
    """
    if games_per_pairing < 1:
        raise ValueError(f"games_per_pairing must be at least 1, got {games_per_pairing}")
    schedule: list[ScheduledGame] = []
    deal_id = 0
    for table in tables(entrants, seats, partnerships=partnerships):
        for _ in range(games_per_pairing):
            for rotation in range(seats):
                seated = table[rotation:] + table[:rotation]
                schedule.append(ScheduledGame(len(schedule), seated, deal_id, rotation))
                if not duplicate_deals:
                    deal_id += 1
            if duplicate_deals:
                deal_id += 1
    return schedule

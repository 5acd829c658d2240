"""Pure pairing: which entrants sit where in a round robin, and in which round (cutechess split).

Every table of a game's size is seated with every rotation of its entrants, so each entrant
plays each seat equally often. How deals are shared is the tournament's :class:`DealMode`: with
duplicate deals (the default) every rotation of a table is played on the same deal, so the luck
of the deal cancels out: the games of one table and one deal share a ``deal_id`` and differ in
``rotation``. A table's games go deal by deal (each deal under every rotation, one after
another); ``spread`` plays them rotation by rotation instead (every deal under the first
rotation, then every deal under the second...), so the rotations of one deal are as far apart
as the table's games allow; ``fresh`` gives every game its own deal.

Games are grouped into *rounds* in which no entrant plays twice, so a round's games can all run
at once; the entrants left out of a round have a bye (:func:`byes`). Two-seat schedules use the
circle method (Berger tables): every round seats ``n // 2`` pairs, an odd count gives one bye
per round, and the whole Berger cycle is repeated once per deal and rotation, so the rotations
of one deal fall in different rounds (an entrant cannot play both at once). Three- and
four-seat tables (and partnerships) are packed greedily: each round takes, first, the tables
whose entrants have the most games left, as long as they share no entrant.

What is guaranteed, for every schedule:

* every round is *maximal*: each game of a later round shares an entrant with the round, so no
  game waits for a round it could have joined;
* every entrant has exactly the same number of byes over the schedule (each plays the same
  number of games, at most one per round); with two seats, also within every Berger cycle.

Fair seating (issue 13): given ``owners`` (entrant -> owner), a 3- or 4-seat free-for-all
never seats two bots of one owner at one table (they could collude against the others), and a
partnership game never makes two bots of one owner partners (they may meet as opponents);
``allow_same_owner_tables`` / ``allow_same_owner_partners`` lift the rule. House baselines
(``house:NAME``) and entrants missing from ``owners`` have no owner. Two-seat games are never
affected. The rule only *removes* tables: every table it keeps is played with all its rotations
on the same deals as before, and the rounds are packed as usual, so rounds stay maximal. What it
can break: equal byes and equal games per entrant (an owner with two bots has fewer tables for
each), and equal meetings between every pair of entrants. With both flags allowed (or no
owners) the schedule is exactly the plain one.

>>> [(g.round, g.seats) for g in round_robin(["a", "b"], seats=2)]
[(0, ('a', 'b')), (1, ('b', 'a'))]
>>> byes(round_robin(["a", "b", "c"], seats=2), ["a", "b", "c"])[0]
('a',)
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from itertools import combinations

from domino_arena.server.names import HOUSE_PREFIX


class SeatingError(ValueError):
    """The same-owner seating rule leaves no table to play; the message names the owners."""


class DealMode(StrEnum):
    """How a tournament deals its games (docs/tournaments.md: deals, and memorizing bots)."""

    DUPLICATE = "duplicate"
    """Every deal under every seat rotation of its table, the rotations one after another."""
    SPREAD = "spread"
    """As DUPLICATE, each deal's rotations as far apart in the table's games as they can be."""
    FRESH = "fresh"
    """A new deal for every game."""


@dataclass(frozen=True, slots=True)
class ScheduledGame:
    """One game of a round robin."""

    index: int
    """Position in the schedule, from 0; the schedule is sorted by round."""
    seats: tuple[str, ...]
    """The entrant in each seat."""
    deal_id: int
    """Games with the same deal id are played from the same seed."""
    rotation: int
    """Which rotation of the table this is (0 = the table as first listed)."""
    round: int = 0
    """The round it belongs to, from 0; no entrant plays twice in one round."""


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
    deals: DealMode = DealMode.DUPLICATE,
    owners: Mapping[str, str] | None = None,
    allow_same_owner_tables: bool = False,
    allow_same_owner_partners: bool = False,
) -> list[ScheduledGame]:
    """Return the schedule: every table, every rotation, ``games_per_pairing`` deals each.

    The games come sorted by round (then by table), indexed in that order. ``owners`` and the
    two ``allow`` flags apply the fair seating rule (module doc): forbidden tables are left
    out, deal ids are numbered over the tables kept.

    Raises:
        SeatingError: the seating rule leaves no table (a ValueError).
        ValueError: fewer entrants than seats, repeated names, or no games requested.
    """
    return expand(
        entrants,
        seats,
        tables(entrants, seats, partnerships=partnerships),
        games_per_pairing=games_per_pairing,
        partnerships=partnerships,
        deals=deals,
        owners=owners,
        allow_same_owner_tables=allow_same_owner_tables,
        allow_same_owner_partners=allow_same_owner_partners,
        berger=seats == 2 and not partnerships,
    )


def expand(
    entrants: Sequence[str],
    seats: int,
    table_list: Iterable[tuple[str, ...]],
    *,
    games_per_pairing: int = 1,
    partnerships: bool = False,
    deals: DealMode = DealMode.DUPLICATE,
    owners: Mapping[str, str] | None = None,
    allow_same_owner_tables: bool = False,
    allow_same_owner_partners: bool = False,
    berger: bool = False,
    shared: Collection[str] = (),
) -> list[ScheduledGame]:
    """Return the games of ``table_list`` (seat order before rotation): the one expansion of
    tables into games that the round robin and every fixed format share (docs/tournaments.md:
    formats).

    Each table kept by the fair seating rule is played on ``games_per_pairing`` deals under
    every rotation, the deals numbered over the tables kept by ``deals``' mode; the games are
    placed in rounds (Berger cycles with ``berger``, which needs ``table_list`` to be every
    pair of ``entrants`` once; else packed greedily) and indexed in round order. ``shared``
    entrants may sit at many tables of one round (a gauntlet's house baselines, hosted by the
    referee for every seat apart); every table must have an entrant not shared.

    Raises:
        SeatingError: the seating rule leaves no table (a ValueError).
        ValueError: no games requested, or no table given.
    """
    if games_per_pairing < 1:
        raise ValueError(f"games_per_pairing must be at least 1, got {games_per_pairing}")
    given = list(table_list)
    if not given:
        raise ValueError(f"no {seats}-seat table to play")
    # Per table, its games in order: deal by deal, each deal under every rotation (spread:
    # rotation by rotation, each rotation on every deal).
    by_table: list[list[ScheduledGame]] = []
    deal_id = 0
    kept = [
        table
        for table in given
        if seating_allowed(
            table,
            owners,
            partnerships=partnerships,
            allow_same_owner_tables=allow_same_owner_tables,
            allow_same_owner_partners=allow_same_owner_partners,
        )
    ]
    if not kept:
        shared = sorted(
            {o for o, n in Counter(_owner(e, owners) for e in entrants).items() if o and n > 1}
        )
        raise SeatingError(
            f"entrants: the same-owner seating rule leaves no {seats}-seat table to play "
            f"(owners with more than one bot: {', '.join(shared)}); add entrants of other "
            "owners, or allow same-owner tables or partners for the course"
        )
    for table in kept:
        games: list[ScheduledGame] = []
        for _ in range(games_per_pairing):
            for rotation in range(seats):
                seated = table[rotation:] + table[:rotation]
                games.append(ScheduledGame(-1, seated, deal_id, rotation))
                if deals is DealMode.FRESH:
                    deal_id += 1
            if deals is not DealMode.FRESH:
                deal_id += 1
        if deals is DealMode.SPREAD:
            games.sort(key=lambda g: g.rotation)  # stable: deals keep their order
        by_table.append(games)
    if berger:
        placed = _berger_rounds(entrants, by_table)
    else:
        placed = _packed_rounds(len(entrants) // seats, by_table, frozenset(shared))
    placed.sort(key=lambda g: g.round)  # stable: tables keep their order within a round
    return [replace(g, index=i) for i, g in enumerate(placed)]


def seating_allowed(
    table: Sequence[str],
    owners: Mapping[str, str] | None,
    *,
    partnerships: bool = False,
    allow_same_owner_tables: bool = False,
    allow_same_owner_partners: bool = False,
) -> bool:
    """Whether the fair seating rule (module doc) lets ``table`` (seat order) be played."""
    if owners is None or len(table) <= 2:
        return True
    of = [_owner(e, owners) for e in table]
    if partnerships:  # seats 0+2 against 1+3: only partners are checked
        if allow_same_owner_partners:
            return True
        return not any(of[i] and of[i] == of[i + 2] for i in range(len(table) // 2))
    if allow_same_owner_tables:
        return True
    named = [o for o in of if o]
    return len(named) == len(set(named))


def _owner(entrant: str, owners: Mapping[str, str] | None) -> str:
    """The owner of ``entrant`` ("" for none: house baselines, unknown or ownerless bots)."""
    if owners is None or entrant.startswith(HOUSE_PREFIX):
        return ""
    return owners.get(entrant, "")


def byes(schedule: Sequence[ScheduledGame], entrants: Sequence[str]) -> dict[int, tuple[str, ...]]:
    """Return, for every round of ``schedule``, the entrants who do not play in it (in order)."""
    playing: dict[int, set[str]] = {}
    for game in schedule:
        playing.setdefault(game.round, set()).update(game.seats)
    return {
        round_: tuple(e for e in entrants if e not in playing[round_]) for round_ in sorted(playing)
    }


def berger_pairs(entrants: Sequence[str]) -> list[list[tuple[str, str]]]:
    """Return the rounds of a single round robin by the circle method (Berger tables).

    Each round pairs ``len(entrants) // 2`` disjoint pairs; with an odd count one entrant sits
    out each round, everyone exactly once. Pairs keep the order of ``entrants``.
    """
    order = {e: i for i, e in enumerate(entrants)}
    circle: list[str | None] = list(entrants)
    if len(circle) % 2:
        circle.append(None)  # whoever meets None has the bye
    n = len(circle)
    rounds: list[list[tuple[str, str]]] = []
    for _ in range(n - 1):
        pairs: list[tuple[str, str]] = []
        for i in range(n // 2):
            a, b = circle[i], circle[n - 1 - i]
            if a is not None and b is not None:
                pairs.append((a, b) if order[a] < order[b] else (b, a))
        rounds.append(pairs)
        circle = [circle[0], circle[-1], *circle[1:-1]]
    return rounds


def _berger_rounds(
    entrants: Sequence[str], by_table: list[list[ScheduledGame]]
) -> list[ScheduledGame]:
    """Place two-seat games: the k-th game of every pair in the k-th repeat of the Berger cycle."""
    cycle = berger_pairs(entrants)
    round_of_pair: dict[tuple[str, ...], int] = {
        pair: r for r, pairs in enumerate(cycle) for pair in pairs
    }
    placed: list[ScheduledGame] = []
    for games in by_table:
        base = round_of_pair[games[0].seats]
        placed.extend(replace(g, round=k * len(cycle) + base) for k, g in enumerate(games))
    return placed


def _packed_rounds(
    capacity: int, by_table: list[list[ScheduledGame]], shared: frozenset[str] = frozenset()
) -> list[ScheduledGame]:
    """Place games greedily: each round takes disjoint tables, those with most games left first.

    Preferring the entrants with the most games left keeps everyone's pace even, so the last
    rounds are not left with tables that all share one entrant. ``shared`` entrants do not make
    tables disjoint (:func:`expand`); with any, a round is not capped at ``capacity`` tables.
    """
    if shared:
        capacity = sum(len(games) for games in by_table)
        if any(shared.issuperset(games[0].seats) for games in by_table):
            raise ValueError("every table needs an entrant that is not shared")
    pending = [deque(games) for games in by_table]
    left: Counter[str] = Counter()
    for games in by_table:
        for game in games:
            left.update(e for e in game.seats if e not in shared)
    placed: list[ScheduledGame] = []
    round_ = 0
    while left:
        order = sorted(
            (t for t, games in enumerate(pending) if games),
            key=lambda t: (-sum(left[e] for e in pending[t][0].seats), -len(pending[t]), t),
        )
        busy: set[str] = set()
        taken = 0
        for t in order:
            seats = tuple(e for e in pending[t][0].seats if e not in shared)
            if busy.isdisjoint(seats):
                busy.update(seats)
                placed.append(replace(pending[t].popleft(), round=round_))
                taken += 1
                if taken == capacity:
                    break
        left.subtract(busy)
        left = +left  # drop entrants with nothing left
        round_ += 1
    return placed

"""Swiss rounds: each round seats entrants of similar current strength together (issue 31).

The caller ranks the entrants before each round (strongest first: the official fit of the games
so far, or match points per game until the tables connect everyone, :func:`points_order` and
:func:`connected`; docs/tournaments.md: Swiss) and asks :func:`swiss_round` for the next
round's tables; the play layer expands each table into every rotation on a duplicate deal, as
for every other format. Pure: no I/O, the standard library only; the same inputs give the same
round.

How a round is seated:

* **byes**: when the entrants do not fill whole tables, the ``len(entrants) % seats`` entrants
  with the fewest byes so far sit out, the weakest first among equals (so byes never differ by
  more than one between entrants);
* **tables**: the others, in rank order, take tables of adjacent ranks. Every entrant stays
  within :data:`WINDOW` tables of the one its rank gives it (rank // seats), so a table's
  entrants lie within ``(2 x WINDOW + 1) x seats`` consecutive ranks. Inside that window a
  depth-first search (closest ranks tried first, as the Dutch Swiss system does) looks for a
  round where no two entrants sit together again and the seating rule ``allowed`` refuses no
  table; when none is found within :data:`SEARCH_TRIES`, a local search swaps entrants between
  tables of the window to seat, in this order of importance, no refused table, the fewest
  pairs that met before, the fewest earlier meetings among them, the fewest earlier partner
  pairs, the closest ranks.
* **folded rounds**: every :data:`FOLD_EVERY`-th round (3, 6, 9, ...) the ranking is folded
  before the tables are seated as above: of ``T`` tables, table ``t`` takes ranks ``t, t + T,
  t + 2T, ...`` (:func:`folded_order`; at 2 seats the top half meets the bottom half). Seating
  only nearby ranks links the top of a large field to its bottom by a long chain of tables
  whose rating errors add up; a folded round links them directly. Measured
  (bench/README.md: tournament_designs, Swiss): at 200 and 1,000 entrants the mean absolute
  rating error fell to about half (200 at 2 seats and 48 games each: 190 to 60 Elo; 1,000 at 3
  seats: 106 to 44) with the rank correlation level or better; every 2nd round erred a little
  less but ranked worse, every 4th the reverse.
* **partnerships** (4 seats, seats 0+2 against 1+3): of a table's three pairings, the one whose
  partners have partnered least before; among those, with the table's entrants a > b > c > d
  by rank, ``(a, c, b, d)`` (the two strongest together), then ``(a, b, c, d)``, then
  ``(a, b, d, c)`` (strongest with weakest). The balanced pairing was measured worst:
  its game, ``a + d`` against ``b + c``, says nothing about how far apart entrants of
  neighbouring ranks are (bench/README.md: tournament_designs, 40 entrants in partnerships).
  Free seating: the table in rank order (the rotations equalize the seats).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations, permutations
from typing import Final

from domino_arena.server.tournaments.designs import Allowed, check_field
from domino_arena.server.tournaments.rounds import TableResult

WINDOW: Final = 2
"""Tables an entrant may move from the one its rank gives it."""
FOLD_EVERY: Final = 3
"""Every this many rounds (rounds 3, 6, 9, ...) the ranking is folded before seating: table ``t``
of ``T`` takes ranks ``t, t + T, t + 2T, ...`` (module doc)."""
SEARCH_TRIES: Final = 50_000
"""Candidate tables the repeat-free search tries before the local search takes over (enough to
try every round of up to three tables)."""

_Cost = tuple[int, int, int, int, int]


@dataclass(frozen=True, slots=True)
class SwissRound:
    """One Swiss round's seating."""

    tables: tuple[tuple[str, ...], ...]
    """Seat order before rotation, strongest table (by its best-ranked entrant) first."""
    byes: tuple[str, ...]
    """The entrants who sit this round out, in rank order."""
    repeats: int
    """Pairs of entrants seated together again although an earlier round already seated them
    together (0 when avoidable within the window and avoided)."""


def swiss_round(
    entrants: Sequence[str],
    seats: int,
    order: Sequence[str],
    previous: Sequence[Sequence[tuple[str, ...]]],
    *,
    partnerships: bool = False,
    allowed: Allowed | None = None,
    seed: int = 0,
) -> SwissRound:
    """The next round's tables (module doc) for ``entrants`` ranked ``order`` (strongest first),
    after the rounds ``previous`` (each its tables, in seat order). An entrant seated at no table
    of an earlier round had a bye there. ``seed`` only orders the local search's scan (which of
    equally good swaps comes first).

    Raises:
        ValueError: a bad size, repeated or unknown names (naming the field), or a seating rule
            ``allowed`` that refuses every round within the window.
    """
    _check(entrants, seats, order, previous, partnerships)
    met: Counter[frozenset[str]] = Counter()
    partnered: Counter[frozenset[str]] = Counter()
    byes_so_far = dict.fromkeys(entrants, len(previous))
    for earlier in previous:
        for table in earlier:
            for p, q in combinations(range(len(table)), 2):
                pair = frozenset((table[p], table[q]))
                met[pair] += 1
                if partnerships and q - p == 2:
                    partnered[pair] += 1
            for entrant in table:
                if entrant in byes_so_far:
                    byes_so_far[entrant] -= 1
    rank = {entrant: position for position, entrant in enumerate(order)}
    leftover = len(entrants) % seats
    fewest = sorted(order, key=lambda e: (byes_so_far[e], -rank[e]))[:leftover]
    byes = sorted(fewest, key=rank.__getitem__)
    resting = set(byes)
    playing = [e for e in order if e not in resting]
    if folds(len(previous) + 1):
        playing = folded_order(playing, seats)
    seating = _Seating(
        playing,
        seats,
        partnerships=partnerships,
        allowed=allowed,
        met=met,
        partnered=partnered,
    )
    groups = seating.search(avoid_repeats=True)
    if groups is None:
        groups = seating.improve(seating.adjacent(), random.Random(f"swiss:{seed}"))
        if any(seating.cost(g, slot)[0] for slot, g in enumerate(groups)):
            start = seating.search(avoid_repeats=False)
            if start is None:
                raise ValueError(
                    f"allowed: the same-owner seating rule refuses a table of every "
                    f"{seats}-seat round of {len(seating.playing)} entrants the search tried "
                    f"(each within {WINDOW} tables of its rank); add entrants of other owners "
                    "or allow same-owner tables"
                )
            groups = seating.improve(start, random.Random(f"swiss:{seed}"))
    groups.sort(key=min)
    tables: list[tuple[str, ...]] = []
    for group in groups:
        seated = seating.arrange(group)
        assert seated is not None  # the searches keep refused tables out
        tables.append(seated)
    repeats = sum(1 for t in tables for pair in combinations(t, 2) if met[frozenset(pair)])
    return SwissRound(tuple(tables), tuple(byes), repeats)


def folds(number: int) -> bool:
    """Whether round ``number`` (1 the first) seats a folded ranking (:data:`FOLD_EVERY`)."""
    return FOLD_EVERY > 0 and number % FOLD_EVERY == 0


def folded_order(playing: list[str], seats: int) -> list[str]:
    """``playing`` (rank order) reordered so that consecutive ``seats`` hold ranks ``t, t + T,
    t + 2T, ...`` for the ``T`` tables: the strongest of each table still first."""
    tables = len(playing) // seats
    return [playing[j * tables + t] for t in range(tables) for j in range(seats)]


def swiss_rounds(entrants: int, seats: int, games_per_entrant: int, games_per_table: int) -> int:
    """The rounds for the mean entrant to play at least ``games_per_entrant`` games, a table
    giving each of its entrants ``games_per_table`` (rotations x deals) and the byes playing
    none; at least 1."""
    if seats not in (2, 3, 4):
        raise ValueError(f"seats: Swiss seats 2, 3 or 4 at a table, got {seats}")
    if entrants < seats:
        raise ValueError(f"entrants: a {seats}-seat Swiss needs at least {seats}, got {entrants}")
    for name, value in (
        ("games_per_entrant", games_per_entrant),
        ("games_per_table", games_per_table),
    ):
        if value < 1:
            raise ValueError(f"{name}: must be at least 1, got {value}")
    seated = entrants - entrants % seats
    return max(1, math.ceil(games_per_entrant * entrants / (games_per_table * seated)))


def connected(entrants: Iterable[str], previous: Iterable[Sequence[tuple[str, ...]]]) -> bool:
    """Whether the tables of ``previous`` link every entrant to every other by a chain of
    tables: what the official fit needs to rank them all (docs/tournaments.md: Swiss)."""
    parent = {e: e for e in entrants}

    def root(e: str) -> str:
        while parent[e] != e:
            parent[e] = parent[parent[e]]
            e = parent[e]
        return e

    for tables in previous:
        for table in tables:
            members = [e for e in table if e in parent]
            for other in members[1:]:
                parent[root(other)] = root(members[0])
    return len({root(e) for e in parent}) <= 1


def points_order(order: Sequence[str], results: Iterable[TableResult]) -> list[str]:
    """``order`` re-ranked by match points per game over ``results`` (every table of every round
    so far), highest first, equal ones (and entrants without games, who count 0.5 a game: the
    mean) in their place in ``order``: the ranking before the fit can connect everyone."""
    points = dict.fromkeys(order, 0.0)
    games = dict.fromkeys(order, 0)
    for result in results:
        for entrant, earned in zip(result.entrants, result.points, strict=True):
            if entrant in points:
                points[entrant] += earned
                games[entrant] += result.games
    rank = {e: i for i, e in enumerate(order)}

    def per_game(e: str) -> float:
        return points[e] / games[e] if games[e] else 0.5

    return sorted(order, key=lambda e: (-per_game(e), rank[e]))


def _check(
    entrants: Sequence[str],
    seats: int,
    order: Sequence[str],
    previous: Sequence[Sequence[tuple[str, ...]]],
    partnerships: bool,
) -> None:
    check_field(entrants, seats, partnerships, what="Swiss round")
    if len(set(order)) != len(order):
        repeated = sorted(e for e, k in Counter(order).items() if k > 1)
        raise ValueError(f"order: expected each entrant once, repeated: {', '.join(repeated[:5])}")
    if missing := sorted(set(entrants) - set(order)):
        raise ValueError(f"order: expected every entrant once, missing: {', '.join(missing[:5])}")
    if unknown := sorted(set(order) - set(entrants)):
        raise ValueError(f"order: expected only entrants, not entered: {', '.join(unknown[:5])}")
    for number, tables in enumerate(previous, 1):
        for table in tables:
            if len(table) != seats:
                raise ValueError(
                    f"previous: round {number} has a table of {len(table)} "
                    f"({', '.join(table)}); expected {seats} seats"
                )


class _Seating:
    """One round's search: ``playing`` in rank order, groups as lists of their ranks."""

    def __init__(
        self,
        playing: list[str],
        seats: int,
        *,
        partnerships: bool,
        allowed: Allowed | None,
        met: Counter[frozenset[str]],
        partnered: Counter[frozenset[str]],
    ) -> None:
        self.playing = playing
        self.seats = seats
        self.partnerships = partnerships
        self.allowed = allowed
        self.met = met
        self.partnered = partnered
        self.tables = len(playing) // seats
        self._arranged: dict[frozenset[int], tuple[tuple[str, ...] | None, int]] = {}

    def adjacent(self) -> list[list[int]]:
        s = self.seats
        return [list(range(t * s, (t + 1) * s)) for t in range(self.tables)]

    def _fits(self, rank: int, slot: int) -> bool:
        return abs(rank // self.seats - slot) <= WINDOW

    def _choice(self, group: Sequence[int]) -> tuple[tuple[str, ...] | None, int]:
        """The group's seat order (None: the rule refuses every one) and its earlier partner
        pairs."""
        key = frozenset(group)
        known = self._arranged.get(key)
        if known is not None:
            return known
        names = [self.playing[r] for r in sorted(group)]
        chosen: tuple[tuple[str, ...] | None, int] = (None, 0)
        if self.partnerships:
            a, b, c, d = names
            best: tuple[int, int] | None = None
            for preference, table in enumerate(((a, c, b, d), (a, b, c, d), (a, b, d, c))):
                if self.allowed is not None and not self.allowed(table):
                    continue
                mates = (
                    self.partnered[frozenset(table[::2])] + self.partnered[frozenset(table[1::2])]
                )
                if best is None or (mates, preference) < best:
                    best, chosen = (mates, preference), (table, mates)
        else:
            for perm in permutations(names):
                if self.allowed is None or self.allowed(perm):
                    chosen = (perm, 0)
                    break
        self._arranged[key] = chosen
        return chosen

    def arrange(self, group: Sequence[int]) -> tuple[str, ...] | None:
        return self._choice(group)[0]

    def cost(self, group: Sequence[int], slot: int) -> _Cost:
        """(refused, pairs met before, earlier meetings, earlier partner pairs, rank distance)."""
        table, mates = self._choice(group)
        counts = [
            self.met[frozenset((self.playing[p], self.playing[q]))]
            for p, q in combinations(group, 2)
        ]
        distance = sum(abs(r // self.seats - slot) for r in group)
        return (int(table is None), sum(1 for k in counts if k), sum(counts), mates, distance)

    def search(self, *, avoid_repeats: bool) -> list[list[int]] | None:
        """Depth-first, closest ranks first: a round inside the window with no refused table
        (and, if ``avoid_repeats``, no pair that met before), or None within SEARCH_TRIES."""
        seated = [False] * len(self.playing)
        groups: list[list[int]] = []
        tries = 0

        def options(slot: int) -> Iterator[list[int]]:
            nonlocal tries
            free = [r for r in range(len(self.playing)) if not seated[r]]
            head, s = free[0], self.seats
            last_chance = [r for r in free if r // s <= slot - WINDOW]
            if len(last_chance) > s or not self._fits(head, slot):
                return
            pool = [r for r in free[1:] if self._fits(r, slot)]
            if avoid_repeats:
                pool = [r for r in pool if not self._met(head, r)]
            for rest in combinations(pool, s - 1):
                tries += 1
                if tries > SEARCH_TRIES:
                    return
                group = [head, *rest]
                if any(r not in group for r in last_chance):
                    continue
                if avoid_repeats and any(self._met(p, q) for p, q in combinations(rest, 2)):
                    continue
                if self.arrange(group) is not None:
                    yield group

        stack = [options(0)]
        while stack:
            if len(groups) == len(stack):  # this level's last choice: take it back
                for r in groups.pop():
                    seated[r] = False
            group = next(stack[-1], None)
            if group is None:
                stack.pop()
                if tries > SEARCH_TRIES:
                    return None
                continue
            for r in group:
                seated[r] = True
            groups.append(group)
            if len(groups) == self.tables:
                return groups
            stack.append(options(len(groups)))
        return None

    def _met(self, p: int, q: int) -> bool:
        return self.met[frozenset((self.playing[p], self.playing[q]))] > 0

    def improve(self, groups: list[list[int]], rng: random.Random) -> list[list[int]]:
        """Swap entrants between tables of the window while a swap lowers the cost of the two
        tables (compared in :meth:`cost`'s order)."""
        costs = [self.cost(g, slot) for slot, g in enumerate(groups)]
        neighbours = [
            (g, h)
            for g in range(self.tables)
            for h in range(g + 1, min(self.tables, g + 2 * WINDOW + 1))
        ]
        rng.shuffle(neighbours)
        improved = True
        while improved:
            improved = False
            for g, h in neighbours:
                for i in range(self.seats):
                    for j in range(self.seats):
                        a, b = groups[g][i], groups[h][j]
                        if not (self._fits(a, h) and self._fits(b, g)):
                            continue
                        new_g = [*groups[g][:i], b, *groups[g][i + 1 :]]
                        new_h = [*groups[h][:j], a, *groups[h][j + 1 :]]
                        cg, ch = self.cost(new_g, g), self.cost(new_h, h)
                        now = _add(costs[g], costs[h])
                        if _add(cg, ch) < now:
                            groups[g], groups[h], costs[g], costs[h] = new_g, new_h, cg, ch
                            improved = True
        return groups


def _add(x: _Cost, y: _Cost) -> _Cost:
    return (x[0] + y[0], x[1] + y[1], x[2] + y[2], x[3] + y[3], x[4] + y[4])

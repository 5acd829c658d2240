"""Fixed schedules smaller than the round robin: balanced designs and gauntlets (issue 31).

A round robin seats every combination of its entrants, which explodes at three and four seats
(40 entrants at 4 seats: 91,390 tables). :func:`balanced` seats each entrant at a chosen number
of tables instead, with every pair of entrants meeting as nearly equally often as the size allows
and each entrant spread over the seat indices; :func:`gauntlet` seats each entrant against fixed
baselines only. Both return tables in seat order before rotation, exactly as
``server/play/scheduler.py``'s ``tables()`` gives them (partnerships: ``(a, b, a2, b2)``, seats
0+2 against 1+3), so the play layer expands them into games the same way (docs/tournaments.md).

How a balanced design is built:

* **two seats**: an exact construction. An even field cycles the rounds of a 1-factorization
  (the circle method); an odd field with an even number of tables develops differences
  ``{i, i+d} mod n``. Every pair then meets within one of every other, and exactly equally
  often when the tables cover whole cycles (a block design: the round robin itself).
* **otherwise**: the entrants are dealt into tables round by round, like a resolvable design
  (each round every entrant once, in a seeded shuffle), each seat taken by the entrant of the
  next few in the deal who has met the table least; then a local search swaps entrants between
  tables (and, for partnerships, re-pairs a table's teams) to even the meeting counts.

The :class:`Balance` is always recounted from the tables returned: it reports what was reached,
never what was aimed at. The seating rule of ``scheduler.seating_allowed`` (issue 13) is passed
in as ``allowed``; a table it refuses is never returned (a ValueError says so when no design is
found), and the balance reported is what remains possible under it.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations, permutations
from math import comb
from typing import Final

Allowed = Callable[[tuple[str, ...]], bool]
"""Whether a table (seat order) may be played: the caller binds ``scheduler.seating_allowed``."""

_WINDOW: Final = 48
"""How far ahead in the deal a seat looks for the entrant who has met the table least."""
_PARTNER_ARRANGEMENTS: Final = (
    (0, 1, 2, 3), (2, 1, 0, 3), (0, 3, 2, 1), (2, 3, 0, 1),
    (1, 0, 3, 2), (3, 0, 1, 2), (1, 2, 3, 0), (3, 2, 1, 0),
)  # fmt: skip
"""The seat orders that keep both teams of a partnership table (seats 0+2 against 1+3)."""
_REFUSED: Final = 1 << 20
"""The local search's cost of one table the seating rule refuses: above any meeting imbalance."""


@dataclass(frozen=True, slots=True)
class Balance:
    """What a design reached, recounted from its tables."""

    tables_per_entrant: tuple[int, int]
    """(fewest, most) tables any entrant sits at."""
    meetings: tuple[int, int]
    """(fewest, most) tables any two entrants share as opponents (a gauntlet: an entrant and a
    baseline)."""
    seats: tuple[int, int]
    """(fewest, most) times an entrant sits at one seat index before rotation (rotations then
    make every seat equal)."""
    exact: bool
    """A block design: every entrant at as many tables, every pair met equally often (and, with
    partnerships, partnered equally often)."""
    partners: tuple[int, int] | None = None
    """Partnerships only: (fewest, most) tables any two entrants share as partners."""

    def __str__(self) -> str:
        low, high = self.tables_per_entrant
        tables = f"{low} tables" if low == high else f"{low}-{high} tables"
        text = f"each entrant {tables}; " + _spread("pairs meet", self.meetings)
        if self.partners is not None:
            text += "; " + _spread("partners", self.partners)
        seats = _spread("seat indices", self.seats)
        return f"{text}; {seats}; exact: {'yes' if self.exact else 'no'}"


def _spread(what: str, pair: tuple[int, int]) -> str:
    low, high = pair
    if low == high:
        return f"{what} {low} times each"
    within = " (within one)" if high - low == 1 else ""
    return f"{what} {low}-{high} times{within}"


@dataclass(frozen=True, slots=True)
class Design:
    """A fixed schedule's tables, in seat order before rotation, and the balance they reach."""

    tables: tuple[tuple[str, ...], ...]
    balance: Balance


def balanced(
    entrants: Sequence[str],
    seats: int,
    *,
    tables_per_entrant: int,
    partnerships: bool = False,
    seed: int = 0,
    allowed: Allowed | None = None,
) -> Design:
    """Seat every entrant at ``tables_per_entrant`` tables, pairs meeting within one (module doc).

    When ``len(entrants) * tables_per_entrant`` is not a multiple of ``seats``, as few entrants
    as possible sit at one table more. Deterministic for ``seed``.

    Raises:
        ValueError: a bad size or name (the message names the argument and the rule), or the
            seating rule ``allowed`` leaves no design.
    """
    names = _check(entrants, seats, partnerships, tables_per_entrant, "tables_per_entrant")
    n, t = len(names), tables_per_entrant
    rng = random.Random(f"balanced:{seed}")
    built: list[list[int]] | None = None
    if seats == 2:
        built = _two_seat_exact(n, t, rng)
    if built is None:
        built = _Search(n, seats, partnerships, names, allowed, rng).run(t)
    if allowed is not None:
        refused = [tb for tb in built if not allowed(tuple(names[i] for i in tb))]
        if refused:
            raise ValueError(
                f"entrants: the same-owner seating rule (allowed) refuses every {seats}-seat "
                f"design found for {n} entrants at {t} tables each, e.g. "
                f"{', '.join(names[i] for i in refused[0])}; add entrants of other owners"
            )
    if partnerships:
        ordered = _balance_seats(built, n, list(_PARTNER_ARRANGEMENTS), names, allowed)
    else:
        ordered = _color_seats(built, n, seats, names, allowed)
    tables = tuple(tuple(names[i] for i in tb) for tb in ordered)
    return Design(tables, recount(tables, names, partnerships=partnerships))


def gauntlet(
    entrants: Sequence[str],
    baselines: Sequence[str],
    seats: int,
    *,
    tables_per_entrant: int = 1,
    partnerships: bool = False,
    seed: int = 0,
    allowed: Allowed | None = None,
) -> Design:
    """Seat each entrant at ``tables_per_entrant`` tables, each with ``seats - 1`` baselines.

    Each entrant takes the combinations of baselines (with partnerships: which baseline is its
    partner, too) in turn from its own seeded starting point, so it meets every baseline within
    one of every other and the baselines are used evenly; its own seat index goes round with
    its tables. With two seats and ``tables_per_entrant = len(baselines)`` each entrant plays
    each baseline once.

    Raises:
        ValueError: a bad size or name, fewer than ``seats - 1`` baselines, a baseline that is
            also an entrant, or the seating rule leaving an entrant no table.
    """
    _check(entrants, seats, partnerships, tables_per_entrant, "tables_per_entrant", minimum=1)
    if len(set(baselines)) != len(baselines):
        raise ValueError("baselines: names must be unique")
    if len(baselines) < seats - 1:
        raise ValueError(
            f"baselines: a {seats}-seat gauntlet seats each entrant with {seats - 1} baselines, "
            f"so it needs at least {seats - 1}; got {len(baselines)}"
        )
    if both := sorted(set(entrants) & set(baselines)):
        raise ValueError(f"baselines: {', '.join(both[:5])} also entered; a baseline is not one")
    rng = random.Random(f"gauntlet:{seed}")
    groups: list[tuple[str, ...]] = []
    for group in combinations(baselines, seats - 1):
        if partnerships:  # the entrant's partner (seat 2) is each baseline of the group in turn
            for partner in group:
                a, b = (g for g in group if g != partner)
                groups.append((a, partner, b))
        else:
            groups.append(group)
    tables: list[tuple[str, ...]] = []
    for index, entrant in enumerate(entrants):
        start = rng.randrange(len(groups))
        fits = [
            table
            for k in range(len(groups))
            for table in [_seat_in(entrant, groups[(start + k) % len(groups)], 0, partnerships)]
            if allowed is None or allowed(table)
        ]
        if not fits:
            raise ValueError(
                f"entrants: the same-owner seating rule (allowed) leaves {entrant} no table "
                "with the baselines"
            )
        for k in range(tables_per_entrant):
            group = fits[k % len(fits)][1:]
            seat = (index + k) % seats
            table = _seat_in(entrant, group, seat, partnerships)
            if allowed is not None and not allowed(table):
                table = fits[k % len(fits)]
            tables.append(table)
    return Design(tuple(tables), _recount_gauntlet(tables, list(entrants), baselines, seats))


def _seat_in(entrant: str, group: Sequence[str], seat: int, partnerships: bool) -> tuple[str, ...]:
    """Place ``entrant`` at ``seat`` among the baselines ``group`` (in the order of its table)."""
    if partnerships:  # group is (opponent, partner, opponent): the partner sits opposite
        o1, partner, o2 = group
        return (
            (entrant, o1, partner, o2),
            (o1, entrant, o2, partner),
            (partner, o1, entrant, o2),
            (o1, partner, o2, entrant),
        )[seat]
    rest = list(group)
    return (*rest[:seat], entrant, *rest[seat:])


def _check(
    entrants: Sequence[str],
    seats: int,
    partnerships: bool,
    count: int,
    argument: str,
    *,
    minimum: int | None = None,
) -> list[str]:
    """The entrants as a list, after the checks every design shares."""
    if seats not in (2, 3, 4):
        raise ValueError(f"seats: a design seats 2, 3 or 4 at a table, got {seats}")
    if partnerships and seats != 4:
        raise ValueError(f"partnerships: partnership tables have 4 seats, got seats={seats}")
    if len(set(entrants)) != len(entrants):
        repeated = sorted(e for e, k in Counter(entrants).items() if k > 1)
        raise ValueError(f"entrants: names must be unique, repeated: {', '.join(repeated[:5])}")
    needed = seats if minimum is None else minimum
    if len(entrants) < needed:
        raise ValueError(
            f"entrants: a {seats}-seat design needs at least {needed} entrants, "
            f"got {len(entrants)}"
        )
    if count < 1:
        raise ValueError(f"{argument}: must be at least 1, got {count}")
    return list(entrants)


def _two_seat_exact(n: int, t: int, rng: random.Random) -> list[list[int]] | None:
    """Pairs for two seats from a 1-factorization or a cyclic development, or None for none."""
    if n % 2 == 0:  # the circle method: n - 1 rounds, every pair once
        circle = list(range(n))
        rounds: list[list[list[int]]] = []
        for _ in range(n - 1):
            rounds.append([[circle[i], circle[n - 1 - i]] for i in range(n // 2)])
            circle = [circle[0], circle[-1], *circle[1:-1]]
        order: list[int] = []
        while len(order) < t:
            cycle = list(range(n - 1))
            rng.shuffle(cycle)
            order.extend(cycle)
        return [pair for r in order[:t] for pair in rounds[r]]
    if t % 2:
        return None
    differences: list[int] = []
    while len(differences) < t // 2:
        cycle = list(range(1, (n - 1) // 2 + 1))
        rng.shuffle(cycle)
        differences.extend(cycle)
    return [[i, (i + d) % n] for d in differences[: t // 2] for i in range(n)]


class _Search:
    """The dealt design and its local search over the meeting counts (module doc)."""

    def __init__(
        self,
        n: int,
        seats: int,
        partnerships: bool,
        names: list[str],
        allowed: Allowed | None,
        rng: random.Random,
    ) -> None:
        self.n, self.s, self.partnerships = n, seats, partnerships
        self.names, self.allowed, self.rng = names, allowed, rng
        self.opp = [[0] * n for _ in range(n)]
        self.part = [[0] * n for _ in range(n)] if partnerships else self.opp
        self.tables: list[list[int]] = []
        self.where: list[list[int]] = [[] for _ in range(n)]
        self.refused: set[int] = set()

    def _partner(self, p: int, q: int) -> bool:
        return self.partnerships and (p - q) % 4 == 2

    def _add(self, k: int, sign: int) -> None:
        """Add (1) or remove (-1) the meetings of table ``k``."""
        table = self.tables[k]
        for p, q in combinations(range(self.s), 2):
            a, b = table[p], table[q]
            grid = self.part if self._partner(p, q) else self.opp
            grid[a][b] += sign
            grid[b][a] += sign

    def _ok(self, table: list[int]) -> bool:
        return self.allowed is None or self.allowed(tuple(self.names[i] for i in table))

    def _deal(self, t: int) -> None:
        """Deal the entrants round by round into tables (module doc)."""
        n, s, rng = self.n, self.s, self.rng
        extra = -(n * t) % s
        stream: list[int] = []
        for r in range(t + (1 if extra else 0)):
            batch = list(range(n))
            rng.shuffle(batch)
            stream.extend(batch if r < t else batch[:extra])
        stream.reverse()  # popped from the end
        window: list[int] = []
        while stream or window:
            while stream and len(window) < _WINDOW:
                window.append(stream.pop())
            table: list[int] = []
            for p in range(s):
                rows = [
                    (self.part if self._partner(p, q) else self.opp)[m]
                    for q, m in enumerate(table)
                ]
                check = self.allowed is not None and p == s - 1
                best, best_cost = -1, -1
                for w, c in enumerate(window):
                    if c in table:
                        continue
                    cost = 0
                    for row in rows:
                        cost += row[c]
                    if check and not self._ok([*table, c]):
                        cost += _REFUSED
                    if best < 0 or cost < best_cost:
                        best, best_cost = w, cost
                        if cost == 0:
                            break
                if best < 0:  # only entrants already seated here are left: trade one away
                    best = self._trade(window, table)
                table.append(window.pop(best))
            self.tables.append(table)
            k = len(self.tables) - 1
            for c in table:
                self.where[c].append(k)
            self._add(k, 1)
            if not self._ok(table):
                self.refused.add(k)

    def _trade(self, window: list[int], table: list[int]) -> int:
        """Swap the window's first entrant into an earlier table for one this table lacks."""
        x = window[0]
        for k in self.rng.sample(range(len(self.tables)), len(self.tables)):
            other = self.tables[k]
            if x in other:
                continue
            for p, y in enumerate(other):
                if y not in table and y != x:
                    self._add(k, -1)
                    other[p] = x
                    self.where[y].remove(k)
                    self.where[x].append(k)
                    self._add(k, 1)
                    window[0] = y
                    return 0
        raise AssertionError("no table to trade with")  # n >= seats makes one exist

    def _cost(self, c: int, table: list[int], p: int, skip: int) -> int:
        """The squared-meeting cost of ``c`` at seat ``p`` of ``table`` (ignoring seat ``skip``)."""
        total = 0
        for q, m in enumerate(table):
            if q != p and q != skip:
                v = (self.part if self._partner(p, q) else self.opp)[c][m]
                total += v
        return total

    def _swap_delta(self, a: int, p: int, b: int, q: int) -> int:
        """The change in the sum of squared meetings if ``tables[a][p]`` and ``tables[b][q]``
        trade places (both tables must accept the other entrant)."""
        ta, tb = self.tables[a], self.tables[b]
        x, z = ta[p], tb[q]
        # (v+1)^2 - v^2 = 2v + 1 and (v-1)^2 - v^2 = -2v + 1, per pair gained or lost.
        delta = 2 * (self._cost(z, ta, p, p) - self._cost(x, ta, p, p))
        delta += 2 * (self._cost(x, tb, q, q) - self._cost(z, tb, q, q))
        delta += 4 * (self.s - 1)
        if self.allowed is not None:
            na, nb = list(ta), list(tb)
            na[p], nb[q] = z, x
            before = (a in self.refused) + (b in self.refused)
            after = (not self._ok(na)) + (not self._ok(nb))
            delta += _REFUSED * (after - before)
        return delta

    def _swap(self, a: int, p: int, b: int, q: int) -> None:
        ta, tb = self.tables[a], self.tables[b]
        x, z = ta[p], tb[q]
        self._add(a, -1)
        self._add(b, -1)
        ta[p], tb[q] = z, x
        self.where[x].remove(a)
        self.where[x].append(b)
        self.where[z].remove(b)
        self.where[z].append(a)
        self._add(a, 1)
        self._add(b, 1)
        for k in (a, b):
            if self._ok(self.tables[k]):
                self.refused.discard(k)
            else:
                self.refused.add(k)

    def _repair(self, x: int, a: int, tries: int, slack: int = 0) -> bool:
        """Move ``x`` out of table ``a`` by the best of ``tries`` swaps, if it costs at most
        ``slack`` (a little worse now and then lets the search leave a plateau)."""
        rng, tables, s = self.rng, self.tables, self.s
        p = tables[a].index(x)
        slots = len(tables) * s
        picks = range(slots) if slots <= tries else (rng.randrange(slots) for _ in range(tries))
        best: tuple[int, int, int] | None = None
        for pick in picks:
            b, q = divmod(pick, s)
            if b == a or x in tables[b] or tables[b][q] in tables[a]:
                continue
            delta = self._swap_delta(a, p, b, q)
            if best is None or delta < best[0]:
                best = (delta, b, q)
        if best is None or best[0] > slack:
            return False
        self._swap(a, p, best[1], best[2])
        return best[0] < 0

    def _repartner(self, a: int) -> bool:
        """Partnerships: re-pair table ``a``'s teams if another pairing evens the counts."""
        table = self.tables[a]
        base = self._squares(table)
        best, best_order = base, table
        for order in ([table[0], table[2], table[1], table[3]],
                      [table[0], table[1], table[3], table[2]]):  # fmt: skip
            if self._ok(order) or a in self.refused:
                self._add(a, -1)
                self.tables[a] = order
                self._add(a, 1)
                value = self._squares(order)
                self._add(a, -1)
                self.tables[a] = table
                self._add(a, 1)
                if value < best:
                    best, best_order = value, order
        if best_order is table:
            return False
        self._add(a, -1)
        self.tables[a] = best_order
        self._add(a, 1)
        self.refused.discard(a)
        return True

    def _squares(self, table: list[int]) -> int:
        total = 0
        for p, q in combinations(range(self.s), 2):
            v = (self.part if self._partner(p, q) else self.opp)[table[p]][table[q]]
            total += v * v
        return total

    def _targets(self, grid: list[list[int]], total: int) -> tuple[int, int]:
        """The (fewest, most) meetings per pair that ``total`` meetings allow."""
        pairs = comb(self.n, 2)
        return total // pairs, -(-total // pairs)

    def _bad(self) -> list[tuple[int, int]]:
        """The pairs whose counts are outside the targets: (entrant, table to move it from)."""
        tables = len(self.tables)
        per_table = self.s * (self.s - 1) // 2
        if self.partnerships:
            checks = [(self.opp, tables * 4), (self.part, tables * 2)]
        else:
            checks = [(self.opp, tables * per_table)]
        found: list[tuple[int, int]] = []
        for grid, total in checks:
            low, high = self._targets(grid, total)
            for x in range(self.n):
                row = grid[x]
                for y in range(x + 1, self.n):
                    v = row[y]
                    if v > high:  # move x away from a table it shares with y
                        shared = [k for k in self.where[x] if y in self.tables[k]]
                        found.append((x, self.rng.choice(shared)))
                    elif v < low:  # move x into a table of y's
                        found.append((-1, self.rng.choice(self.where[y]) * self.n + x))
        found.extend((self.tables[k][0], k) for k in sorted(self.refused))
        return found

    def _bring(self, x: int, b: int) -> bool:
        """Seat ``x`` in table ``b`` by the best trade with one of its entrants, if not worse."""
        tables = self.tables
        if x in tables[b]:
            return False
        best: tuple[int, int, int, int] | None = None
        for a in self.where[x]:
            p = tables[a].index(x)  # where[x] lists tables with x
            for q in range(self.s):
                if tables[b][q] in tables[a]:
                    continue
                delta = self._swap_delta(a, p, b, q)
                if best is None or delta < best[0]:
                    best = (delta, a, p, q)
        if best is None or best[0] > 0:
            return False
        self._swap(best[1], best[2], b, best[3])
        return best[0] < 0

    def run(self, t: int) -> list[list[int]]:
        self._deal(t)
        # Stop when a pass finds nothing to mend, or after as many fruitless attempts as the
        # design has tables (at least 600): bounded work, the same for the same seed.
        patience = max(600, len(self.tables))
        fewest, stale = -1, 0
        while stale < patience:
            bad = self._bad()
            if not bad:
                break
            if fewest < 0 or len(bad) < fewest:
                fewest, stale = len(bad), 0
            self.rng.shuffle(bad)
            for x, k in bad:
                stale += 1
                if x < 0:
                    self._bring(k % self.n, k // self.n)
                    continue
                if x not in self.tables[k]:
                    continue  # an earlier swap moved it already
                if self.rng.random() < 0.5:
                    x = self.tables[k][self.rng.randrange(self.s)]  # or a table mate
                slack = 2 if stale >= 20 and self.rng.random() < 0.25 else 0
                if not self._repair(x, k, 400, slack) and self.partnerships:
                    self._repartner(k)
        return self.tables


def _color_seats(
    built: list[list[int]], n: int, s: int, names: list[str], allowed: Allowed | None
) -> list[list[int]]:
    """Free seating: every entrant at each seat index within one of every other, exactly.

    Seats are the colours of a proper edge colouring of the entrants-tables graph with each
    entrant split into chunks of ``s`` tables: a bipartite graph of degree ``s`` has one
    (Konig), found edge by edge by flipping two-coloured paths; each chunk sits once at every
    seat, so an entrant's seats differ by at most one. A colouring the rule ``allowed`` refuses
    for a table leaves that table in its dealt order.
    """
    chunk_of: list[list[int]] = []  # per table, the chunk of each entrant in it
    seen = [0] * n
    base = [0] * n
    per_entrant = Counter(e for tb in built for e in tb)
    chunks = 0
    for e in range(n):
        base[e] = chunks
        chunks += -(-per_entrant[e] // s)
    for tb in built:
        row = []
        for e in tb:
            row.append(base[e] + seen[e] // s)
            seen[e] += 1
        chunk_of.append(row)
    left = [[-1] * s for _ in range(chunks)]  # chunk -> table at each colour
    right = [[-1] * s for _ in range(len(built))]  # table -> chunk at each colour
    for v, row in enumerate(chunk_of):
        for u in row:
            a = left[u].index(-1)
            b = right[v].index(-1)
            if right[v][a] != -1:  # swap a and b along the path from v, then a is free at v
                path: list[tuple[int, int, int]] = []  # (table, chunk, colour)
                node, at_table, colour = v, True, a
                while True:
                    nxt = right[node][colour] if at_table else left[node][colour]
                    if nxt == -1:
                        break
                    path.append((node, nxt, colour) if at_table else (nxt, node, colour))
                    node, at_table, colour = nxt, not at_table, b if colour == a else a
                for t, c, colour in path:
                    right[t][colour] = left[c][colour] = -1
                for t, c, colour in path:
                    flipped = b if colour == a else a
                    right[t][flipped], left[c][flipped] = c, t
            right[v][a] = u
            left[u][a] = v
    owner = [0] * chunks
    for e in range(n):
        for c in range(base[e], base[e] + -(-per_entrant[e] // s)):
            owner[c] = e
    tables: list[list[int]] = []
    for v, tb in enumerate(built):
        order = [owner[u] for u in right[v]]
        ok = allowed is None or allowed(tuple(names[i] for i in order))
        tables.append(order if ok and sorted(order) == sorted(tb) else list(tb))
    return tables


def _balance_seats(
    built: list[list[int]],
    n: int,
    arrangements: list[tuple[int, ...]],
    names: list[str],
    allowed: Allowed | None,
) -> list[list[int]]:
    """Order each table's seats so every entrant sits at each seat index as evenly as it can.

    Each table in turn takes the arrangement its entrants have sat in least; then the tables of
    any entrant still spread by more than one are re-seated against everyone else's counts. A
    seat order the rule ``allowed`` refuses is never chosen (the dealt order stands).
    """
    s = len(built[0])
    count = [[0] * s for _ in range(n)]
    tables: list[list[int]] = []
    where: list[list[int]] = [[] for _ in range(n)]

    def fits(order: list[int]) -> bool:
        return allowed is None or allowed(tuple(names[i] for i in order))

    def best_order(tb: list[int]) -> list[int]:
        best, chosen = sum(count[e][i] for i, e in enumerate(tb)), tb
        for arrangement in arrangements:
            order = [tb[j] for j in arrangement]
            value = sum(count[e][i] for i, e in enumerate(order))
            if value < best and fits(order):
                best, chosen = value, order
        return chosen

    for k, tb in enumerate(built):
        if len(arrangements) > 8:  # free seating: the lowest (entrant, seat) counts first
            order = [-1] * s
            for _, i, e in sorted((count[e][i], i, e) for e in tb for i in range(s)):
                if order[i] < 0 and e not in order:
                    order[i] = e
            chosen = order if fits(order) else list(tb)
        else:
            chosen = best_order(list(tb))
        tables.append(chosen)
        for i, e in enumerate(chosen):
            count[e][i] += 1
            where[e].append(k)
    for _ in range(40):
        spread = [e for e in range(n) if max(count[e]) - min(count[e]) > 1]
        if not spread:
            break
        for e in spread:
            for k in where[e]:
                tb = tables[k]
                if len(arrangements) <= 8:
                    for i, m in enumerate(tb):
                        count[m][i] -= 1
                    tables[k] = best_order(tb)
                    for i, m in enumerate(tables[k]):
                        count[m][i] += 1
                    continue
                i = tb.index(e)  # free seating: trade seats with one table mate if it helps
                ce = count[e]
                for j, m in enumerate(tb):
                    cm = count[m]
                    if j != i and ce[j] - ce[i] + cm[i] - cm[j] + 2 <= 0:  # none worse
                        order = list(tb)
                        order[i], order[j] = m, e
                        if fits(order):
                            ce[i] -= 1
                            ce[j] += 1
                            cm[j] -= 1
                            cm[i] += 1
                            tables[k] = order
                            break
    return tables


def recount(
    tables: Sequence[tuple[str, ...]], entrants: Sequence[str], *, partnerships: bool = False
) -> Balance:
    """The balance of ``tables`` over ``entrants``, counted from scratch."""
    seats = len(tables[0]) if tables else 2
    per_entrant = Counter(e for tb in tables for e in tb)
    per_seat = Counter((e, i) for tb in tables for i, e in enumerate(tb))
    opponents: Counter[tuple[str, str]] = Counter()
    partners: Counter[tuple[str, str]] = Counter()
    for tb in tables:
        for p, q in combinations(range(seats), 2):
            pair = (tb[p], tb[q]) if tb[p] < tb[q] else (tb[q], tb[p])
            (partners if partnerships and q - p == 2 else opponents)[pair] += 1
    pairs = comb(len(entrants), 2)
    counts = [per_entrant[e] for e in entrants]
    meetings = _range(opponents, pairs)
    partnered = _range(partners, pairs) if partnerships else None
    return Balance(
        tables_per_entrant=(min(counts), max(counts)),
        meetings=meetings,
        seats=(
            min(per_seat[(e, i)] for e in entrants for i in range(seats)),
            max(per_seat[(e, i)] for e in entrants for i in range(seats)),
        ),
        exact=min(counts) == max(counts)
        and meetings[0] == meetings[1]
        and (partnered is None or partnered[0] == partnered[1]),
        partners=partnered,
    )


def _range(counts: Counter[tuple[str, str]], pairs: int) -> tuple[int, int]:
    """(fewest, most) over all ``pairs`` pairs, the pairs never counted meeting 0 times."""
    if not counts:
        return (0, 0)
    low = min(counts.values()) if len(counts) == pairs else 0
    return (low, max(counts.values()))


def _recount_gauntlet(
    tables: Sequence[tuple[str, ...]], entrants: list[str], baselines: Sequence[str], seats: int
) -> Balance:
    """A gauntlet's balance: tables and seats per entrant, entrant-baseline meetings."""
    entered = set(entrants)
    per_entrant = Counter(e for tb in tables for e in tb if e in entered)
    per_seat = Counter((e, i) for tb in tables for i, e in enumerate(tb) if e in entered)
    met = Counter(
        (e, b) for tb in tables for e in tb if e in entered for b in tb if b not in entered
    )
    pairs = [met[(e, b)] for e in entrants for b in baselines]
    counts = [per_entrant[e] for e in entrants]
    seat_counts = [per_seat[(e, i)] for e in entrants for i in range(seats)]
    return Balance(
        tables_per_entrant=(min(counts), max(counts)),
        meetings=(min(pairs), max(pairs)),
        seats=(min(seat_counts), max(seat_counts)),
        exact=min(counts) == max(counts) and min(pairs) == max(pairs),
    )

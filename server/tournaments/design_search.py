"""The randomized balanced construction behind ``designs.balanced`` (docs/tournaments.md).

The entrants are dealt into tables round by round, like a resolvable design (each round every
entrant once, in a seeded shuffle), each seat taken by the entrant of the next few in the deal
who has met the table least; then a local search swaps entrants between tables (and, for
partnerships, re-pairs a table's teams) to bring every pair's meetings within one. Its work is
bounded by attempts, never by the clock, so a seed always gives the same design.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from itertools import combinations
from math import comb
from typing import Final

_WINDOW: Final = 48
"""How far ahead in the deal a seat looks for the entrant who has met the table least."""
REFUSED: Final = 1 << 20
"""The local search's cost of one table the seating rule refuses: above any meeting imbalance."""


class Search:
    """The dealt design and its local search over the meeting counts (module doc)."""

    def __init__(
        self,
        *,
        n: int,
        seats: int,
        partnerships: bool,
        names: list[str],
        allowed: Callable[[tuple[str, ...]], bool] | None,
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
                    (self.part if self._partner(p, q) else self.opp)[m] for q, m in enumerate(table)
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
                        cost += REFUSED
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
                    if self._ok(other):
                        self.refused.discard(k)
                    else:
                        self.refused.add(k)
                    window[0] = y
                    return 0
        raise AssertionError("no table to trade with")  # n >= seats makes one exist

    def _at(self, table: list[int], p: int, enter: int, leave: int) -> int:
        """The cost change at ``table`` when ``enter`` takes seat ``p`` from ``leave``."""
        total = 0
        for q, grid, gain, loss in self.roles[p]:
            m = table[q]
            total += gain[grid[enter][m]] + loss[grid[leave][m]]
        return total

    def _price(self, t: int) -> None:
        """Price each pair's count: its square, and a steep penalty outside the targets, so
        moves inside the targets are nearly free and a pair outside them is worth mending."""
        tables = len(self.tables)
        per_table = self.s * (self.s - 1) // 2
        opp_total = tables * (4 if self.partnerships else per_table)
        self.opp_gain, self.opp_loss = _prices(t + 3, *_targets(self.n, opp_total))
        self.part_gain, self.part_loss = _prices(t + 3, *_targets(self.n, tables * 2))
        self.roles = [
            [
                (q, self.part, self.part_gain, self.part_loss)
                if self._partner(p, q)
                else (q, self.opp, self.opp_gain, self.opp_loss)
                for q in range(self.s)
                if q != p
            ]
            for p in range(self.s)
        ]

    def _swap_delta(self, a: int, p: int, b: int, q: int) -> int:
        """The change in the cost of the meetings if ``tables[a][p]`` and ``tables[b][q]``
        trade places (both tables must accept the other entrant)."""
        ta, tb = self.tables[a], self.tables[b]
        x, z = ta[p], tb[q]
        delta = self._at(ta, p, z, x) + self._at(tb, q, x, z)
        if self.allowed is not None:
            na, nb = list(ta), list(tb)
            na[p], nb[q] = z, x
            before = (a in self.refused) + (b in self.refused)
            after = (not self._ok(na)) + (not self._ok(nb))
            delta += REFUSED * (after - before)
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
            low, high = _targets(self.n, total)
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
        sources = self.where[x]
        for a in self.rng.sample(sources, min(len(sources), 6)):
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
        self._price(t)
        # Stop when a pass finds nothing to mend, or after as many fruitless attempts as the
        # design has tables (at least 1,500): bounded work, the same for the same seed.
        patience = max(1500, len(self.tables))
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
                mover = x
                if self.rng.random() < 0.5:
                    mover = self.tables[k][self.rng.randrange(self.s)]  # or a table mate
                slack = 2 if stale >= 20 and self.rng.random() < 0.25 else 0
                if k in self.refused:  # a table may need two moves: take any that refuses no more
                    slack = REFUSED // 2
                if not self._repair(mover, k, 400, slack) and self.partnerships:
                    self._repartner(k)
        return self.tables


_PENALTY: Final = 8
"""How much more a meeting outside the targets costs than one inside."""


def _targets(n: int, total: int) -> tuple[int, int]:
    """The (fewest, most) meetings per pair that ``total`` meetings over ``n`` entrants allow."""
    pairs = comb(n, 2)
    return total // pairs, -(-total // pairs)


def _prices(size: int, low: int, high: int) -> tuple[list[int], list[int]]:
    """The cost of one more (gain) and one fewer (loss) meeting, by the current count."""

    def cost(v: int) -> int:
        return v * v + _PENALTY * (max(0, v - high) ** 2 + max(0, low - v) ** 2)

    gain = [cost(v + 1) - cost(v) for v in range(size)]
    loss = [cost(v - 1) - cost(v) if v else 0 for v in range(size)]
    return gain, loss

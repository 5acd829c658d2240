"""Seat order for a design's tables: each entrant spread over the seat indices (issue 31).

Rotations then make every seat equal in play; this keeps the tables as printed even too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Final

PARTNER_ARRANGEMENTS: Final = (
    (0, 1, 2, 3), (2, 1, 0, 3), (0, 3, 2, 1), (2, 3, 0, 1),
    (1, 0, 3, 2), (3, 0, 1, 2), (1, 2, 3, 0), (3, 2, 1, 0),
)  # fmt: skip
"""The seat orders that keep both teams of a partnership table (seats 0+2 against 1+3)."""


def color_seats(
    built: list[list[int]],
    n: int,
    s: int,
    names: list[str],
    allowed: Callable[[tuple[str, ...]], bool] | None,
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


def balance_seats(
    built: list[list[int]],
    n: int,
    arrangements: list[tuple[int, ...]],
    names: list[str],
    allowed: Callable[[tuple[str, ...]], bool] | None,
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

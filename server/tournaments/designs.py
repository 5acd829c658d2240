"""Fixed schedules smaller than the round robin: balanced designs and gauntlets (issue 31).

A round robin seats every combination of its entrants, which explodes at three and four seats
(40 entrants at 4 seats: 91,390 tables). :func:`balanced` seats each entrant at a chosen number
of tables instead, with every pair of entrants meeting as nearly equally often as the size allows
and each entrant spread over the seat indices; :func:`gauntlet` seats each entrant against fixed
baselines only. Both return tables in seat order before rotation, exactly as
``server/tournaments/scheduler.py``'s ``tables()`` gives them (partnerships:
``(a, b, a2, b2)``, seats 0+2 against 1+3), so the lifecycle expands them into games the same
way (docs/tournaments.md).

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
from itertools import combinations
from math import comb

from domino_arena.server.tournaments.design_search import Search
from domino_arena.server.tournaments.design_seats import (
    PARTNER_ARRANGEMENTS,
    balance_seats,
    color_seats,
)

Allowed = Callable[[tuple[str, ...]], bool]
"""Whether a table (seat order) may be played: the caller binds ``scheduler.seating_allowed``."""


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
        built = Search(
            n=n, seats=seats, partnerships=partnerships, names=names, allowed=allowed, rng=rng
        ).run(t)
    if allowed is not None:
        refused = [tb for tb in built if not allowed(tuple(names[i] for i in tb))]
        if refused:
            raise ValueError(
                f"entrants: the same-owner seating rule (allowed) refuses every {seats}-seat "
                f"design found for {n} entrants at {t} tables each, e.g. "
                f"{', '.join(names[i] for i in refused[0])}; add entrants of other owners"
            )
    if partnerships:
        ordered = balance_seats(built, n, list(PARTNER_ARRANGEMENTS), names, allowed)
    else:
        ordered = color_seats(built, n, seats, names, allowed)
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
        met = dict.fromkeys(baselines, 0)  # this entrant's tables with each baseline
        partnered = dict.fromkeys(baselines, 0)
        start = rng.randrange(len(groups))
        for k in range(tables_per_entrant):
            seat = (index + k) % seats
            # The least-met group from a moving start: the first that reaches the bound wins.
            bound = sum(sorted(met.values())[: seats - 1])
            fewest_partnered = min(partnered.values())
            best: tuple[tuple[int, int], tuple[str, ...]] | None = None
            for j in range(len(groups)):
                group = groups[(start + k + j) % len(groups)]
                key = (sum(met[b] for b in group), partnered[group[1]] if partnerships else 0)
                if best is not None and key >= best[0]:
                    continue
                table = _seat_in(entrant, group, seat, partnerships)
                if allowed is not None and not allowed(table):
                    continue
                best = (key, table)
                if key[0] == bound and (not partnerships or key[1] == fewest_partnered):
                    break
            if best is None:
                raise ValueError(
                    f"entrants: the same-owner seating rule (allowed) leaves {entrant} no table "
                    "with the baselines"
                )
            table = best[1]
            for b in table:
                if b != entrant:
                    met[b] += 1
            if partnerships:
                partnered[table[(table.index(entrant) + 2) % 4]] += 1
            tables.append(table)
    balance = _recount_gauntlet(tables, list(entrants), baselines, seats, partnerships)
    return Design(tuple(tables), balance)


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


def check_field(
    entrants: Sequence[str],
    seats: int,
    partnerships: bool,
    *,
    what: str = "design",
    minimum: int | None = None,
) -> list[str]:
    """The entrants as a list, after the checks every seating of a field shares (a design's, a
    Swiss round's: ``what`` names it in the messages).

    Raises:
        ValueError: seats not 2-4, partnerships not at 4 seats, a repeated name, or fewer
            entrants than ``minimum`` (default: ``seats``).
    """
    if seats not in (2, 3, 4):
        raise ValueError(f"seats: a {what} seats 2, 3 or 4 at a table, got {seats}")
    if partnerships and seats != 4:
        raise ValueError(f"partnerships: partnership tables have 4 seats, got seats={seats}")
    if len(set(entrants)) != len(entrants):
        repeated = sorted(e for e, k in Counter(entrants).items() if k > 1)
        raise ValueError(f"entrants: names must be unique, repeated: {', '.join(repeated[:5])}")
    needed = seats if minimum is None else minimum
    if len(entrants) < needed:
        raise ValueError(
            f"entrants: a {seats}-seat {what} needs at least {needed} entrants, got {len(entrants)}"
        )
    return list(entrants)


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
    names = check_field(entrants, seats, partnerships, minimum=minimum)
    if count < 1:
        raise ValueError(f"{argument}: must be at least 1, got {count}")
    return names


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
    tables: Sequence[tuple[str, ...]],
    entrants: list[str],
    baselines: Sequence[str],
    seats: int,
    partnerships: bool,
) -> Balance:
    """A gauntlet's balance: tables and seats per entrant, entrant-baseline meetings (and,
    with partnerships, which baseline partnered it)."""
    entered = set(entrants)
    per_entrant = Counter(e for tb in tables for e in tb if e in entered)
    per_seat = Counter((e, i) for tb in tables for i, e in enumerate(tb) if e in entered)
    met = Counter(
        (e, b) for tb in tables for e in tb if e in entered for b in tb if b not in entered
    )
    pairs = [met[(e, b)] for e in entrants for b in baselines]
    counts = [per_entrant[e] for e in entrants]
    seat_counts = [per_seat[(e, i)] for e in entrants for i in range(seats)]
    partners: tuple[int, int] | None = None
    if partnerships:
        mate = Counter(
            (tb[i], tb[(i + 2) % 4]) for tb in tables for i in range(4) if tb[i] in entered
        )
        partnered = [mate[(e, b)] for e in entrants for b in baselines]
        partners = (min(partnered), max(partnered))
    return Balance(
        tables_per_entrant=(min(counts), max(counts)),
        meetings=(min(pairs), max(pairs)),
        seats=(min(seat_counts), max(seat_counts)),
        exact=min(counts) == max(counts)
        and min(pairs) == max(pairs)
        and (partners is None or partners[0] == partners[1]),
        partners=partners,
    )

"""Pure matchmaking for the continuous ladder: which idle bots sit at which tables now.

The issue asks that every connected bot gets games and that opponents near in rating are
preferred. Fairness comes first: when the idle bots do not fill whole tables, those who sit
out are the ones with the most games this session, so (with everyone always connected) games
per bot never differ by more than one. Among the bots that play, each table is led by the bot
with the fewest games, who takes the nearest-rated others. A seeded :class:`random.Random`
breaks ties and shuffles the seats, so a session is reproducible from its seed.

Fair seating between owners (a course's rule, docs/courses.md): unless allowed, two bots of one
owner never sit at one table of a 3- or 4-seat free-for-all (they could collude against the
others) and never as partners. A leader for whom the rule leaves no full table sits out this
pick (the next one tries again); without owners or with the rules allowed, nothing changes.

>>> bots = [Candidate("a", 1500.0, 0), Candidate("b", 1900.0, 0), Candidate("c", 1510.0, 0)]
>>> pick_tables(bots, 2, rng=random.Random(1), max_tables=1)[0] in {("a", "c"), ("c", "a")}
True
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Candidate:
    """A connected bot that could be seated."""

    name: str
    rating: float
    games: int
    """Games it was given this session."""
    busy: bool = False
    """Already in a game of this ladder: never seated twice at once."""
    owner: str = ""
    """Who registered it; "" (nobody) never conflicts with anyone."""


def pick_tables(
    candidates: Sequence[Candidate],
    seats: int,
    *,
    rng: random.Random,
    partnerships: bool = False,
    max_tables: int | None = None,
    same_owner_tables: bool = True,
    same_owner_partners: bool = True,
) -> list[tuple[str, ...]]:
    """Return tables of ``seats`` idle candidates (each in seat order), fewest games first.

    With ``partnerships`` (4 seats; seats 0+2 against 1+3) the strongest and the weakest of a
    table are partners, so the teams are as even as the four allow (and, unless
    ``same_owner_partners``, no two bots of one owner are partners). Unless
    ``same_owner_tables``, no two bots of one owner sit at one free-for-all table of 3-4 seats.

    Raises:
        ValueError: fewer than 2 seats, partnerships without 4 seats, a name twice, or a
            negative ``max_tables``.
    """
    if seats < 2:
        raise ValueError(f"a table needs at least 2 seats, got {seats}")
    if partnerships and seats != 4:
        raise ValueError(f"partnerships need 4 seats, got {seats}")
    if max_tables is not None and max_tables < 0:
        raise ValueError(f"max_tables must not be negative, got {max_tables}")
    names = [c.name for c in candidates]
    if len(set(names)) != len(names):
        raise ValueError("candidate names must be unique")
    idle = [c for c in candidates if not c.busy]
    rng.shuffle(idle)
    idle.sort(key=lambda c: c.games)  # stable: the shuffle breaks ties
    count = len(idle) // seats
    if max_tables is not None:
        count = min(count, max_tables)
    if count == 0:
        return []
    # Bots with fewer games than the last place must play; those tied with it may fill the
    # places left (rating decides which); those with more sit out.
    cutoff = idle[count * seats - 1].games
    pool = [c for c in idle if c.games <= cutoff]
    spare = count * seats - sum(1 for c in pool if c.games < cutoff)
    # The most bots of one owner a table may hold.
    if partnerships:
        most = seats if same_owner_partners else 2
    else:
        most = seats if same_owner_tables or seats < 3 else 1
    result: list[tuple[str, ...]] = []
    while len(result) < count and len(pool) >= seats:
        leader, rest = pool[0], pool[1:]
        rest.sort(key=lambda c: abs(c.rating - leader.rating))  # stable: ties stay shuffled
        table = [leader]
        used = int(leader.games == cutoff)
        for candidate in rest:
            if len(table) == seats:
                break
            if candidate.owner and sum(c.owner == candidate.owner for c in table) >= most:
                continue
            if candidate.games == cutoff:
                if spare - used == 0:
                    continue
                used += 1
            table.append(candidate)
        if len(table) < seats:  # the owners' rule leaves this leader no table now
            pool = pool[1:]
            spare += leader.games < cutoff  # its place goes to a bot tied with the last
            continue
        spare -= used
        taken = {c.name for c in table}
        pool = [c for c in pool if c.name not in taken]
        result.append(_seat(table, rng, partnerships=partnerships, apart=not same_owner_partners))
    return result


def _seat(
    table: list[Candidate], rng: random.Random, *, partnerships: bool, apart: bool = False
) -> tuple[str, ...]:
    """Put ``table`` in seat order: random seats, or balanced teams in random seats (with
    ``apart``, the most balanced teams that keep each owner's bots on opposite sides)."""
    if not partnerships:
        names = [c.name for c in table]
        rng.shuffle(names)
        return tuple(names)
    strong, second, third, weak = sorted(table, key=lambda c: -c.rating)
    pairings = [((strong, weak), (second, third)), ((strong, third), (second, weak))]
    pairings.append(((strong, second), (third, weak)))
    if apart:  # the table holds at most two bots of an owner, so one pairing fits
        pairings = [p for p in pairings if not any(_together(pair) for pair in p)] or pairings
    (a1, a2), (b1, b2) = pairings[0]
    teams = [[a1.name, a2.name], [b1.name, b2.name]]
    rng.shuffle(teams)
    for team in teams:
        rng.shuffle(team)
    (a, b), (c, d) = teams
    return (a, c, b, d)


def _together(pair: tuple[Candidate, Candidate]) -> bool:
    first, second = pair
    return bool(first.owner) and first.owner == second.owner

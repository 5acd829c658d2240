"""What the games cannot bound: separation in the batch fit, the one-sided bounds it leaves, and
groups that never met.

docs/ratings.md (what the standings don't know). The maximum-likelihood rating of a bot that
never finished behind the rest of its pool is infinite: every higher rating explains its games
better. Ordo refuses such a pool; the fit (``fit.py``) keeps a finite number only through its
weak prior, and the bootstrap's spread of that number is narrow, since every resample is just as
one-sided. So the data bound such a rating on one side only, and the standings must say so.

**Which ratings are bounded.** A result where ``a`` finished ahead of or level with ``b`` (on
different sides) is evidence that ``b`` is not far above ``a``: ``b - a`` is bounded above. Draw
an edge ``a -> b`` for it. ``b`` is then bounded above, relative to a *reference*, when a chain
of edges leads from the reference to ``b``, and bounded below when a chain leads from ``b`` to
the reference; both hold exactly when ``b`` is strongly connected with the reference (the
condition under which Bradley-Terry and Plackett-Luce have a finite maximum, Hunter 2004). The
reference is what fixes the scale: the frozen baselines, else the anchor bot, else the largest
strongly connected group of two or more bots (the pool's main body). When no such group exists
(every bot separated from every other, as after one match), a bot is bounded below when it
reaches every other bot and above when every other bot reaches it.

In a partnership the two partners share their side's result, so each is compared with each
bot of the other side; how a side's rating splits between partners who only ever played
together is the prior's choice (fit.py), not evidence, and is not checked here.

**The one-sided bound.** For a bot bounded below only, take everyone who reaches it (it and
the bots above it): nobody outside that group ever finished ahead of or level with anyone in
it. Shift the group's ratings down together, the other ratings as fitted, until the chance of
the group finishing ahead of the rest in every one of their games (Plackett-Luce's chance that
the group's sides take the top places, seat terms included) falls to :data:`TAIL`; the bot's
rating shifted so far is its lower bound. Against a single opponent this is the exact
(Clopper-Pearson) bound of an all-wins record: one win in one game puts a bot no lower than
636 Elo below its opponent, 80 out of 80 at least 531 above. A bot bounded above only is the
mirror image. :data:`TAIL` is 2.5%, the tail each end of the two-sided 95% intervals leaves.
The other bots' ratings are taken as fitted; their own uncertainty is not added.

**Groups that never met.** Bots linked to the rest by no chain of games at all could only be
compared through the prior, so the fit (``fit.py``) refuses such a pool. :func:`main_part`
keeps the part that fixes the scale (the one holding the most frozen baselines, the anchor's,
or else the one with most bots, then most games) and names the others' bots, which the table
lists unranked and unbounded ("?"), with their games.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import permutations
from typing import TYPE_CHECKING, Final

from domino_arena.server.ladder.fit import ELO_PER_NATURAL, FitGame, FitResult
from domino_arena.server.ladder.fit_bootstrap import DEFAULT_LEVEL

# numpy and scipy (some 40 MiB and 0.4 s) are imported by the functions that fit, not here:
# the web face and the referee import this module's types at start and may never fit.
if TYPE_CHECKING:
    import numpy as np

TAIL: Final = (1 - DEFAULT_LEVEL) / 2
"""The chance left beyond a one-sided bound: 2.5%, as each end of a two-sided 95% interval."""
REACH: Final = 40.0
"""The furthest a bound is searched for, in natural units (about 7,000 Elo)."""


class Bound(StrEnum):
    """Which sides of a bot's rating the games bound."""

    BOTH = "both"
    LOWER = "lower"
    """Bounded below only: it never finished behind the rest of the pool ("≥")."""
    UPPER = "upper"
    """Bounded above only: it never finished ahead of the rest of the pool ("≤")."""
    NONE = "none"
    """Neither: the games link it to the rest of the pool only through separated bots."""


@dataclass(frozen=True, slots=True)
class Separation:
    """Each bot's :class:`Bound`, and the one-sided bound of each bot bounded on one side."""

    bounds: Mapping[str, Bound]
    limits: Mapping[str, float]
    """For a bot bounded on one side only: its lower bound (LOWER) or upper bound (UPPER),
    in Elo on the fit's scale."""

    @property
    def separated(self) -> bool:
        """Whether any bot's rating is bounded on fewer than two sides."""
        return any(bound is not Bound.BOTH for bound in self.bounds.values())


def separation(games: Sequence[FitGame], point: FitResult) -> Separation:
    """Find which ratings of ``point`` (the fit of ``games``) the games bound, and the
    one-sided bounds of those bounded on one side (see the module doc)."""
    import numpy as np  # noqa: PLC0415

    bots = sorted(point.ratings)
    index = {bot: i for i, bot in enumerate(bots)}
    edges: set[tuple[int, int]] = set()
    played: dict[int, list[int]] = {i: [] for i in range(len(bots))}
    for g, item in enumerate(games):
        game = item.game
        at = [index[bot] for bot in game.bots]
        for seat, who in enumerate(at):
            played[who].append(g)
            for other_seat, other in enumerate(at):
                mine, theirs = game.side_of_seat[seat], game.side_of_seat[other_seat]
                if mine != theirs and game.standing[mine] <= game.standing[theirs]:
                    edges.add((who, other))
    reach = _reachability(len(bots), edges)
    reference = _reference(bots, reach, point)
    bounds: dict[str, Bound] = {}
    for i, bot in enumerate(bots):
        if reference is None:
            below = bool(reach[i].all())
            above = bool(reach[:, i].all())
        else:
            below = bool(reach[i, reference].any())
            above = bool(reach[reference, i].any())
        bounds[bot] = (
            Bound.BOTH
            if below and above
            else Bound.LOWER
            if below
            else Bound.UPPER
            if above
            else Bound.NONE
        )
    limits: dict[str, float] = {}
    kept: dict[frozenset[int], float] = {}
    for i, bot in enumerate(bots):
        if bounds[bot] not in (Bound.LOWER, Bound.UPPER):
            continue
        upper = bounds[bot] is Bound.UPPER
        group = frozenset(np.flatnonzero(reach[i] if upper else reach[:, i]).tolist())
        if group not in kept:
            relevant = sorted({g for member in group for g in played[member]})
            top = frozenset(range(len(bots))) - group if upper else group
            kept[group] = _shift(
                (games[g] for g in relevant),
                point,
                {bots[j] for j in top},
            )
        shift = kept[group] * ELO_PER_NATURAL
        limits[bot] = point.ratings[bot] + (-shift if upper else shift)
    return Separation(bounds, limits)


def main_part(
    games: Sequence[FitGame], *, anchor: str | None = None, fixed: Iterable[str] = ()
) -> tuple[list[FitGame], dict[str, int]]:
    """The games of the part of the pool that fixes the scale (see the module doc), and each
    bot of the other parts with its number of games; all of ``games`` and nothing when the
    pool is one part."""
    part: dict[str, str] = {}

    def root(bot: str) -> str:
        while part.setdefault(bot, bot) != bot:
            part[bot] = part[part[bot]]
            bot = part[bot]
        return bot

    count: dict[str, int] = {}
    for item in games:
        first = root(item.game.bots[0])
        for bot in item.game.bots:
            count[bot] = count.get(bot, 0) + 1
            other = root(bot)
            if other != first:
                part[max(first, other)] = min(first, other)
                first = min(first, other)
    members: dict[str, list[str]] = {}
    for bot in sorted(count):
        members.setdefault(root(bot), []).append(bot)
    if len(members) <= 1:
        return list(games), {}
    held = set(fixed)
    main = min(
        members,
        key=lambda r: (
            -len(held.intersection(members[r])),
            anchor not in members[r],
            -len(members[r]),
            -sum(count[b] for b in members[r]),
            members[r][0],
        ),
    )
    kept = [item for item in games if root(item.game.bots[0]) == main]
    return kept, {bot: count[bot] for bot in sorted(count) if root(bot) != main}


def _reachability(size: int, edges: Iterable[tuple[int, int]]) -> np.ndarray:
    """``reach[a, b]``: a chain of edges leads from ``a`` to ``b`` (every bot reaches itself)."""
    import numpy as np  # noqa: PLC0415
    from scipy import sparse  # noqa: PLC0415
    from scipy.sparse import csgraph  # noqa: PLC0415

    pairs = list(edges)
    graph = sparse.csr_array(
        (np.ones(len(pairs)), ([a for a, _ in pairs], [b for _, b in pairs])),
        shape=(size, size),
    )
    steps = csgraph.shortest_path(graph, method="D", unweighted=True, directed=True)
    reach: np.ndarray = np.isfinite(steps)
    return reach


def _reference(bots: Sequence[str], reach: np.ndarray, point: FitResult) -> list[int] | None:
    """The bots that fix the scale: the frozen baselines, the anchor, or the largest strongly
    connected group of two or more bots (most games, then first name, among equals); None
    when there is no such group."""
    import numpy as np  # noqa: PLC0415

    if point.fixed:
        return [i for i, bot in enumerate(bots) if bot in point.fixed]
    if point.anchor is not None:
        return [bots.index(point.anchor)]
    mutual = reach & reach.T
    groups: dict[tuple[int, ...], None] = {}
    for i in range(len(bots)):
        groups[tuple(np.flatnonzero(mutual[i]).tolist())] = None
    best = min(
        (group for group in groups if len(group) >= 2),
        key=lambda group: (
            -len(group),
            -sum(point.games[bots[i]] for i in group),
            bots[group[0]],
        ),
        default=None,
    )
    return None if best is None else list(best)


def _shift(games: Iterable[FitGame], point: FitResult, top: set[str]) -> float:
    """The shift, in natural units, of the ``top`` group's strengths at which the chance that
    its sides took the top places in every one of ``games`` (as they did) is :data:`TAIL`."""
    from scipy import optimize  # noqa: PLC0415

    terms: list[tuple[list[float], list[float], list[int]]] = []
    for item in games:
        game = item.game
        strength = [0.0] * game.sides
        share = [0.0] * game.sides
        seats = [0] * game.sides
        for seat, bot in enumerate(game.bots):
            side = game.side_of_seat[seat]
            strength[side] += point.ratings[bot] + point.seat_advantage[item.position(seat)]
            share[side] += bot in top
            seats[side] += 1
        strength = [s / n / ELO_PER_NATURAL for s, n in zip(strength, seats, strict=True)]
        share = [s / n for s, n in zip(share, seats, strict=True)]
        ahead = [side for side in range(game.sides) if share[side] > 0]
        if not ahead or len(ahead) == game.sides:
            continue
        worst = max(game.standing[side] for side in ahead)
        if any(game.standing[s] <= worst for s in range(game.sides) if s not in ahead):
            continue  # a mixed partnership that did not finish as one group: no evidence here
        terms.append((strength, share, ahead))

    def excess(shift: float) -> float:
        total = 0.0
        for strength, share, ahead in terms:
            total += _log_top([u + f * shift for u, f in zip(strength, share, strict=True)], ahead)
        return total - math.log(TAIL)

    if not terms:
        return -REACH
    low, high = -1.0, 1.0
    while excess(low) > 0 and low > -REACH:
        low *= 2
    while excess(high) < 0 and high < REACH:
        high *= 2
    if excess(low) > 0:
        return low
    if excess(high) < 0:
        return high
    return float(optimize.brentq(excess, low, high, xtol=1e-9))


def _log_top(strength: Sequence[float], top: Sequence[int]) -> float:
    """The log of Plackett-Luce's chance that the sides ``top`` take the first places (in any
    order among themselves), the sides' strengths in natural units."""
    logs = []
    for order in permutations(top):
        left = list(range(len(strength)))
        total = 0.0
        for side in order:
            total += strength[side] - _log_sum_exp([strength[s] for s in left])
            left.remove(side)
        logs.append(total)
    return _log_sum_exp(logs)


def _log_sum_exp(values: Sequence[float]) -> float:
    peak = max(values)
    return peak + math.log(math.fsum(math.exp(v - peak) for v in values))

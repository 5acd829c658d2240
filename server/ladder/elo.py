"""Elo ratings per game type, pure (docs/ratings.md): no I/O, no clock, no database.

A game of N sides is scored as its N(N-1)/2 pairwise results by final standing, each with
K/(N-1). In partnership play a side's rating is the mean of its partners' ratings and both
partners take the side's change. Forfeits count as losses for the forfeiting side; voided and
aborted games are never rated (the caller does not pass them).

Every rating of a game moves from the ratings as they were before it, so the order of the
seats and of the mapping does not change the result; the order of the games does, and
:func:`replay` folds them in the order given with the same arithmetic as :func:`rate_game`,
so replaying the stored games gives exactly (not approximately) the stored ratings.

Frozen baselines (a course's house bots, seats named ``house:NAME``) are never rated: their
rating is not moved and not returned (so never stored), and their opponents move against the
fixed rating the game carries for them (:attr:`RatedGame.fixed`, the tournament's baselines).
A house seat without a fixed rating is left out of the rating altogether: its pairs move no one.

>>> new = rate_game({}, RatedGame(("ann", "bob"), (0, 1), standing((7, 3), 0), (0, 0)))
>>> new["ann"].rating, new["bob"].rating
(1512.0, 1488.0)
>>> beat = RatedGame(("ann", "house:greedy"), (0, 1), (0, 1), (0, 0), (("house:greedy", 1700),))
>>> sorted(rate_game({}, beat)), round(rate_game({}, beat)["ann"].rating, 2)
(['ann'], 1518.23)
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import Final, Literal

from domino_arena.server.store.tables import HOUSE_PREFIX

INITIAL_RATING: Final = 1500.0
DEFAULT_K: Final = 24.0
MODEL: Final = "elo-pairwise-k24/1"
"""The name and version of this model as a stored match records it (``rating_model``): the
version changes whenever the arithmetic does, so a game's row says which standings it fed."""

Outcome = Literal["win", "draw", "loss"]


def is_house(bot: str) -> bool:
    """Whether ``bot`` is a house bot's seat (``house:NAME``), whose rating never moves."""
    return bot.startswith(HOUSE_PREFIX)


@dataclass(frozen=True, slots=True)
class Rating:
    """One bot's standing in one pool (game type)."""

    rating: float = INITIAL_RATING
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    faults: int = 0
    information: float = 0.0
    """Sum of weight * p * (1 - p) over its pairwise results (p: expected score then)."""

    @property
    def uncertainty(self) -> float:
        """Half-width of a 95% interval of the rating, in Elo points (inf before any game)."""
        if self.information <= 0:
            return math.inf
        return 1.96 * 400 / math.log(10) / math.sqrt(self.information)


@dataclass(frozen=True, slots=True)
class RatedGame:
    """A finished game as the ladder sees it.

    Checked when built, so a game that :func:`rate_game` accepts is whole: the store can
    build one from its rows and find a damaged row at once, not as a wrong rating later.

    Raises:
        ValueError: lengths that disagree, a bot in two seats, sides not numbered 0..S-1,
            places out of range or none first, negative faults.
    """

    bots: tuple[str, ...]
    """The bot in each seat."""
    side_of_seat: tuple[int, ...]
    standing: tuple[int, ...]
    """Per side: its place, 0 = first; sides with equal places drew with each other."""
    faults: tuple[int, ...]
    """Faults charged to each seat in this game."""
    fixed: tuple[tuple[str, float], ...] = ()
    """The frozen baselines' fixed ratings (``house:NAME``, rating), from the game's
    tournament: what their opponents are rated against. Other house seats are not rated."""

    def __post_init__(self) -> None:
        seats = len(self.bots)
        for bot, rating in self.fixed:
            if not is_house(bot) or not math.isfinite(rating):
                raise ValueError(
                    f"fixed: ({bot!r}, {rating}); expected a house bot's seat "
                    f"({HOUSE_PREFIX}NAME) at a finite rating"
                )
        for field, values in (("side_of_seat", self.side_of_seat), ("faults", self.faults)):
            if len(values) != seats:
                raise ValueError(
                    f"{field}: expected one entry per seat ({seats}, as in bots), "
                    f"got {len(values)}: {values!r}"
                )
        for seat, bot in enumerate(self.bots):
            if not isinstance(bot, str) or not bot:
                raise ValueError(f"bots[{seat}]: expected a non-empty bot name, got {bot!r}")
            if bot in self.bots[:seat]:
                raise ValueError(
                    f"bots: {bot!r} sits in seats {self.bots.index(bot)} and {seat}; "
                    "expected each bot in one seat"
                )
        sides = len(set(self.side_of_seat))
        if sides < 2:
            raise ValueError(
                f"side_of_seat: a rated game needs at least two sides, got {self.side_of_seat!r}"
            )
        if set(self.side_of_seat) != set(range(sides)):
            raise ValueError(
                f"side_of_seat: expected the sides numbered 0..{sides - 1} with every one "
                f"seated, got {self.side_of_seat!r}"
            )
        if len(self.standing) != sides:
            raise ValueError(
                f"standing: expected one place per side ({sides}), "
                f"got {len(self.standing)}: {self.standing!r}"
            )
        for side, place in enumerate(self.standing):
            if not 0 <= place < sides:
                raise ValueError(
                    f"standing[{side}]: expected a place in 0..{sides - 1}, got {place}"
                )
        if 0 not in self.standing:
            raise ValueError(f"standing: expected some side in place 0, got {self.standing!r}")
        for seat, count in enumerate(self.faults):
            if count < 0:
                raise ValueError(f"faults[{seat}]: expected a count of at least 0, got {count}")

    @property
    def sides(self) -> int:
        """How many sides played."""
        return len(self.standing)

    def outcome(self, seat: int) -> Outcome:
        """``"win"`` (its side alone first), ``"draw"`` (first with others) or ``"loss"``."""
        place = self.standing[self.side_of_seat[seat]]
        if place != 0:
            return "loss"
        return "win" if self.standing.count(0) == 1 else "draw"


@dataclass(frozen=True, slots=True)
class PairRecord:
    """What one bot scored against another over the games where they sat on opposite sides."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses


_NEW: Final = Rating()
"""A bot's rating before its first game (immutable: one serves every lookup)."""


def expected_score(rating: float, opponent: float) -> float:
    """The logistic Elo expectation of ``rating`` against ``opponent``.

    >>> expected_score(1500, 1500)
    0.5
    """
    return 1.0 / (1.0 + math.pow(10.0, (opponent - rating) / 400.0))


def standing(
    scores: Iterable[int], winner: int | None, forfeited_side: int | None = None
) -> tuple[int, ...]:
    """Return each side's place: the winner first, the forfeiting side last, the rest by score.

    A place is the number of sides ranked strictly ahead, so sides with equal scores share a
    place and the next place is skipped. The winner is alone in place 0 and the forfeiting side
    alone last whatever their scores; with neither (a game that ended tied) the scores alone
    decide, highest first.

    >>> standing((61, 40, 75), winner=0)
    (0, 2, 1)
    >>> standing((20, 20), winner=None)
    (0, 0)
    >>> standing((10, 40, 20), winner=2, forfeited_side=1)
    (1, 2, 0)

    Raises:
        ValueError: fewer than two sides, or a winner or forfeiting side that is not a side,
            or a side that both won and forfeited.
    """
    points = tuple(scores)
    sides = len(points)
    if sides < 2:
        raise ValueError(f"scores: expected one score per side, at least two, got {points!r}")
    for name, side in (("winner", winner), ("forfeited_side", forfeited_side)):
        if side is not None and not 0 <= side < sides:
            raise ValueError(f"{name}: expected a side in 0..{sides - 1} or None, got {side}")
    if forfeited_side is not None and forfeited_side == winner:
        raise ValueError(
            f"forfeited_side: side {forfeited_side} is also the winner; "
            "expected the forfeiting side to differ from the winner"
        )
    rest = [side for side in range(sides) if side not in (winner, forfeited_side)]
    places = [0] * sides
    ahead = 0 if winner is None else 1
    for side in rest:
        places[side] = ahead + sum(1 for other in rest if points[other] > points[side])
    if forfeited_side is not None:
        places[forfeited_side] = sides - 1
    return tuple(places)


def _check_k(k: float) -> None:
    if not (math.isfinite(k) and k > 0):
        raise ValueError(f"k: expected a positive finite number, got {k}")


def rate_game(
    ratings: Mapping[str, Rating], game: RatedGame, k: float = DEFAULT_K
) -> dict[str, Rating]:
    """Return the new rating of every bot of ``game`` (a bot missing from ``ratings`` is new).

    Only the bots of ``game`` are in the result, in seat order, less its house bots (frozen:
    see the module doc); ``ratings`` is not changed.

    Raises:
        ValueError: ``k`` not a positive finite number.
    """
    _check_k(k)
    sides = game.sides
    fixed = dict(game.fixed)
    before = [
        Rating(rating=fixed[bot]) if bot in fixed else ratings.get(bot, _NEW) for bot in game.bots
    ]
    members: list[list[int]] = [[] for _ in range(sides)]
    for seat, side in enumerate(game.side_of_seat):
        if not is_house(game.bots[seat]) or game.bots[seat] in fixed:
            members[side].append(seat)
    side_rating = [
        math.fsum(before[seat].rating for seat in seats) / len(seats) if seats else math.nan
        for seats in members
    ]

    # Each pair is computed from its lower-rated side and each side's terms are summed exactly
    # (fsum), so numbering the seats or sides differently cannot change a rating by even a bit.
    weight = 1.0 / (sides - 1)
    changes: list[list[float]] = [[] for _ in range(sides)]
    informations: list[list[float]] = [[] for _ in range(sides)]
    for pair in combinations(range(sides), 2):
        if not (members[pair[0]] and members[pair[1]]):
            continue  # a side of unrated house bots alone moves no one
        a, b = sorted(pair, key=side_rating.__getitem__)
        expected = expected_score(side_rating[a], side_rating[b])
        surprise = k * weight * (_pair_score(game.standing[a], game.standing[b]) - expected)
        changes[a].append(surprise)
        changes[b].append(-surprise)
        informations[a].append(weight * expected * (1.0 - expected))
        informations[b].append(weight * expected * (1.0 - expected))
    change = [math.fsum(terms) for terms in changes]
    information = [math.fsum(terms) for terms in informations]

    after: dict[str, Rating] = {}
    for seat, (bot, old) in enumerate(zip(game.bots, before, strict=True)):
        if is_house(bot):
            continue
        side = game.side_of_seat[seat]
        outcome = game.outcome(seat)
        after[bot] = Rating(
            rating=old.rating + change[side],
            games=old.games + 1,
            wins=old.wins + (outcome == "win"),
            draws=old.draws + (outcome == "draw"),
            losses=old.losses + (outcome == "loss"),
            faults=old.faults + game.faults[seat],
            information=old.information + information[side],
        )
    return after


def _pair_score(place: int, other: int) -> float:
    """The score of the side in ``place`` against the side in ``other``: 1, 0.5 or 0."""
    if place < other:
        return 1.0
    return 0.5 if place == other else 0.0


def replay(games: Iterable[RatedGame], k: float = DEFAULT_K) -> dict[str, Rating]:
    """Rate ``games`` in order from scratch: what the stored ratings must equal."""
    _check_k(k)
    ratings: dict[str, Rating] = {}
    for game in games:
        ratings.update(rate_game(ratings, game, k))
    return ratings


def head_to_head(games: Iterable[RatedGame]) -> dict[tuple[str, str], PairRecord]:
    """Return, for every two bots that met, the record of the first against the second.

    Two bots meet in a game when they sit on different sides (partners do not meet); each
    meeting is one result by standing. Both orders are keys, so ``result[a, b].wins ==
    result[b, a].losses``.
    """
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for game in games:
        for a, b in combinations(range(len(game.bots)), 2):
            side_a, side_b = game.side_of_seat[a], game.side_of_seat[b]
            if side_a == side_b:
                continue
            score = _pair_score(game.standing[side_a], game.standing[side_b])
            column = 0 if score == 1.0 else 1 if score == 0.5 else 2
            counts[game.bots[a], game.bots[b]][column] += 1
            counts[game.bots[b], game.bots[a]][2 - column] += 1
    return {pair: PairRecord(*record) for pair, record in counts.items()}


def standings(ratings: Mapping[str, Rating]) -> list[tuple[str, Rating]]:
    """Return the table of a pool: highest rating first, equal ratings by name."""
    return sorted(ratings.items(), key=lambda item: (-item[1].rating, item[0]))

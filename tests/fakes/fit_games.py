"""Rated games drawn from the rating fit's own model, for its tests and its coverage bench.

A game's sides finish in the Plackett-Luce order of their strengths (the mean of each side's
bots' strengths plus seat advantages): sorting the strengths plus independent Gumbel noise,
highest first, draws exactly that order. Games come in units, as a tournament's duplicate sets:
one deal (one first seat) played under every rotation of the seats.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence

from domino_arena.server.ladder.elo import RatedGame
from domino_arena.server.ladder.fit import ELO_PER_NATURAL, FitGame


def play(
    bots: Sequence[str],
    side_of_seat: Sequence[int],
    first_seat: int,
    *,
    strengths: Mapping[str, float],
    seat_advantage: Sequence[float],
    rng: random.Random,
    unit: str,
) -> FitGame:
    """One game of ``bots`` (seat order) drawn from the model; strengths and seat advantages
    in Elo (``seat_advantage[p]``: position p after the first seat)."""
    players = len(bots)
    sides = max(side_of_seat) + 1
    totals = [0.0] * sides
    counts = [0] * sides
    for seat, bot in enumerate(bots):
        side = side_of_seat[seat]
        totals[side] += strengths[bot] + seat_advantage[(seat - first_seat) % players]
        counts[side] += 1
    noisy = [
        totals[side] / counts[side] / ELO_PER_NATURAL - math.log(-math.log(rng.random()))
        for side in range(sides)
    ]
    order = sorted(range(sides), key=lambda side: -noisy[side])
    standing = [0] * sides
    for place, side in enumerate(order):
        standing[side] = place
    game = RatedGame(tuple(bots), tuple(side_of_seat), tuple(standing), (0,) * players)
    return FitGame(game, first_seat, unit)


def duplicate_sets(
    tables: Iterable[Sequence[str]],
    side_of_seat: Sequence[int],
    strengths: Mapping[str, float],
    seat_advantage: Sequence[float],
    rng: random.Random,
    *,
    deals: int,
    prefix: str = "t",
) -> list[FitGame]:
    """For every table (bots in seat order) ``deals`` units, each one deal under every
    rotation of the seats (rotation r seats ``table[(seat + r) % players]``)."""
    games: list[FitGame] = []
    for number, table in enumerate(tables):
        players = len(table)
        for deal in range(deals):
            first = rng.randrange(players)
            unit = f"{prefix}/{number}/{deal}"
            for rotation in range(players):
                bots = [table[(seat + rotation) % players] for seat in range(players)]
                games.append(
                    play(
                        bots,
                        side_of_seat,
                        first,
                        strengths=strengths,
                        seat_advantage=seat_advantage,
                        rng=rng,
                        unit=unit,
                    )
                )
    return games

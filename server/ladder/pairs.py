"""Partnership play: how each pair of partners did against what their individual ratings predict.

The batch fit (``fit.py``) rates each bot alone, a side's strength being the mean of its
partners'. A pair that plays better together than that (they read each other's signals) or
worse shows here: for every two bots that sat on one side, over the games where they did,
their actual score against the other sides and the score their fitted ratings expected.

Per game a side scores, against each other side, 1 for finishing ahead, 1/2 for the same
place and 0 behind (:func:`.elo.head_to_head`'s pairwise results by standing), averaged over
the other sides. The expected score against a side is the fit's own probability of finishing
ahead of it, the logistic Elo curve of the two sides' ratings, a side's rating being the mean of
its partners' (rating + the advantage of their seat position). Under Plackett-Luce that is
exactly the chance of finishing ahead of that side, for any number of sides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from domino_arena.server.ladder.elo import _pair_score, expected_score
from domino_arena.server.ladder.fit import FitGame, FitResult


@dataclass(frozen=True, slots=True)
class PairRow:
    """One pair of partners over the games they played together."""

    partners: tuple[str, str]
    """The two bots, sorted by name."""
    games: int
    score: float
    """The sum over those games of the pair's score (win 1, draw 1/2, loss 0 against each
    other side, averaged over the other sides)."""
    expected: float
    """The sum over those games of the score the fitted individual ratings expected."""

    @property
    def surplus(self) -> float:
        """Score above what was expected: positive when the pair did better together."""
        return self.score - self.expected

    @property
    def surplus_per_game(self) -> float:
        """:attr:`surplus` per game played together."""
        return self.surplus / self.games


def pair_table(games: Sequence[FitGame], point: FitResult) -> list[PairRow]:
    """Return a row for every two bots that were partners in ``games``, under the ratings and
    seat advantages of ``point`` (the fit of those games): the largest surplus first, equal
    surpluses by names. Games without partners add nothing.

    Raises:
        ValueError: a game whose bots ``point`` does not rate, or whose number of seats is not
            ``point``'s (the message names the game's index).
    """
    totals: dict[tuple[str, str], list[float]] = {}
    for index, item in enumerate(games):
        game = item.game
        if len(game.bots) != point.players:
            raise ValueError(
                f"games[{index}]: {len(game.bots)} seats, but point was fitted on games of "
                f"{point.players}; expected the games of point's pool"
            )
        missing = sorted(set(game.bots) - set(point.ratings))
        if missing:
            raise ValueError(
                f"games[{index}]: point rates no {', '.join(missing)}; expected the games "
                "point was fitted on"
            )
        members: list[list[int]] = [[] for _ in range(game.sides)]
        for seat, side in enumerate(game.side_of_seat):
            members[side].append(seat)
        rating = [
            sum(
                point.ratings[game.bots[seat]] + point.seat_advantage[item.position(seat)]
                for seat in seats
            )
            / len(seats)
            for seats in members
        ]
        for side, seats in enumerate(members):
            if len(seats) < 2:
                continue
            others = [other for other in range(game.sides) if other != side]
            score = sum(_pair_score(game.standing[side], game.standing[o]) for o in others)
            expected = sum(expected_score(rating[side], rating[o]) for o in others)
            for a, b in combinations(sorted(game.bots[seat] for seat in seats), 2):
                row = totals.setdefault((a, b), [0, 0.0, 0.0])
                row[0] += 1
                row[1] += score / len(others)
                row[2] += expected / len(others)
    rows = [
        PairRow(pair, int(count), score, expected)
        for pair, (count, score, expected) in totals.items()
    ]
    return sorted(rows, key=lambda row: (-row.surplus, row.partners))

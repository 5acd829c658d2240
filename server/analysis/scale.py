"""Each game's scale of points, and the chance of winning the game from a score.

A loss of 3 points is a slip in Straight (deals worth 20-30 points) and a disaster in Moon
(deals worth 2-3), so the severity thresholds (:mod:`.grading`) and the win model below are
both written in units of a game's *deal spread*: the standard deviation of the margin one
deal moves between the sides. The figures were measured with the house greedy bot playing
itself, 30 games of each game with its default options (docs/analysis.md: scale).

The win model (docs/analysis.md: winning the game) treats the margin between a side and its
best rival as a random walk: each remaining deal moves it by about ``spread`` points, and about
``need / mean_deal`` deals remain, where ``need`` is what the leader still needs. The chance
that the side finishes ahead is then the normal CDF of ``margin / (spread * sqrt(deals))``. It
is a model, not a search: it ranks "ahead by 40 with 10 to go" above "ahead by 5 with 90 to
go", which is what a loss of winning chances needs to say; a deal that ends the game in a
playout is scored by its result instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class Scale:
    """How many points a deal of a game is worth."""

    spread: float
    """Standard deviation of one deal's margin (the scorer's points minus the best other's)."""
    mean_deal: float
    """Mean points the scoring side takes in a deal."""


SCALES: Final[dict[str, Scale]] = {
    "passing": Scale(spread=12.5, mean_deal=9.8),
    "straight": Scale(spread=28.2, mean_deal=22.9),
    "doubles": Scale(spread=12.7, mean_deal=10.3),
    "moon": Scale(spread=3.0, mean_deal=2.9),
}
"""Measured with greedy self-play, default options (docs/analysis.md: scale)."""


def scale_of(game: str) -> Scale:
    """Return the scale of the game registered as ``game``.

    Raises:
        ValueError: an unknown game.
    """
    try:
        return SCALES[game]
    except KeyError:
        raise ValueError(
            f"game: no analysis scale for '{game}' (known: {', '.join(SCALES)})"
        ) from None


def win_chance(scores: Sequence[int], side: int, target: int, scale: Scale) -> float:
    """Estimated chance that ``side`` wins a game standing at ``scores`` between deals."""
    best_other = max(s for i, s in enumerate(scores) if i != side)
    margin = scores[side] - best_other
    need = max(1, target - max(scores))
    deals = max(1.0, need / scale.mean_deal)
    z = margin / (scale.spread * math.sqrt(deals))
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))

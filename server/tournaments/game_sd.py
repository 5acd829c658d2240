"""A game's measured score spread per game and the Elo scale at even odds: what the expected
precision of a schedule is computed from (``precision.py`` for the round robin's grades,
``planner.py`` for every format). Pure constants, no imports of the server: the formats, the
planner and the statistics all read them, and none of them imports another to get them."""

from __future__ import annotations

import math
from typing import Final

__all__ = ["ELO_PER_SCORE", "SD_PER_GAME", "UNMEASURED", "Z95"]

Z95: Final = 1.959963984540054
"""The two-sided 95% quantile of the normal distribution."""

ELO_PER_SCORE: Final = 1600 / math.log(10)
"""d Elo / d score at a score of 1/2 (the logistic Elo curve's slope there)."""

SD_PER_GAME: Final[dict[str, tuple[float, float]]] = {
    "straight": (0.435, 0.508),
    "doubles": (0.329, 0.491),
    "passing": (0.465, 0.481),
    "moon": (0.246, 0.346),
}
"""Game -> (duplicate, fresh): the standard deviation per game of a paired unit's score between
two bots of close strength (the search bot against greedy), with duplicate deals and with a deal
per game. Measured by ``bench/duplicate_deals.py --pairing search-greedy`` (docs/courses.md:
precision has the command and the run); a game not measured uses :data:`UNMEASURED`."""
UNMEASURED: Final = (0.5, 0.5)
"""The largest a pairwise score's standard deviation can be (win or lose, even odds)."""

"""The planner: how big a tournament of each format is, how long it takes, how precise it is.

(A stand-in holding the round robin's limit until the planner lands: issue 31.)
"""

from __future__ import annotations

from typing import Final

MAX_ROUND_ROBIN_GAMES: Final = 50_000
"""A round robin above this many games is refused, naming the format and size that fit
(docs/tournaments.md: formats)."""

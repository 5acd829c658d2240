"""The random house bot: a uniformly random legal action, from its own seeded generator.

It is the baseline every other bot must beat and the stand-in the referee's ``substitute``
fault policy plays for a faulting seat. Two RandomBots with the same seed that see the same
observations choose the same actions.
"""

from __future__ import annotations

import random

from domino_arena.sdk.bot import Bot
from domino_arena.sdk.rules import Action, Observation


class RandomBot(Bot):
    """Chooses uniformly among the legal actions; deterministic for a given seed."""

    name = "random"

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def choose(self, observation: Observation) -> Action:
        return self.rng.choice(observation.legal_actions)

"""The random house bot: a uniformly random legal action, from its own seeded generator.

It is the baseline every other bot must beat. (The move the referee's ``substitute`` policy plays
for a faulting seat is the match core's own, seeded by the match and the turn, not this bot's.)
Two RandomBots with the same seed that see the same observations choose the same actions.
"""

from __future__ import annotations

from domino_arena.sdk.rules import Action, Observation

from .seeded import SeededBot


class RandomBot(SeededBot):
    """Chooses uniformly among the legal actions; deterministic for a given seed (the match's
    own for its seat when the referee sends one: :class:`~.seeded.SeededBot`)."""

    name = "random"

    def choose(self, observation: Observation) -> Action:
        return self.rng.choice(observation.legal_actions)

"""The house bots' one source of randomness: a seed the match gives (docs/referee.md).

A house bot is made with a seed, but what it plays with is the seed the referee sends for its
seat at each match's start (``MatchStartInfo.bot_seed``, fixed by the match's seed and the
seat). So a match is played alike on every run, whichever process plays it and however many
matches that process played before: the round robin's ``--seed`` fixes every move.
"""

from __future__ import annotations

import random

from domino_arena.sdk.bot import Bot, MatchStartInfo


class SeededBot(Bot):
    """A bot whose randomness is :attr:`seed` (and :attr:`rng`, drawn from it), replaced by
    the match's own seed for the seat at each match's start when the referee sends one.

    A match that resumes keeps the generator where it was (the same object plays on).
    """

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.rng = random.Random(seed)

    def reseed(self, seed: int) -> None:
        """Draw from ``seed`` from now on (as if made with it)."""
        self.seed = seed
        self.rng = random.Random(seed)

    def on_match_start(self, info: MatchStartInfo) -> None:
        """Play the match from its own seed for this seat, then the usual hooks."""
        if info.bot_seed is not None and not info.resumed:
            self.reseed(info.bot_seed)
        super().on_match_start(info)

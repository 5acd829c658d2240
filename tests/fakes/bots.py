"""Bots for tests that need a player with one plain, predictable habit.

The house bots (``domino_arena.bots``) are the product; these are test doubles: a bot that
always plays the first legal action, one that always answers the same thing (legal or not), and
a random bot that finishes its Moon games, and one whose ``choose`` raises (a student's bug).
Subclass them to record hook calls or to misbehave in
one precise way, instead of writing another copy.
"""

from __future__ import annotations

from typing import Final

from domino_arena.bots import RandomBot
from domino_arena.sdk.bot import Bot
from domino_arena.sdk.rules import PASS, Action, Bid, Observation


class FirstLegal(Bot):
    """Plays the first legal action: deterministic, always legal, no randomness to seed."""

    name = "first"

    def choose(self, observation: Observation) -> Action:
        return observation.legal_actions[0]


class Fixed(Bot):
    """Answers every request with the same thing, legal or not (to test how misplays are told)."""

    def __init__(self, answer: object, name: str = "fixed") -> None:
        self.answer = answer
        self.name = name

    def choose(self, observation: Observation) -> Action:
        return self.answer  # type: ignore[return-value]  # deliberately not always an Action


class ModestBot(RandomBot):
    """A random bot that finishes its games: in an auction it passes or bids the lowest bid.

    Uniformly random Moon players almost never reach 21 (they bid 21 and fail far too often,
    so every score drifts below zero), so tests that need whole games of every registered game
    use this bot; in games without bids it is exactly :class:`RandomBot`.
    """

    name = "modest"

    def choose(self, observation: Observation) -> Action:
        legal = observation.legal_actions
        bids = [a for a in legal if isinstance(a, Bid)]
        if bids and PASS in legal:
            modest: list[Action] = [PASS, min(bids, key=lambda b: b.value)]
            return self.rng.choice(modest)
        return self.rng.choice(legal)


CRASH_MESSAGE: Final = "no tile 6-6 in my hand"
"""What :class:`Crashing` raises, as a ValueError."""


class Crashing(FirstLegal):
    """A student's bot with a bug: every ``every``-th ``choose`` (from the first) raises
    ``ValueError(message)``; the others play the first legal action."""

    name = "crashing"

    def __init__(self, every: int = 1, message: str = CRASH_MESSAGE) -> None:
        self.every = every
        self.message = message
        self.asked = 0

    def choose(self, observation: Observation) -> Action:
        self.asked += 1
        if (self.asked - 1) % self.every == 0:
            raise ValueError(self.message)
        return super().choose(observation)

"""The one interface every player implements: in-process house bots and remote SDK bots alike.

A bot sees the game only through :class:`~domino_arena.sdk.rules.Observation` values, which hold
its legal actions, and answers with one of them.

>>> class FirstLegal(Bot):
...     def choose(self, observation: Observation) -> Action:
...         return observation.legal_actions[0]
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from .rules import Action, Game, Observation, Outcome


class Bot(ABC):
    """A player. Subclasses implement :meth:`choose`; the hooks are optional."""

    name: str = "bot"

    @abstractmethod
    def choose(self, observation: Observation) -> Action:
        """Return one of ``observation.legal_actions``."""

    def on_game_start(self, game: Game, seat: int) -> None:  # noqa: B027 - optional hook
        """Called once before the first request of a game."""

    def on_game_end(self, outcome: Outcome, seat: int) -> None:  # noqa: B027 - optional hook
        """Called once when the game is over."""

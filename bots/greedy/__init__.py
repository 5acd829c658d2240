"""The greedy house bot: one simple, sensible rule of thumb per game.

Each game's strategy lives in its own module, ``bots/greedy/<game>.py``, as a function
``choose(observation, rng) -> Action``; :class:`GreedyBot` picks the module by the observed
game's registry name. The modules are imported when first needed, so a game without a
strategy yet fails with a clear :class:`UnsupportedGameError` instead of an import error.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable
from typing import Final

from domino_arena.bots.seeded import SeededBot
from domino_arena.sdk.rules import Action, Game, Observation

Strategy = Callable[[Observation, random.Random], Action]
"""``choose(observation, rng)``: return one of ``observation.legal_actions``."""

STRATEGY_MODULES: Final[dict[str, str]] = {
    "moon": f"{__name__}.moon",
    "passing": f"{__name__}.passing",
    "straight": f"{__name__}.straight",
    "doubles": f"{__name__}.doubles",
}
"""Registry name of each game -> the module holding its greedy ``choose``."""


class UnsupportedGameError(ValueError):
    """A house bot has no strategy for this game."""


def strategy(game_name: str) -> Strategy:
    """Return the greedy ``choose`` function for the game called ``game_name``.

    Raises:
        UnsupportedGameError: no module is listed for the game, or the listed one is missing.
    """
    module_name = STRATEGY_MODULES.get(game_name)
    if module_name is None:
        raise UnsupportedGameError(
            f"greedy: no strategy for game '{game_name}' "
            f"(it knows {', '.join(sorted(STRATEGY_MODULES))})"
        )
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        path = module_name.replace("domino_arena.", "").replace(".", "/")
        raise UnsupportedGameError(
            f"greedy: no strategy for game '{game_name}' yet ({path}.py is missing)"
        ) from None
    choose: Strategy = module.choose
    return choose


class GreedyBot(SeededBot):
    """Plays each game's greedy rule; ties between equally good actions break by its seed (the
    match's own for its seat when the referee sends one: :class:`~..seeded.SeededBot`)."""

    name = "greedy"

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self._strategies: dict[str, Strategy] = {}

    def on_game_start(self, game: Game, seat: int) -> None:
        """Fail before the first move if there is no strategy for ``game``."""
        self._strategy(game.name)

    def choose(self, observation: Observation) -> Action:
        return self._strategy(observation.game.name)(observation, self.rng)

    def _strategy(self, game_name: str) -> Strategy:
        found = self._strategies.get(game_name)
        if found is None:
            found = self._strategies[game_name] = strategy(game_name)
        return found

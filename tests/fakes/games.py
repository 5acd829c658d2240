"""Every game configuration the registry accepts, and whole local games of modest random bots.

Tests parametrised over "every game with every player count" take :data:`CONFIGS` (with
:data:`CONFIG_IDS` as their ids), so a game is covered everywhere the moment it is registered;
:func:`play_random` gives such a test a finished game to look at.
"""

from __future__ import annotations

from typing import Any, Final

from domino_arena.sdk.bot import Bot
from domino_arena.sdk.local import LocalResult, play_game
from domino_arena.sdk.match.seeds import bot_seed
from domino_arena.sdk.rules import GAMES, Game, RulesError, game_options, make_game

from .bots import ModestBot


def game_configs() -> list[tuple[str, dict[str, Any]]]:
    """Every registered game with every player count (and partnership setting) it accepts.

    The game's own option validation decides: combinations ``make_game`` refuses are left out.
    """
    configs: list[tuple[str, dict[str, Any]]] = []
    for name in sorted(GAMES):
        defaults = game_options(name)
        candidates: list[dict[str, Any]] = [{}]
        if "players" in defaults:
            candidates = [{"players": n} for n in range(1, 8)]
        if "partnerships" in defaults:
            candidates += [{**c, "partnerships": True} for c in candidates]
        for options in candidates:
            try:
                make_game(name, **options)
            except RulesError:
                continue
            configs.append((name, options))
    return configs


def config_id(config: tuple[str, dict[str, Any]]) -> str:
    """A test id such as ``passing-players=4-partnerships=True``."""
    name, options = config
    return "-".join([name, *(f"{k}={v}" for k, v in options.items())])


CONFIGS: Final = game_configs()
CONFIG_IDS: Final = [config_id(c) for c in CONFIGS]


def random_bots(game: Game, seed: int) -> list[Bot]:
    """One :class:`ModestBot` per seat, each seeded from ``seed`` and its seat."""
    return [ModestBot(bot_seed(seed, seat)) for seat in range(game.num_players)]


def play_random(name: str, options: dict[str, Any], seed: int) -> LocalResult:
    """Play a whole game of modest random bots; fail (not hang) if it does not end."""
    game = make_game(name, **options)
    return play_game(game, random_bots(game, seed), seed, timer=None, max_deals=500)

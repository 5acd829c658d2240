"""House bots: random, greedy and search players for every game, by name; and the memorizer,
a cheat on purpose (it remembers deals across games) to test the referee's repeat-deal check,
never to be entered in a real tournament.

>>> make_bot("random", seed=1).name
'random'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from domino_arena.sdk.bot import Bot

from .greedy import GreedyBot, UnsupportedGameError
from .memorizer import MemorizerBot
from .random_bot import RandomBot
from .search import SearchBot

HOUSE_BOTS: Final[dict[str, Callable[[int], Bot]]] = {
    "random": RandomBot,
    "greedy": GreedyBot,
    "search": SearchBot,
    "memorizer": MemorizerBot,
}
"""Each house bot's name -> a factory taking the bot's seed."""


class UnknownBotError(ValueError):
    """A bot name that is not in :data:`HOUSE_BOTS`."""


def make_bot(name: str, seed: int, *, samples: int | None = None) -> Bot:
    """Return a new house bot called ``name``, seeded with ``seed``.

    ``samples``: the search bot's fixed budget, sampled deals per move and no clock (its moves
    then depend only on its seed and what it saw: a reproducible baseline); None for its
    default, as many as 0.2 s allows.

    Raises:
        UnknownBotError: no house bot has that name; the message lists the known ones.
        ValueError: ``samples`` for another bot than search, or below 1.
    """
    try:
        factory = HOUSE_BOTS[name]
    except KeyError:
        raise UnknownBotError(
            f"unknown bot '{name}': expected one of {', '.join(sorted(HOUSE_BOTS))}"
        ) from None
    if samples is None:
        return factory(seed)
    if name != "search":
        raise ValueError(f"samples: only the search bot has a budget, not {name!r}")
    if samples < 1:
        raise ValueError(f"samples: must be 1 or more, got {samples}")
    return SearchBot(seed, max_time=None, max_samples=samples)


__all__ = [
    "HOUSE_BOTS",
    "GreedyBot",
    "MemorizerBot",
    "RandomBot",
    "SearchBot",
    "UnknownBotError",
    "UnsupportedGameError",
    "make_bot",
]

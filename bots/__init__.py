"""House bots: random, greedy and search players for every game, by name; and the memorizer,
a cheat on purpose (it remembers deals across games) to test the referee's repeat-deal check,
never to be entered in a real tournament. :func:`player_factory` also takes a bot of your own,
``path/to/mybot.py:MyBot`` or ``package.module:MyBot``, wherever a house bot's name goes (local
play, the round robin, ``python -m domino_arena.bots``).

>>> make_bot("random", seed=1).name
'random'
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Final

from domino_arena.sdk.bot import AsyncBot, Bot

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

HOSTED_SEARCH_SAMPLES: Final = 16
"""The fixed budget of the search bot the referee hosts (sampled deals per move, no clock)."""


def _hosted_search(seed: int) -> Bot:
    return SearchBot(seed, max_time=None, max_samples=HOSTED_SEARCH_SAMPLES)


HOSTED_BOTS: Final[dict[str, Callable[[int], Bot]]] = {
    **HOUSE_BOTS,
    "search": _hosted_search,
}
"""The house bots as the referee hosts them in-process (practice matches, checks and a course's
frozen baselines): the search bot at a fixed budget, so a hosted bot's moves depend only on its
seed and what it saw, however loaded the machine (a baseline that means the same every term)."""


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


def is_bot_spec(text: str) -> bool:
    """Whether ``text`` names a bot of one's own (``MODULE:NAME``) rather than a house bot."""
    return ":" in text


def player_factory(
    spec: str, seed: int, *, samples: int | None = None
) -> Callable[[], Bot | AsyncBot]:
    """Return a function making a new bot of ``spec`` each call: a house bot's name (each new
    one seeded ``seed``, ``seed + 1``, ..., until a match gives it its own: bots/seeded.py) or
    ``MODULE:NAME`` (``MODULE`` may be a path to a
    ``.py`` file; NAME a Bot or AsyncBot subclass, a bot object, or a function returning one,
    as the compliance check takes them). Local play takes only a :class:`Bot`; an AsyncBot
    plays through a referee.

    Raises:
        UnknownBotError: neither a house bot nor ``MODULE:NAME``.
        ValueError: NAME makes no bot, or ``samples`` does not fit (see :func:`make_bot`);
        ImportError, AttributeError: the module or NAME cannot be loaded.
    """
    if not is_bot_spec(spec):
        make_bot(spec, seed, samples=samples)  # fail now, not at the first match
        seeds = itertools.count(seed)
        return lambda: make_bot(spec, next(seeds), samples=samples)
    if samples is not None:
        raise ValueError(f"samples: only the search bot has a budget, not {spec!r}")
    # Only for a bot of one's own: the loader (with the local match runner) is no house bot's.
    from domino_arena.sdk.testing import load_bot  # noqa: PLC0415

    found = load_bot(spec)

    def new_bot() -> Bot | AsyncBot:
        made = found if isinstance(found, Bot | AsyncBot) else found()
        if not isinstance(made, Bot | AsyncBot):
            raise ValueError(f"{spec} made a {type(made).__name__}, not a Bot or an AsyncBot")
        return made

    new_bot()  # fail now, not at the first match
    return new_bot


__all__ = [
    "HOUSE_BOTS",
    "GreedyBot",
    "MemorizerBot",
    "RandomBot",
    "SearchBot",
    "UnknownBotError",
    "UnsupportedGameError",
    "is_bot_spec",
    "make_bot",
    "player_factory",
]

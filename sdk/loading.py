"""Loading a Python bot named on a command line: ``mybot.py:MyBot`` or ``package.module:NAME``.

The compliance check (:mod:`.testing`), local play and the stdio host
(``python -m domino_arena.sdk.stdio``, which runs inside the hosted bots' sandbox) all load a
bot this way; this module imports nothing but the Bot classes, so the host stays light.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Final, TypeAlias

from .bot import AnyBot, AsyncBot, Bot

BotOrFactory: TypeAlias = AnyBot | Callable[[], AnyBot]
"""A bot object, or a callable (a Bot class will do) that makes a new one."""

EXEC_PREFIX: Final = "exec:"
"""How a bot spec names a program that speaks the stdio protocol instead of a Python bot."""


def load_python_bot(spec: str) -> BotOrFactory:
    """Return the bot named by ``module:NAME`` (``module`` may be a path to a ``.py`` file).

    NAME is a Bot subclass (made anew per position and seat), a bot object, or a function
    taking no arguments that returns a bot.

    Raises:
        ValueError: the spec is not ``module:NAME`` or NAME is none of those.
        ImportError: the module cannot be imported.
        AttributeError: the module has no NAME.
    """
    module_name, _, attribute = spec.rpartition(":")
    if not module_name or not attribute:
        raise ValueError(f"expected MODULE:NAME (e.g. mybot:MyBot), got '{spec}'")
    if module_name.endswith(".py") or "/" in module_name:
        path = Path(module_name).resolve()
        sys.path.insert(0, str(path.parent))
        loaded = importlib.util.spec_from_file_location(path.stem, path)
        if loaded is None or loaded.loader is None:
            raise ImportError(f"cannot load {path}")
        module = importlib.util.module_from_spec(loaded)
        sys.modules[path.stem] = module
        loaded.loader.exec_module(module)
    else:
        module = importlib.import_module(module_name)
    found = getattr(module, attribute)
    if isinstance(found, Bot | AsyncBot) or callable(found):
        result: BotOrFactory = found
        return result
    raise ValueError(f"{spec} is {found!r}: expected a Bot class, a bot, or a bot factory")

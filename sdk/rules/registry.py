"""The games by name, with their options (python-chess ``VARIANTS`` style).

>>> make_game("passing", players=4, partnerships=True).describe()
'Passing Game, 4 players in partnerships, to 61'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from typing import Any, Final

from .doubles import DoublesGame
from .errors import GameOptionError
from .moon import MoonGame
from .passing import PassingGame
from .state import Game
from .straight import StraightGame

GAMES: Final[dict[str, type[Game]]] = {
    PassingGame.name: PassingGame,
    StraightGame.name: StraightGame,
    DoublesGame.name: DoublesGame,
    MoonGame.name: MoonGame,
}

RETIRED_OPTIONS: Final[dict[tuple[str, str], str]] = {
    ("moon", "deal_limit"): (
        "the rules play on until a score is alone at 21 or more (docs/rules.md 1.13); a cap on "
        "deals is the referee's max_deals (a match and tournament option), which ends the "
        "game as adjudicated"
    ),
}
"""Options games once had and have no more, with why. The value that meant "off" (0) is
dropped, so records and rows written before an option retired still load; any other value is
refused with the reason."""


def make_game(name: str, **options: Any) -> Game:
    """Return the game called ``name`` configured with ``options``.

    Raises:
        GameOptionError: an unknown game or option, or a value the game refuses; the
            message lists what is accepted.
    """
    try:
        cls = GAMES[name]
    except KeyError:
        raise GameOptionError(
            f"unknown game '{name}': expected one of {', '.join(sorted(GAMES))}"
        ) from None
    accepted = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    for key, value in list(options.items()):
        retired = RETIRED_OPTIONS.get((name, key))
        if retired is not None:
            if value != 0 or isinstance(value, bool):
                raise GameOptionError(
                    f"{name}: option '{key}' is retired (got {value!r}): {retired}"
                )
            del options[key]
            continue
        if key not in accepted:
            known = ", ".join(accepted) or "none"
            raise GameOptionError(f"{name}: unknown option '{key}' (options: {known})")
        expected = type(accepted[key].default)
        if type(value) is not expected:
            raise GameOptionError(
                f"{name}: option '{key}' must be {expected.__name__}, got {value!r}"
            )
    return cls(**options)


def game_options(name: str) -> dict[str, Any]:
    """Return the options of game ``name`` with their default values."""
    cls = GAMES[name]
    return {f.name: f.default for f in dataclasses.fields(cls)}  # type: ignore[arg-type]


def configurations(names: Iterable[str] | None = None) -> Iterator[Game]:
    """Yield every registered game (or those named) in every seating it accepts.

    That is each player count from 2 to 4 the game allows, and 4 in partnerships where the game
    has them; a game without a ``players`` option (Moon) is yielded once.
    """
    for name in sorted(GAMES) if names is None else names:
        accepted = game_options(name)
        if "players" not in accepted:
            yield make_game(name)
            continue
        for players in (2, 3, 4):
            seatings: list[dict[str, Any]] = [{"players": players}]
            if "partnerships" in accepted and players == 4:
                seatings.append({"players": players, "partnerships": True})
            for options in seatings:
                try:
                    yield make_game(name, **options)
                except GameOptionError:
                    continue

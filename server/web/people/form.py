"""The form that starts a person's match: its choices and the checks of what was posted.

The game is one of the four games' configurations, named as the compliance check names them
(``passing-2p``, ``straight-4p-teams``, ``moon``: :func:`~domino_arena.sdk.positions.label`).
The person picks a seat, how many deals (1, 3, or the game's own end: ``max_deals`` 0), and
who sits in each other seat, in seat order (``opponent_1``, ``opponent_2``...); an organizer
may give the name shown at the table. Each check that fails names its field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from domino_arena.sdk.positions import label
from domino_arena.sdk.rules import Game, configurations
from domino_arena.server.web.params import WebError

GAMES: Final[dict[str, Game]] = {label(game): game for game in configurations()}
"""The games a person may play, by their form value."""
DEFAULT_GAME: Final = "straight-2p"
DEALS: Final = {"1": 1, "3": 3, "0": 0}
"""The deals a person may choose: 0 is the game's own end (its target score)."""
DEALS_TEXT: Final = {1: "1 deal", 3: "3 deals", 0: "the whole game (to its target)"}
NAME: Final = re.compile(r"[A-Za-z0-9_.@-]{1,64}")
"""A shown name, as the referee takes it (the proto's ``Person.name``)."""
DEFAULT_ORGANIZER_NAME: Final = "organizer"
MAX_OPPONENT: Final = 80
PREFERRED: Final = ("house:greedy", "house:random")
"""The opponent the form picks first, when connected (the house's quick and fair bots)."""


@dataclass(frozen=True, slots=True)
class PlayChoice:
    """What a valid form asks for."""

    game_key: str
    game: Game
    seat: int
    max_deals: int
    opponents: tuple[str, ...]
    name: str | None
    """The organizer's shown name (None for a student: their owner name is shown)."""


def game_choices() -> list[dict[str, Any]]:
    """The games' options for the form, in order."""
    return [
        {"value": key, "title": game.describe(), "players": game.num_players}
        for key, game in GAMES.items()
    ]


def chosen_game(value: str | None) -> tuple[str, Game]:
    """The game a query or form names (the default when none).

    Raises:
        WebError: 400 naming ``game`` and the games there are.
    """
    key = value or DEFAULT_GAME
    game = GAMES.get(key)
    if game is None:
        raise WebError(400, f"game: expected one of {', '.join(GAMES)}, got {key[:40]!r}")
    return key, game


def read_choice(form: dict[str, str], *, organizer: bool) -> PlayChoice:
    """Check the posted ``form``.

    Raises:
        WebError: 400, the first field that is wrong, named with what was expected.
    """
    key, game = chosen_game(form.get("game", "").strip())
    players = game.num_players
    seat_text = form.get("seat", "").strip()
    if not seat_text.isdigit() or not 0 <= int(seat_text) < players:
        raise WebError(
            400, f"seat: expected 0 to {players - 1} ({game.describe()}), got {seat_text[:20]!r}"
        )
    deals_text = form.get("deals", "").strip()
    if deals_text not in DEALS:
        raise WebError(
            400,
            f"deals: expected 1, 3 or 0 (the game's own end), got {deals_text[:20]!r}",
        )
    opponents = []
    for index in range(1, players):
        field = f"opponent_{index}"
        value = form.get(field, "").strip()
        if not value or len(value) > MAX_OPPONENT:
            raise WebError(
                400,
                f"opponent {index}: choose a bot for the {_nth(index)} other seat (1 to "
                f"{MAX_OPPONENT} characters), got {value[:40]!r}",
            )
        opponents.append(value)
    name = None
    if organizer:
        name = form.get("name", "").strip() or DEFAULT_ORGANIZER_NAME
        if not NAME.fullmatch(name):
            raise WebError(
                400,
                f"name: 1 to 64 letters, digits, '_', '.', '-' or '@', got {name[:40]!r}",
            )
    return PlayChoice(key, game, int(seat_text), DEALS[deals_text], tuple(opponents), name)


def _nth(index: int) -> str:
    return {1: "first", 2: "second", 3: "third"}.get(index, f"{index}th")

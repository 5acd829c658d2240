"""The person's table in words: each legal action as a button says it, each seat as the page
names it (a person is labelled a person, a bot a bot, everywhere: docs/decisions.md, decision 21).

An action's canonical text (docs/decisions.md: decision 5; ``play 6-4 E``) is what is posted;
its label is what a person reads ("play 6-4 on the east end"). Another seat's step is told the
same way ("Seat 1, house:greedy (bot): play 6-4 on the east end"), and another seat's Moon
discard, which the seat may not see, as "discard a tile face down".
"""

from __future__ import annotations

from typing import Any, Final

from domino_arena.sdk.rules import (
    CHANCE,
    NO_TRUMP,
    TRUMP_DOUBLES,
    Action,
    Bid,
    Discard,
    Draw,
    Game,
    Pass,
    Play,
    Trump,
)

PERSON_PREFIX: Final = "person:"
"""How the referee names a person's seat (``person:NAME``)."""
HOUSE_PREFIX: Final = "house:"
ENDS: Final = {"W": "west", "E": "east", "N": "north", "S": "south"}


def action_label(action: Action, *, moon: bool = False) -> str:
    """What a button for ``action`` says (Moon's ``pass`` declines to bid)."""
    if isinstance(action, Play):
        if action.end is None:
            return f"play {action.tile}" if moon else f"play {action.tile} to open"
        if action.end in ENDS:
            return f"play {action.tile} on the {ENDS[action.end]} end"
        return f"play {action.tile} on the {action.end} end"
    if isinstance(action, Draw):
        return "draw a tile"
    if isinstance(action, Pass):
        return "pass (no bid)" if moon else "pass"
    if isinstance(action, Bid):
        return "bid 21: all seven tricks" if action.value == 21 else f"bid {action.value} tricks"
    if isinstance(action, Discard):
        return "discard a tile face down" if action.tile is None else f"discard {action.tile}"
    if isinstance(action, Trump):
        if action.suit == TRUMP_DOUBLES:
            return "trumps: doubles"
        if action.suit == NO_TRUMP:
            return "no trumps"
        return f"trumps: {action.suit}s"
    return str(action)


def kind_of(action: Action) -> str:
    """The action's kind (the buttons are grouped and styled by it)."""
    return type(action).__name__.lower()


def is_person(player: str) -> bool:
    return player.startswith(PERSON_PREFIX)


def seat_label(player: str) -> str:
    """``person`` or ``bot``: what sits there, said beside its name everywhere."""
    return "person" if is_person(player) else "bot"


def seats(
    players: tuple[str, ...] | list[str], me: int, people: tuple[bool, ...] = ()
) -> list[dict[str, Any]]:
    """Each seat's name, label (``person`` or ``bot``), whether it is the viewer's, and the
    name as the table shows it ("house:greedy (bot)"). ``people`` is the referee's word on
    which seats people play (``MatchStart.people``); before it comes, the seat's name says."""

    def label(seat: int, name: str) -> str:
        if seat < len(people):
            return "person" if people[seat] else "bot"
        return seat_label(name)

    return [
        {
            "seat": seat,
            "name": name,
            "label": label(seat, name),
            "you": seat == me,
            "shown": f"{name} ({label(seat, name)}{', you' if seat == me else ''})",
        }
        for seat, name in enumerate(players)
    ]


def who(players: tuple[str, ...] | list[str], seat: int, me: int) -> str:
    """A seat in words: "you", or "seat 1, house:greedy (bot)"."""
    if seat == me:
        return "you"
    if not 0 <= seat < len(players):
        return f"seat {seat}"
    name = players[seat]
    return f"seat {seat}, {name} ({seat_label(name)})"


def step_text(
    players: tuple[str, ...] | list[str], seat: int, action: Action, me: int, game: Game
) -> str:
    """One step in words: "the tiles are dealt", "you: play 6-4 on the east end",
    "seat 2, house:greedy (bot): pass"."""
    if seat == CHANCE:
        return "the tiles are dealt"
    return f"{who(players, seat, me)}: {action_label(action, moon=game.name == 'moon')}"

"""Actions of all four games and their canonical text (docs/decisions.md: decision 5).

Each action is a small frozen value with ``str()`` giving its canonical text and
:func:`parse_action` reading it back:

>>> parse_action("play 6-4 E")
Play(tile=Tile(6, 4), end='E')
>>> str(Bid(21)), str(Trump(TRUMP_DOUBLES)), str(PASS)
('bid 21', 'trump doubles', 'pass')

Line games name an end with every play except the opening one (docs/rules.md X1): ``W``/``E`` (and
``N``/``S`` once a Straight spinner opens them); in Doubles, whose ends are interchangeable
(docs/rules.md D12), an end is named by the number it shows, ``play 6-4 6``. ``deal`` is the chance
step between hands (docs/rules.md X6), taken by the referee, never by a seat.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, TypeAlias

from .errors import InvalidActionError
from .tiles import Tile

TRUMP_DOUBLES: Final = 7
NO_TRUMP: Final = 8
_TRUMP_TEXT: Final = {**{n: str(n) for n in range(7)}, TRUMP_DOUBLES: "doubles", NO_TRUMP: "none"}
_TRUMP_BY_TEXT: Final = {text: code for code, text in _TRUMP_TEXT.items()}
LINE_ENDS: Final = ("W", "E", "N", "S")
"""End names in Passing and Straight; Doubles names ends by the digit they show."""
_DIGIT_ENDS: Final = ("0", "1", "2", "3", "4", "5", "6")


@dataclass(frozen=True, slots=True)
class Play:
    """Place ``tile``; in a line game on ``end`` (``None`` only for the opening tile)."""

    tile: Tile
    end: str | None = None

    def __str__(self) -> str:
        return f"play {self.tile}" if self.end is None else f"play {self.tile} {self.end}"

    @property
    def sort_key(self) -> tuple[int, int, str]:
        return (4, self.tile.index, self.end or "")


@dataclass(frozen=True, slots=True)
class Draw:
    """Take the next tile from the boneyard."""

    def __str__(self) -> str:
        return "draw"

    @property
    def sort_key(self) -> tuple[int, int, str]:
        return (5, 0, "")


@dataclass(frozen=True, slots=True)
class Pass:
    """Pass the turn (in Moon: decline to bid)."""

    def __str__(self) -> str:
        return "pass"

    @property
    def sort_key(self) -> tuple[int, int, str]:
        return (6, 0, "")


@dataclass(frozen=True, slots=True)
class Bid:
    """Moon: contract to take ``value`` tricks (4-7), or all seven with 21."""

    value: int

    def __str__(self) -> str:
        return f"bid {self.value}"

    @property
    def sort_key(self) -> tuple[int, int, str]:
        return (0, self.value, "")


@dataclass(frozen=True, slots=True)
class Discard:
    """Moon: the bidder lays one of eight tiles aside; ``None`` when another seat's discard."""

    tile: Tile | None

    def __str__(self) -> str:
        return f"discard {self.tile if self.tile is not None else '?'}"

    @property
    def sort_key(self) -> tuple[int, int, str]:
        return (2, -1 if self.tile is None else self.tile.index, "")


@dataclass(frozen=True, slots=True)
class Trump:
    """Moon: the bidder names trumps: a number 0-6, ``TRUMP_DOUBLES`` or ``NO_TRUMP``."""

    suit: int

    def __post_init__(self) -> None:
        if self.suit not in _TRUMP_TEXT:
            raise InvalidActionError(
                f"no trump {self.suit!r}: expected 0-6, TRUMP_DOUBLES (7) or NO_TRUMP (8)"
            )

    def __str__(self) -> str:
        return f"trump {_TRUMP_TEXT[self.suit]}"

    @property
    def sort_key(self) -> tuple[int, int, str]:
        return (3, self.suit, "")


@dataclass(frozen=True, slots=True)
class Deal:
    """The chance step that deals the next hand, from the game's seed."""

    def __str__(self) -> str:
        return "deal"

    @property
    def sort_key(self) -> tuple[int, int, str]:
        return (7, 0, "")


Action: TypeAlias = Play | Draw | Pass | Bid | Discard | Trump | Deal

DRAW: Final = Draw()
PASS: Final = Pass()
DEAL: Final = Deal()


def sort_actions(actions: list[Action]) -> tuple[Action, ...]:
    """Return ``actions`` de-duplicated, in the canonical order every engine uses."""
    if len(actions) < 2:
        return tuple(actions)
    return tuple(sorted(set(actions), key=lambda a: a.sort_key))


def parse_action(text: str) -> Action:
    """Parse the canonical text of an action.

    Raises:
        InvalidActionError: the text is not an action of any game; the message says what was
            expected.
    """
    words = text.split()
    if not words:
        raise InvalidActionError("empty action: expected e.g. 'play 6-4 E', 'draw', 'bid 5'")
    verb, args = words[0].lower(), words[1:]
    if verb in ("draw", "pass", "deal"):
        if args:
            raise InvalidActionError(f"bad action '{text}': '{verb}' takes no arguments")
        simple: dict[str, Action] = {"draw": DRAW, "pass": PASS, "deal": DEAL}
        return simple[verb]
    if verb == "play":
        if len(args) not in (1, 2):
            raise InvalidActionError(f"bad action '{text}': expected 'play TILE [END]'")
        end = args[1].upper() if len(args) == 2 else None
        if end is not None and end not in LINE_ENDS and end not in _DIGIT_ENDS:
            raise InvalidActionError(
                f"bad action '{text}': end must be one of W, E, N, S or (Doubles) a digit 0-6"
            )
        return Play(Tile.parse(args[0]), end)
    if verb == "bid":
        if len(args) != 1 or not (args[0].isascii() and args[0].isdigit()):
            raise InvalidActionError(f"bad action '{text}': expected 'bid N' with N a number")
        return Bid(int(args[0]))
    if verb == "discard":
        if len(args) != 1:
            raise InvalidActionError(f"bad action '{text}': expected 'discard TILE'")
        return Discard(Tile.parse(args[0]))
    if verb == "trump":
        if len(args) != 1 or args[0].lower() not in _TRUMP_BY_TEXT:
            raise InvalidActionError(
                f"bad action '{text}': expected 'trump X' with X one of 0-6, doubles, none"
            )
        return Trump(_TRUMP_BY_TEXT[args[0].lower()])
    raise InvalidActionError(
        f"unknown action '{text}': expected one of play, draw, pass, bid, discard, trump, deal"
    )

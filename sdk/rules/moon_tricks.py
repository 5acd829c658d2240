"""Moon's numbers and its trick-taking: suits, following, ranking, who wins (docs/rules.md
1.8-1.11).

Trick-taking questions (is it a trump, what was led, what follows, who wins) sit on the hot path
of move generation, so they are answered from tables built once per trump choice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from .actions import NO_TRUMP, TRUMP_DOUBLES
from .slots import new_object, slot_setter
from .tiles import DOUBLE_SIX, Tile

PLAYERS: Final = 3
HAND_SIZE: Final = 7
TRICKS: Final = 7
TARGET: Final = 21
MOON_BID: Final = 21
"""The bid to take all seven tricks ("shooting the moon")."""
BID_VALUES: Final = (4, 5, 6, 7, MOON_BID)
TRUMP_CHOICES: Final = (0, 1, 2, 3, 4, 5, 6, TRUMP_DOUBLES, NO_TRUMP)
TRUMP_LED: Final = 7
"""The suit led when the lead is a trump; number suits are 0-6."""

MOON_TILES: Final[tuple[Tile, ...]] = tuple(t for t in DOUBLE_SIX if t.low > 0 or t.high == 0)
"""The 22 tiles in play: every blank except 0-0 is removed (docs/rules.md 1.1)."""


# -- suits, following and ranking (docs/rules.md 1.8-1.11) -----------------------------------------


def is_trump(tile: Tile, trump: int) -> bool:
    """Return whether ``tile`` is a trump under the trump choice ``trump`` (docs/rules.md 1.8)."""
    if trump == NO_TRUMP:
        return False
    if trump == TRUMP_DOUBLES:
        return tile.is_double
    return tile.high == trump or tile.low == trump


def led_suit(tile: Tile, trump: int) -> int:
    """Return the suit a lead of ``tile`` calls for: ``TRUMP_LED`` or its higher end (1.9)."""
    return TRUMP_LED if is_trump(tile, trump) else tile.high


def follows(tile: Tile, suit: int, trump: int) -> bool:
    """Return whether ``tile`` belongs to ``suit`` (a number or ``TRUMP_LED``), docs/rules.md
    1.10."""
    if suit == TRUMP_LED:
        return is_trump(tile, trump)
    return not is_trump(tile, trump) and (tile.high == suit or tile.low == suit)


def rank(tile: Tile, suit: int, trump: int) -> int:
    """Return the rank of ``tile`` inside ``suit`` (which it must belong to), docs/rules.md 1.11."""
    if suit == TRUMP_LED:
        if trump == TRUMP_DOUBLES:
            return tile.high
        return 100 if tile.is_double else tile.other(trump)
    return 100 if tile.is_double else tile.other(suit)


def _power(tile: Tile, suit: int, trump: int) -> int:
    """Trick-taking power: any trump beats the suit led, which beats everything else."""
    if is_trump(tile, trump):
        return 1000 + rank(tile, TRUMP_LED, trump)
    if follows(tile, suit, trump):
        return rank(tile, suit, trump)
    return -1


_SUITS: Final = range(TRUMP_LED + 1)
LED_SUIT: Final = tuple(tuple(led_suit(t, tr) for t in DOUBLE_SIX) for tr in range(NO_TRUMP + 1))
"""``LED_SUIT[trump][tile.index]``: the suit a lead of that tile calls for."""
FOLLOWS_SUIT: Final = tuple(
    tuple(tuple(follows(t, s, tr) for t in DOUBLE_SIX) for s in _SUITS)
    for tr in range(NO_TRUMP + 1)
)
"""``FOLLOWS_SUIT[trump][suit][tile.index]``: whether the tile follows that suit."""
_POWER: Final = tuple(
    tuple(tuple(_power(t, s, tr) for t in DOUBLE_SIX) for s in _SUITS) for tr in range(NO_TRUMP + 1)
)
"""``_POWER[trump][suit][tile.index]``: the highest power wins the trick."""


def trick_winner(plays: Sequence[tuple[int, Tile]], trump: int) -> int:
    """Return the seat that wins a trick of ``(seat, tile)`` plays, leader first (1.11)."""
    power = _POWER[trump][LED_SUIT[trump][plays[0][1].index]]
    best_seat, best = plays[0][0], -2
    for seat, tile in plays:
        if power[tile.index] > best:
            best_seat, best = seat, power[tile.index]
    return best_seat


def suit_name(suit: int) -> str:
    """Return ``"trump"`` or ``"a 5"``: how error messages name a suit led."""
    return "trump" if suit == TRUMP_LED else f"a {suit}"


@dataclass(frozen=True, slots=True)
class Trick:
    """One completed trick: who led, the plays in order, and who won it."""

    leader: int
    plays: tuple[tuple[int, Tile], ...]
    """``(seat, tile)`` in the order played, the leader's first."""
    winner: int

    def __str__(self) -> str:
        shown = " ".join(f"{seat}:{tile}" for seat, tile in self.plays)
        return f"{shown} -> seat {self.winner}"


_TRICK_LEADER: Final = slot_setter(Trick, "leader")
_TRICK_PLAYS: Final = slot_setter(Trick, "plays")
_TRICK_WINNER: Final = slot_setter(Trick, "winner")


def new_trick(leader: int, plays: tuple[tuple[int, Tile], ...], winner: int) -> Trick:
    """``Trick(leader, plays, winner)`` without the frozen dataclass's slow ``__init__``: the
    engine makes one at the end of every trick."""
    trick = new_object(Trick)
    _TRICK_LEADER(trick, leader)
    _TRICK_PLAYS(trick, plays)
    _TRICK_WINNER(trick, winner)
    return trick

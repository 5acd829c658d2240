"""Doubles: a draw game where every double is a spinner and numbers stay locked (docs/rules.md §4).

Decisions taken in docs/rules.md and followed here: a locked end accepts only its own double (D1);
only the matched number must be unlocked, so a tile's other number may sit exposed as a locked
end (D2); a double opens three new ends, filled in any order (D3); a player who cannot play
draws exactly one tile (D4) and must play it at once if it fits (D5); play is compulsory when
possible (D6); the last two tiles of the boneyard are never drawn (D7); every hand is opened by
the holder of the highest double, and a deal without doubles is void (D8); a block scores the
others' pips to the unique lowest hand, a tie scores nothing (D9); going out scores every other
hand's pips (D10); no partnerships (D11); ends showing the same number are interchangeable, so a
play names its end by that number, ``play 6-4 6`` (D12).

The layout is kept as what matters for play: the tiles placed so far, how many open ends show
each number, and which numbers are unlocked.

>>> game = DoublesGame(players=2)
>>> state = game.new_game(seed=7)
>>> [str(a) for a in state.legal_actions()]
['play 5-5']
>>> state = state.apply(state.legal_actions()[0])
>>> state.ends, sorted(state.unlocked)
((5, 5, 5, 5), [5])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from typing import Any, ClassVar, Final

from .actions import DEAL, DRAW, PASS, Action, Deal, Draw, Pass, Play
from .doubles_position import build_position
from .errors import GameOptionError
from .linegame import LineGame, LineGameState, LineObservation, OpenEnd
from .slots import slot_setter
from .state import HandEnd
from .tiles import DOUBLE_SIX, MAX_PIP, TILE_KEY, Tile

RESERVE: Final = 2
"""The last two tiles of the boneyard can never be drawn (docs/rules.md 4.2, D7)."""

NUMBERS: Final = range(MAX_PIP + 1)
END_NAMES: Final = tuple(str(n) for n in NUMBERS)
"""An end is named by the digit it shows (docs/rules.md D12)."""
_END_NUMBER: Final = {name: n for n, name in enumerate(END_NAMES)}

_PLAYS: Final[tuple[dict[int, Play], ...]] = tuple(
    {n: Play(t, END_NAMES[n]) for n in {t.high, t.low}} for t in DOUBLE_SIX
)
"""``_PLAYS[tile.index][n]``: the one shared action placing ``tile`` on an end showing ``n``."""
_OPENINGS: Final[tuple[Play, ...]] = tuple(Play(t) for t in DOUBLE_SIX)
DOUBLES_HIGH_FIRST: Final = tuple(Tile(n, n) for n in reversed(NUMBERS))
"""The order in which the opening double is looked for (docs/rules.md 4.3)."""


_ENDS_BY_COUNTS: dict[tuple[int, ...], tuple[int, ...]] = {}
"""The sorted open ends for each count vector seen; the layouts of a game repeat often."""
_UNLOCKED_BY_MASK: Final = tuple(
    frozenset(n for n in NUMBERS if mask >> n & 1) for mask in range(1 << len(NUMBERS))
)


@dataclass(frozen=True, slots=True)
class DoublesGame(LineGame):
    """Doubles for 2-4 players, each playing alone (docs/rules.md 4.1, D11)."""

    name: ClassVar[str] = "doubles"
    title: ClassVar[str] = "Doubles"
    HAND_SIZES: ClassVar[dict[int, int]] = {2: 8, 3: 6, 4: 6}
    TARGET: ClassVar[int] = 100

    players: int = 2

    def __post_init__(self) -> None:
        if self.players not in (2, 3, 4):
            raise GameOptionError(f"doubles: players must be 2, 3 or 4, got {self.players}")

    @property
    def num_players(self) -> int:
        return self.players

    @property
    def sides(self) -> tuple[tuple[int, ...], ...]:
        return tuple((s,) for s in range(self.players))

    @property
    def target(self) -> int:
        return self.TARGET

    def options(self) -> dict[str, Any]:
        return {"players": self.players}

    def new_game(self, seed: int, *, first_seat: int | None = None) -> DoublesState:
        """Deal the first hand from ``seed``.

        ``first_seat`` only moves the (unused) rotation: in Doubles the holder of the highest
        double always opens (docs/rules.md 4.3, D8).
        """
        return DoublesState._initial(self, seed, first_seat)

    def from_position(self, **position: Any) -> DoublesState:
        """Build a position.

        The fields every line game shares: ``hands`` (one list of tiles per seat, e.g.
        ``[["6-6", "5-4"], ["3-1"]]``), ``boneyard`` (its tiles in draw order, the first drawn
        next), ``seat``, ``opener`` (the seat that opened this deal: the holder of the highest
        double, ``seat`` by default), ``scores`` (one per seat), ``seed``, ``deal`` (the 1-based
        number of this deal) and ``deals`` (the shuffles S of the next deals, docs/rules.md 0.3,
        each every tile once; deals past the list come from ``seed``).

        ``seat`` is the seat to move. Before the opening it defaults to the holder of the highest
        double (and must be that seat); afterwards it is required.

        Doubles' own fields:

        - The layout, in one of two forms (omit both for an opening position):

          - ``placed``: the plays so far in order, as the text of each play without the word
            ``play``: ``["6-6", "6-4 6", "4-4 4"]``. They are replayed under docs/rules.md 4.4-4.5.
          - ``laid`` (the tiles in the layout, in any order) with ``ends`` (the numbers the open
            ends show, e.g. ``[4, 4, 4, 6, 6, 6]``) and optionally ``unlocked`` (must be exactly
            the numbers whose double is laid). They are checked for consistency.

        - ``drawn``: a tile the seat to move has just drawn and must play now (docs/rules.md D5).
        """
        return build_position(DoublesState, self, **position)


@dataclass(frozen=True, slots=True)
class DoublesObservation(LineObservation):
    """A seat's view: the layout and the unlocked numbers, besides the common fields."""

    placed: tuple[Tile, ...]
    """The tiles of the layout, in the order they were placed."""
    ends: tuple[int, ...]
    """The numbers shown by the open ends, sorted (a multiset: equal ends are alike, D12)."""
    unlocked: frozenset[int]
    """The numbers whose double is in the layout (docs/rules.md 4.5)."""
    drawn: Tile | None
    """In the mover's own view only: the tile just drawn that must be played now (D5)."""

    @property
    def open_ends(self) -> tuple[OpenEnd, ...]:
        return doubles_ends(self.ends)


class DoublesState(LineGameState):
    """A position of Doubles.

    The layout lives in ``placed`` (tiles in order), ``counts`` (open ends showing each number),
    and two bit masks over the numbers 0-6: ``open_mask`` (some end shows n) and
    ``unlocked_mask`` (``[n-n]`` is laid).
    """

    __slots__ = ("counts", "drawn", "open_mask", "placed", "unlocked_mask")

    _builds_sorted = True
    """Hands are sorted, and each tile's plays come lower end number first."""

    game: DoublesGame
    placed: tuple[Tile, ...]
    counts: tuple[int, ...]
    open_mask: int
    unlocked_mask: int
    drawn: Tile | None
    """The tile the mover just drew and must play at once (docs/rules.md 4.6, D5), else None."""

    # -- public views of the layout -----------------------------------------------------------

    @property
    def ends(self) -> tuple[int, ...]:
        """The numbers shown by the open ends, sorted."""
        counts = self.counts
        try:
            return _ENDS_BY_COUNTS[counts]
        except KeyError:
            ends = _ENDS_BY_COUNTS[counts] = tuple(
                chain.from_iterable(map(repeat, NUMBERS, counts))
            )
            return ends

    @property
    def open_ends(self) -> tuple[OpenEnd, ...]:
        return doubles_ends(self.ends)

    @property
    def unlocked(self) -> frozenset[int]:
        """The unlocked numbers (docs/rules.md 4.5)."""
        return _UNLOCKED_BY_MASK[self.unlocked_mask]

    def can_place(self, tile: Tile) -> bool:
        """Return whether ``tile`` fits some open end under the locking rule (docs/rules.md 4.5)."""
        if tile.is_double:
            return bool(self.open_mask >> tile.high & 1)
        free = self.open_mask & self.unlocked_mask
        return bool((free >> tile.high | free >> tile.low) & 1)

    @staticmethod
    def highest_double(hand: Sequence[Tile]) -> Tile:
        """Return the highest double in ``hand`` (hands are sorted, so it is the last double)."""
        for tile in reversed(hand):
            if tile.is_double:
                return tile
        raise AssertionError("the opener holds a double")

    def _start_layout(self) -> None:
        self.placed = ()
        self.counts = (0,) * len(NUMBERS)
        self.open_mask = 0
        self.unlocked_mask = 0
        self.drawn = None

    def _first_to_act(self) -> int | None:
        """docs/rules.md 4.3: the holder of the highest double; None (a void deal) if nobody has
        one."""
        for double in DOUBLES_HIGH_FIRST:
            for seat, hand in enumerate(self.hands):
                if double in hand:
                    return seat
        return None

    def _compute_legal(self) -> list[Action]:
        if self.seat < 0:
            return [] if self.winner is not None else [DEAL]
        hand = self.hands[self.seat]
        if not self.placed:
            return [_OPENINGS[self.highest_double(hand).index]]
        opened = self.open_mask
        free = opened & self.unlocked_mask
        actions: list[Action] = []
        for tile in (self.drawn,) if self.drawn is not None else hand:
            high = tile.high
            low = tile.low
            if high == low:
                if opened >> high & 1:
                    actions.append(_PLAYS[tile.index][high])
            else:
                if free >> low & 1:
                    actions.append(_PLAYS[tile.index][low])
                if free >> high & 1:
                    actions.append(_PLAYS[tile.index][high])
        if actions:
            return actions
        return [DRAW] if len(self.boneyard) > RESERVE else [PASS]

    def _why_illegal(self, action: Action) -> str:
        if self.seat < 0:
            return "docs/rules.md X6: between hands only the 'deal' step is legal"
        if not self.placed:
            double = self.highest_double(self.hands[self.seat])
            if isinstance(action, Play) and action.tile is double:
                return "docs/rules.md X1: the opening tile names no end"
            return f"docs/rules.md 4.3: the hand must open with {double}, the highest double"
        if self.drawn is not None and not (isinstance(action, Play) and action.tile is self.drawn):
            return (
                f"docs/rules.md 4.6 (D5): {self.drawn} was just drawn and fits, "
                "so it must be played at once"
            )
        if isinstance(action, Play):
            return self._why_not_placed(action)
        can_play = any(isinstance(a, Play) for a in self.legal_actions())
        if isinstance(action, Draw):
            if can_play:
                return "docs/rules.md 4.6: you can play, so you may not draw"
            return (
                f"docs/rules.md 4.2 (D7): the last two tiles of the boneyard cannot be drawn; "
                f"it holds {len(self.boneyard)}"
            )
        if isinstance(action, Pass):
            if can_play:
                return "docs/rules.md 4.6: you can play, so you may not pass"
            return (
                f"docs/rules.md 4.6: you cannot play and the boneyard holds {len(self.boneyard)}, "
                "so you must draw"
            )
        if isinstance(action, Deal):
            return "docs/rules.md X6: a deal happens only between hands"
        return "docs/rules.md 0.4: the actions of Doubles are play, draw and pass"

    def _why_not_placed(self, action: Play) -> str:
        why = self._why_not_play(action, True) or self._placement_error(action.tile, action.end)
        return why or "docs/rules.md 4.5: that play is not legal here"

    def _act(self, action: Action) -> None:
        if isinstance(action, Play):
            self._place(action.tile, action.end)
            self.drawn = None
            if not self._remove_from_hand(action.tile):
                self._score_domino()
                return
        elif isinstance(action, Draw):
            tile = self._draw_into_hand()
            if self.can_place(tile):
                self.drawn = tile
                return
        # docs/rules.md 0.7: after every action; a domino was reported first (X4).
        if self._is_blocked():
            self._score_block()
        else:
            self._advance()

    def _place(self, tile: Tile, end: str | None) -> None:
        """Lay ``tile`` (docs/rules.md 4.4): on the end showing ``end``, or as the opening
        double."""
        counts = list(self.counts)
        number = tile.high
        if end is None:
            counts[number] = 4
            self.open_mask = 1 << number
            self.unlocked_mask = 1 << number
        else:
            shown = _END_NUMBER[end]
            if tile.is_double:
                counts[shown] += 2
                self.unlocked_mask |= 1 << shown
            else:
                counts[shown] -= 1
                other = tile.low if number == shown else number
                counts[other] += 1
                self.open_mask |= 1 << other
                if not counts[shown]:
                    self.open_mask &= ~(1 << shown)
        self.counts = tuple(counts)
        self.placed = (*self.placed, tile)

    def _is_blocked(self) -> bool:
        """docs/rules.md 4.7: the boneyard holds 2 or fewer and nobody has a legal play."""
        if len(self.boneyard) > RESERVE:
            return False
        key = self.open_mask << 7 | self.unlocked_mask
        try:
            playable = _PLAYABLE[key]
        except KeyError:
            playable = _PLAYABLE[key] = frozenset(t.index for t in DOUBLE_SIX if self.can_place(t))
        return playable.isdisjoint(map(TILE_KEY, chain.from_iterable(self.hands)))

    def _score_domino(self) -> None:
        """docs/rules.md 4.8, D10: going out scores every other hand's pips."""
        points = sum(self.seat_totals())
        self._end_hand(
            HandEnd.DOMINO,
            self.seat,
            points,
            f"seat {self.seat} went out; {points} pips in other hands: seat {self.seat} "
            f"scores {points}",
        )

    def _score_block(self) -> None:
        """docs/rules.md 4.8, D9: the unique lowest hand scores the others' pips; a tie, nobody."""
        totals = self.seat_totals()
        shown = "/".join(str(t) for t in totals)
        winner = self._unique_lowest_side()
        if winner is None:
            self._end_hand(
                HandEnd.BLOCKED,
                None,
                0,
                f"blocked; pip totals {shown} tie for lowest: nobody scores",
            )
            return
        points = sum(totals) - totals[winner]
        self._end_hand(
            HandEnd.BLOCKED,
            winner,
            points,
            f"blocked; pip totals {shown}: seat {winner} scores {points}",
        )

    def observe(self, seat: int) -> DoublesObservation:
        made = self._observation(DoublesObservation, seat)
        _SET_PLACED(made, self.placed)
        _SET_ENDS(made, self.ends)
        _SET_UNLOCKED(made, _UNLOCKED_BY_MASK[self.unlocked_mask])
        _SET_DRAWN(made, self.drawn if seat >= 0 and seat == self.seat else None)
        return made

    def _copy_own(self, copy: DoublesState) -> None:
        copy.boneyard = self.boneyard
        copy.held = self.held
        copy.play_points = self.play_points
        copy.counts = self.counts
        copy.drawn = self.drawn
        copy.open_mask = self.open_mask
        copy.placed = self.placed
        copy.unlocked_mask = self.unlocked_mask

    def _placement_error(self, tile: Tile, end: str | None) -> str | None:
        """Return why ``tile`` cannot go on ``end`` of this non-empty layout, or None."""
        if end is None:
            return "docs/rules.md X1: every play after the opening names its end"
        number = _END_NUMBER.get(end)
        if number is None:
            return f"docs/rules.md D12: an end is named by the digit it shows, not '{end}'"
        if not self.open_mask >> number & 1:
            return f"docs/rules.md 4.4: no open end shows {number}"
        if not tile.has(number):
            return f"docs/rules.md 4.5: {tile} does not contain {number}"
        if not tile.is_double and not self.unlocked_mask >> number & 1:
            return f"docs/rules.md 4.5: {number} is locked until {number}-{number} is played"
        return None


def doubles_ends(ends: tuple[int, ...]) -> tuple[OpenEnd, ...]:
    """Return the open ends showing ``ends``, each named by its number (D12), none crosswise."""
    try:
        return _OPEN_ENDS[ends]
    except KeyError:
        made = _OPEN_ENDS[ends] = tuple(_OPEN_END[n] for n in ends)
        return made


_SET_PLACED: Final = slot_setter(DoublesObservation, "placed")
_SET_ENDS: Final = slot_setter(DoublesObservation, "ends")
_SET_UNLOCKED: Final = slot_setter(DoublesObservation, "unlocked")
_SET_DRAWN: Final = slot_setter(DoublesObservation, "drawn")
_PLAYABLE: dict[int, frozenset[int]] = {}
"""The indices of the tiles that fit a layout, by its ``open_mask << 7 | unlocked_mask``."""
_OPEN_END: Final = tuple(OpenEnd(END_NAMES[n], n, False) for n in NUMBERS)
_OPEN_ENDS: dict[tuple[int, ...], tuple[OpenEnd, ...]] = {}
"""The open ends of each multiset of end numbers seen; like ``_ENDS_BY_COUNTS``, they repeat."""

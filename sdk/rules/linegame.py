"""What the three line games share: hands, boneyard, deals, hand scoring, open ends, the target.

Passing, Straight and Doubles differ in their layout, in when a player may draw or pass, and in
how a hand is scored; they subclass :class:`LineGameState` and supply those parts. The deal, the
rotation of openers, the chance step between hands and the end of the game live here once.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from bisect import insort
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Final, Self, TypeVar

from .actions import Action, Play
from .dealing import deal_round_robin
from .errors import PositionError
from .observing import observation_base
from .slots import slot_setter
from .state import (
    CHANCE,
    TERMINAL,
    Game,
    GameState,
    HandEnd,
    HandResult,
    Observation,
    Outcome,
    Phase,
)
from .tiles import DOUBLE_SIX, TILE_KEY, Tile, parse_tiles, pip_total


class LineGame(Game):
    """A line game's configuration: a game with hands dealt from the double-six set."""

    HAND_SIZES: ClassVar[dict[int, int]]
    """Tiles dealt to each player, by number of players."""

    @property
    def hand_size(self) -> int:
        return self.HAND_SIZES[self.num_players]


@dataclass(frozen=True, slots=True)
class OpenEnd:
    """One open end of a line game's layout, as :attr:`LineGameState.open_ends` lists them."""

    end: str
    """The end's name in a play: ``W``, ``E``, ``N``, ``S``, or in Doubles the digit it shows."""
    number: int
    """The number showing there."""
    crosswise: bool
    """Whether a crosswise double ends the layout there (Passing 2.4; Straight 3.4 and 3.5,
    where it counts both halves). A spinner with nothing on that side is not one (X2), and
    Doubles has none: there every double is a spinner whose sides are ends of their own (4.4)."""


def line_ends(line: tuple[tuple[int, int], ...]) -> tuple[OpenEnd, ...]:
    """Return the ends W and E of a line of ``(west, east)`` pairs; none before the opening."""
    if not line:
        return ()
    (w_out, w_in), (e_in, e_out) = line[0], line[-1]
    return (OpenEnd("W", w_out, w_out == w_in), OpenEnd("E", e_out, e_in == e_out))


@dataclass(frozen=True, slots=True)
class LineObservation(Observation, ABC):
    """What a seat sees in a line game, beyond the common fields."""

    boneyard_size: int

    @property
    def phase(self) -> Phase:
        """``PLAYING`` during a hand, ``DEAL`` between hands, ``OVER`` at the end."""
        return _phase_of(self.current_seat)

    @property
    @abstractmethod
    def open_ends(self) -> tuple[OpenEnd, ...]:
        """The open ends of the layout, in the order the game names them; none before a tile."""


_O = TypeVar("_O", bound=LineObservation)
_TILES_SHOWING: Final = tuple(
    sum(1 << t.index for t in DOUBLE_SIX if (numbers >> t.high | numbers >> t.low) & 1)
    for numbers in range(1 << 7)
)
"""The bit set of the tiles (bit i: the tile of index i) showing some number of a bit set of
numbers (bit n: number n)."""


def held_mask(hands: Sequence[Sequence[Tile]]) -> int:
    """Return the bit set of the tiles in ``hands`` (bit i: the tile of index i)."""
    mask = 0
    for hand in hands:
        for tile in hand:
            mask |= 1 << tile.index
    return mask


_OBS_BONEYARD: Final = slot_setter(LineObservation, "boneyard_size")


def _phase_of(seat: int) -> Phase:
    if seat == CHANCE:
        return Phase.DEAL
    return Phase.OVER if seat == TERMINAL else Phase.PLAYING


class LineGameState(GameState):
    """State of a line game; subclasses add the layout."""

    __slots__ = ("boneyard", "held", "play_points")

    game: LineGame
    boneyard: tuple[Tile, ...]
    held: int
    """The bit set of the tiles in all hands (bit i: the tile of index i), kept beside ``hands``
    so the block check, run on every move once the boneyard is empty, is one ``&``."""
    play_points: tuple[int, ...]
    """Points each side scored during play in this hand (Straight only; docs/rules.md 3.7)."""

    # -- the GameState interface --------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        """``PLAYING`` during a hand, ``DEAL`` between hands, ``OVER`` at the end."""
        return _phase_of(self.seat)

    @property
    @abstractmethod
    def open_ends(self) -> tuple[OpenEnd, ...]:
        """The open ends of the layout, in the order the game names them; none before a tile."""

    def outcome(self) -> Outcome | None:
        if self.winner is None:
            return None
        return Outcome(
            winner=self.winner,
            scores=self.side_scores,
            sides=self.game.sides,
            detail=f"side {self.winner} reached {self.side_scores[self.winner]} "
            f"(target {self.game.target})",
        )

    # -- what each line game supplies ---------------------------------------------------------

    @abstractmethod
    def _start_layout(self) -> None:
        """Clear the layout of this (fresh, private) state for a new deal."""

    @abstractmethod
    def _first_to_act(self) -> int | None:
        """Return the seat that opens this freshly dealt hand, or None for a void deal."""

    @abstractmethod
    def _act(self, action: Action) -> None:
        """Apply a seat's legal play, draw or pass to this private copy."""

    # -- shared machinery ---------------------------------------------------------------------

    def _deal_next(self) -> None:
        """Deal the next hand into this private state (docs/rules.md 0.3, X6)."""
        self.deal_index += 1
        players = self.game.num_players
        self.hands, self.boneyard = deal_round_robin(self._shuffle(), players, self.game.hand_size)
        self.held = held_mask(self.hands)
        self._start_layout()
        self.play_points = (0,) * len(self.side_scores)
        self.opener = (self.opener + 1) % players
        opener = self._first_to_act()
        if opener is None:
            self.seat = CHANCE
            none = (0,) * len(self.side_scores)
            self.results = (
                *self.results,
                HandResult(
                    self.deal_number,
                    HandEnd.VOID,
                    none,
                    "void deal: nobody holds a double; all 28 tiles are dealt again",
                    (),
                    none,
                ),
            )
        else:
            self.seat = self.opener = opener

    def _next(self, action: Action) -> Self:
        after = self._clone()
        if self.seat == CHANCE:  # the action is legal, so it is the deal
            after._deal_next()
        else:
            after._act(action)
        return after

    def _draw_into_hand(self) -> Tile:
        """Move the boneyard's first tile into the mover's hand and return it."""
        tile = self.boneyard[0]
        self.boneyard = self.boneyard[1:]
        hands = list(self.hands)
        hand = list(hands[self.seat])
        insort(hand, tile, key=TILE_KEY)
        hands[self.seat] = tuple(hand)
        self.hands = tuple(hands)
        self.held |= 1 << tile.index
        return tile

    def _remove_from_hand(self, tile: Tile) -> tuple[Tile, ...]:
        """Take ``tile`` out of the mover's hand and return what is left."""
        hands = list(self.hands)
        seat = self.seat
        hand = hands[seat]
        at = hand.index(tile)  # tiles are interned: found by identity
        hands[seat] = left = hand[:at] + hand[at + 1 :]
        self.hands = tuple(hands)
        self.held &= ~(1 << tile.index)
        return left

    def _nobody_holds(self, numbers: int) -> bool:
        """Return whether no hand holds a tile showing a number of the bit set ``numbers``."""
        return not self.held & _TILES_SHOWING[numbers]

    def _advance(self) -> None:
        self.seat = (self.seat + 1) % len(self.hands)  # a hand per player

    def seat_totals(self) -> tuple[int, ...]:
        """Return the pip total of every hand."""
        return tuple(pip_total(h) for h in self.hands)

    def side_totals(self) -> tuple[int, ...]:
        """Return the pip total of every side (a team adds both partners' hands)."""
        totals = self.seat_totals()
        return tuple(sum(totals[s] for s in seats) for seats in self.game.sides)

    def _record(
        self,
        end: HandEnd,
        winner: int | None,
        points: int,
        detail: str,
        *,
        winners: tuple[int, ...] | None = None,
    ) -> None:
        """Add this hand's result: ``points`` to side ``winner`` (None: nobody scores).

        The winners are ``winner`` unless given (Straight's target hand: no end-of-hand points).
        """
        scored = [0] * len(self.side_scores)
        if winner is not None:
            scored[winner] = points
        if winners is None:
            winners = () if winner is None else (winner,)
        self.results = (
            *self.results,
            HandResult(self.deal_number, end, tuple(scored), detail, winners, self.play_points),
        )

    def _end_hand(self, end: HandEnd, winner: int | None, points: int, detail: str) -> None:
        """Score ``points`` to side ``winner`` (None: nobody) and end the hand, or the game."""
        self._record(end, winner, points, detail)
        self._add_points(winner, points)
        if self.winner is None:
            self.seat = CHANCE

    def _add_points(self, side: int | None, points: int) -> None:
        """Credit ``points`` to ``side`` and end the game if it reaches the target."""
        if side is None or points == 0:
            return
        scores = list(self.side_scores)
        scores[side] += points
        self.side_scores = tuple(scores)
        if scores[side] >= self.game.target:
            self.winner = side
            self.seat = TERMINAL

    def _unique_lowest_side(self) -> int | None:
        """Return the side with strictly the lowest pip total, or None on a tie."""
        totals = self.side_totals()
        low = min(totals)
        return totals.index(low) if totals.count(low) == 1 else None

    def _observation(self, cls: type[_O], seat: int) -> _O:
        """Return a new ``cls`` with the fields every line game's observation shares set; the
        caller sets the layout's."""
        made = observation_base(self, cls, seat, tuple(map(len, self.hands)))
        _OBS_BONEYARD(made, len(self.boneyard))
        return made

    def _why_not_play(self, action: Play, plays_allowed: bool) -> str | None:
        """Explain why ``action`` cannot be played, in terms common to the line games."""
        if action.tile not in self.hands[self.seat]:
            return f"seat {self.seat} does not hold {action.tile}"
        if not plays_allowed:
            return "a play is not allowed now"
        return None

    # -- explicit positions -------------------------------------------------------------------

    @classmethod
    def _position_common(
        cls,
        game: LineGame,
        hands: Sequence[str | Sequence[str | Tile]],
        boneyard: str | Sequence[str | Tile],
        laid: tuple[Tile, ...],
        *,
        seat: int,
        opener: int | None,
        scores: Sequence[int] | None,
        seed: int,
        deal: int,
        deals: Sequence[str | Sequence[str | Tile]] | None,
    ) -> Self:
        """Validate and fill the fields every line game's position has."""
        state = cls._blank(game, seed)
        if deal < 1:
            raise PositionError(f"deal must be 1 or more, got {deal}")
        state.deal_index = deal - 1
        n = game.num_players
        if len(hands) != n:
            raise PositionError(f"hands: expected {n} hands, got {len(hands)}")
        parsed = tuple(tuple(sorted(parse_tiles(h, f"hands[{i}]"))) for i, h in enumerate(hands))
        state.hands = parsed
        state.held = held_mask(parsed)
        state.boneyard = parse_tiles(boneyard, "boneyard")
        seen: dict[Tile, str] = {}
        for where, tiles in [
            *((f"hands[{i}]", h) for i, h in enumerate(parsed)),
            ("boneyard", state.boneyard),
            ("layout", laid),
        ]:
            for tile in tiles:
                if tile in seen:
                    raise PositionError(f"tile {tile} is in {seen[tile]} and in {where}")
                seen[tile] = where
        if len(seen) != len(DOUBLE_SIX):
            missing = " ".join(str(t) for t in DOUBLE_SIX if t not in seen)
            raise PositionError(f"every tile must be somewhere; missing: {missing}")
        if not 0 <= seat < n:
            raise PositionError(f"seat: {seat} is not a seat of a {n}-player game")
        state.seat = seat
        if opener is not None and not 0 <= opener < n:
            raise PositionError(f"opener: {opener} is not a seat of a {n}-player game")
        state.opener = seat if opener is None else opener
        side_count = len(game.sides)
        if scores is not None:
            state.side_scores = tuple(scores)
        if len(state.side_scores) != side_count:
            raise PositionError(
                f"scores: expected {side_count} values, got {len(state.side_scores)}"
            )
        state.play_points = (0,) * side_count
        state._later_deals(deals)
        return state

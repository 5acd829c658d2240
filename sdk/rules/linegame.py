"""What the three line games share: hands, boneyard, deals, hand scoring and the target.

Passing, Straight and Doubles differ in their layout, in when a player may draw or pass, and in
how a hand is scored; they subclass :class:`LineGameState` and supply those parts. The deal, the
rotation of starters, the chance step between hands and the end of the game live here once.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from .actions import DEAL, Action, Play
from .dealing import deal_round_robin, first_seat, shuffled
from .errors import PositionError
from .state import (
    CHANCE,
    TERMINAL,
    Game,
    GameState,
    HandEnd,
    HandResult,
    Observation,
    Outcome,
)
from .tiles import DOUBLE_SIX, Tile, pip_total


class LineGame(Game):
    """A line game's configuration: a game with hands dealt from the double-six set."""

    HAND_SIZES: ClassVar[dict[int, int]]
    """Tiles dealt to each player, by number of players."""

    @property
    def hand_size(self) -> int:
        return self.HAND_SIZES[self.num_players]


@dataclass(frozen=True, slots=True)
class LineObservation(Observation):
    """What a seat sees in a line game, beyond the common fields."""

    boneyard_size: int
    starter: int
    """The seat that opened (or must open) this deal."""


class LineGameState(GameState):
    """State of a line game; subclasses add the layout."""

    __slots__ = (
        "boneyard",
        "deal_index",
        "hands",
        "results",
        "seat",
        "seed",
        "side_scores",
        "starter",
        "winner",
    )

    game: LineGame
    seed: int
    deal_index: int
    starter: int
    seat: int
    hands: tuple[tuple[Tile, ...], ...]
    boneyard: tuple[Tile, ...]
    side_scores: tuple[int, ...]
    results: tuple[HandResult, ...]
    winner: int | None

    # -- the GameState interface --------------------------------------------------------------

    @property
    def current_seat(self) -> int:
        return self.seat

    @property
    def scores(self) -> tuple[int, ...]:
        return self.side_scores

    @property
    def deal_number(self) -> int:
        return self.deal_index + 1

    @property
    def hand_results(self) -> tuple[HandResult, ...]:
        return self.results

    def hand(self, seat: int) -> tuple[Tile, ...]:
        return self.hands[seat]

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

    # -- shared machinery ---------------------------------------------------------------------

    @classmethod
    def _initial(cls, game: LineGame, seed: int, first: int | None) -> Self:
        state = cls.__new__(cls)
        state.game = game
        state._legal = None
        state._log = None
        state._deal_steps = state._public_steps = ()
        state._hidden_by = frozenset()
        state.seed = seed
        state.side_scores = (0,) * len(game.sides)
        state.results = ()
        state.winner = None
        start = first_seat(seed, game.num_players) if first is None else first
        if not 0 <= start < game.num_players:
            raise PositionError(
                f"first_seat {first} is not a seat of a {game.num_players}-player game"
            )
        # The rotation below moves the starter on by one for every deal, so begin one behind.
        state.starter = (start - 1) % game.num_players
        state.deal_index = -1
        state._deal_next()
        return state

    def _deal_next(self) -> None:
        """Deal the next hand into this private state (RULES.md 0.3, X6)."""
        self.deal_index += 1
        order = shuffled(DOUBLE_SIX, self.seed, self.deal_index)
        players = self.game.num_players
        self.hands, self.boneyard = deal_round_robin(order, players, self.game.hand_size)
        self._start_layout()
        self.starter = (self.starter + 1) % self.game.num_players
        opener = self._first_to_act()
        if opener is None:
            self.seat = CHANCE
            self.results = (
                *self.results,
                HandResult(
                    self.deal_number,
                    HandEnd.VOID,
                    (0,) * len(self.side_scores),
                    "void deal: nobody holds a double; all 28 tiles are dealt again",
                ),
            )
        else:
            self.seat = self.starter = opener

    def _next(self, action: Action) -> Self:
        after = self._clone()
        if action == DEAL:
            after._deal_next()
        else:
            after._act(action)
        return after

    @abstractmethod
    def _act(self, action: Action) -> None:
        """Apply a seat's legal play, draw or pass to this private copy."""

    def _draw_into_hand(self) -> Tile:
        """Move the boneyard's first tile into the mover's hand and return it."""
        tile = self.boneyard[0]
        self.boneyard = self.boneyard[1:]
        hands = list(self.hands)
        hands[self.seat] = tuple(sorted((*hands[self.seat], tile)))
        self.hands = tuple(hands)
        return tile

    def _remove_from_hand(self, tile: Tile) -> tuple[Tile, ...]:
        """Take ``tile`` out of the mover's hand and return what is left."""
        hands = list(self.hands)
        left = tuple(t for t in hands[self.seat] if t is not tile)
        hands[self.seat] = left
        self.hands = tuple(hands)
        return left

    def _advance(self) -> None:
        self.seat = (self.seat + 1) % self.game.num_players

    def seat_totals(self) -> tuple[int, ...]:
        """Return the pip total of every hand."""
        return tuple(pip_total(h) for h in self.hands)

    def side_totals(self) -> tuple[int, ...]:
        """Return the pip total of every side (a team adds both partners' hands)."""
        totals = self.seat_totals()
        return tuple(sum(totals[s] for s in seats) for seats in self.game.sides)

    def _end_hand(self, end: HandEnd, winner: int | None, points: int, detail: str) -> None:
        """Score ``points`` to side ``winner`` (None: nobody) and end the hand, or the game."""
        scored = [0] * len(self.side_scores)
        if winner is not None:
            scored[winner] = points
        self.results = (*self.results, HandResult(self.deal_number, end, tuple(scored), detail))
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

    def _base_observation(self, seat: int) -> dict[str, Any]:
        return {
            "game": self.game,
            "seat": seat,
            "current_seat": self.seat,
            "legal_actions": self.legal_actions() if seat == self.seat else (),
            "hand": self.hands[seat],
            "hand_sizes": tuple(map(len, self.hands)),
            "scores": self.side_scores,
            "deal": self.deal_number,
            "history": self.deal_history(seat),
            "boneyard_size": len(self.boneyard),
            "starter": self.starter,
        }

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
        hands: Sequence[Sequence[str | Tile]],
        boneyard: Sequence[str | Tile],
        laid: tuple[Tile, ...],
        *,
        seat: int,
        starter: int | None,
        scores: tuple[int, ...] | list[int] | None,
        seed: int,
        deal: int,
    ) -> Self:
        """Validate and fill the fields every line game's position has."""
        state = cls.__new__(cls)
        state.game = game
        state._legal = None
        state._log = None
        state._deal_steps = state._public_steps = ()
        state._hidden_by = frozenset()
        state.seed = seed
        if deal < 1:
            raise PositionError(f"deal must be 1 or more, got {deal}")
        state.deal_index = deal - 1
        n = game.num_players
        if len(hands) != n:
            raise PositionError(f"hands: expected {n} hands, got {len(hands)}")
        parsed = tuple(tuple(sorted(_tiles(h, f"hands[{i}]"))) for i, h in enumerate(hands))
        state.hands = parsed
        state.boneyard = _tiles(boneyard, "boneyard")
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
        if starter is not None and not 0 <= starter < n:
            raise PositionError(f"starter: {starter} is not a seat of a {n}-player game")
        state.starter = seat if starter is None else starter
        side_count = len(game.sides)
        state.side_scores = tuple(scores) if scores is not None else (0,) * side_count
        if len(state.side_scores) != side_count:
            raise PositionError(
                f"scores: expected {side_count} values, got {len(state.side_scores)}"
            )
        state.results = ()
        state.winner = None
        return state


def _tiles(values: Sequence[str | Tile], field: str) -> tuple[Tile, ...]:
    out = []
    for value in values:
        if isinstance(value, Tile):
            out.append(value)
        else:
            try:
                out.append(Tile.parse(value))
            except ValueError as exc:
                raise PositionError(f"{field}: {exc}") from None
    return tuple(out)

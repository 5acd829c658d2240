"""What every simulator shares: the seat to move, hands, scores, the undo stack, push and pop.

A :class:`Sim` is a *mutable* copy of one deal of a :class:`~..state.GameState`, for search: it
plays actions in place with :meth:`Sim.push` and takes them back exactly with :meth:`Sim.pop`,
in the style of python-chess's ``Board.push``/``pop``. It is built from a state with
:func:`~.simulate` and plays to the end of that deal: once the deal is over the seat to move is
``CHANCE`` (the next step would be the referee's ``deal``) or ``TERMINAL`` and there are no legal
actions. A search that wants the next deal asks the immutable engine for it and builds a new
simulator from that state.

:meth:`Sim.push` does not check legality (the caller took the action from
:meth:`Sim.legal_actions`); :meth:`Sim.push_checked` does, with the engine's errors.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, Final, Self

from ..actions import Action
from ..errors import GameOverError, IllegalActionError
from ..state import CHANCE, TERMINAL, Game, GameState, Observation
from ..tiles import Tile


class Sim(ABC):
    """A mutable position of one deal, with undo.

    Attributes read by search: ``seat`` (also :attr:`current_seat`), ``hands`` (one sorted list
    of tiles per seat; do not change them), ``scores`` (a tuple per side), ``winner`` (the
    winning side once the game is over, else None) and ``game``.
    """

    __slots__ = ("_legal", "_undo", "game", "hands", "players", "scores", "seat", "side", "winner")

    game: Game
    players: int
    side: tuple[int, ...]
    """``side[seat]``: the side that seat scores for."""
    seat: int
    hands: list[list[Tile]]
    scores: tuple[int, ...]
    winner: int | None
    _legal: tuple[Action, ...] | None
    _undo: list[Any]
    """One record per pushed action, whatever :meth:`pop` needs to restore the position."""

    game_name: ClassVar[str]
    """The registry name of the game simulated; a class that sets it registers itself in
    :data:`SIMULATORS`, which is how :func:`~.simulate` and search find it (no switch on types)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("game_name")
        if name is not None:
            SIMULATORS[name] = cls

    @abstractmethod
    def __init__(self, state: Any) -> None:
        """Copy the deal of ``state`` (a state of this simulator's game)."""

    @classmethod
    @abstractmethod
    def from_observation(
        cls, observation: Observation, hands: Sequence[Sequence[Tile]], stock: Sequence[Tile]
    ) -> Self:
        """A position mid-deal from a seat's ``observation`` with its hidden tiles filled in:
        every seat's ``hands`` and the ``stock`` (the boneyard in draw order; in Moon the widow
        during bidding or another bidder's discard after it). A search's sampled deal, consistent
        by construction, so nothing is checked (the engine's ``from_position`` would)."""

    @staticmethod
    @abstractmethod
    def snapshot_of(state: Any) -> tuple[Any, ...]:
        """What :meth:`snapshot` returns for a simulator at ``state``, made from the engine's
        own fields, not through a simulator, so a test comparing the two compares two
        implementations."""

    def _init_common(self, state: GameState) -> None:
        outcome = state.outcome() if state.current_seat == TERMINAL else None
        self._set_common(
            state.game,
            state.current_seat,
            [state.hand(s) for s in range(state.game.num_players)],
            state.scores,
            None if outcome is None else outcome.winner,
        )

    def _set_common(
        self,
        game: Game,
        seat: int,
        hands: Sequence[Sequence[Tile]],
        scores: Sequence[int],
        winner: int | None = None,
    ) -> None:
        self.game = game
        self.players = game.num_players
        side = _SIDES.get(game)
        if side is None:
            side = _SIDES[game] = tuple(game.side_of(s) for s in range(game.num_players))
        self.side = side
        self.seat = seat
        self.hands = [list(hand) for hand in hands]
        self.scores = tuple(scores)
        self.winner = winner
        self._legal = None
        self._undo = []

    # -- what each game supplies --------------------------------------------------------------

    @abstractmethod
    def _compute_legal(self) -> tuple[Action, ...]:
        """The legal actions in the engine's canonical order; empty once the deal is over."""

    @abstractmethod
    def push(self, action: Action) -> None:
        """Play ``action`` in place; it must be one of :meth:`legal_actions` (not checked)."""

    @abstractmethod
    def pop(self) -> Action:
        """Take back the last pushed action, restoring the position exactly, and return it.

        Raises:
            IndexError: nothing was pushed.
        """

    @abstractmethod
    def snapshot(self) -> tuple[Any, ...]:
        """Everything the position holds, as a value :func:`~.snapshot_of` also makes from an
        immutable state: equal snapshots mean equal positions (tests compare the two)."""

    # -- the shared interface -----------------------------------------------------------------

    @property
    def current_seat(self) -> int:
        """Seat to move; ``CHANCE`` at the end of a deal, ``TERMINAL`` at the end of the game."""
        return self.seat

    def is_terminal(self) -> bool:
        """Whether the game is over."""
        return self.seat == TERMINAL

    def is_chance(self) -> bool:
        """Whether the deal is over and the game goes on (the next step is a ``deal``)."""
        return self.seat == CHANCE

    def is_deal_over(self) -> bool:
        """Whether the simulation has reached its end: the deal (or the game) is over."""
        return self.seat < 0

    def legal_actions(self) -> tuple[Action, ...]:
        """Return the legal actions, sorted as the engine sorts them; empty at the deal's end."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        return legal

    def push_checked(self, action: Action) -> None:
        """Play ``action`` after checking it, with the engine's errors.

        Raises:
            GameOverError: the deal (the simulation) or the game is over.
            IllegalActionError: ``action`` is not legal here.
        """
        if self.seat < 0:
            what = "the game" if self.seat == TERMINAL else "the simulated deal"
            raise GameOverError(f"cannot push '{action}': {what} is over")
        legal = self.legal_actions()
        if action not in legal:
            raise IllegalActionError(
                str(action), "not a legal action here", tuple(str(a) for a in legal)
            )
        self.push(action)

    @property
    def ply(self) -> int:
        """Actions pushed and not popped."""
        return len(self._undo)

    def hand(self, seat: int) -> tuple[Tile, ...]:
        """Return the tiles ``seat`` holds, sorted."""
        return tuple(self.hands[seat])

    # -- helpers for the games ----------------------------------------------------------------

    def _side_totals(self) -> list[int]:
        """The pip total of every side (a team adds both partners' hands)."""
        totals = [0] * len(self.scores)
        side = self.side
        for seat, hand in enumerate(self.hands):
            totals[side[seat]] += sum(t.pips for t in hand)
        return totals

    def _add_points(self, side: int, points: int) -> None:
        """Credit ``points`` to ``side``; reaching the target ends the game (line games)."""
        if points == 0:
            return
        scores = list(self.scores)
        scores[side] += points
        self.scores = tuple(scores)
        if scores[side] >= self.game.target:
            self.winner = side
            self.seat = TERMINAL

    def _end_hand(self, side: int | None, points: int) -> None:
        """Score ``points`` to ``side`` (None: nobody) and end the deal, or the game."""
        if side is not None:
            self._add_points(side, points)
        if self.winner is None:
            self.seat = CHANCE


SIMULATORS: Final[dict[str, type[Sim]]] = {}
"""Each game's simulator by registry name, filled as the simulator classes are defined."""

_SIDES: dict[Game, tuple[int, ...]] = {}
"""Each game's side of every seat: a game's ``sides`` is worked out anew on every call."""


def engine_common(state: GameState) -> tuple[Any, ...]:
    """The start of every snapshot, from the engine's fields: seat to move, hands, scores and
    winner (a line game's boneyard goes between the hands and the scores)."""
    outcome = state.outcome()
    hands = tuple(state.hand(s) for s in range(state.game.num_players))
    return state.current_seat, hands, state.scores, None if outcome is None else outcome.winner


def unique_lowest(totals: list[int]) -> int | None:
    """Return the index of the strictly lowest total, or None on a tie."""
    low = min(totals)
    return totals.index(low) if totals.count(low) == 1 else None


def remove_tile(hand: list[Tile], tile: Tile) -> int:
    """Take ``tile`` out of the sorted ``hand`` and return where it was (for undo)."""
    at = hand.index(tile)
    del hand[at]
    return at


def insert_tile(hand: list[Tile], tile: Tile) -> int:
    """Put ``tile`` into the sorted ``hand`` in order and return where it went (for undo)."""
    index = tile.index
    at = 0
    for t in hand:
        if t.index > index:
            break
        at += 1
    hand.insert(at, tile)
    return at

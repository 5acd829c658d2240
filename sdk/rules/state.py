"""What every game shares: the game / state / observation split (docs/decisions.md: decision 4).

A :class:`Game` is immutable configuration (players, partnerships, target). It creates a
:class:`GameState` from a seed or from an explicit position. A state is immutable: it lists its
legal actions, and :meth:`GameState.apply` checks an action and returns the next state. Each seat
sees the game only through :meth:`GameState.observe`, which holds what docs/rules.md lets that seat
see and nothing else.

Scores are kept per *side*: a seat in individual play, a team in partnership play.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Self

from .actions import Action, Discard, sort_actions
from .dealing import first_seat, shuffled
from .errors import GameOverError, IllegalActionError, PositionError
from .slots import new_object, slot_setter
from .tiles import DOUBLE_SIX, Tile, parse_tiles

CHANCE: Final = -1
"""The acting seat of the ``deal`` step between hands."""

TERMINAL: Final = -2
"""``current_seat`` of a finished game."""

SPECTATOR: Final = -3
"""The viewer who holds no seat: ``observe(SPECTATOR)`` is what anybody watching may see (no
hand, no legal actions, no private tile), and :func:`public_entry` masks every private step."""


class HandEnd(enum.Enum):
    """How one hand (deal) ended."""

    DOMINO = "domino"
    """A player played their last tile."""
    BLOCKED = "blocked"
    """Nobody could play (and nothing useful could be drawn)."""
    PASSED_OUT = "passed-out"
    """Passing Game: every player passed in a row (docs/rules.md 2.6 c)."""
    TRICKS = "tricks"
    """Moon: all seven tricks were played."""
    VOID = "void"
    """A deal thrown in before any tile was played: Moon all-pass, Doubles without a double."""
    TARGET = "target"
    """Straight: a side reached the target during play; the game ended mid-hand (docs/rules.md
    S12)."""


class Phase(enum.Enum):
    """Where a deal stands, in every game; ``DEAL`` and ``OVER`` match ``CHANCE`` and ``TERMINAL``.

    A Moon hand runs ``BIDDING -> DISCARD -> TRUMP -> PLAYING`` (OpenSpiel's hearts does the
    same); a line game's hand is ``PLAYING`` from the deal to its end.
    """

    BIDDING = "bidding"
    DISCARD = "discard"
    TRUMP = "trump"
    PLAYING = "playing"
    DEAL = "deal"
    """The hand is over (or void); the next step is the ``deal`` chance step."""
    OVER = "over"


@dataclass(frozen=True, slots=True)
class HandResult:
    """The scored result of one deal.

    ``winners`` and ``in_play`` are left out of equality and default to empty: the wire's
    ``HandEnd`` message and a match record carry only ``deal``, ``end``, ``points`` and
    ``detail``, so a result read back from either still equals the engine's.
    """

    deal: int
    """1-based number of the deal in the game, void deals included."""
    end: HandEnd
    points: tuple[int, ...]
    """Points each side scored at the end of the hand (Straight's in-play points are apart)."""
    detail: str
    """One line a person can read, e.g. ``"seat 1 went out; 23 pips in other hands"``."""
    winners: tuple[int, ...] = field(default=(), compare=False)
    """The side(s) that won the hand: the side that scores (a Moon contract made: the bidder;
    failed: both opponents), the side that went out even when it scores 0, the side that
    reached Straight's target; empty for a void deal and a tie for lowest."""
    in_play: tuple[int, ...] = field(default=(), compare=False)
    """Points each side scored during play: Straight's counts (docs/rules.md 3.7), zeros in the
    other games; empty when read back from a record or the wire."""

    @property
    def scored(self) -> tuple[int, ...]:
        """Every point each side scored in the hand: end-of-hand and in-play points together."""
        if not self.in_play:
            return self.points
        return tuple(a + b for a, b in zip(self.points, self.in_play, strict=True))


@dataclass(frozen=True, slots=True)
class Outcome:
    """The result of a finished game."""

    winner: int
    """The winning side."""
    scores: tuple[int, ...]
    """Final score of each side."""
    sides: tuple[tuple[int, ...], ...]
    """The seats of each side."""
    detail: str

    @property
    def winning_seats(self) -> tuple[int, ...]:
        return self.sides[self.winner]

    def result(self) -> str:
        """Return a short text like ``"side 1 (seats 1, 3) wins 61-40"``."""
        seats = ", ".join(str(s) for s in self.sides[self.winner])
        score = "-".join(str(s) for s in self.scores)
        plural = "s" if len(self.winning_seats) > 1 else ""
        return f"side {self.winner} (seat{plural} {seats}) wins {score}"


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One step of a game: who acted (``CHANCE`` for a deal) and what they did."""

    seat: int
    action: Action

    def __str__(self) -> str:
        who = "chance" if self.seat == CHANCE else f"seat {self.seat}"
        return f"{who}: {self.action}"


class Game(ABC):
    """Configuration of one game: its name, players, sides and target.

    Subclasses are frozen dataclasses; two games with the same options compare equal.
    """

    name: ClassVar[str]
    """Registry name: ``moon``, ``passing``, ``straight`` or ``doubles``."""
    title: ClassVar[str]
    """Name for people, e.g. ``"Three-Player Moon"``."""

    @property
    @abstractmethod
    def num_players(self) -> int: ...

    @property
    @abstractmethod
    def sides(self) -> tuple[tuple[int, ...], ...]:
        """The seats of each scoring side: one per seat, or the teams (0, 2) and (1, 3)."""

    @property
    @abstractmethod
    def target(self) -> int:
        """Score that wins the game."""

    @abstractmethod
    def options(self) -> dict[str, Any]:
        """The options that recreate this game through the registry (JSON-safe)."""

    @abstractmethod
    def new_game(self, seed: int, *, first_seat: int | None = None) -> GameState:
        """Deal the first hand from ``seed``.

        Args:
            seed: fixes every shuffle of every hand and, unless given, the first starter.
            first_seat: the first starter (first bidder in Moon); random from the seed if None.
        """

    @abstractmethod
    def from_position(self, **position: Any) -> GameState:
        """Build a state from an explicit position; the fields differ per game.

        Raises:
            PositionError: the position is inconsistent; the message names the field.
        """

    @property
    def partnerships(self) -> bool:
        """Whether seats play in teams (fewer sides than seats)."""
        return len(self.sides) != self.num_players

    def side_of(self, seat: int) -> int:
        """Return the side that ``seat`` scores for."""
        for side, seats in enumerate(self.sides):
            if seat in seats:
                return side
        raise ValueError(f"seat {seat} is not in a {self.num_players}-player game")

    def describe(self) -> str:
        """Return e.g. ``"Passing Game, 4 players in partnerships, to 61"``."""
        teams = " in partnerships" if self.partnerships else ""
        return f"{self.title}, {self.num_players} players{teams}, to {self.target}"


@dataclass(frozen=True, slots=True)
class Observation:
    """What one seat may see of a state (docs/rules.md "What each player sees").

    Each game extends this with its public layout. Nothing here or in a subclass may hold
    another seat's tiles, the boneyard's order or the widow.
    """

    game: Game
    seat: int
    """The observing seat, or ``SPECTATOR`` (then ``hand`` and ``legal_actions`` are empty)."""
    current_seat: int
    """Seat to move, ``CHANCE`` between hands, ``TERMINAL`` when the game is over."""
    legal_actions: tuple[Action, ...]
    """This seat's legal actions; empty unless it is this seat's turn."""
    hand: tuple[Tile, ...]
    """This seat's own tiles, sorted."""
    hand_sizes: tuple[int, ...]
    """Number of tiles in every seat's hand."""
    scores: tuple[int, ...]
    """Score of every side."""
    deal: int
    """1-based number of the current deal."""
    history: tuple[LogEntry, ...]
    """The public steps of the current deal, in order."""
    opener: int
    """The seat that opens this deal: it plays the opening tile of a line game (the starter of
    docs/rules.md 2.3 and 3.3, Doubles' holder of the highest double) or bids first in Moon
    (1.4)."""


class GameState(ABC):
    """An immutable position of a game in play, with what every game keeps.

    Subclasses keep their fields in ``__slots__`` and never assign to them after a state has been
    returned; :meth:`apply` works on a private copy. The fields here are shared by all four
    games, so the interface below is written once.
    """

    __slots__ = (
        "_deal_steps",
        "_deals",
        "_hidden_by",
        "_legal",
        "_log",
        "_public_steps",
        "deal_index",
        "game",
        "hands",
        "opener",
        "results",
        "seat",
        "seed",
        "side_scores",
        "winner",
    )

    game: Game
    seed: int
    deal_index: int
    """0-based number of the current deal, void deals included."""
    opener: int
    """The seat that opens this deal (see :attr:`Observation.opener`)."""
    seat: int
    """Seat to move, ``CHANCE`` or ``TERMINAL``."""
    hands: tuple[tuple[Tile, ...], ...]
    side_scores: tuple[int, ...]
    results: tuple[HandResult, ...]
    winner: int | None
    """The winning side once the game is over."""
    _deals: tuple[tuple[int, tuple[Tile, ...]], ...]
    """Explicit shuffles S as ``(deal index, S)`` (``from_position(deals=...)``)."""
    _legal: tuple[Action, ...] | None
    _log: tuple[Any, LogEntry] | None
    """The game's log as a linked list ``(previous, entry)``, so apply stays O(1)."""
    _deal_steps: tuple[LogEntry, ...]
    """The steps of the current deal, kept apart because every observation carries them."""
    _public_steps: tuple[LogEntry, ...]
    """With ``_hides_steps``: the same steps as a seat that took none of them may see them."""
    _hidden_by: frozenset[int]
    """With ``_hides_steps``: the seats that took a step hidden from the others this deal."""
    _builds_sorted: ClassVar[bool] = False
    """Whether :meth:`_compute_legal` already returns the canonical order, unique (no sort)."""
    _hides_steps: ClassVar[bool] = False
    """Whether some steps must be masked per viewer (Moon's discard); see :func:`public_entry`."""
    TILES: ClassVar[tuple[Tile, ...]] = DOUBLE_SIX
    """The tiles a deal shuffles (Moon plays with 22 of them)."""

    # -- the shared interface -----------------------------------------------------------------

    @property
    def current_seat(self) -> int:
        """Seat to move, ``CHANCE`` if the next step is a deal, ``TERMINAL`` if the game is over."""
        return self.seat

    @property
    def scores(self) -> tuple[int, ...]:
        """Score of every side."""
        return self.side_scores

    @property
    def deal_number(self) -> int:
        """1-based number of the current deal, void deals included."""
        return self.deal_index + 1

    @property
    def hand_results(self) -> tuple[HandResult, ...]:
        """Every deal scored so far."""
        return self.results

    def hand(self, seat: int) -> tuple[Tile, ...]:
        """Return the tiles ``seat`` holds (omniscient: the referee's view)."""
        return self.hands[seat]

    # -- what a subclass provides -------------------------------------------------------------

    @property
    @abstractmethod
    def phase(self) -> Phase:
        """Where the current deal stands."""

    @abstractmethod
    def observe(self, seat: int) -> Observation:
        """Return what ``seat`` may see, with its legal actions if it is to move; with
        ``SPECTATOR``, what a viewer without a seat may see (no tile of any hand)."""

    @abstractmethod
    def outcome(self) -> Outcome | None:
        """Return the result once the game is over, else None."""

    @abstractmethod
    def _compute_legal(self) -> list[Action]:
        """Return the legal actions in any order (the base sorts and caches them)."""

    @abstractmethod
    def _why_illegal(self, action: Action) -> str:
        """Name the rule that forbids ``action`` here (it is known to be illegal)."""

    @abstractmethod
    def _next(self, action: Action) -> Self:
        """Return the state after the legal ``action`` (log entry not yet added)."""

    @abstractmethod
    def _deal_next(self) -> None:
        """Deal the next hand into this private state, moving the opener on by one seat."""

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def _blank(cls, game: Game, seed: int) -> Self:
        """Return a state with no deal yet: scores at zero, no hand scored, an empty log."""
        state = cls.__new__(cls)
        state.game = game
        state._legal = None
        state._log = None
        state._deal_steps = state._public_steps = ()
        state._hidden_by = frozenset()
        state._deals = ()
        state.seed = seed
        state.side_scores = (0,) * len(game.sides)
        state.results = ()
        state.winner = None
        return state

    @classmethod
    def _initial(cls, game: Game, seed: int, first: int | None) -> Self:
        """Deal the first hand of a game; ``first`` opens it (random from the seed if None)."""
        state = cls._blank(game, seed)
        players = game.num_players
        start = first_seat(seed, players) if first is None else first
        if not 0 <= start < players:
            raise PositionError(f"first_seat {first} is not a seat of a {players}-player game")
        # _deal_next moves the opener on by one for every deal, so begin one behind.
        state.opener = (start - 1) % players
        state.deal_index = -1
        state._deal_next()
        return state

    def _shuffle(self) -> list[Tile]:
        """Return the shuffle S of the current deal: given explicitly, or from the seed (0.3)."""
        for index, order in self._deals:
            if index == self.deal_index:
                return list(order)
        return shuffled(self.TILES, self.seed, self.deal_index)

    def _later_deals(self, deals: Sequence[str | Sequence[str | Tile]] | None) -> None:
        """Take the explicit shuffles of the deals after this one (``from_position(deals=...)``).

        Each is the shuffled sequence S of docs/rules.md 0.3, every tile of the game once, dealt
        round-robin from seat 0; deals past the list are shuffled from the seed as usual.
        """
        if not deals:
            return
        if isinstance(deals, str):
            raise PositionError("deals: expected a list of shuffles, got one text")
        wanted = sorted(self.TILES)
        given: list[tuple[int, tuple[Tile, ...]]] = []
        for k, order in enumerate(deals):
            where = f"deals[{k}]"
            tiles = parse_tiles(order, where)
            if sorted(tiles) != wanted:
                raise PositionError(
                    f"{where}: a shuffle holds each of the {len(wanted)} tiles of the game once, "
                    f"got {len(tiles)} tiles with {len(set(tiles))} different"
                )
            given.append((self.deal_index + 1 + k, tiles))
        self._deals = tuple(given)

    # -- shared behaviour ---------------------------------------------------------------------

    def is_terminal(self) -> bool:
        return self.current_seat == TERMINAL

    def is_chance(self) -> bool:
        return self.current_seat == CHANCE

    def legal_actions(self) -> tuple[Action, ...]:
        """Return the legal actions of the seat to move: sorted, unique, empty only at the end."""
        legal = self._legal
        if legal is None:
            actions = self._compute_legal()
            legal = self._legal = tuple(actions) if self._builds_sorted else sort_actions(actions)
        return legal

    def apply(self, action: Action) -> Self:
        """Return the state after ``action``; this state is left unchanged.

        Raises:
            GameOverError: the game has ended.
            IllegalActionError: ``action`` is not legal here; the message names the rule and
                lists the legal actions.
        """
        seat = self.seat
        legal = self._legal
        if legal is None:
            legal = self.legal_actions()
        # Engines and bots pass the listed objects back: look for the same object before
        # comparing values (a dataclass __eq__ is a Python call per action it passes).
        for listed in legal:
            if listed is action:
                break
        else:
            if seat == TERMINAL:
                raise GameOverError(f"cannot apply '{action}': the game is over")
            if action not in legal:
                raise IllegalActionError(
                    str(action), self._why_illegal(action), tuple(str(a) for a in legal)
                )
        after = self._next(action)
        entry = _new_entry(seat, action)
        after._legal = None
        after._log = (self._log, entry)
        if seat == CHANCE:
            after._deal_steps = after._public_steps = ()
            after._hidden_by = _NOBODY
        else:
            after._deal_steps = (*self._deal_steps, entry)
            if self._hides_steps:
                public = public_entry(entry, CHANCE) if isinstance(action, Discard) else entry
                after._public_steps = (*self._public_steps, public)
                if public is not entry:
                    after._hidden_by = self._hidden_by | {seat}
        return after

    @property
    def history(self) -> tuple[LogEntry, ...]:
        """Every step of the game so far, deals included."""
        entries: list[LogEntry] = []
        node = self._log
        while node is not None:
            node, entry = node
            entries.append(entry)
        entries.reverse()
        return tuple(entries)

    def deal_history(self, viewer: int) -> tuple[LogEntry, ...]:
        """Return the public steps of the current deal as ``viewer`` may see them."""
        hidden_by = self._hidden_by if self._hides_steps else None
        if not hidden_by or hidden_by == {viewer}:
            return self._deal_steps
        if viewer not in hidden_by:
            return self._public_steps
        return tuple(public_entry(entry, viewer) for entry in self._deal_steps)

    def _clone(self) -> Self:
        """Return a shallow copy to be changed by :meth:`_next` before anyone else sees it.

        Every slot is assigned by name, here and in :meth:`_copy_own` (a test checks that each
        is): several times faster than ``copy.copy``, which goes through ``__reduce_ex__``.
        """
        copy = new_object(type(self))
        copy.game = self.game
        copy.seed = self.seed
        copy.deal_index = self.deal_index
        copy.opener = self.opener
        copy.seat = self.seat
        copy.hands = self.hands
        copy.side_scores = self.side_scores
        copy.results = self.results
        copy.winner = self.winner
        copy._deals = self._deals
        copy._legal = self._legal
        copy._log = self._log
        copy._deal_steps = self._deal_steps
        copy._public_steps = self._public_steps
        copy._hidden_by = self._hidden_by
        self._copy_own(copy)
        return copy

    @abstractmethod
    def _copy_own(self, copy: Self) -> None:
        """Assign to ``copy`` every slot the game's state class adds to these."""

    def __str__(self) -> str:
        return f"<{self.game.describe()}, deal {self.deal_number}, to move {self.current_seat}>"


def public_entry(entry: LogEntry, viewer: int) -> LogEntry:
    """Return ``entry`` as ``viewer`` may see it: another seat's Moon discard is hidden."""
    action = entry.action
    if isinstance(action, Discard) and entry.seat != viewer and action.tile is not None:
        return LogEntry(entry.seat, Discard(None))
    return entry


_NOBODY: Final[frozenset[int]] = frozenset()
_ENTRY_SEAT: Final = slot_setter(LogEntry, "seat")
_ENTRY_ACTION: Final = slot_setter(LogEntry, "action")


def _new_entry(seat: int, action: Action) -> LogEntry:
    """``LogEntry(seat, action)`` at a third of the cost: one is made on every move."""
    entry = new_object(LogEntry)
    _ENTRY_SEAT(entry, seat)
    _ENTRY_ACTION(entry, action)
    return entry

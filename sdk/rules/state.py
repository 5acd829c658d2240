"""What every game shares: the game / state / observation split (DESIGN.md decision 4).

A :class:`Game` is immutable configuration (players, partnerships, target). It creates a
:class:`GameState` from a seed or from an explicit position. A state is immutable: it lists its
legal actions, and :meth:`GameState.apply` checks an action and returns the next state. Each seat
sees the game only through :meth:`GameState.observe`, which holds what RULES.md lets that seat
see and nothing else.

Scores are kept per *side*: a seat in individual play, a team in partnership play.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Self

from .actions import Action, Discard, sort_actions
from .errors import GameOverError, IllegalActionError
from .tiles import Tile

CHANCE: Final = -1
"""The acting seat of the ``deal`` step between hands."""

TERMINAL: Final = -2
"""``current_seat`` of a finished game."""


class HandEnd(enum.Enum):
    """How one hand (deal) ended."""

    DOMINO = "domino"
    """A player played their last tile."""
    BLOCKED = "blocked"
    """Nobody could play (and nothing useful could be drawn)."""
    PASSED_OUT = "passed-out"
    """Passing Game: every player passed in a row (RULES.md 2.6 c)."""
    TRICKS = "tricks"
    """Moon: all seven tricks were played."""
    VOID = "void"
    """A deal thrown in before any tile was played: Moon all-pass, Doubles without a double."""
    TARGET = "target"
    """Straight: a side reached the target during play; the game ended mid-hand (RULES.md S12)."""


@dataclass(frozen=True, slots=True)
class HandResult:
    """The scored result of one deal."""

    deal: int
    """1-based number of the deal in the game, void deals included."""
    end: HandEnd
    points: tuple[int, ...]
    """Points each side scored at the end of the hand (not counting Straight's in-play points)."""
    detail: str
    """One line a person can read, e.g. ``"seat 1 went out; 23 pips in other hands"``."""


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
    """What one seat may see of a state (RULES.md "What each player sees").

    Each game extends this with its public layout. Nothing here or in a subclass may hold
    another seat's tiles, the boneyard's order or the widow.
    """

    game: Game
    seat: int
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


class GameState(ABC):
    """An immutable position of a game in play.

    Subclasses keep their fields in ``__slots__`` and never assign to them after a state has been
    returned; :meth:`apply` works on a private copy.
    """

    __slots__ = ("_deal_steps", "_hidden_by", "_legal", "_log", "_public_steps", "game")

    game: Game
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

    # -- what a subclass provides -------------------------------------------------------------

    @property
    @abstractmethod
    def current_seat(self) -> int:
        """Seat to move, ``CHANCE`` if the next step is a deal, ``TERMINAL`` if the game is over."""

    @property
    @abstractmethod
    def scores(self) -> tuple[int, ...]:
        """Score of every side."""

    @property
    @abstractmethod
    def deal_number(self) -> int:
        """1-based number of the current deal, void deals included."""

    @property
    @abstractmethod
    def hand_results(self) -> tuple[HandResult, ...]:
        """Every deal scored so far."""

    @abstractmethod
    def hand(self, seat: int) -> tuple[Tile, ...]:
        """Return the tiles ``seat`` holds (omniscient: the referee's view)."""

    @abstractmethod
    def observe(self, seat: int) -> Observation:
        """Return what ``seat`` may see, with its legal actions if it is to move."""

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
            legal = tuple(actions) if self._builds_sorted else sort_actions(actions)
            self._legal = legal
        return legal

    def apply(self, action: Action) -> Self:
        """Return the state after ``action``; this state is left unchanged.

        Raises:
            GameOverError: the game has ended.
            IllegalActionError: ``action`` is not legal here; the message names the rule and
                lists the legal actions.
        """
        seat = self.current_seat
        if seat == TERMINAL:
            raise GameOverError(f"cannot apply '{action}': the game is over")
        if action not in self.legal_actions():
            raise IllegalActionError(
                str(action), self._why_illegal(action), tuple(str(a) for a in self.legal_actions())
            )
        after = self._next(action)
        entry = LogEntry(seat, action)
        after._legal = None
        after._log = (self._log, entry)
        if seat == CHANCE:
            after._deal_steps = after._public_steps = ()
            after._hidden_by = frozenset()
        else:
            after._deal_steps = (*self._deal_steps, entry)
            if self._hides_steps:
                public = public_entry(entry, CHANCE)
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
        """Return a shallow copy to be changed by :meth:`_next` before anyone else sees it."""
        cls = type(self)
        try:
            cloner = _CLONERS[cls]
        except KeyError:
            cloner = _CLONERS[cls] = _make_cloner(cls)
        copied: Self = cloner(self)
        return copied

    def __str__(self) -> str:
        return f"<{self.game.describe()}, deal {self.deal_number}, to move {self.current_seat}>"


def public_entry(entry: LogEntry, viewer: int) -> LogEntry:
    """Return ``entry`` as ``viewer`` may see it: another seat's Moon discard is hidden."""
    action = entry.action
    if isinstance(action, Discard) and entry.seat != viewer and action.tile is not None:
        return LogEntry(entry.seat, Discard(None))
    return entry


_CLONERS: dict[type, Callable[[Any], Any]] = {}


def _make_cloner(cls: type) -> Callable[[Any], Any]:
    """Compile a copy function that assigns every slot by name.

    ``apply`` copies a state on every move; one straight-line function per state class (as
    ``dataclasses`` generates its methods) is several times faster than a loop over the slots.
    """
    names = _all_slots(cls)
    body = "\n".join(f"    copy.{name} = self.{name}" for name in names)
    source = f"def clone(self):\n    copy = new(cls)\n{body}\n    return copy\n"
    namespace: dict[str, Any] = {"new": object.__new__, "cls": cls}
    exec(source, namespace)
    cloner: Callable[[Any], Any] = namespace["clone"]
    return cloner


def _all_slots(cls: type) -> tuple[str, ...]:
    names: list[str] = []
    for klass in cls.__mro__:
        for name in klass.__dict__.get("__slots__", ()):
            if name not in names:
                names.append(name)
    return tuple(names)

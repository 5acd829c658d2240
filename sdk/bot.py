"""The one interface every player implements: in-process house bots and remote SDK bots alike.

A bot sees the game only through :class:`~domino_arena.sdk.rules.Observation` values, which hold
its legal actions, and answers with one of them.

>>> class FirstLegal(Bot):
...     def choose(self, observation: Observation) -> Action:
...         return observation.legal_actions[0]

Two flavours share the same hooks:

- :class:`Bot`: ``choose`` is a plain method. A remote bot's ``choose`` runs in a worker thread,
  so a long think never stops the connection from serving the bot's other matches.
- :class:`AsyncBot`: ``choose`` and the hooks are coroutines, awaited on the event loop (for bots
  that call other services, or that do their own scheduling).

The hooks are optional and receive the SDK's own value types defined here
(:class:`MatchStartInfo`, :class:`MatchEvent`, :class:`HandEndInfo`, :class:`FaultInfo`,
:class:`MatchEndInfo`); they never see protobuf messages. Every one of them carries its
``match_id``, so one bot object may follow several matches at once.

How a match ended, what a fault was and the fault policy are the enums of
:mod:`domino_arena.sdk.match.results` (:class:`~.match.results.Termination`,
:class:`~.match.results.FaultKind`, :class:`~.match.results.FaultPolicy`). They are
:class:`enum.StrEnum` values, so ``info.kind == "timeout"`` still holds. A value the referee
left unspecified on the wire (the proto's ``..._UNSPECIFIED``, which a correct referee never
sends) arrives as None.
"""

from __future__ import annotations

import contextvars
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar, TypeAlias

from .match.results import FaultKind, FaultPolicy, Termination
from .rules import Action, Game, HandResult, LogEntry, Observation, Outcome


@dataclass(frozen=True, slots=True)
class TimeLimits:
    """A match's time control, in milliseconds (docs/referee.md: time control)."""

    move_ms: int
    """Time for each move before the bank is touched."""
    bank_ms: int
    """Extra time for the whole match, drawn on when a move overruns."""
    grace_ms: int
    """The referee's allowance for the network; never counted as thinking time."""


@dataclass(frozen=True, slots=True)
class MatchStartInfo:
    """A match this bot is seated in has started, or resumed after a reconnection."""

    match_id: str
    game: Game
    seat: int
    partners: tuple[int, ...]
    """The other seats on this seat's side (empty in individual play)."""
    players: tuple[str, ...]
    """The bot name in each seat."""
    time_limits: TimeLimits
    """All zeros in local play, which is untimed."""
    fault_policy: FaultPolicy
    """Local play without a fault policy reports ``forfeit``: a bad answer ends the game."""
    max_strikes: int
    resumed: bool = False
    """True when the bot reconnected: ``snapshot`` is the position now."""
    snapshot: Observation | None = None
    bot_seed: int | None = None
    """This seat's own random seed for the match, the same on every replay of it (fixed by
    the match's seed and the seat; it tells nothing of the deal). Seed the bot's randomness
    with it, ``self.rng = random.Random(info.bot_seed)``, and its play is reproducible
    whichever process plays the match and in whatever order its matches come. None from a
    referee that sends none."""
    people: tuple[bool, ...] = ()
    """Per seat: a person plays it, through the referee's web face (its name in ``players`` is
    ``person:NAME``). Empty from a referee that sends none, and in local play."""


@dataclass(frozen=True, slots=True)
class MatchEvent:
    """One step of a match as this seat may see it (another seat's Moon discard is hidden)."""

    match_id: str
    step: LogEntry
    """Who acted (``CHANCE`` = -1 for a deal) and what they did."""
    scores: tuple[int, ...]
    """Every side's score after the step."""
    deal: int


@dataclass(frozen=True, slots=True)
class HandEndInfo:
    """One hand (deal) of a match was scored."""

    match_id: str
    result: HandResult
    scores: tuple[int, ...]
    """Every side's score after the hand."""


@dataclass(frozen=True, slots=True)
class FaultInfo:
    """A fault the referee charged to this bot, and what its fault policy did about it."""

    match_id: str
    turn: int
    kind: FaultKind | None
    """None when the referee did not say (the proto's ``FAULT_KIND_UNSPECIFIED``)."""
    reason: str
    """The referee's words, e.g. which rule an illegal action broke."""
    strikes: int
    """Strikes so far in this match."""
    forfeited: bool


@dataclass(frozen=True, slots=True)
class MatchEndInfo:
    """The end of a match: its result as the referee decided it."""

    match_id: str
    seat: int
    """This bot's seat in the match; -1 when the match was never started on this connection."""
    termination: Termination | None
    """None when the referee did not say (the proto's ``TERMINATION_UNSPECIFIED``)."""
    winner: int | None
    """The winning side; None when nobody won (void, aborted)."""
    scores: tuple[int, ...]
    side_of_seat: tuple[int, ...]
    faulted_seat: int | None
    fault: FaultKind | None
    detail: str
    outcome: Outcome | None = None
    """The rules' outcome when the game was played to its end (termination ``normal``)."""


@dataclass(frozen=True, slots=True)
class Clock:
    """The time the referee gave this bot for the move it is choosing now."""

    move_ms: int
    """Time for this move before the bank is touched."""
    bank_ms: int
    """Bank left in the match."""
    received: float = field(default_factory=time.monotonic)
    """``time.monotonic()`` when the request arrived."""

    def remaining(self, now: float | None = None, *, use_bank: bool = False) -> float:
        """Seconds left before the move time (or, with ``use_bank``, the bank too) runs out."""
        budget = self.move_ms + (self.bank_ms if use_bank else 0)
        elapsed = (time.monotonic() if now is None else now) - self.received
        return max(0.0, budget / 1000.0 - elapsed)


_CLOCK: contextvars.ContextVar[Clock | None] = contextvars.ContextVar(
    "domino_arena_clock", default=None
)


def current_clock() -> Clock | None:
    """Return the clock of the request being answered, inside ``choose``; None in local play.

    ``choose`` takes only the observation, so a bot that budgets its thinking reads the
    referee's clock here (it follows ``choose`` into the worker thread).
    """
    return _CLOCK.get()


def set_current_clock(clock: Clock | None) -> contextvars.Token[Clock | None]:
    """Make ``clock`` what :func:`current_clock` returns in this context (the client's job)."""
    return _CLOCK.set(clock)


class Bot(ABC):
    """A player. Subclasses implement :meth:`choose`; the hooks are optional.

    Local play (:mod:`.local`) and the remote client call the same hooks: ``on_match_start``,
    ``on_event``, ``on_hand_end``, ``on_fault`` and ``on_match_end``. By default
    ``on_match_start`` and ``on_match_end`` call the simple ``on_game_start`` /
    ``on_game_end``, so a bot overrides whichever pair it likes. A remote bot's hooks run on
    the client's event loop: keep them quick, think in ``choose``.
    """

    name: str = "bot"

    threaded: ClassVar[bool] = True
    """Remote play runs ``choose`` in a worker thread. Set False for a bot that answers in
    microseconds, to save a thread switch per move; a slow ``choose`` then stalls every other
    match on the connection."""

    @abstractmethod
    def choose(self, observation: Observation) -> Action:
        """Return one of ``observation.legal_actions``."""

    def on_game_start(self, game: Game, seat: int) -> None:  # noqa: B027 - optional hook
        """Called once before the first request of a game (again if a remote match resumes)."""

    def on_game_end(self, outcome: Outcome, seat: int) -> None:  # noqa: B027 - optional hook
        """Called once when the game is over."""

    def on_match_start(self, info: MatchStartInfo) -> None:
        """A match started or resumed; calls :meth:`on_game_start` by default."""
        self.on_game_start(info.game, info.seat)

    def on_event(self, event: MatchEvent) -> None:  # noqa: B027 - optional hook
        """A step of a match happened (every seat's, this bot's own included)."""

    def on_hand_end(self, hand: HandEndInfo) -> None:  # noqa: B027 - optional hook
        """A hand of a match was scored."""

    def on_fault(self, fault: FaultInfo) -> None:  # noqa: B027 - optional hook
        """The referee charged a fault to this bot (a timeout, an illegal or malformed answer,
        or a bot error: its ``choose`` raised)."""

    def on_match_end(self, result: MatchEndInfo) -> None:
        """A match ended; calls :meth:`on_game_end` when a side won (by the rules or a forfeit)."""
        if result.outcome is not None:
            self.on_game_end(result.outcome, result.seat)


class AsyncBot(ABC):
    """A player whose ``choose`` and hooks are coroutines, awaited on the client's event loop.

    Never block in them (no ``time.sleep``, no CPU-heavy loops): every match on the connection
    shares the loop. Use :class:`Bot` for a bot that computes.
    """

    name: str = "bot"

    @abstractmethod
    async def choose(self, observation: Observation) -> Action:
        """Return one of ``observation.legal_actions``."""

    async def on_match_start(self, info: MatchStartInfo) -> None:  # noqa: B027 - optional hook
        """A match started or resumed."""

    async def on_event(self, event: MatchEvent) -> None:  # noqa: B027 - optional hook
        """A step of a match happened."""

    async def on_hand_end(self, hand: HandEndInfo) -> None:  # noqa: B027 - optional hook
        """A hand of a match was scored."""

    async def on_fault(self, fault: FaultInfo) -> None:  # noqa: B027 - optional hook
        """The referee charged a fault to this bot."""

    async def on_match_end(self, result: MatchEndInfo) -> None:  # noqa: B027 - optional hook
        """A match ended."""


AnyBot: TypeAlias = Bot | AsyncBot
"""Either flavour of player."""

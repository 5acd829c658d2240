"""The referee's view of a player: a :class:`Seat` (a remote bot's gRPC stream, or a test double).

The referee (:mod:`.referee`) drives a match only through this interface (cutechess's player
split); in-process bots are played by the match core's synchronous driver,
:mod:`domino_arena.sdk.local`, instead. A seat sends what the referee gives it and returns what
the bot answered; it never judges legality or time: the referee's match core does both, with the
rules engine and the time the referee measured. The notices a seat receives (a fault, the
result) are the core's own types, from :mod:`domino_arena.sdk.match`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from domino_arena.sdk.match.bot_errors import BotError
from domino_arena.sdk.match.notices import FaultNotice
from domino_arena.sdk.match.results import FaultPolicy, MatchResult
from domino_arena.sdk.rules import Action, Game, HandResult, LogEntry, Observation
from domino_arena.server.play.timecontrol import TimeControl


@dataclass(frozen=True, slots=True)
class MatchInfo:
    """What a seat is told when a match starts (or resumes)."""

    match_id: str
    game: Game
    seat: int
    players: tuple[str, ...]
    """The name of the bot in each seat."""
    time_control: TimeControl
    fault_policy: FaultPolicy
    max_strikes: int
    bot_seed: int | None = None
    """The seat's own random seed for the match (``sdk/match/seeds.py``: ``bot_seed``); None
    sends none."""


@dataclass(frozen=True, slots=True)
class Malformed:
    """A reply the seat could not turn into an action; ``reason`` says what was wrong."""

    reason: str


Reply = Action | Malformed | BotError
"""What a seat returns for a request: an action, a reply it could not read, or the error the
bot reported instead of an action (its ``choose`` raised)."""


class SeatGoneError(Exception):
    """The seat's bot is not connected (it dropped, or never was); the referee may wait."""


class Seat(Protocol):
    """One player of one match, as the referee drives it.

    Every method but :meth:`request` and :meth:`reconnected` returns promptly: sends are queued,
    so a slow bot never stalls the referee. All methods may raise :class:`SeatGoneError`.
    """

    name: str

    async def start(self, info: MatchInfo, snapshot: Observation | None) -> None:
        """Tell the bot its match started; ``snapshot`` is set when it resumes after a drop."""

    async def request(self, turn: int, observation: Observation, move: float, bank: float) -> Reply:
        """Ask for the action of ``turn`` and return the reply for that turn.

        Replies for other turns are dropped here. The referee cancels this call at its
        deadline; it must be safe to cancel.
        """

    async def event(self, step: LogEntry, scores: tuple[int, ...], deal: int) -> None:
        """Tell the bot a step happened (``step`` is already as this seat may see it)."""

    async def hand_end(self, result: HandResult, scores: tuple[int, ...]) -> None:
        """Tell the bot a hand ended."""

    async def fault(self, notice: FaultNotice) -> None:
        """Tell the bot a fault was charged to it."""

    async def finish(self, result: MatchResult) -> None:
        """Tell the bot the match ended."""

    async def reconnected(self) -> None:
        """Return once the bot is connected again (the referee bounds the wait)."""


@runtime_checkable
class QueuedEvents(Protocol):
    """A seat that only keeps each step for its next message (a remote bot's, protocol 2).

    Its ``queue_event`` is :meth:`Seat.event` as a plain call: it never blocks, never raises
    and never yields, so the referee calls it directly for every seat of every step instead of
    creating and awaiting a coroutine for each (the most frequent notice of a match).
    """

    def queue_event(self, step: LogEntry, scores: tuple[int, ...], deal: int) -> None:
        """Keep ``step`` for the seat's next message, as :meth:`Seat.event` would."""

"""The referee's view of a player: a :class:`Seat`, remote (a gRPC stream) or local (a Bot).

The referee (:mod:`.referee`) drives a match only through this interface, so an in-process bot
and a bot across the network behave the same to it (cutechess's player split). A seat sends
what the referee gives it and returns what the bot answered; it never judges legality or time:
the referee does both, with the rules engine and its own clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from domino_arena.sdk.bot import Bot
from domino_arena.sdk.match.results import FaultKind, FaultPolicy, Termination
from domino_arena.sdk.rules import Action, Game, HandResult, LogEntry, Observation, Outcome
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


@dataclass(frozen=True, slots=True)
class Malformed:
    """A reply the seat could not turn into an action; ``reason`` says what was wrong."""

    reason: str


Reply = Action | Malformed
"""What a seat returns for a request."""


@dataclass(frozen=True, slots=True)
class FaultNotice:
    """A fault charged to a seat, as the seat is told of it."""

    turn: int
    kind: FaultKind
    reason: str
    strikes: int
    forfeited: bool


@dataclass(frozen=True, slots=True)
class MatchResult:
    """The end of a match: the rules' outcome, or how the referee ended it."""

    termination: Termination
    winner: int | None
    """The winning side, None when nobody won (void, aborted)."""
    scores: tuple[int, ...]
    faulted_seat: int | None = None
    fault: FaultKind | None = None
    detail: str = ""
    outcome: Outcome | None = None
    """The engine's outcome when the game was played to its end."""


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


class LocalSeat:
    """An in-process :class:`Bot` in a seat: no network, the same referee."""

    def __init__(self, bot: Bot, name: str | None = None) -> None:
        self.bot = bot
        self.name = name or bot.name

    async def start(self, info: MatchInfo, snapshot: Observation | None) -> None:
        if snapshot is None:
            self.bot.on_game_start(info.game, info.seat)
        self._seat = info.seat

    async def request(self, turn: int, observation: Observation, move: float, bank: float) -> Reply:
        try:
            return self.bot.choose(observation)
        except Exception as exc:  # a crashing local bot is a fault of its own, not ours
            return Malformed(f"the bot raised {type(exc).__name__}: {exc}")

    async def event(self, step: LogEntry, scores: tuple[int, ...], deal: int) -> None:
        return None

    async def hand_end(self, result: HandResult, scores: tuple[int, ...]) -> None:
        return None

    async def fault(self, notice: FaultNotice) -> None:
        return None

    async def finish(self, result: MatchResult) -> None:
        if result.outcome is not None:
            self.bot.on_game_end(result.outcome, self._seat)

    async def reconnected(self) -> None:
        return None

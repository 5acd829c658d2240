"""Fake seats for the referee: a good player and each way a bot can misbehave (docs/referee.md).

Every fake plays legal moves from a seeded :class:`RandomBot` until its misbehaviour starts, and
records every call the referee makes, so a test can check what each seat was told and when.
Time passes only through ``trio.sleep``: under ``MockClock(autojump_threshold=0)`` a bot that
thinks for an hour costs no real time.

Misbehaviour is keyed by the seat's own request count ``k`` (1 for its first request), not the
referee's turn number, so a test can say "from its third move on" without knowing the game.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import trio

from domino_arena.bots.random_bot import RandomBot
from domino_arena.sdk.bot import Bot, HandEndInfo, MatchEvent, TimeLimits
from domino_arena.sdk.local import fault_info, match_end_info, match_start_info
from domino_arena.sdk.match.notices import FaultNotice
from domino_arena.sdk.match.results import MatchResult
from domino_arena.sdk.rules import DOUBLE_SIX, HandResult, LogEntry, Observation, Play
from domino_arena.server.play.seats import MatchInfo, Reply, SeatGoneError


@dataclass(frozen=True, slots=True)
class Request:
    """One request as the seat received it."""

    k: int
    """1-based count of this seat's requests."""
    turn: int
    observation: Observation
    move: float
    bank: float
    sent: float
    """``trio.current_time()`` when the request arrived."""


class FakeSeat:
    """A good player: answers at once with a seeded random legal action."""

    def __init__(self, name: str = "good", seed: int = 0) -> None:
        self.name = name
        self.bot = RandomBot(seed)
        self.connected = True
        self.calls: list[str] = []
        """Every method the referee called, in order, delivered or not."""
        self.starts: list[tuple[MatchInfo, Observation | None]] = []
        self.requests: list[Request] = []
        self.events: list[tuple[LogEntry, tuple[int, ...], int]] = []
        self.hand_ends: list[tuple[HandResult, tuple[int, ...]]] = []
        self.faults: list[FaultNotice] = []
        self.finishes: list[MatchResult] = []
        self.replies: list[tuple[int, object]] = []
        """(turn, reply) for every reply this seat returned."""

    def _deliver(self, method: str) -> None:
        """Note the call; a seat that is not connected refuses it like a dead stream would."""
        self.calls.append(method)
        if not self.connected:
            raise SeatGoneError(f"{self.name} is not connected")

    async def start(self, info: MatchInfo, snapshot: Observation | None) -> None:
        self._deliver("start")
        self.starts.append((info, snapshot))

    async def request(self, turn: int, observation: Observation, move: float, bank: float) -> Reply:
        k = len(self.requests) + 1
        self.requests.append(Request(k, turn, observation, move, bank, trio.current_time()))
        self._deliver("request")  # a request that finds the seat gone is still listed
        reply = await self.answer(k, turn, observation)
        self.replies.append((turn, reply))
        return reply

    async def answer(self, k: int, turn: int, observation: Observation) -> Reply:
        """Return the reply to this seat's ``k``-th request; subclasses misbehave here."""
        return self.bot.choose(observation)

    async def event(self, step: LogEntry, scores: tuple[int, ...], deal: int) -> None:
        self._deliver("event")
        self.events.append((step, scores, deal))

    async def hand_end(self, result: HandResult, scores: tuple[int, ...]) -> None:
        self._deliver("hand_end")
        self.hand_ends.append((result, scores))

    async def fault(self, notice: FaultNotice) -> None:
        self._deliver("fault")
        self.faults.append(notice)

    async def finish(self, result: MatchResult) -> None:
        self._deliver("finish")
        self.finishes.append(result)

    async def reconnected(self) -> None:
        self.calls.append("reconnected")


class SlowSeat(FakeSeat):
    """Thinks ``delay`` seconds before each answer from its ``from_request``-th request on."""

    def __init__(self, delay: float, from_request: int = 1, name: str = "slow", seed: int = 0):
        super().__init__(name, seed)
        self.delay = delay
        self.from_request = from_request

    async def answer(self, k: int, turn: int, observation: Observation) -> Reply:
        if k >= self.from_request:
            await trio.sleep(self.delay)
        return self.bot.choose(observation)


class QueuedSlowSeat(SlowSeat):
    """A :class:`SlowSeat` that takes steps as plain calls (``seats.QueuedEvents``), as a
    remote bot's seat does: the referee never awaits it for an event."""

    def queue_event(self, step: LogEntry, scores: tuple[int, ...], deal: int) -> None:
        self.calls.append("queue_event")
        self.events.append((step, scores, deal))


class SilentSeat(SlowSeat):
    """Never answers from its ``from_request``-th request on (the connection stays up)."""

    def __init__(self, from_request: int = 1, name: str = "silent", seed: int = 0) -> None:
        super().__init__(math.inf, from_request, name, seed)


class IllegalSeat(FakeSeat):
    """Plays a tile it does not hold from its ``from_request``-th request on."""

    def __init__(self, from_request: int = 1, name: str = "illegal", seed: int = 0) -> None:
        super().__init__(name, seed)
        self.from_request = from_request

    async def answer(self, k: int, turn: int, observation: Observation) -> Reply:
        if k >= self.from_request:
            return Play(next(t for t in DOUBLE_SIX if t not in observation.hand))
        return self.bot.choose(observation)


class MalformedSeat(FakeSeat):
    """Answers ``reply`` (a Malformed, or anything that is not an action) from a request on."""

    def __init__(
        self, reply: object, from_request: int = 1, name: str = "malformed", seed: int = 0
    ) -> None:
        super().__init__(name, seed)
        self.bad_reply = reply
        self.from_request = from_request

    async def answer(self, k: int, turn: int, observation: Observation) -> Reply:
        if k >= self.from_request:
            # The referee must survive a seat that breaks the Reply type, so lie to mypy here.
            bad: Reply = self.bad_reply  # type: ignore[assignment]
            return bad
        return self.bot.choose(observation)


class CrashSeat(FakeSeat):
    """Its bot dies at its ``from_request``-th request (0: before the match) and never returns.

    From then on every call raises :class:`SeatGoneError` and ``reconnected`` never returns.
    """

    def __init__(self, from_request: int = 1, name: str = "crash", seed: int = 0) -> None:
        super().__init__(name, seed)
        self.from_request = from_request
        self.connected = from_request > 0

    async def request(self, turn: int, observation: Observation, move: float, bank: float) -> Reply:
        if len(self.requests) + 1 >= self.from_request:
            self.connected = False
        return await super().request(turn, observation, move, bank)

    async def reconnected(self) -> None:
        self.calls.append("reconnected")
        await trio.sleep_forever()


class ReconnectSeat(FakeSeat):
    """Drops at its ``drop_at``-th request and is back ``back_after`` seconds later.

    While it is away every call raises :class:`SeatGoneError`; the request it dropped on is
    never answered (the referee must ask again, with a new turn number). ``drop_at=0``: it is
    not connected when the match starts, and joins when the referee first waits for it.
    """

    def __init__(self, drop_at: int, back_after: float, name: str = "flaky", seed: int = 0) -> None:
        super().__init__(name, seed)
        self.drop_at = drop_at
        self.back_after = back_after
        self.dropped = drop_at == 0
        self.connected = not self.dropped
        self.dropped_at: float | None = None
        self.back_at: float | None = None

    async def request(self, turn: int, observation: Observation, move: float, bank: float) -> Reply:
        if len(self.requests) + 1 == self.drop_at and not self.dropped:
            self.dropped = True
            self.connected = False
            self.dropped_at = trio.current_time()
        return await super().request(turn, observation, move, bank)

    async def reconnected(self) -> None:
        self.calls.append("reconnected")
        if not self.connected:
            if self.dropped_at is None:  # away from the start: the clock starts when asked
                self.dropped_at = trio.current_time()
            await trio.sleep_until(self.dropped_at + self.back_after)
            self.connected = True
            self.back_at = trio.current_time()


class LateReplySeat(FakeSeat):
    """Emulates a remote seat whose bot answers its ``slow_request``-th request too late.

    Replies travel through an inbox, as over a stream: the late reply for the old turn lands
    there after the referee gave up, so at the next request the inbox holds it before the fresh
    reply. With ``drop_stale`` (the RemoteSeat contract) a reply for another turn is dropped;
    without it the seat hands the stale reply to the referee, which must still cope.
    """

    def __init__(
        self, slow_request: int, drop_stale: bool = True, name: str = "late", seed: int = 0
    ) -> None:
        super().__init__(name, seed)
        self.slow_request = slow_request
        self.drop_stale = drop_stale
        self.inbox: list[tuple[int, Reply]] = []
        self.dropped: list[tuple[int, Reply]] = []

    async def answer(self, k: int, turn: int, observation: Observation) -> Reply:
        action = self.bot.choose(observation)
        if k == self.slow_request:
            try:
                await trio.sleep_forever()
            finally:
                self.inbox.append((turn, action))  # it arrives after the deadline
        self.inbox.append((turn, action))
        while True:
            reply_turn, reply = self.inbox.pop(0)
            if reply_turn == turn or not self.drop_stale:
                return reply
            self.dropped.append((reply_turn, reply))


class EventBugSeat(FakeSeat):
    """A seat implementation with a bug: its ``at_event``-th ``event`` raises RuntimeError."""

    def __init__(self, at_event: int, name: str = "buggy", seed: int = 0) -> None:
        super().__init__(name, seed)
        self.at_event = at_event

    async def event(self, step: LogEntry, scores: tuple[int, ...], deal: int) -> None:
        await super().event(step, scores, deal)
        if len(self.events) == self.at_event:
            raise RuntimeError("bug in the seat: event")


class StuckFinishSeat(FakeSeat):
    """Plays well but never returns from ``finish`` (the referee must not wait for it)."""

    async def finish(self, result: MatchResult) -> None:
        await super().finish(result)
        await trio.sleep_forever()


class BotSeat:
    """An SDK :class:`Bot` in a referee seat, its hooks called as the remote client calls them.

    The hooks' values are built by the same functions local play uses, so a test can play one
    game through the referee and locally and compare what each bot was told.
    """

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.name = bot.name
        self.info: MatchInfo | None = None

    def _match(self) -> MatchInfo:
        assert self.info is not None, "the referee starts a seat before anything else"
        return self.info

    async def start(self, info: MatchInfo, snapshot: Observation | None) -> None:
        self.info = info
        limits = TimeLimits(*info.time_control.to_ms())
        self.bot.on_match_start(
            match_start_info(
                info.match_id,
                info.game,
                info.seat,
                info.players,
                fault_policy=info.fault_policy,
                max_strikes=info.max_strikes,
                time_limits=limits,
                snapshot=snapshot,
                bot_seed=info.bot_seed,
            )
        )

    async def request(self, turn: int, observation: Observation, move: float, bank: float) -> Reply:
        return self.bot.choose(observation)

    async def event(self, step: LogEntry, scores: tuple[int, ...], deal: int) -> None:
        self.bot.on_event(MatchEvent(self._match().match_id, step, scores, deal))

    async def hand_end(self, result: HandResult, scores: tuple[int, ...]) -> None:
        self.bot.on_hand_end(HandEndInfo(self._match().match_id, result, scores))

    async def fault(self, notice: FaultNotice) -> None:
        self.bot.on_fault(fault_info(self._match().match_id, notice))

    async def finish(self, result: MatchResult) -> None:
        info = self._match()
        self.bot.on_match_end(match_end_info(info.match_id, info.game, info.seat, result))

    async def reconnected(self) -> None:
        return None

"""Play one match over :class:`~.seats.Seat` objects: the trio driver of the match core.

What a match decides (the deals, whose decision is due, validating a reply with the rules
engine, the bank, the fault policy, the record) is the pure match core's
(:class:`~domino_arena.sdk.match.core.MatchCore`), shared with local play. This module does
what the core cannot: it talks to the seats, keeps the time, waits for reconnections and draws
the error boundary (docs/decisions.md: decisions 7-10). It never trusts a seat: a reply that is not
an action, an illegal action, silence past the deadline or a dropped connection is a fault, and
the fault policy says what it costs.

Time is kept from send to receive with ``trio.current_time()``, so tests drive it with
``trio.testing.MockClock`` and never sleep. A decision's time accumulates over the requests
it takes (a seat that drops and comes back does not get a fresh move time); the wait for a
reconnection is never charged. The deadline of a request is that of one cancel scope per
stretch of play, moved before each request, rather than a new scope per request (entering and
leaving one costs about as much as the rest of a move's bookkeeping); a deadline that passes
ends the stretch, the timeout is charged, and the next stretch begins. After a reply the
deadline is left where it is until the next request moves it, since nothing in between yields
to trio (so no deadline can act); only before the referee awaits a seat (a notice that is not
a plain call, a reconnection) is it lifted (``_disarm``). Moving a deadline costs a few
microseconds in trio, so this saves one move of it per request.

Faults (docs/referee.md: faults):

* ``forfeit``: the first fault ends the match; the faulting seat's side loses.
* ``substitute``: the referee plays a seeded random legal move for the seat, records a strike
  and tells the bot; the ``max_strikes``-th strike forfeits the seat as above.

A forfeit's winner is the other side with two sides; with three or more it is the side with the
highest score among the others, the lowest side index breaking a tie
(:func:`~domino_arena.sdk.match.records.forfeit_winner`).

The error boundary is this function: any exception that is not a seat's fault is a failure of
ours and voids the match (it is logged and charged to nobody); it never escapes to cancel other
matches in the same nursery. Cancellation (shutdown) does escape, after every seat has been told
the match was aborted, on a best-effort basis bounded by :data:`NOTICE_TIMEOUT`.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Collection, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import trio

from domino_arena.sdk.local import DEFAULT_MAX_DEALS
from domino_arena.sdk.match.bot_errors import BotError
from domino_arena.sdk.match.core import MatchCore
from domino_arena.sdk.match.decision import Decision, Request
from domino_arena.sdk.match.faults import Fault
from domino_arena.sdk.match.notices import FaultNotice, HandEndNotice, Step, StepNotice
from domino_arena.sdk.match.records import MatchRecord
from domino_arena.sdk.match.results import FaultPolicy, MatchResult, Termination
from domino_arena.sdk.match.seeds import bot_seed
from domino_arena.sdk.rules import Game
from domino_arena.server.play.seats import (
    Malformed,
    MatchInfo,
    QueuedEvents,
    Seat,
    SeatGoneError,
)
from domino_arena.server.play.timecontrol import TimeControl

log = logging.getLogger(__name__)

NOTICE_TIMEOUT: Final = 1.0
"""Seconds the referee spends telling the seats a match ended, at most (all seats at once)."""

MAX_RECONNECTS: Final = 10
"""Reconnections one decision may take; a seat that keeps dropping is then disconnected."""


@dataclass(frozen=True, slots=True)
class MatchReport:
    """What a match leaves behind: its result, its record and every fault charged."""

    result: MatchResult
    record: MatchRecord
    faults: tuple[Fault, ...]


async def play_match(
    game: Game,
    seats: Sequence[Seat],
    *,
    match_id: str,
    seed: int,
    time_control: TimeControl,
    fault_policy: FaultPolicy,
    max_strikes: int = 3,
    reconnect_grace: float = 10.0,
    absent: Collection[int] = (),
    first_seat: int | None = None,
    on_step: Callable[[Step], object] | None = None,
    max_deals: int | None = DEFAULT_MAX_DEALS,
    seat_clocks: Mapping[int, TimeControl] | None = None,
) -> MatchReport:
    """Play one match of ``game`` between ``seats`` (seat 0 first) and return its report.

    Args:
        match_id: told to every seat and written into the record.
        seed: fixes every deal, the first starter when ``first_seat`` is None, and the moves
            the referee substitutes.
        time_control: per-move time, bank and network grace (docs/referee.md: time control).
        fault_policy, max_strikes: what a fault costs (docs/referee.md: faults).
        reconnect_grace: seconds a disconnected seat has to come back, counted from when the
            referee needs it, for each decision.
        absent: seats whose bot was not connected when the match was due and was waited for
            already (a tournament's wait): they get no reconnect grace until they connect.
        on_step: called after every applied step, deals and substituted moves included.
        max_deals: the cap on deals: a game nobody has won after this many ends ADJUDICATED,
            ranked by its scores (None: no cap).
        seat_clocks: seats on another clock than ``time_control``, by seat (a person's seat:
            the course's human clock, docs/people.md); the record's header lists them.

    Returns:
        The report; ``result.termination`` is NORMAL, FORFEIT, ADJUDICATED or VOID.

    Raises:
        ValueError: the arguments do not fit the game (before anything is sent).
        trio.Cancelled: the caller cancelled; every seat was told ABORTED first.
    """
    if len(seats) != game.num_players:
        raise ValueError(f"{game.describe()} needs {game.num_players} seats, got {len(seats)}")
    if reconnect_grace < 0:
        raise ValueError(f"reconnect_grace must not be negative, got {reconnect_grace}")
    core = MatchCore(
        game,
        [seat.name for seat in seats],
        seed=seed,
        first_seat=first_seat,
        time_control=time_control,
        fault_policy=fault_policy,
        max_strikes=max_strikes,
        max_deals=max_deals,
        match_id=match_id,
        seat_clocks=seat_clocks,
    )
    match = _Match(
        core,
        seats,
        time_control=time_control,
        fault_policy=fault_policy,
        reconnect_grace=reconnect_grace,
        absent=absent,
        on_step=on_step,
    )
    try:
        result = await match.run()
    except Exception as exc:
        log.exception("match %s: referee failure, the match is void", match_id)
        result = core.stop(
            Termination.VOID, f"void: the referee failed ({type(exc).__name__}: {exc})"
        )
    except BaseException:
        aborted = core.stop(
            Termination.ABORTED, "aborted: the referee stopped the match before its end"
        )
        await match.tell_finish(aborted, shield=True)
        raise
    await match.tell_finish(result, shield=False)
    header: dict[str, Any] = _clock_header(time_control)
    if seat_clocks:
        header["seats"] = {str(seat): _clock_header(c) for seat, c in sorted(seat_clocks.items())}
    record = core.record(time_control=header)
    return MatchReport(result, record, core.faults)


def _clock_of(core: MatchCore, seat: int, default: TimeControl) -> TimeControl:
    """The clock ``seat`` plays on (a seat clock of the core's, else ``default``)."""
    clock = core.clocks[seat]
    return clock if isinstance(clock, TimeControl) else default


def _clock_header(clock: TimeControl) -> dict[str, Any]:
    """A clock as the record's header writes it."""
    return dict(zip(("move_ms", "bank_ms", "grace_ms"), clock.to_ms(), strict=True))


class _Match:
    """The I/O side of one match: the seats, the deadlines, the waits; :func:`play_match` is
    its only user, and the core holds everything else.
    """

    def __init__(
        self,
        core: MatchCore,
        seats: Sequence[Seat],
        *,
        time_control: TimeControl,
        fault_policy: FaultPolicy,
        reconnect_grace: float,
        absent: Collection[int],
        on_step: Callable[[Step], object] | None,
    ) -> None:
        self.core = core
        self.seats = tuple(seats)
        self.clock = time_control
        self.policy = fault_policy
        self.reconnect_grace = reconnect_grace
        self.absent = set(absent)
        """Seats with no reconnect grace: absent when the match was due, not back since."""
        self.on_step = on_step
        self.queue_event = [
            seat.queue_event if isinstance(seat, QueuedEvents) else None for seat in seats
        ]
        """Each seat's plain call for a step (:class:`~.seats.QueuedEvents`), or None."""
        self.gone = [False] * len(seats)
        """The seat raised SeatGoneError and has not been restarted since."""
        self.missed: list[list[FaultNotice]] = [[] for _ in seats]
        """Fault notices a seat was away for; it gets them when it is back."""
        self.timer = trio.CancelScope()
        """The scope of the current stretch of play; its deadline is the pending request's."""
        self.waiting: tuple[Request, float] | None = None
        """The request a seat is answering and when it was sent, for the timeout."""

    # -- the match ----------------------------------------------------------------------------

    async def run(self) -> MatchResult:
        for seat, player in enumerate(self.seats):
            await self._tell(seat, player.start(self._info(seat), None))
        self.absent = {seat for seat in self.absent if self.gone[seat]}
        while True:
            with trio.CancelScope() as self.timer:
                await self._play()
            if not self.timer.cancelled_caught:
                result = self.core.result
                assert result is not None
                return result
            await self._timed_out()

    async def _timed_out(self) -> None:
        """Charge the timeout of the request whose deadline ended the last stretch of play."""
        assert self.waiting is not None
        request, sent = self.waiting
        self.waiting = None
        self._log(self.core.timeout(request.turn, trio.current_time() - sent))
        await self._deliver()

    async def _play(self) -> None:
        """Play until the end, a forfeit, or a deadline that passes (it cancels ``timer``)."""
        core = self.core
        while (decision := core.next_decision()) is not None:
            await self._deliver()
            await self._decide(decision)
        await self._deliver()

    async def _decide(self, decision: Decision) -> None:
        """Get the decision of ``decision.seat`` from its seat and hand it to the core."""
        core = self.core
        seat = decision.seat
        player = self.seats[seat]
        grace = 0.0 if seat in self.absent else self.reconnect_grace
        grace_left = grace
        reconnects = 0
        while True:
            if self.gone[seat]:
                self._disarm()
                if reconnects == MAX_RECONNECTS:
                    reason = f"dropped {reconnects + 1} times during one decision"
                    self._log(core.disconnected(reason))
                    break
                reconnects += 1
                waited_from = trio.current_time()
                back = False
                with trio.move_on_after(grace_left):
                    await player.reconnected()
                    back = True
                grace_left -= trio.current_time() - waited_from
                if not back:
                    reason = f"disconnected, and not back within {grace:g} s"
                    self._log(core.disconnected(reason))
                    break
                try:
                    await player.start(self._info(seat), decision.observation)
                except SeatGoneError:
                    continue
                self.gone[seat] = False
                self.absent.discard(seat)
                missed, self.missed[seat] = self.missed[seat], []
                for notice in missed:
                    await self._tell_fault(seat, notice)
            request = core.request()
            sent = trio.current_time()
            reply: object = None
            self.waiting = (request, sent)
            timer = self.timer
            timer.deadline = sent + request.limit
            try:
                reply = await player.request(
                    request.turn, decision.observation, request.move_left, request.bank_left
                )
            except SeatGoneError:
                self.gone[seat] = True
            # The deadline stays until the next request moves it (see the module's docstring).
            if timer.cancel_called:  # the deadline passed as the reply came: it is late
                await trio.lowlevel.checkpoint()  # raises Cancelled, caught by ``run``
            self.waiting = None
            seconds = trio.current_time() - sent
            if self.gone[seat]:
                core.dropped(request.turn, seconds)
                continue
            if isinstance(reply, Malformed):
                self._log(core.malformed(request.turn, reply.reason, seconds))
            elif isinstance(reply, BotError):
                self._log(core.bot_error(request.turn, reply, seconds))
            else:
                self._log(core.reply(request.turn, reply, seconds))
            break
        await self._deliver()

    async def _deliver(self) -> None:
        """Tell the seats what the core queued, in order, and report its steps to ``on_step``."""
        for item in self.core.take():
            if isinstance(item, Step):
                if self.on_step is not None:
                    self.on_step(item)
                continue
            seat, notice = item
            player = self.seats[seat]
            if isinstance(notice, StepNotice):
                queue = self.queue_event[seat]
                if queue is None:
                    await self._tell(seat, player.event(notice.step, notice.scores, notice.deal))
                elif not self.gone[seat]:  # as _tell: a seat that is gone misses it
                    queue(notice.step, notice.scores, notice.deal)
            elif isinstance(notice, HandEndNotice):
                await self._tell(seat, player.hand_end(notice.result, notice.scores))
            else:
                await self._tell_fault(seat, notice)

    async def _tell(self, seat: int, notice: Coroutine[Any, Any, None]) -> None:
        """Await a notice to ``seat``; a seat that is gone misses it (it gets a snapshot later)."""
        if self.gone[seat]:
            notice.close()
            return
        self._disarm()
        try:
            await notice
        except SeatGoneError:
            self.gone[seat] = True

    async def _tell_fault(self, seat: int, notice: FaultNotice) -> None:
        """Tell ``seat`` of a fault now, or when it is back if it is away."""
        await self._tell(seat, self.seats[seat].fault(notice))
        if self.gone[seat]:
            self.missed[seat].append(notice)

    def _disarm(self) -> None:
        """Lift the last request's deadline before the referee awaits a seat: the await may
        yield to trio, and a deadline left from an answered request must not cancel it."""
        timer = self.timer
        if timer.deadline != math.inf:
            timer.deadline = math.inf

    def _log(self, fault: Fault | None) -> None:
        if fault is not None:
            log.info(
                "match %s: seat %d (%s) %s at turn %d (strike %d%s): %s",
                self.core.match_id,
                fault.seat,
                self.core.names[fault.seat],
                fault.kind.label,
                fault.turn,
                fault.strikes,
                ", forfeited" if fault.forfeited else "",
                fault.reason,
            )

    def _info(self, seat: int) -> MatchInfo:
        core = self.core
        return MatchInfo(
            core.match_id or "",
            core.game,
            seat,
            core.names,
            _clock_of(core, seat, self.clock),
            self.policy,
            core.max_strikes,
            bot_seed(core.seed, seat),
        )

    # -- the end ------------------------------------------------------------------------------

    async def tell_finish(self, result: MatchResult, *, shield: bool) -> None:
        """Tell every seat the match ended, all at once, for at most :data:`NOTICE_TIMEOUT`.

        Best effort: a seat that is gone, fails or blocks is logged and skipped, because the
        result stands whatever a seat does with the news.
        """
        match_id = self.core.match_id

        async def tell(seat: int) -> None:
            try:
                await self.seats[seat].finish(result)
            except SeatGoneError:
                pass
            except Exception:
                log.exception("match %s: telling seat %d the end failed", match_id, seat)

        with trio.move_on_after(NOTICE_TIMEOUT, shield=shield) as scope:
            async with trio.open_nursery() as nursery:
                for seat in range(len(self.seats)):
                    nursery.start_soon(tell, seat)
        if scope.cancelled_caught:
            log.warning(
                "match %s: a seat did not take the end within %gs", match_id, NOTICE_TIMEOUT
            )

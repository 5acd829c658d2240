"""A :class:`~.seats.Seat` played by a bot across the network, over its ``Play`` stream.

The referee drives a :class:`RemoteSeat` exactly as it drives a local one. The seat turns each
call into a protocol message (through :mod:`domino_arena.sdk.wire.convert`, the one translation
layer) and queues it on the bot's current :class:`~.lobby.Connection`; :meth:`RemoteSeat.request`
then waits for the reply that echoes the request's turn. Replies reach the seat through its own
inbox (:class:`_Inbox`), so waiting is cancel-safe: the referee's deadline never loses a message.

A step is not sent on its own: :meth:`RemoteSeat.event` keeps it, and the seat's next message
about the match (a request, a hand end, a fault or the match end) carries every kept event in
its ``events`` field, so a move costs one message each way (protocol version 2). A request's
observation leaves out the deal's history, which the bot keeps from those events; a resumed
seat gets a whole snapshot instead, and the events it missed are dropped.

One stream serves many matches: the connection routes each reply by its match id. A reply for
another turn (a late answer after a timeout) is dropped here. When the stream dies the seat
raises :class:`~.seats.SeatGoneError` from the pending or next request; :meth:`reconnected`
waits for the bot's next stream, and the referee's next :meth:`start` (with a snapshot) binds
the seat to it.
"""

from __future__ import annotations

import collections
import logging
from typing import Final

import outcome
import trio

from domino_arena.sdk.match.notices import FaultNotice
from domino_arena.sdk.match.results import FaultKind, FaultPolicy, MatchResult, Termination
from domino_arena.sdk.rules import HandResult, LogEntry, Observation
from domino_arena.sdk.wire.convert import (
    ConversionError,
    action_from_proto,
    event_to_proto,
    game_to_proto,
    hand_result_to_proto,
    observation_to_proto,
)
from domino_arena.server.net.lobby import Connection, Lobby
from domino_arena.server.play.seats import Malformed, MatchInfo, Reply, SeatGoneError
from domino_arena.v1 import referee_pb2 as pb

LOG: Final = logging.getLogger("domino_arena.server")

_Item = tuple[Connection, pb.ActionReply | None]
"""What reaches a seat: a reply, or None when that connection closed."""

FAULT_KIND_TO_PROTO: Final[dict[FaultKind, pb.FaultKind.ValueType]] = {
    FaultKind.TIMEOUT: pb.FAULT_KIND_TIMEOUT,
    FaultKind.ILLEGAL: pb.FAULT_KIND_ILLEGAL,
    FaultKind.MALFORMED: pb.FAULT_KIND_MALFORMED,
    FaultKind.DISCONNECTED: pb.FAULT_KIND_DISCONNECTED,
}

FAULT_POLICY_TO_PROTO: Final[dict[FaultPolicy, pb.FaultPolicy.ValueType]] = {
    FaultPolicy.FORFEIT: pb.FAULT_POLICY_FORFEIT,
    FaultPolicy.SUBSTITUTE: pb.FAULT_POLICY_SUBSTITUTE,
}

TERMINATION_TO_PROTO: Final[dict[Termination, pb.Termination.ValueType]] = {
    Termination.NORMAL: pb.TERMINATION_NORMAL,
    Termination.FORFEIT: pb.TERMINATION_FORFEIT,
    Termination.VOID: pb.TERMINATION_VOID,
    Termination.ABORTED: pb.TERMINATION_ABORTED,
}


def result_to_proto(result: MatchResult, side_of_seat: tuple[int, ...]) -> pb.MatchResult:
    """Return the protocol form of a match result; ``side_of_seat`` is the game's seat -> side."""
    return pb.MatchResult(
        termination=TERMINATION_TO_PROTO[result.termination],
        winner=-1 if result.winner is None else result.winner,
        scores=result.scores,
        side_of_seat=side_of_seat,
        faulted_seat=-1 if result.faulted_seat is None else result.faulted_seat,
        fault=pb.FAULT_KIND_UNSPECIFIED
        if result.fault is None
        else FAULT_KIND_TO_PROTO[result.fault],
        detail=result.detail,
    )


class RemoteSeat:
    """The seat of the bot ``name`` in the match ``match_id``, played over its stream.

    Attributes:
        dropped: replies dropped because they answered another turn (late or early).
    """

    def __init__(self, lobby: Lobby, name: str, match_id: str) -> None:
        self.name = name
        self.match_id = match_id
        self.dropped = 0
        self._lobby = lobby
        self._connection: Connection | None = None
        self._inbox = _Inbox()
        self._info: MatchInfo | None = None
        self._finished = False
        self._events: list[pb.Event] = []
        """The steps the bot has not been sent yet, oldest first."""

    # -- the connection's side (plain calls from the gRPC handler) ------------------------------

    def deliver(self, connection: Connection, reply: pb.ActionReply) -> None:
        self._put((connection, reply))

    def connection_lost(self, connection: Connection) -> None:
        self._put((connection, None))

    def _put(self, item: _Item) -> None:
        self._inbox.put(item)

    # -- the Seat protocol (the referee's side) -------------------------------------------------

    async def start(self, info: MatchInfo, snapshot: Observation | None) -> None:
        """Bind to the bot's current stream and send MatchStart (``resumed`` with a snapshot)."""
        connection = self._lobby.get(self.name)
        if connection is None:
            raise SeatGoneError(f"bot '{self.name}' is not connected")
        self._info = info
        self._bind(connection)
        game = info.game
        side = game.sides[game.side_of(info.seat)]
        move_ms, bank_ms, grace_ms = info.time_control.to_ms()
        start = pb.MatchStart(
            match_id=self.match_id,
            game=game_to_proto(game),
            seat=info.seat,
            partners=[s for s in side if s != info.seat],
            players=info.players,
            time_control=pb.TimeControl(move_ms=move_ms, bank_ms=bank_ms, grace_ms=grace_ms),
            fault_policy=FAULT_POLICY_TO_PROTO[info.fault_policy],
            max_strikes=info.max_strikes,
            resumed=snapshot is not None,
        )
        if snapshot is not None:
            start.snapshot.CopyFrom(observation_to_proto(snapshot))
            self._events = []  # the snapshot's history holds them
        self._send(pb.RefereeMessage(match_start=start))

    async def request(self, turn: int, observation: Observation, move: float, bank: float) -> Reply:
        """Send the request of ``turn`` and return the bot's reply to that turn.

        Raises:
            SeatGoneError: the stream is closed, now or while waiting.
        """
        connection = self._live()
        message = pb.RefereeMessage()
        request = message.request  # filled in place: building it whole copies it twice
        request.match_id = self.match_id
        request.turn = turn
        request.observation.CopyFrom(observation_to_proto(observation, history=False))
        request.clock.move_ms = _ms(move)
        request.clock.bank_ms = _ms(bank)
        request.events.extend(self._take_events())
        connection.send(message)
        while True:
            source, reply = await self._inbox.get()
            if source is not self._connection:
                continue  # from a stream this seat has left
            if reply is None:
                raise SeatGoneError(f"bot '{self.name}' disconnected")
            if reply.turn != turn:
                self.dropped += 1
                LOG.debug(
                    "dropped a reply: match=%s bot=%s turn=%d (waiting for %d)",
                    self.match_id,
                    self.name,
                    reply.turn,
                    turn,
                )
                continue
            return _action(reply)

    async def event(self, step: LogEntry, scores: tuple[int, ...], deal: int) -> None:
        """Keep the step for the seat's next message (see the module's docstring)."""
        self._events.append(_event(step, scores, deal))

    async def hand_end(self, result: HandResult, scores: tuple[int, ...]) -> None:
        message = pb.RefereeMessage(hand_end=hand_result_to_proto(result, scores, self.match_id))
        message.hand_end.events.extend(self._take_events())
        self._send(message)

    async def fault(self, notice: FaultNotice) -> None:
        self._send(
            pb.RefereeMessage(
                fault=pb.Fault(
                    match_id=self.match_id,
                    turn=notice.turn,
                    kind=FAULT_KIND_TO_PROTO[notice.kind],
                    reason=notice.reason,
                    strikes=notice.strikes,
                    forfeited=notice.forfeited,
                    events=self._take_events(),
                )
            )
        )

    async def finish(self, result: MatchResult) -> None:
        self.end(result)

    async def reconnected(self) -> None:
        await self._lobby.wait_connected(self.name, other_than=self._connection)

    # -- for the match host ---------------------------------------------------------------------

    def end(self, result: MatchResult) -> None:
        """Send MatchEnd once (later calls do nothing) and leave the stream.

        A plain call, so the host can tell the bots a match was aborted from a cancelled task.
        """
        if self._finished:
            return
        self._finished = True
        if self._info is not None:
            game = self._info.game
            sides = tuple(game.side_of(s) for s in range(game.num_players))
            self._send(
                pb.RefereeMessage(
                    match_end=pb.MatchEnd(
                        match_id=self.match_id,
                        result=result_to_proto(result, sides),
                        events=self._take_events(),
                    )
                )
            )
        self.close()

    def close(self) -> None:
        """Leave the stream: later replies for this match get ``UNKNOWN_MATCH``."""
        if self._connection is not None and self._connection.routes.get(self.match_id) is self:
            del self._connection.routes[self.match_id]
        self._inbox.close()

    # -- helpers --------------------------------------------------------------------------------

    def _bind(self, connection: Connection) -> None:
        old = self._connection
        if old is not None and old is not connection and old.routes.get(self.match_id) is self:
            del old.routes[self.match_id]
        self._connection = connection
        connection.routes[self.match_id] = self

    def _live(self) -> Connection:
        connection = self._connection
        if connection is None or connection.closed:
            raise SeatGoneError(f"bot '{self.name}' is not connected")
        return connection

    def _take_events(self) -> list[pb.Event]:
        """Return the kept events and forget them (they are being sent)."""
        events, self._events = self._events, []
        return events

    def _send(self, message: pb.RefereeMessage) -> None:
        """Queue ``message``; a dropped stream loses it (a resumed seat gets a snapshot)."""
        if self._connection is not None:
            self._connection.send(message)

    def __repr__(self) -> str:
        return f"<RemoteSeat {self.name} in {self.match_id}>"


class _Inbox:
    """What reaches one seat, in order: put from the gRPC side, taken by the match's task.

    A trio memory channel with one sender and one receiver, without what those need for many
    (statistics, several waiters, a WouldBlock raised and caught on every wait), since a seat
    waits once per move. Cancel-safe: an item is handed to the waiting task at once, or kept;
    a wait that is cancelled takes nothing. After :meth:`close`, items are dropped.
    """

    __slots__ = ("_closed", "_items", "_waiter")

    def __init__(self) -> None:
        self._items: collections.deque[_Item] = collections.deque()
        self._waiter: trio.lowlevel.Task | None = None
        self._closed = False

    def put(self, item: _Item) -> None:
        """Hand ``item`` to the waiting task, or keep it; never blocks, never raises."""
        if self._closed:
            return
        waiter = self._waiter
        if waiter is None:
            self._items.append(item)
            return
        self._waiter = None
        trio.lowlevel.reschedule(waiter, outcome.Value(item))

    async def get(self) -> _Item:
        """Return the oldest item, waiting for one if there is none."""
        await trio.lowlevel.checkpoint_if_cancelled()
        if self._items:
            return self._items.popleft()
        assert self._waiter is None, "one task waits on a seat's inbox"
        self._waiter = trio.lowlevel.current_task()

        def abort(_: trio.lowlevel.RaiseCancelT) -> trio.lowlevel.Abort:
            self._waiter = None
            return trio.lowlevel.Abort.SUCCEEDED

        item: _Item = await trio.lowlevel.wait_task_rescheduled(abort)
        return item

    def close(self) -> None:
        self._closed = True
        self._items.clear()


_last_event: list[tuple[LogEntry, tuple[int, ...], int, pb.Event]] = []


def _event(step: LogEntry, scores: tuple[int, ...], deal: int) -> pb.Event:
    """Return the Event of ``step``; the seats of one step that see it alike share one message.

    The referee tells every seat of a step in turn, with the same objects unless the step is
    hidden from some (``public_entry``), so the last one built is kept. Kept events are only
    ever copied into the messages that carry them, never changed.
    """
    if _last_event:
        last_step, last_scores, last_deal, event = _last_event[0]
        if last_step is step and last_scores is scores and last_deal == deal:
            return event
    event = event_to_proto(step, scores, deal)
    _last_event[:] = [(step, scores, deal, event)]
    return event


def _action(reply: pb.ActionReply) -> Reply:
    if not reply.HasField("action"):
        return Malformed("ActionReply.action is missing")
    try:
        return action_from_proto(reply.action)
    except ConversionError as exc:
        return Malformed(str(exc))


def _ms(seconds: float) -> int:
    return max(0, round(seconds * 1000))

"""A :class:`~.seats.Seat` played by a bot across the network, over its ``Play`` stream.

The referee drives a :class:`RemoteSeat` exactly as it drives a local one. The seat turns each
call into a protocol message (through :mod:`domino_arena.sdk.wire`, the one translation
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

A seat's inbox is bounded (:data:`~.limits.SEAT_INBOX_REPLIES`): a bot that sends replies
faster than its matches take them is cut off (:meth:`~.lobby.Connection.cut`).
"""

from __future__ import annotations

import collections
import logging
import weakref
from typing import Final

import outcome
import trio

from domino_arena.sdk.match.notices import FaultNotice
from domino_arena.sdk.match.results import MatchResult
from domino_arena.sdk.rules import HandResult, LogEntry, Observation
from domino_arena.sdk.wire import (
    EventEncoder,
    events_of_entries,
    fault_kind_to_proto,
    fault_policy_to_proto,
    game_to_proto,
    hand_result_to_proto,
    match_result_to_proto,
    ms,
    observation_to_proto,
    reply_action,
)
from domino_arena.server.names import is_person
from domino_arena.server.net.limits import SEAT_INBOX_REPLIES
from domino_arena.server.net.lobby import Link, Links
from domino_arena.server.net.wire import time_control_to_proto
from domino_arena.server.play.seats import Malformed, MatchInfo, Reply, SeatGoneError
from domino_arena.v1 import referee_pb2 as pb

LOG: Final = logging.getLogger("domino_arena.server")

_Item = tuple["Link", pb.ActionReply | None]
"""What reaches a seat: a reply, or None when that connection closed."""

_ENCODERS: Final[weakref.WeakValueDictionary[str, EventEncoder]] = weakref.WeakValueDictionary()
"""Match id -> the event encoder its seats share, for as long as one of them lives.

The referee tells every seat of a match each step in turn, so the seats of one match share an
encoder and the step is encoded once for all who see it alike. The encoder matches by identity
(the very step and scores objects), so even seats of two matches that share an id would only
miss, never take the other's event."""


class RemoteSeat:
    """The seat of the bot ``name`` in the match ``match_id``, played over its stream.

    Attributes:
        dropped: replies dropped because they answered another turn (late or early).
    """

    def __init__(self, lobby: Links, name: str, match_id: str) -> None:
        self.name = name
        """The seat's name in the match (the arena may rename a person's seat)."""
        self.stream = name
        """The name of the stream that plays it in the lobby (a person's ``person:NAME#N``)."""
        self.match_id = match_id
        self.dropped = 0
        self._lobby = lobby
        self._connection: Link | None = None
        self._inbox = _Inbox()
        self._info: MatchInfo | None = None
        self._finished = False
        self._events: list[bytes] = []
        """The steps the bot has not been sent yet, oldest first, as entries of a request's
        ``events`` (each encoded once for all the seats of the match, see ``EventEncoder``)."""
        self._encoder = _ENCODERS.setdefault(match_id, EventEncoder())
        self.via: tuple[str, ...] = ()
        """The cluster gateways the bot's stream went through in this match, in order (a
        bot that reconnected through another has two; none on a single referee)."""

    # -- the connection's side (plain calls from the gRPC handler) ------------------------------

    def deliver(self, connection: Link, reply: pb.ActionReply) -> None:
        if len(self._inbox) >= SEAT_INBOX_REPLIES:
            connection.cut(
                f"more than {SEAT_INBOX_REPLIES} replies wait for match "
                f"'{self.match_id}' (the seat inbox limit): one reply per request is expected",
                "limits.seat_inbox_replies",
            )
            return
        self._put((connection, reply))

    def connection_lost(self, connection: Link) -> None:
        self._put((connection, None))

    def _put(self, item: _Item) -> None:
        self._inbox.put(item)

    # -- the Seat protocol (the referee's side) -------------------------------------------------

    async def start(self, info: MatchInfo, snapshot: Observation | None) -> None:
        """Bind to the bot's current stream and send MatchStart (``resumed`` with a snapshot)."""
        connection = self._lobby.get(self.stream)
        if connection is None:
            raise SeatGoneError(f"bot '{self.name}' is not connected")
        self._info = info
        self._bind(connection)
        game = info.game
        side = game.sides[game.side_of(info.seat)]
        start = pb.MatchStart(
            match_id=self.match_id,
            game=game_to_proto(game),
            seat=info.seat,
            partners=[s for s in side if s != info.seat],
            players=info.players,
            time_control=time_control_to_proto(info.time_control),
            fault_policy=fault_policy_to_proto(info.fault_policy),
            max_strikes=info.max_strikes,
            resumed=snapshot is not None,
            people=[is_person(player) for player in info.players],
        )
        if info.bot_seed is not None:
            start.bot_seed = info.bot_seed
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
        request.clock.move_ms = ms(move)
        request.clock.bank_ms = ms(bank)
        if self._events:
            request.MergeFromString(b"".join(self._take_events()))
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
            action = reply_action(reply)
            return Malformed(action) if isinstance(action, str) else action

    async def event(self, step: LogEntry, scores: tuple[int, ...], deal: int) -> None:
        """Keep the step for the seat's next message (see the module's docstring)."""
        self.queue_event(step, scores, deal)

    def queue_event(self, step: LogEntry, scores: tuple[int, ...], deal: int) -> None:
        """:meth:`event` as a plain call, which the referee makes (``seats.QueuedEvents``)."""
        self._events.append(self._encoder.encode_entry(step, scores, deal))

    async def hand_end(self, result: HandResult, scores: tuple[int, ...]) -> None:
        message = pb.RefereeMessage(hand_end=hand_result_to_proto(result, scores, self.match_id))
        message.hand_end.events.extend(self._take_event_messages())
        self._send(message)

    async def fault(self, notice: FaultNotice) -> None:
        self._send(
            pb.RefereeMessage(
                fault=pb.Fault(
                    match_id=self.match_id,
                    turn=notice.turn,
                    kind=fault_kind_to_proto(notice.kind),
                    reason=notice.reason,
                    strikes=notice.strikes,
                    forfeited=notice.forfeited,
                    events=self._take_event_messages(),
                )
            )
        )

    async def finish(self, result: MatchResult) -> None:
        self.end(result)

    async def reconnected(self) -> None:
        await self._lobby.wait_connected(self.stream, other_than=self._connection)

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
                        result=match_result_to_proto(result, sides),
                        events=self._take_event_messages(),
                    )
                )
            )
        self.close()

    def close(self) -> None:
        """Leave the stream: later replies for this match get ``UNKNOWN_MATCH``."""
        if self._connection is not None:
            self._connection.unbind(self.match_id, self)
        self._inbox.close()

    # -- helpers --------------------------------------------------------------------------------

    def _bind(self, connection: Link) -> None:
        old = self._connection
        if old is not None and old is not connection:
            old.unbind(self.match_id, self)
        self._connection = connection
        connection.bind(self.match_id, self)
        gateway = connection.gateway
        if gateway and (not self.via or self.via[-1] != gateway):
            self.via += (gateway,)

    def _live(self) -> Link:
        connection = self._connection
        if connection is None or connection.closed:
            raise SeatGoneError(f"bot '{self.name}' is not connected")
        return connection

    def _take_events(self) -> list[bytes]:
        """Return the kept events and forget them (they are being sent)."""
        events, self._events = self._events, []
        return events

    def _take_event_messages(self) -> list[pb.Event]:
        """:meth:`_take_events` as messages, for the messages rarer than a request."""
        return list(events_of_entries(self._take_events()))

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

    def __len__(self) -> int:
        """The number of items kept (none is kept while the match's task waits)."""
        return len(self._items)

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

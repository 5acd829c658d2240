"""Who is connected: one :class:`Connection` per authenticated bot, by name.

A :class:`Connection` is the bridge of one ``Play`` stream (docs/decisions.md: decision 10): the
gRPC handler (asyncio) drains its ``outbox`` onto the wire (everything waiting as one write,
a ``RefereeBatch``, see :meth:`Connection.next_write_nowait`), and hands every reply to the seat
of its match through :meth:`Connection.route`; the seats (:mod:`.remote`, run by trio matches) put
their messages in the outbox with :meth:`Connection.send`. Both loops share one thread, so these
are plain calls, and none of them blocks or awaits.

A bot has at most one connection. A new authenticated stream for a connected bot *takes over*:
the lobby points at the new stream and the old one is closed with ``ALREADY_CONNECTED``. This
is what lets a bot whose network dropped come back before the referee has noticed the drop;
a stream with a wrong token never gets this far, so it cannot steal a seat. Seats bound to the
old stream see it die and resume on the new one (the referee sends a snapshot).

A bot whose token an admin withdraws (rotated, disabled, deleted: :meth:`Lobby.revoke`) loses
its stream at once: it is sent an UNAUTHENTICATED Error saying why and the stream ends
UNAUTHENTICATED; its seats see a lost connection, so each match's fault policy handles them as
after any drop. A Hello whose token check was under way meanwhile is checked again
(:meth:`Lobby.revocations`), so a withdrawn token cannot slip in behind the revocation.

The outbox is bounded (:data:`~.limits.OUTBOX_MESSAGES`): a bot that stops reading while it
keeps the referee busy is cut off (:meth:`Connection.cut`): what waits is dropped, the bot is
sent an Error naming the limit and the stream ends with RESOURCE_EXHAUSTED.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final, Protocol

import grpc
import trio

from domino_arena.server.logs import quote
from domino_arena.server.net.limits import OUTBOX_MESSAGES
from domino_arena.v1 import referee_pb2 as pb

LOG: Final = logging.getLogger("domino_arena.server")


class Route(Protocol):
    """What a connection hands the replies of one match to (a :class:`~.remote.RemoteSeat`, or
    on a cluster's gateway the relay to the match's host)."""

    def deliver(self, connection: Link, reply: pb.ActionReply) -> None:
        """Take a reply that arrived on ``connection``; never blocks."""

    def connection_lost(self, connection: Link) -> None:
        """Learn that ``connection`` is closed; never blocks."""


class Link(Protocol):
    """A bot's stream as a remote seat writes to it: a :class:`Connection` in this process, or
    on a cluster's match host a stream some gateway holds
    (:class:`~.cluster.hosting.BrokerLink`). Every call is plain: it never blocks."""

    @property
    def closed(self) -> bool: ...

    @property
    def gateway(self) -> str:
        """The cluster gateway holding the stream ("" in this process)."""

    def send(self, message: pb.RefereeMessage) -> bool:
        """Queue ``message`` for the bot; False (and nothing sent) once the stream is closed."""

    def bind(self, match_id: str, route: Route) -> None:
        """Hand the replies for ``match_id`` to ``route`` (the seat this stream plays in it)."""

    def unbind(self, match_id: str, route: Route) -> None:
        """Stop handing ``match_id``'s replies to ``route`` (if it is still the one bound)."""

    def cut(self, reason: str, limit: str) -> None:
        """Cut the stream off now for a limit it broke (see :meth:`Connection.cut`)."""


class Links(Protocol):
    """Where a remote seat finds its bot's stream: the :class:`Lobby`, or a cluster host's
    view of every gateway's streams."""

    def get(self, name: str) -> Link | None:
        """The live stream of the bot ``name``, or None."""

    async def wait_connected(self, name: str, *, other_than: Link | None = None) -> None:
        """Return (trio) once the bot has a live stream other than ``other_than``."""


class Listener(Protocol):
    """Told of every stream the lobby admits and drops (a cluster's gateway relays them)."""

    def connected(self, connection: Connection) -> None: ...

    def disconnected(self, connection: Connection) -> None: ...


@dataclass(frozen=True, slots=True)
class Close:
    """The last item of an outbox: end the stream with ``status`` (None: OK)."""

    status: grpc.StatusCode | None
    details: str = ""


class Outbox:
    """What waits to be written to one stream, in order: the calls of ``asyncio.Queue`` that
    the lobby (and the tests) make, at a fraction of its memory.

    An idle stream holds an empty list here and no future; ``asyncio.Queue`` held four deques
    (its items, getters, putters and an Event's waiters), about 3 KiB per connected bot
    (``bench/idle_bots_bench.py``). Whoever writes the stream is told of each item put either
    by ``on_put`` (the ``Play`` handler's writer, :mod:`.stream_writer`, a callback: no task
    waits while the stream is idle) or as the one waiter of :meth:`wait`.
    """

    __slots__ = ("_items", "_waiter", "on_put")

    def __init__(self) -> None:
        self._items: list[pb.RefereeMessage | Close] = []
        self._waiter: asyncio.Future[None] | None = None
        self.on_put: Callable[[], object] | None = None
        """Called (a plain call, never blocking) after every item put."""

    def qsize(self) -> int:
        return len(self._items)

    def empty(self) -> bool:
        return not self._items

    def put_nowait(self, item: pb.RefereeMessage | Close) -> None:
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        if self.on_put is not None:
            self.on_put()

    def get_nowait(self) -> pb.RefereeMessage | Close:
        """The oldest item. Raises ``asyncio.QueueEmpty`` when there is none."""
        if not self._items:
            raise asyncio.QueueEmpty
        return self._items.pop(0)

    async def wait(self) -> None:
        """Return once an item waits (one waiter at a time: the writer)."""
        while not self._items:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    def take(self) -> list[pb.RefereeMessage | Close]:
        """Everything waiting, oldest first, up to and including the first Close (what
        follows it, if anything, stays)."""
        items = self._items
        for index, item in enumerate(items):
            if isinstance(item, Close):
                self._items = items[index + 1 :]
                return items[: index + 1]
        self._items = []
        return items

    def clear(self) -> None:
        self._items = []


class Flag:
    """A flag a task can wait for: ``asyncio.Event``'s ``set``, ``is_set`` and ``wait``, with
    a future only while someone waits (an Event holds a deque from the start), and a callback
    (``on_set``) for whoever would rather not keep a task waiting."""

    __slots__ = ("_set", "_waiters", "on_set")

    def __init__(self) -> None:
        self._set = False
        self._waiters: list[asyncio.Future[None]] | None = None
        self.on_set: Callable[[], object] | None = None
        """Called (a plain call) when the flag is set."""

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        self._set = True
        waiters, self._waiters = self._waiters, None
        for waiter in waiters or ():
            if not waiter.done():
                waiter.set_result(None)
        if self.on_set is not None:
            self.on_set()

    async def wait(self) -> None:
        if self._set:
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._waiters is None:
            self._waiters = []
        self._waiters.append(waiter)
        try:
            await waiter
        finally:
            if self._waiters is not None and waiter in self._waiters:
                self._waiters.remove(waiter)


class Connection:
    """One authenticated ``Play`` stream of the bot ``name``, which plays ``games``.

    A thousand idle bots hold a thousand of these: slots, and an outbox and a cut flag that
    cost next to nothing until they are used (:class:`Outbox`, :class:`Flag`).
    """

    __slots__ = (
        "_held",
        "_written",
        "client",
        "closed",
        "ending",
        "games",
        "name",
        "outbox",
        "outbox_limit",
        "peak",
        "peer",
        "routes",
        "was_cut",
    )

    def __init__(
        self,
        name: str,
        games: Iterable[str],
        peer: str = "",
        client: str = "",
        outbox_limit: int = OUTBOX_MESSAGES,
    ) -> None:
        self.name = name
        self.games: tuple[str, ...] = tuple(sorted(set(games)))
        self.peer = peer
        self.client = client
        """What the bot says it runs (``Hello.client``), for the logs."""
        self.outbox = Outbox()
        self.routes: dict[str, Route] = {}
        """The match id -> the seat this stream plays in it."""
        self.closed = False
        self.ending: Close | None = None
        """How the stream ends, once :meth:`close` was called."""
        self.outbox_limit = outbox_limit
        """The most messages the outbox holds; one more cuts the stream off."""
        self.peak = 0
        """The longest the outbox has been (for the tests of the bound)."""
        self.was_cut = Flag()
        """Set by :meth:`cut`: the handler stops waiting for the queued messages to go out."""
        self._written = 0
        self._held: Close | None = None
        """A Close found while batching, for the call after the batch."""

    def send(self, message: pb.RefereeMessage) -> bool:
        """Queue ``message`` for the bot; False (and nothing sent) once the stream is closed."""
        if self.closed:
            return False
        size = self.outbox.qsize()
        if size >= self.outbox_limit:
            self.cut(
                f"more than {self.outbox_limit} messages wait to be written to this stream "
                "(the outbox limit): the bot does not read what it is sent",
                "limits.outbox_messages",
                drop=True,
            )
            return False
        self.outbox.put_nowait(message)
        if size >= self.peak:
            self.peak = size + 1
        return True

    def cut(
        self,
        reason: str,
        limit: str,
        status: grpc.StatusCode = grpc.StatusCode.RESOURCE_EXHAUSTED,
        code: pb.ErrorCode.ValueType = pb.ERROR_CODE_UNSPECIFIED,
        *,
        drop: bool = False,
    ) -> None:
        """Close the stream now for a limit it broke: send an Error, end it.

        With ``drop`` what waits to be written is dropped first (the outbox is full).

        The seats see a disconnection; the handler gives the bot a short grace to read the
        Error (:data:`~.limits.CLOSE_GRACE`), then ends the stream with ``status`` anyway.
        The Error's ``field`` names the ``limit`` (e.g. ``limits.outbox_messages``).
        """
        if self.closed:
            return
        LOG.warning(
            "bot cut off: name=%s peer=%s limit=%s reason=%s", self.name, self.peer, limit, reason
        )
        if drop:
            self.outbox.clear()
        self.close(status, reason, pb.Error(code=code, message=reason, field=limit))
        self.was_cut.set()

    async def next_write(self) -> pb.RefereeMessage | Close:
        """Wait for the next thing to write (see :meth:`next_write_nowait`)."""
        item = self.next_write_nowait()
        while item is None:
            await self.outbox.wait()
            item = self.next_write_nowait()
        return item

    def next_write_nowait(self) -> pb.RefereeMessage | Close | None:
        """The next thing to write: a message, the Close that ends the stream, or None while
        nothing waits.

        Everything waiting in the outbox goes out as one message, a ``RefereeBatch`` when there
        is more than one, so a busy stream pays for one gRPC write instead of one per message;
        the first message (the Welcome) always goes alone. Nothing is held back waiting for
        company. A Close found while batching is returned by the next call, after the batch.
        """
        held, self._held = self._held, None
        if held is not None:
            item: pb.RefereeMessage | Close = held
        elif self.outbox.empty():
            return None
        else:
            item = self.outbox.get_nowait()
        self._written += 1
        if isinstance(item, Close) or self._written == 1 or self.outbox.empty():
            return item
        messages = [item]
        for waiting in self.outbox.take():  # only the last can be a Close
            if isinstance(waiting, Close):
                self._held = waiting
            else:
                messages.append(waiting)
        if len(messages) == 1:
            return item
        return pb.RefereeMessage(batch=pb.RefereeBatch(messages=messages))

    @property
    def gateway(self) -> str:
        """No gateway: the stream is this process's own."""
        return ""

    def bind(self, match_id: str, route: Route) -> None:
        self.routes[match_id] = route

    def unbind(self, match_id: str, route: Route) -> None:
        if self.routes.get(match_id) is route:
            del self.routes[match_id]

    def route(self, reply: pb.ActionReply) -> bool:
        """Hand ``reply`` to the seat of its match; False if this stream plays no such match."""
        seat = self.routes.get(reply.match_id)
        if seat is None:
            return False
        seat.deliver(self, reply)
        return True

    def close(
        self,
        status: grpc.StatusCode | None = None,
        details: str = "",
        error: pb.Error | None = None,
    ) -> None:
        """End the stream: send ``error`` (if any), then the status; tell every seat it is gone.

        Closing twice does nothing; what was queued before is still written first.
        """
        if self.closed:
            return
        if error is not None:
            self.outbox.put_nowait(pb.RefereeMessage(error=error))
        self.closed = True
        self.ending = Close(status, details)
        self.outbox.put_nowait(self.ending)
        routes, self.routes = list(self.routes.values()), {}
        for seat in routes:
            seat.connection_lost(self)

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<Connection {self.name} {self.peer or '?'} {state}>"


class Lobby:
    """The connected bots by name, how many matches each is seated in, and who waits for whom.

    It is the :class:`~domino_arena.server.play.roster.Roster` the play layer sees.
    """

    def __init__(self, listener: Listener | None = None) -> None:
        self.listener = listener
        """Told of every stream admitted and dropped (None: nobody)."""
        self._connections: dict[str, Connection] = {}
        self._waiters: dict[str, set[trio.Event]] = collections.defaultdict(set)
        self.seated: collections.Counter[str] = collections.Counter()
        """The bot name -> matches it is seated in now (connected or not)."""
        self.closing = False
        """Set at shutdown: no new connection is accepted."""
        self._revocations: collections.Counter[str] = collections.Counter()

    def get(self, name: str) -> Connection | None:
        """Return the live connection of the bot ``name``, or None."""
        connection = self._connections.get(name)
        return connection if connection is not None and not connection.closed else None

    def __len__(self) -> int:
        """The number of connected bots (read by the metrics scrape thread: only a len())."""
        return len(self._connections)

    def connections(self) -> list[Connection]:
        """Return every live connection, sorted by bot name."""
        return [c for _, c in sorted(self._connections.items()) if not c.closed]

    def connect(self, connection: Connection) -> Connection | None:
        """Make ``connection`` the bot's stream; return the live stream it replaces, if any.

        The caller closes the replaced stream (with ``ALREADY_CONNECTED``); seats waiting for
        the bot are woken.
        """
        old = self.get(connection.name)
        self._connections[connection.name] = connection
        LOG.info(
            "bot connected: name=%s games=%s peer=%s client=%s%s",
            connection.name,
            ",".join(connection.games),
            connection.peer,
            quote(connection.client) if connection.client else "?",
            " (takes over its previous stream)" if old is not None else "",
        )
        for event in self._waiters.pop(connection.name, set()):
            event.set()
        if self.listener is not None:
            self.listener.connected(connection)
        return old

    def disconnect(self, connection: Connection) -> None:
        """Forget ``connection`` if it is still the bot's stream, and close it."""
        if self._connections.get(connection.name) is connection:
            del self._connections[connection.name]
            LOG.info("bot disconnected: name=%s peer=%s", connection.name, connection.peer)
            if self.listener is not None:
                self.listener.disconnected(connection)
        connection.close()

    def revocations(self, name: str) -> int:
        """How many times the bot's token was withdrawn (:meth:`revoke`) since the start.

        The bot service reads it before and after a token check: a change means the check may
        have read the token the revocation withdrew, so it checks again.
        """
        return self._revocations[name]

    def revoke(self, name: str, reason: str) -> bool:
        """Close the bot's live stream now: an admin withdrew its token (``reason`` says how:
        "token rotated", "bot disabled", "bot deleted"). True if a stream was open.

        The bot is sent an UNAUTHENTICATED Error and its stream ends UNAUTHENTICATED, both with
        ``reason``; its seats see a lost connection and their matches' fault policy takes over.
        """
        self._revocations[name] += 1
        connection = self.get(name)
        if connection is None:
            return False
        LOG.info("bot revoked: name=%s peer=%s reason=%s", name, connection.peer, reason)
        connection.close(
            grpc.StatusCode.UNAUTHENTICATED,
            reason,
            pb.Error(code=pb.ERROR_CODE_UNAUTHENTICATED, message=reason),
        )
        self.disconnect(connection)
        return True

    def seat(self, names: Iterable[str]) -> None:
        """Count one match more for each bot in ``names`` (its match starts)."""
        self.seated.update(names)

    def unseat(self, names: Iterable[str]) -> None:
        """Count one match fewer for each bot in ``names`` (its match ended)."""
        for name in names:
            self.seated[name] -= 1
            if self.seated[name] <= 0:
                del self.seated[name]

    async def wait_connected(self, name: str, *, other_than: Link | None = None) -> None:
        """Return (trio) once the bot ``name`` has a live stream other than ``other_than``.

        Safe to cancel: the referee bounds this wait by its reconnect grace.
        """
        while True:
            connection = self.get(name)
            if connection is not None and connection is not other_than:
                return
            event = trio.Event()
            self._waiters[name].add(event)
            try:
                await event.wait()
            finally:
                waiters = self._waiters.get(name)
                if waiters is not None:
                    waiters.discard(event)
                    if not waiters:
                        del self._waiters[name]

    def close_all(self, status: grpc.StatusCode, details: str, error: pb.Error) -> None:
        """Refuse new streams and close every live one (shutdown)."""
        self.closing = True
        for connection in list(self._connections.values()):
            connection.close(status, details, error)
        self._connections.clear()

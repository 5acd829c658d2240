"""The writing half of one bot's ``Play`` stream, driven by its outbox rather than by a task.

A thousand idle bots used to hold four asyncio tasks each: the handler, its reader, its writer
and one waiting for a cut. The handler now reads the stream itself, and :class:`StreamWriter`
writes: a task exists only while there is something to write (the outbox's ``on_put`` starts
one, and it ends when the outbox is empty), and a cut starts a timer, not a task. What the
seats queue in one loop turn (every match the stream plays, one trio tick) is written as one
message (:meth:`~.lobby.Connection.next_write_nowait`), since the task starts on the next turn.

The stream ends at the outbox's :class:`~.lobby.Close`: the writer stops the handler's read
(which is never cancelled otherwise, docs/decisions.md: decision 10) and hands it the Close.
After a cut the bot has :data:`~.limits.CLOSE_GRACE` to read the Error; then the stream ends
anyway, even with a write stuck behind a bot that does not read.
"""

from __future__ import annotations

import asyncio
from typing import Any

from domino_arena.server.net.lobby import Close, Connection


class StreamWriter:
    """Writes ``connection``'s outbox to ``context`` (a ``Play`` stream) for the handler
    ``handler`` (the task that reads the stream); ``grace``: seconds the bot has to read
    the Error of a cut.

    The handler calls :meth:`reading` around its reads, awaits :meth:`ended`, and calls
    :meth:`stop` when it leaves.
    """

    __slots__ = (
        "_connection",
        "_context",
        "_ended",
        "_grace",
        "_handler",
        "_interrupted",
        "_reading",
        "_task",
        "_timer",
    )

    def __init__(
        self, connection: Connection, context: Any, handler: asyncio.Task[Any], grace: float
    ) -> None:
        self._connection = connection
        self._context = context
        self._handler = handler
        self._grace = grace
        self._task: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._ended: asyncio.Future[Close] = asyncio.get_running_loop().create_future()
        self._reading = False
        self._interrupted = False
        connection.outbox.on_put = self._kick
        connection.was_cut.on_set = self._cut
        self._kick()  # the Welcome waits already

    # -- the handler's side ----------------------------------------------------------------------

    def reading(self, reading: bool) -> None:
        """The handler is (True) or is no longer (False) in its read loop."""
        self._reading = reading

    def interrupted(self) -> bool:
        """Whether the handler's read was cancelled by this writer (the stream ended), which
        the handler then takes back (``Task.uncancel``)."""
        return self._interrupted

    async def ended(self) -> Close:
        """Wait for the Close that ends the stream (after what was queued before it went out,
        or the cut's grace); raise what a write raised (the RPC ended under it)."""
        return await self._ended

    def stop(self) -> None:
        """The handler leaves: stop writing, forget the timer and the outbox's callbacks."""
        self._connection.outbox.on_put = None
        self._connection.was_cut.on_set = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
        if self._ended.done() and not self._ended.cancelled():
            self._ended.exception()  # retrieved: the handler may have left without it
        else:
            self._ended.cancel()

    # -- the outbox's side -----------------------------------------------------------------------

    def _kick(self) -> None:
        """Something was queued: start writing, unless a write is under way (it will see it)."""
        if self._task is None and not self._done():
            self._task = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        connection, context = self._connection, self._context
        try:
            while (item := connection.next_write_nowait()) is not None:
                if isinstance(item, Close):
                    self._finish(item)
                    return
                await context.write(item)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # the RPC ended under a write
            self._fail(exc)
        finally:
            if self._task is asyncio.current_task():
                self._task = None

    def _cut(self) -> None:
        """The stream was cut off: the bot has the grace to read the Error, then it ends."""
        if self._timer is None and not self._done():
            self._timer = asyncio.get_running_loop().call_later(self._grace, self._give_up)

    def _give_up(self) -> None:
        """The grace after a cut is over: end the stream, a write stuck or not."""
        self._timer = None
        if self._done():
            return
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
        self._finish(self._connection.ending or Close(None))

    # -- the end -----------------------------------------------------------------------------------

    def _done(self) -> bool:
        return self._ended.done()

    def _finish(self, close: Close) -> None:
        if not self._ended.done():
            self._ended.set_result(close)
        self._wake_handler()

    def _fail(self, error: BaseException) -> None:
        if not self._ended.done():
            self._ended.set_exception(error)
        self._wake_handler()

    def _wake_handler(self) -> None:
        """Stop the handler's read, if it is reading: the stream is over."""
        if self._reading and not self._interrupted:
            self._interrupted = True
            self._handler.cancel()

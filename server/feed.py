"""One writer, any number of readers: the fan-out of a live match (docs/spectators.md).

A :class:`Feed` is a list its writer appends to and readers follow with a :class:`Cursor`:
an item is made once and shared by every reader, a post is an append and one wake-up however
many read, and a reader takes everything new at once (a reader that writes slowly to its
client takes several items per wake-up rather than waking per item). The referee's spectator
hub keeps one per running match (``server/play/spectators.py``); a relay keeps one per match it
follows, of the referee's message bytes (``server/net/relay.py``); the web face one per match its
browsers follow, of their events' bytes (``server/web/live_feed.py``).

The writer never waits for a reader. A reader more than ``max_pending`` items behind is
dropped, told why: it would watch a match long gone, and the feed's list is the match's own,
so a slow reader holds no memory of its own. A feed may keep only its last ``keep`` items (the
web face's: a browser that joins late starts near the end, and one that falls out of the window
is dropped); positions are counted from the feed's first item either way.

Every call is made on the one thread of the event loop; the wake-up is an ``asyncio.Event``.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Dropped:
    """The last thing a dropped reader takes: why it was dropped."""

    reason: str


class Feed(Generic[T]):
    """A growing list of items and the event that says it grew (see the module); with
    ``keep``, only the last ``keep`` items are kept."""

    def __init__(self, keep: int | None = None) -> None:
        self.log: deque[T] = deque(maxlen=keep)
        self.total = 0
        """Items posted so far (the log holds the last of them)."""
        self.over = False
        """True once the writer closed it: its last item was the last."""
        self._grown = asyncio.Event()

    @property
    def base(self) -> int:
        """The position of the oldest item kept."""
        return self.total - len(self.log)

    def since(self, position: int) -> list[T]:
        """The items kept from ``position`` on (the newest are at the log's end: cheap)."""
        log, base = self.log, self.base
        return [log[index - base] for index in range(max(position, base), self.total)]

    def post(self, item: T) -> None:
        """Append ``item`` and wake every reader waiting."""
        self.log.append(item)
        self.total += 1
        self._wake()

    def close(self) -> None:
        """No item follows: readers end once they took the last."""
        self.over = True
        self._wake()

    def _wake(self) -> None:
        self._grown.set()
        self._grown.clear()  # the waiters woken stay woken; later ones wait again

    async def grown(self) -> None:
        """Wait for the next post or the close."""
        await self._grown.wait()


class Cursor(Generic[T]):
    """One reader of a :class:`Feed`: a ``backlog`` it joined with, then every item from
    position ``start`` (default: those posted after it joined); ``label`` names what it reads
    in the dropped message ("match X")."""

    def __init__(
        self,
        feed: Feed[T],
        label: str,
        max_pending: int,
        backlog: list[T] | None = None,
        *,
        start: int | None = None,
    ) -> None:
        self._feed = feed
        self._backlog = backlog or []
        self._next = feed.total if start is None else start
        self.label = label
        self.max_pending = max_pending
        self.dropped: str | None = None
        """Why it was dropped; None while it keeps up."""

    @property
    def pending(self) -> int:
        """Items posted and not taken yet (the backlog is bounded by the match: not counted)."""
        return self._feed.total - self._next

    def take(self) -> list[T] | Dropped | None:
        """What is there now, without waiting: the items since the last call ([] when none), a
        :class:`Dropped` if the reader fell more than ``max_pending`` behind, or None once the
        last item was taken (or after the drop): nothing follows."""
        if self.dropped is not None:
            return None
        if self._backlog:
            batch, self._backlog = self._backlog, []
            return batch
        feed = self._feed
        if self._next == feed.total:
            return None if feed.over else []
        if feed.total - self._next > self.max_pending or self._next < feed.base:
            self.dropped = (
                f"dropped: {feed.total - self._next} messages of {self.label} were waiting "
                "unread, and a match never waits for its spectators; watch again to catch up"
            )
            return Dropped(self.dropped)
        batch = feed.since(self._next)
        self._next = feed.total
        return batch

    async def wait(self) -> None:
        """Wait until there is something to take (at once if there is); safe to cancel, so a
        timeout around it loses nothing."""
        if self._backlog or self._next < self._feed.total or self._feed.over:
            return
        await self._feed.grown()

    async def batches(self) -> AsyncIterator[list[T] | Dropped]:
        """Every batch in order, waiting between them; a :class:`Dropped` last if the reader
        fell behind."""
        while True:
            batch = self.take()
            if batch is None:
                return
            if isinstance(batch, Dropped):
                yield batch
                return
            if batch:
                yield batch
            else:
                await self.wait()

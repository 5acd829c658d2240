"""The ladder writer: every finished match goes to the database through here, once.

DESIGN.md calls it the ladder writer; issue 4 asks that "a database that fails mid-tournament
delays writes (retried) but loses and duplicates nothing". :class:`Writer` runs
:meth:`Storage.save_match <.storage.Storage.save_match>` in a worker thread, one call at a time
(the arena's storage is the ladder's ``RatedStorage``, whose save also moves the ratings in
the same transaction), and retries a transient failure (the database unreachable, the
connection lost, SQLite busy) with capped exponential backoff until it succeeds or is
cancelled. A retry after a commit whose
acknowledgement was lost is safe because ``save_match`` writes a match it already holds no
second time. Any other error (a bug, a bad row) propagates at once: retrying cannot fix it.

Shielding a save from cancellation is the caller's choice (the arena shields, so a finished
match is written even while the referee shuts down).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Final

import trio
from sqlalchemy import exc as sa_exc

from domino_arena.server.store.engine import error_reason
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.storage import Storage

LOG: Final = logging.getLogger("domino_arena.server.store.writer")

FIRST_DELAY: Final = 0.5
"""Seconds before the first retry; each further retry waits twice as long as the one before."""

MAX_DELAY: Final = 30.0
"""The longest wait between two tries, so a database that comes back is used within this."""

# SQLite reports a missing table or a bad statement as an OperationalError, like a busy or
# unreachable file; those are our bugs, not the database's weather.
_SQLITE_PERMANENT: Final = re.compile(r"^no such |syntax error|has no column")


def is_transient(error: BaseException) -> bool:
    """Say whether ``error`` may go away by itself: a lost or refused connection, a busy
    database (SQLite "database is locked", a PostgreSQL deadlock or shutdown), a pool timeout."""
    if isinstance(error, sa_exc.DBAPIError) and error.connection_invalidated:
        return True
    if isinstance(error, (sa_exc.TimeoutError, sa_exc.DisconnectionError)):
        return True
    if isinstance(error, (sa_exc.OperationalError, sa_exc.InterfaceError)):
        orig = error.orig
        sqlite = type(orig).__module__ == "sqlite3"
        return not (sqlite and _SQLITE_PERMANENT.search(str(orig)))
    return False


def backoff(attempt: int, *, first: float = FIRST_DELAY, cap: float = MAX_DELAY) -> float:
    """Return the seconds to wait after failed try number ``attempt`` (1, 2, ...).

    >>> [backoff(n) for n in (1, 2, 3, 7, 8, 100)]
    [0.5, 1.0, 2.0, 30.0, 30.0, 30.0]
    """
    if attempt < 1:
        raise ValueError(f"attempt: expected 1 or more, got {attempt}")
    return min(cap, first * 2.0 ** min(attempt - 1, 64))


class Writer:
    """Stores finished matches, one at a time, retrying while the database is away.

    Args:
        storage: an opened :class:`~.storage.Storage` (or a subclass: the ladder's
            ``RatedStorage`` saves rated matches with their rating change).
        first_delay: seconds before the first retry (then doubling).
        max_delay: the cap on the wait between tries.
        on_retry: called after each failed try with the try's number (1, 2, ...) and its
            error, before the wait (metrics, tests).
    """

    def __init__(
        self,
        storage: Storage,
        *,
        first_delay: float = FIRST_DELAY,
        max_delay: float = MAX_DELAY,
        on_retry: Callable[[int, BaseException], None] | None = None,
    ) -> None:
        if not 0 < first_delay <= max_delay:
            raise ValueError(
                f"first_delay: expected more than 0 and at most max_delay ({max_delay}), "
                f"got {first_delay}"
            )
        self.storage = storage
        self.first_delay = first_delay
        self.max_delay = max_delay
        self.on_retry = on_retry
        self.pending = 0
        """Saves waiting or in progress (a gauge for metrics: it grows while the database is
        away)."""
        self._lock = trio.Lock()

    async def save_match(self, match: StoredMatch) -> bool:
        """Store ``match`` (and its rating change); return False if it was stored already.

        Waits for the saves before it. A transient database error is logged and retried after
        :func:`backoff`, forever, until it succeeds or this call is cancelled.

        Raises:
            Exception: any error that is not :func:`transient <is_transient>`, at once.
        """
        self.pending += 1
        try:
            async with self._lock:
                attempt = 0
                while True:
                    try:
                        return await trio.to_thread.run_sync(self.storage.save_match, match)
                    except Exception as error:
                        if not is_transient(error):
                            raise
                        attempt += 1
                        delay = backoff(attempt, first=self.first_delay, cap=self.max_delay)
                        LOG.warning(
                            "match %s not stored (try %d): %s; retrying in %.1f s",
                            match.id,
                            attempt,
                            error_reason(error),
                            delay,
                        )
                        if self.on_retry is not None:
                            self.on_retry(attempt, error)
                    await trio.sleep(delay)
        finally:
            self.pending -= 1

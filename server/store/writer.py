"""The ladder writer: every finished match goes to the database through here, once.

Each finished game is one transaction (docs/decisions.md: decision 12); issue 4 asks that "a
database that fails mid-tournament delays writes (retried) but loses and duplicates nothing".
:class:`Writer` stores matches in a worker thread, one transaction at a time, and retries a
transient failure (the database unreachable, the connection lost, SQLite busy) with capped
exponential backoff until it succeeds or is cancelled. A retry after a commit whose acknowledgement
was lost is safe because the storage writes a match it already holds no second time.

Group commit (issue 14): the matches that finish while a transaction is being written wait in
a queue, and the next transaction writes all of them (up to :data:`MAX_BATCH`) at once through
:meth:`Storage.save_matches <.storage.Storage.save_matches>` (the arena's storage is the
ladder's ``RatedStorage``, whose batch is stored and moves the ratings, in order, in one
transaction: ``store_and_rate`` in ``server/ladder/ratings_store.py``). No timer holds a match
back: a lone match is written at once, as before; only matches that finish while the database
is busy share a commit, so the wait of each is at most the transaction before its own. Each
match stays all-or-nothing and reported stored only once committed: when a batch fails with an
error a retry cannot fix (a bad row, a bug), it is written again one match per transaction
(:func:`store_batch`), so that the bad one fails alone and the others are stored. Such an error
propagates to its own caller, at once.

Shielding a save from cancellation is the caller's choice (the arena shields, so a finished
match is written even while the referee shuts down).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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

MAX_BATCH: Final = 256
"""The most matches one transaction writes (those queued beyond wait for the next)."""

Outcome = bool | Exception
"""What storing one match of a batch gave: True (written), False (stored already), or the error
that kept it out."""

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


def store_batch(storage: Storage, batch: Sequence[StoredMatch]) -> list[Outcome]:
    """Store ``batch`` in one transaction (blocking); if that fails with an error that no retry
    can fix, store each match alone, in order, so that only the bad one fails.

    A transient error (:func:`is_transient`) is every match's outcome, for the caller to retry
    them: the whole batch's, or in the one-by-one pass the failing match's and its followers'
    (they wait for it, so the ratings move in the batch's order).
    """
    try:
        return list(storage.save_matches(batch))
    except Exception as error:
        if is_transient(error) or len(batch) == 1:
            return [error] * len(batch)
    outcomes: list[Outcome] = []
    for match in batch:
        try:
            outcomes.append(storage.save_match(match))
        except Exception as error:
            if is_transient(error):
                return outcomes + [error] * (len(batch) - len(outcomes))
            outcomes.append(error)
    return outcomes


@dataclass(slots=True, eq=False)
class _Queued:
    """A match waiting for its transaction, and then what storing it gave."""

    match: StoredMatch
    outcome: Outcome | None = None


class Writer:
    """Stores finished matches, those queued together in one transaction, retrying while the
    database is away (see the module doc).

    Args:
        storage: an opened :class:`~.storage.Storage` (or a subclass: the ladder's
            ``RatedStorage`` saves rated matches with their rating change).
        first_delay: seconds before the first retry (then doubling).
        max_delay: the cap on the wait between tries.
        on_retry: called after each failed try with the try's number (1, 2, ...) and its
            error, before the wait (metrics, tests).
        max_batch: the most matches written in one transaction.
    """

    def __init__(
        self,
        storage: Storage,
        *,
        first_delay: float = FIRST_DELAY,
        max_delay: float = MAX_DELAY,
        on_retry: Callable[[int, BaseException], None] | None = None,
        max_batch: int = MAX_BATCH,
    ) -> None:
        if not 0 < first_delay <= max_delay:
            raise ValueError(
                f"first_delay: expected more than 0 and at most max_delay ({max_delay}), "
                f"got {first_delay}"
            )
        if max_batch < 1:
            raise ValueError(f"max_batch: expected 1 or more, got {max_batch}")
        self.storage = storage
        self.first_delay = first_delay
        self.max_delay = max_delay
        self.on_retry = on_retry
        self.max_batch = max_batch
        self.pending = 0
        """Saves waiting or in progress (a gauge for metrics: it grows while the database is
        away)."""
        self.batches = 0
        """Transactions tried (a batch retried counts again): ``pending`` saves share them."""
        self._queue: list[_Queued] = []
        self._lock = trio.Lock()

    async def save_match(self, match: StoredMatch) -> bool:
        """Store ``match`` (and its rating change); return False if it was stored already.

        Returns once the transaction that wrote it is committed, after the saves before it
        (their order is the order the ratings move in). A transient database error is logged
        and retried after :func:`backoff`, forever, until it succeeds or this call is
        cancelled; a cancelled save is taken out of the queue unless its transaction is
        already being written.

        Raises:
            Exception: any error of this match that is not :func:`transient <is_transient>`,
                at once.
        """
        queued = _Queued(match)
        self.pending += 1
        self._queue.append(queued)
        try:
            # The lock is fair: callers take it in the order they queued. Whoever holds it
            # writes the queue until its own match is done; a caller whose match someone
            # else's transaction wrote finds it done and goes.
            async with self._lock:
                if queued.outcome is None:
                    await self._write_until(queued)
        finally:
            self.pending -= 1
            if queued.outcome is None and queued in self._queue:
                self._queue.remove(queued)  # cancelled before its transaction: never written
        outcome = queued.outcome
        if isinstance(outcome, Exception):
            raise outcome
        return bool(outcome)

    async def _write_until(self, mine: _Queued) -> None:
        """Write the queue's first :attr:`max_batch` matches in one transaction, again after a
        transient failure, until ``mine`` is done."""
        attempt = 0
        while mine.outcome is None:
            batch = self._queue[: self.max_batch]
            self.batches += 1
            outcomes = await trio.to_thread.run_sync(
                store_batch, self.storage, [queued.match for queued in batch]
            )
            error: Exception | None = None
            for queued, outcome in zip(batch, outcomes, strict=True):
                if isinstance(outcome, Exception) and is_transient(outcome):
                    error = error or outcome
                    continue
                queued.outcome = outcome
            self._queue = [queued for queued in self._queue if queued.outcome is None]
            if error is None:
                continue
            attempt += 1
            delay = backoff(attempt, first=self.first_delay, cap=self.max_delay)
            waiting = [queued.match.id for queued in batch if queued.outcome is None]
            more = f" and {len(waiting) - 3} more" if len(waiting) > 3 else ""
            LOG.warning(
                "match%s %s%s not stored (try %d): %s; retrying in %.1f s",
                "es" if len(waiting) > 1 else "",
                ", ".join(waiting[:3]),
                more,
                attempt,
                error_reason(error),
                delay,
            )
            if self.on_retry is not None:
                self.on_retry(attempt, error)
            await trio.sleep(delay)

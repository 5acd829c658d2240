"""A bounded pool of worker processes that analyse matches (docs/analysis.md: running analyses).

An analysis takes seconds of CPU per match, so it never runs in the referee's process, let
alone on its trio loop: each runs in a worker process of a
:class:`concurrent.futures.ProcessPoolExecutor` (``workers`` of them, 1 by default), and at most
``queue`` more wait for a free worker. A request beyond that is refused at once
(:class:`PoolFullError`) rather than piling up in memory: the durable queue is the database's
(server/analysis/service/jobs.py), which hands the pool only what it can take.

Workers are spawned, not forked: the referee runs threads (trio's, gRPC's), and a fork copies
their locks held.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from types import TracebackType
from typing import Final

from domino_arena.sdk.match.records import parse_record
from domino_arena.server.analysis.report import MatchAnalysis

DEFAULT_WORKERS: Final = 1
DEFAULT_QUEUE: Final = 16
DEFAULT_PRECISION: Final = 0.05
"""Target standard error, in points, of each decision's loss (``analyse_match``'s default)."""


class PoolFullError(RuntimeError):
    """Every worker is busy and the queue is full: the request was not taken."""


@dataclass(frozen=True, slots=True)
class AnalysisRequest:
    """One match to analyse, as a worker process receives it (everything it needs: a worker
    opens no database)."""

    match_id: str
    record: str
    """The match record, JSON Lines, as stored."""
    seats: tuple[int, ...] | None = None
    """The seats to analyse; None: every seat."""
    precision: float = DEFAULT_PRECISION
    game_precision: float | None = None
    """Target standard error of each seat's mean loss per decision over the game (samples go
    where they narrow it most; docs/analysis.md: precision); None: per decision only."""
    seed: int = 0
    pars: bool = False
    """Also each hand's double-dummy par (the games of a duplicate set)."""


def analyse_request(request: AnalysisRequest) -> MatchAnalysis:
    """Analyse ``request``'s match: what a worker process runs.

    Raises:
        RecordError: the record cannot be read.
        ValueError: a bad seat or precision (the analysis names it).
    """
    # The engine is imported here, in the worker process: the referee that only submits
    # requests never loads it (issue 34: about 1.7 MiB).
    from domino_arena.server.analysis.match import analyse_match  # noqa: PLC0415

    return analyse_match(
        parse_record(request.record),
        request.match_id,
        seats=request.seats,
        precision=request.precision,
        game_precision=request.game_precision,
        seed=request.seed,
        pars=request.pars,
    )


class AnalysisPool:
    """``workers`` processes analysing matches, and room for ``queue`` more requests.

    Thread-safe: :meth:`submit` may be called from any thread.
    """

    def __init__(
        self,
        workers: int = DEFAULT_WORKERS,
        queue: int = DEFAULT_QUEUE,
        *,
        work: Callable[[AnalysisRequest], MatchAnalysis] = analyse_request,
    ) -> None:
        """``work`` is what each worker runs on a request (a module-level function: it is
        pickled to the worker).

        Raises:
            ValueError: ``workers`` below 1 or ``queue`` below 0 (named).
        """
        if workers < 1:
            raise ValueError(f"workers: expected at least 1, got {workers}")
        if queue < 0:
            raise ValueError(f"queue: expected 0 or more, got {queue}")
        self.workers = workers
        self.queue = queue
        self._work = work
        self._executor = ProcessPoolExecutor(
            max_workers=workers, mp_context=multiprocessing.get_context("spawn")
        )
        self._lock = threading.Lock()
        self._held: set[Future[MatchAnalysis]] = set()

    @property
    def capacity(self) -> int:
        """Requests it holds at most: running and waiting."""
        return self.workers + self.queue

    @property
    def taken(self) -> int:
        """Requests running or waiting now."""
        with self._lock:
            return self._count()

    def submit(self, request: AnalysisRequest) -> Future[MatchAnalysis]:
        """Hand ``request`` to a worker; the future holds its analysis or its error.

        Raises:
            PoolFullError: it holds :attr:`capacity` requests already.
            RuntimeError: the pool is closed.
        """
        with self._lock:
            taken = self._count()
            if taken >= self.capacity:
                raise PoolFullError(
                    f"the analysis pool is full: {taken} matches running or waiting "
                    f"({self.workers} workers, a queue of {self.queue}); try again when one ends"
                )
            future = self._executor.submit(self._work, request)
            self._held.add(future)
        return future

    def run(self, request: AnalysisRequest) -> MatchAnalysis:
        """Analyse ``request`` in a worker and wait for it (raises what the analysis raised,
        or :class:`PoolFullError`)."""
        return self.submit(request).result()

    def close(self, *, cancel: bool = False, wait: bool = True) -> None:
        """Stop the workers once the running requests end (``cancel``: the waiting ones are
        dropped, not run; ``wait`` False: return at once, the workers end by themselves)."""
        self._executor.shutdown(wait=wait, cancel_futures=cancel)

    def _count(self) -> int:
        """Requests not done, under the lock: a done future is let go here rather than by a
        callback, so a request whose result was read is never counted any more."""
        self._held = {future for future in self._held if not future.done()}
        return len(self._held)

    def __enter__(self) -> AnalysisPool:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close(cancel=error is not None)

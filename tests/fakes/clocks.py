"""Clocks that move only when a test (or the scheduler) moves them: no test waits for real time.

:class:`FakeClock` is for code that takes a ``clock`` callable where it would read
``time.monotonic`` (the compliance check's timer, the metrics' storage timings): the test sets
``now``. :func:`run_virtual` runs trio code under ``MockClock(autojump_threshold=0)``, which
jumps to the next deadline as soon as every task waits, so an hour of timeouts costs nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import trio
from trio.testing import MockClock

T = TypeVar("T")


class FakeClock:
    """A monotonic clock reading ``now`` seconds until a test (or a fake bot) changes it."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def run_virtual(main: Callable[[], Awaitable[T]]) -> T:
    """Run ``main`` under a fresh MockClock that starts at 0 and jumps whenever all tasks wait."""
    return trio.run(main, clock=MockClock(autojump_threshold=0))

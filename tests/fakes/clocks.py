"""A clock that moves only when a test moves it, for code that takes a ``clock`` callable.

Inject it where the code under test reads ``time.monotonic`` (the compliance check's timer,
the metrics' storage timings): the test sets ``now`` and nothing waits for real time. Trio code
uses ``trio.testing.MockClock`` instead.
"""

from __future__ import annotations


class FakeClock:
    """A monotonic clock reading ``now`` seconds until a test (or a fake bot) changes it."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

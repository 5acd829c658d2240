"""Match hosts' arenas on one database, their lease rows on a trio MockClock's time: the
ownership tests' hosts (tests/server/test_ownership_arena.py, test_ownership_ladders.py)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Final

import trio
from trio.testing import MockClock

from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.net.lobby import Lobby
from domino_arena.server.play.arena import Arena
from domino_arena.server.play.ownership import Steward
from domino_arena.server.store import ownership
from domino_arena.server.store.lease import Holder
from tests.fakes.play import no_seats

T0: Final = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
"""When the lease rows' clock starts."""
LEASE: Final = 30.0
"""The hosts' lease, in seconds."""


def trio_now(clock: MockClock) -> ownership.Clock:
    """The lease rows' clock: ``clock``'s time from T0 (read from worker threads too)."""
    return lambda: T0 + dt.timedelta(seconds=clock.current_time())


def host(path: Path, node: str, clock: MockClock) -> Arena:
    """A match host's arena on the SQLite file ``path``, with its own storage and steward
    (whose lease rows follow ``clock``)."""
    storage = RatedStorage(f"sqlite:///{path}")
    storage.open()
    holder = Holder(host=f"pod-{node}", pid=1, id=node.ljust(36, "0"))
    steward = Steward(storage.engine, holder, node, LEASE, now=trio_now(clock))
    return Arena(storage, lobby=Lobby(), seats=no_seats, steward=steward)


async def eventually(done: Callable[[], object]) -> None:
    """Let trio time pass (MockClock jumps) until ``done()`` holds; bounded in steps, not time
    (trio.fail_after would fire while worker threads run)."""
    for _ in range(10_000):
        if done():
            return
        await trio.sleep(0.5)
    raise AssertionError("never happened")

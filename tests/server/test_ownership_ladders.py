"""A cluster's ladder outlives its host (server/play/arena.py: resume_ladders): the settings
a host stored when it started a ladder are taken up by another host once the pool's lease
expired, and a ladder whose settings were deleted (StopLadder through another host) stops on
its owner. Two match hosts' arenas on one SQLite file; trio time is MockClock's, and the lease
rows' clock follows it (tests/fakes/hosts.py)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import trio
from trio.testing import MockClock

from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import make_game
from domino_arena.server.play.arena import Arena
from domino_arena.server.play.ladder_runner import LadderRunner, ratings_of
from domino_arena.server.play.ladder_settings import settings_of, stored
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store import ladders, ownership
from tests.fakes.hosts import LEASE, eventually, host, trio_now
from tests.fakes.play import FakePlay


def a_ladder(arena: Arena) -> LadderRunner:
    """The runner of a four-player moon ladder in course ``c`` (not started)."""
    return LadderRunner(
        make_game("moon"),
        lobby=arena.lobby,
        play=FakePlay(storage=arena.storage),
        ratings=ratings_of(arena.storage, "moon"),
        concurrency=3,
        time_control=TimeControl(move=0.25, bank=7.5, grace=0.05),
        fault_policy=FaultPolicy.FORFEIT,
        max_strikes=2,
        max_deals=40,
        seed=1234,
        course="c",
    )


def test_a_ladders_stored_settings_give_the_same_ladder(tmp_path: Path) -> None:
    arena = host(tmp_path / "arena.db", "host-a", MockClock())
    runner = a_ladder(arena)
    ladders.save(arena.storage.engine, stored(runner))
    (back,) = ladders.all_ladders(arena.storage.engine)
    settings = settings_of(back)
    assert (settings.game.name, settings.game.options()) == ("moon", runner.game.options())
    assert settings.time_control == runner.time_control
    assert (settings.fault_policy, settings.max_strikes, settings.max_deals) == (
        FaultPolicy.FORFEIT,
        2,
        40,
    )
    assert (settings.concurrency, settings.seed, settings.course) == (3, 1234, "c")
    assert ladders.delete(arena.storage.engine, "c", "moon")
    assert not ladders.delete(arena.storage.engine, "c", "moon")
    assert ladders.all_ladders(arena.storage.engine) == []


def test_a_dead_hosts_ladder_is_taken_over_then_stopped_through_its_settings(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """host-a stored its ladder and holds the pool's lease, then dies (never renews): host-b
    takes the ladder over once the lease expired, not before; deleting the settings (what
    StopLadder on any host does) stops it at host-b's next renewal, which releases the pool."""
    caplog.set_level(logging.INFO, "domino_arena.server")
    clock = MockClock(autojump_threshold=0.01)
    a = host(tmp_path / "arena.db", "host-a", clock)
    b = host(tmp_path / "arena.db", "host-b", clock)
    assert a.steward is not None and b.steward is not None
    engine, pool = a.storage.engine, ownership.ladder_key("c", "moon")
    ladders.save(engine, stored(a_ladder(a)))
    assert a.steward.claim(pool).won
    b_steward = b.steward

    async def noop() -> None:
        pass

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            b.nursery = nursery
            nursery.start_soon(b_steward.keep, noop)
            await trio.sleep(LEASE / 2)  # host-a's lease is live: left to it
            assert b.ladders == {}
            await eventually(lambda: ("c", "moon") in b.ladders)
            runner = b.ladders["c", "moon"]
            assert (runner.seed, runner.concurrency, runner.max_deals) == (1234, 3, 40)
            assert [o.node for o in ownership.owners(engine, now=trio_now(clock))] == ["host-b"]
            await trio.to_thread.run_sync(ladders.delete, engine, "c", "moon")
            await eventually(lambda: ("c", "moon") not in b.ladders)
            assert runner.stopping
            nursery.cancel_scope.cancel()

    trio.run(main, clock=clock)
    assert "ladder taken over: course=c game=moon from=host-a" in caplog.text
    assert "ladder stopped through another host: course=c game=moon" in caplog.text
    assert ownership.owners(engine, now=trio_now(clock)) == []

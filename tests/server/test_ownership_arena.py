"""Two match hosts' arenas on one database (server/play/ownership.py): a tournament runs on one
host at a time; a stalled host's tournament is taken over once its lease expires, its running
game replayed from its start with the same seed, every game stored once; the stalled host stops
its copy when it finds out. Trio time is MockClock's, and the lease rows' clock follows it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest
import trio
from trio.testing import MockClock

from domino_arena.server.app import App, Config
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.play.arena import Arena
from domino_arena.server.play.match_spec import FinishedMatch, MatchSpec
from domino_arena.server.play.ownership import OwnedElsewhereError
from domino_arena.server.store import lease, ownership
from domino_arena.server.store.lease import Holder, LeaseHeldError
from domino_arena.server.store.tournaments import StoredTournament, TournamentState
from domino_arena.server.tournaments.lifecycle import schedule_of
from domino_arena.server.tournaments.lifecycle.director import Director
from tests.fakes.hosts import LEASE, T0, eventually, host, trio_now
from tests.fakes.play import FakePlay
from tests.fakes.store import running_tournament

BOTS: Final = ("ann", "bob", "cid", "dan")


@pytest.fixture
def clock() -> MockClock:
    """The test's trio clock, which the lease rows follow."""
    return MockClock(autojump_threshold=0.01)


@pytest.fixture
def hosts(tmp_path: Path, clock: MockClock) -> Iterator[tuple[Arena, Arena]]:
    """Two match hosts' arenas, ``host-a`` and ``host-b``, on one SQLite file."""
    a = host(tmp_path / "arena.db", "host-a", clock)
    b = host(tmp_path / "arena.db", "host-b", clock)
    yield a, b


def stored_running(arena: Arena) -> StoredTournament:
    """A running round robin of :data:`BOTS`, one game at a time, stored for the hosts."""
    t = running_tournament("two hosts", BOTS)
    arena.storage.add_tournament(t)
    return t


def test_a_stalled_hosts_tournament_moves_to_the_other_host_and_each_game_is_stored_once(
    hosts: tuple[Arena, Arena], clock: MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "domino_arena.server")
    a, b = hosts
    a_director, b_director = Director(a), Director(b)
    t = stored_running(a)
    total = len(schedule_of(t))
    a_specs: list[MatchSpec] = []
    a_stalled = trio.Event()

    async def a_plays(spec: MatchSpec) -> FinishedMatch:
        """Host A plays two games, then stalls in the third (a frozen process)."""
        a_specs.append(spec)
        if len(a_specs) <= 2:
            return await FakePlay(storage=a.storage)(spec)
        a_stalled.set()
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    b_play = FakePlay(storage=b.storage)
    a.play = a_plays  # type: ignore[method-assign]
    b.play = b_play  # type: ignore[method-assign]
    assert a.steward is not None and b.steward is not None
    a_steward = a.steward

    async def noop() -> None:
        pass

    async def a_renews(*, task_status: trio.TaskStatus[trio.CancelScope]) -> None:
        """A's resume and keep loop, in a scope the test cancels: A stops renewing."""
        with trio.CancelScope() as scope:
            task_status.started(scope)
            await a_director.resume_tournaments()

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            a.nursery = b.nursery = nursery
            a_renewing = await nursery.start(a_renews)
            await eventually(lambda: t.id in a_director.tournaments)
            nursery.start_soon(b_director.resume_tournaments)
            await a_stalled.wait()
            await trio.sleep(LEASE / 2)  # B looked and left it to A: A's lease is live
            assert t.id not in b_director.tournaments and b_play.calls == []
            a_renewing.cancel()
            await eventually(lambda: t.id not in b_director.tournaments and b_play.calls)
            # A wakes: its next renewal finds the lease lost and stops its copy.
            assert t.id in a_director.tournaments
            nursery.start_soon(a_steward.keep, noop)
            await eventually(lambda: t.id not in a_director.tournaments)
            nursery.cancel_scope.cancel()

    trio.run(main, clock=clock)
    row = b.storage.tournament(t.id)
    assert row is not None and row.state is TournamentState.FINISHED
    assert b.storage.tournament_game_indexes(t.id) == set(range(total))
    stored_by_a = {s.game_index for s in a_specs[:2]}
    stalled = a_specs[2]
    replayed = {s.game_index: s.seed for s in b_play.specs}
    assert len(b_play.specs) == len(replayed) == total - 2  # the stalled game and the rest, once
    assert set(replayed) == set(range(total)) - stored_by_a
    assert replayed[stalled.game_index] == stalled.seed  # played again from its start
    log = caplog.text
    assert f"tournament taken over: id={t.id} from=host-a" in log
    assert f"tournament left to another match host: id={t.id}" in log
    assert f"lease tournament:{t.id} lost" in log
    assert ownership.owners(b.storage.engine, now=trio_now(clock)) == []  # B released it at the end


def test_a_pause_sent_to_another_host_pauses_the_owners_tournament(
    hosts: tuple[Arena, Arena], clock: MockClock
) -> None:
    a, b = hosts
    a_director = Director(a)
    t = stored_running(a)
    play = FakePlay(duration=4.0, storage=a.storage)
    a.play = play  # type: ignore[method-assign]

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            a.nursery = nursery
            nursery.start_soon(a_director.resume_tournaments)
            await eventually(lambda: len(play.finished) == 1)
            # What B's pause_tournament does when it runs no such tournament:
            b.storage.set_tournament_state(t.id, TournamentState.PAUSED)
            await eventually(lambda: t.id not in a_director.tournaments)
            nursery.cancel_scope.cancel()

    trio.run(main, clock=clock)
    row = a.storage.tournament(t.id)
    assert row is not None and row.state is TournamentState.PAUSED
    assert 1 <= len(play.finished) < len(schedule_of(t))
    assert ownership.owners(a.storage.engine, now=lambda: T0) == []  # released: free to start


def test_a_host_refuses_what_another_live_host_owns_naming_it(
    hosts: tuple[Arena, Arena],
) -> None:
    a, b = hosts
    assert a.steward is not None and b.steward is not None
    key = ownership.ladder_key("default", "moon")
    a.steward.now = b.steward.now = lambda: T0
    a.steward.claim_or_refuse(key, "a moon ladder of course 'default'")
    with pytest.raises(OwnedElsewhereError) as refused:
        b.steward.claim_or_refuse(key, "a moon ladder of course 'default'")
    assert str(refused.value) == (
        "a moon ladder of course 'default' runs on match host 'host-a' (its lease lasts until "
        "2026-01-02T03:04:35Z unless renewed): send this call to that host"
    )


def test_a_single_referee_refuses_a_database_that_match_hosts_serve(tmp_path: Path) -> None:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'arena.db'}")
    storage.open()
    holder = Holder(host="pod-a", pid=1, id="a" * 36)
    ownership.claim(storage.engine, ownership.tournament_key("t"), holder, "host-a", seconds=600)
    bound: list[int] = []

    async def serve() -> None:
        await App(Config(port=0), storage).serve(asyncio.Event(), bound.append)

    with pytest.raises(LeaseHeldError, match=r"a cluster's match hosts \('host-a'\) serve"):
        asyncio.run(serve())
    assert bound == []  # refused before any port was bound
    assert lease.current(storage.engine) is None  # its own lease given back
    storage.close()

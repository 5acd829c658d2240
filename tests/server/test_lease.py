"""The referee lease (server/store/lease.py) on SQLite and PostgreSQL, with an injected clock."""

from __future__ import annotations

import datetime as dt
import threading
from typing import Final

import pytest
import trio
from sqlalchemy.exc import OperationalError
from trio.testing import MockClock

from domino_arena.server.app import keep_lease
from domino_arena.server.store import lease
from domino_arena.server.store.lease import Holder, LeaseHeldError, LeaseLostError
from domino_arena.server.store.storage import Storage

T0: Final = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
A: Final = Holder(host="host-a", pid=101, id="a" * 36)
B: Final = Holder(host="host-b", pid=202, id="b" * 36)


def at(seconds: float) -> lease.Clock:
    return lambda: T0 + dt.timedelta(seconds=seconds)


def test_a_free_database_is_leased_and_a_second_referee_is_refused_by_name(
    storage: Storage,
) -> None:
    taken = lease.acquire(storage.engine, A, now=at(0))
    assert taken.expires_at == T0 + dt.timedelta(seconds=lease.LEASE_SECONDS)
    assert lease.current(storage.engine) == taken
    with pytest.raises(LeaseHeldError) as caught:
        lease.acquire(storage.engine, B, now=at(29))
    assert str(caught.value) == (
        "another referee (host host-a, pid 101) holds this database until "
        "2026-01-02T03:04:35Z; stop it or wait"
    )
    assert lease.current(storage.engine) == taken


def test_a_clusters_host_is_refused_beside_a_live_single_referee(storage: Storage) -> None:
    lease.check_free(storage.engine, B, now=at(0))  # nobody holds it
    lease.acquire(storage.engine, A, now=at(0))
    with pytest.raises(LeaseHeldError, match=r"a single referee \(host host-a, pid 101\) serves"):
        lease.check_free(storage.engine, B, now=at(29))
    lease.check_free(storage.engine, B, now=at(31))  # expired: its referee is gone
    assert lease.current(storage.engine) is not None  # checking takes nothing


def test_an_expired_lease_is_taken_over_and_its_old_holder_cannot_renew(
    storage: Storage,
) -> None:
    lease.acquire(storage.engine, A, now=at(0))
    taken = lease.acquire(storage.engine, B, now=at(31))
    assert taken.holder == B and taken.acquired_at == T0 + dt.timedelta(seconds=31)
    with pytest.raises(LeaseLostError, match=r"another referee \(host host-b, pid 202\)"):
        lease.renew(storage.engine, A, now=at(32))


def test_renewing_extends_and_releasing_frees(storage: Storage) -> None:
    lease.acquire(storage.engine, A, now=at(0))
    renewed = lease.renew(storage.engine, A, now=at(20))
    assert renewed.acquired_at == T0
    assert renewed.expires_at == T0 + dt.timedelta(seconds=20 + lease.LEASE_SECONDS)
    with pytest.raises(LeaseHeldError):
        lease.acquire(storage.engine, B, now=at(45))
    assert lease.release(storage.engine, A)
    assert lease.current(storage.engine) is None
    assert not lease.release(storage.engine, A)
    assert lease.acquire(storage.engine, B, now=at(46)).holder == B
    with pytest.raises(LeaseLostError, match="another referee"):
        lease.renew(storage.engine, A, now=at(47))


def test_a_lease_of_a_dead_process_on_this_host_is_taken_over(storage: Storage) -> None:
    here = Holder(host="host-a", pid=303, id="c" * 36)
    lease.acquire(storage.engine, A, now=at(0))
    with pytest.raises(LeaseHeldError):
        lease.acquire(storage.engine, here, now=at(1), alive=lambda pid: True)
    assert lease.acquire(storage.engine, here, now=at(1), alive=lambda pid: False).holder == here


def test_concurrent_acquires_give_exactly_one_holder(storage: Storage) -> None:
    holders = [Holder(host=f"host-{n}", pid=n, id=f"{n:036d}") for n in range(2)]
    start = threading.Barrier(len(holders))
    results: list[object] = []

    def take(holder: Holder) -> None:
        start.wait()
        try:
            results.append(lease.acquire(storage.engine, holder, now=at(0)))
        except LeaseHeldError as exc:
            results.append(exc)

    threads = [threading.Thread(target=take, args=(h,)) for h in holders]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    won = [r for r in results if isinstance(r, lease.Lease)]
    assert len(won) == 1 and len(results) == 2
    assert lease.current(storage.engine) == won[0]


def test_the_renewal_task_retries_a_transient_failure_and_stops_when_the_lease_is_lost() -> None:
    failures = [OperationalError("renew", {}, Exception("connection refused"))] * 2
    calls: list[float] = []
    lost: list[LeaseLostError] = []

    def renew() -> None:
        calls.append(trio.from_thread.run_sync(trio.current_time))
        if failures:
            raise failures.pop()
        if len(calls) == 4:
            raise LeaseLostError(
                "the lease on this database was lost: no referee holds it now", None
            )

    async def main() -> None:
        await keep_lease(renew, lost.append, every=10.0)

    trio.run(main, clock=MockClock(autojump_threshold=0))
    # every 10 s; after failure 1 wait 0.5 s, after failure 2 wait 1 s; then 10 s again
    assert calls == pytest.approx([10.0, 10.5, 11.5, 21.5])
    assert len(lost) == 1

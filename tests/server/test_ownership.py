"""Ownership leases (server/store/ownership.py) on SQLite and PostgreSQL, with an injected clock:
one host at a time owns a tournament or ladder pool; an expired lease moves to another host."""

from __future__ import annotations

import datetime as dt
import threading
from typing import Final

import pytest

from domino_arena.server.store import ownership
from domino_arena.server.store.lease import Holder, LeaseHeldError
from domino_arena.server.store.storage import Storage

T0: Final = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
A: Final = Holder(host="pod-a", pid=1, id="a" * 36)
B: Final = Holder(host="pod-b", pid=1, id="b" * 36)
KEY: Final = ownership.tournament_key("t-1")


def at(seconds: float) -> ownership.Clock:
    return lambda: T0 + dt.timedelta(seconds=seconds)


def test_a_live_lease_keeps_others_out_and_names_its_host(storage: Storage) -> None:
    first = ownership.claim(storage.engine, KEY, A, "host-a", seconds=30, now=at(0))
    assert first.won and first.taken_from is None
    assert first.owner == ownership.Owner(KEY, A.id, "host-a", T0 + dt.timedelta(seconds=30))
    refused = ownership.claim(storage.engine, KEY, B, "host-b", seconds=30, now=at(29))
    assert not refused.won
    assert refused.owner.node == "host-a" and refused.owner.holder == A.id
    again = ownership.claim(storage.engine, KEY, A, "host-a", seconds=30, now=at(10))
    assert again.won and again.taken_from is None  # already its own: renewed
    assert again.owner.expires_at == T0 + dt.timedelta(seconds=40)
    assert [o.node for o in ownership.owners(storage.engine, now=at(39))] == ["host-a"]


def test_an_expired_lease_is_taken_over_and_its_old_host_learns_it_lost_it(
    storage: Storage,
) -> None:
    ownership.claim(storage.engine, KEY, A, "host-a", seconds=30, now=at(0))
    other = ownership.ladder_key("default", "passing")
    ownership.claim(storage.engine, other, A, "host-a", seconds=30, now=at(0))
    taken = ownership.claim(storage.engine, KEY, B, "host-b", seconds=30, now=at(31))
    assert taken.won and taken.taken_from == "host-a"
    # The old host comes back: one renewal says which key it lost and keeps the other.
    lost = ownership.renew(storage.engine, A, [KEY, other], seconds=30, now=at(32))
    assert lost == {KEY}
    live = {o.key: o.node for o in ownership.owners(storage.engine, now=at(60))}
    assert live == {KEY: "host-b", other: "host-a"}  # B took it at 31; A renewed its ladder at 32
    assert ownership.owners(storage.engine, now=at(63)) == []


def test_a_lease_expired_but_not_taken_is_renewed_by_its_holder(storage: Storage) -> None:
    ownership.claim(storage.engine, KEY, A, "host-a", seconds=30, now=at(0))
    assert ownership.renew(storage.engine, A, [KEY], seconds=30, now=at(45)) == set()
    refused = ownership.claim(storage.engine, KEY, B, "host-b", seconds=30, now=at(60))
    assert not refused.won and refused.owner.node == "host-a"


def test_renewal_leaves_the_rows_it_was_not_asked_for_to_expire(storage: Storage) -> None:
    ownership.claim(storage.engine, KEY, A, "host-a", seconds=30, now=at(0))
    assert ownership.renew(storage.engine, A, [], seconds=30, now=at(20)) == set()
    assert ownership.claim(storage.engine, KEY, B, "host-b", seconds=30, now=at(31)).won


def test_released_leases_are_free_at_once(storage: Storage) -> None:
    ladder = ownership.ladder_key("c1", "moon")
    ownership.claim(storage.engine, KEY, A, "host-a", seconds=30, now=at(0))
    ownership.claim(storage.engine, ladder, A, "host-a", seconds=30, now=at(0))
    assert not ownership.release(storage.engine, B, KEY)  # not B's to give up
    assert ownership.release(storage.engine, A, KEY)
    claimed = ownership.claim(storage.engine, KEY, B, "host-b", seconds=30, now=at(1))
    assert claimed.won and claimed.taken_from is None
    assert ownership.release_all(storage.engine, A) == 1  # the ladder's; the tournament is B's
    assert [o.key for o in ownership.owners(storage.engine, now=at(2))] == [KEY]


def test_hosts_claiming_at_once_get_one_owner(storage: Storage) -> None:
    """Eight hosts claim the same free key from eight threads: exactly one wins."""
    holders = [Holder(host=f"pod-{i}", pid=1, id=f"{i}" * 36) for i in range(8)]
    claims: list[ownership.Claim] = []
    start = threading.Barrier(len(holders))

    def claim(holder: Holder) -> None:
        start.wait()
        claims.append(
            ownership.claim(storage.engine, KEY, holder, holder.host, seconds=30, now=at(0))
        )

    threads = [threading.Thread(target=claim, args=(h,)) for h in holders]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [c.owner.node for c in claims if c.won]
    assert len(claims) == 8 and len(winners) == 1
    assert all(c.owner.node == winners[0] for c in claims)


def test_a_lease_must_last(storage: Storage) -> None:
    with pytest.raises(ValueError, match="seconds: expected more than 0, got 0"):
        ownership.claim(storage.engine, KEY, A, "host-a", seconds=0, now=at(0))


def test_a_single_referee_is_refused_while_hosts_hold_live_leases(storage: Storage) -> None:
    ownership.check_free(storage.engine, now=at(0))  # nobody holds anything
    ownership.claim(storage.engine, KEY, A, "host-a", seconds=30, now=at(0))
    ownership.claim(storage.engine, "ladder:c/moon", B, "host-b", seconds=30, now=at(10))
    with pytest.raises(LeaseHeldError) as refused:
        ownership.check_free(storage.engine, now=at(29))
    assert str(refused.value) == (
        "a cluster's match hosts ('host-a', 'host-b') serve this database until "
        "2026-01-02T03:04:45Z unless renewed: stop them before starting a single referee"
    )
    ownership.check_free(storage.engine, now=at(41))  # both expired: their hosts are gone

"""Ownership leases: which of a cluster's match hosts runs which tournament or ladder pool.

A single referee holds the one lease of its database (``lease.py``) and so owns everything. A
cluster's match hosts share a database, so each tournament and each ladder pool is leased on
its own, by one row of ``ownership_leases`` (:data:`.tables.OWNERSHIP_LEASES`) keyed by what it
owns (:func:`tournament_key`, :func:`ladder_key`):

- :func:`claim` takes a key in one write transaction (``SELECT ... FOR UPDATE`` on PostgreSQL,
  SQLite's write lock at ``BEGIN``): free, expired, or already the claimer's, it becomes the
  claimer's; a live row of another host is left alone and returned, so the caller can name it.
- :func:`renew` pushes the expiry of the keys a host holds in one ``UPDATE`` and tells which
  of them are no longer its (another host took them over after they
  expired: the database was unreachable too long, or the host stalled).
- :func:`release` and :func:`release_all` give keys up, so another host takes them at once.
- :func:`check_free` refuses a single referee beside live hosts.

The functions block (run them in a thread) and take the clock ``now`` as an argument, so tests
move time without sleeping. Expiry compares the hosts' clocks: keep them in step (NTP) to well
within the lease's length. A takeover is safe even when the old owner still runs a game it has
not noticed losing: a tournament game is stored once, whoever stores it first (the unique
(tournament, game index) of ``matches``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from domino_arena.server.store import tables
from domino_arena.server.store.engine import writing
from domino_arena.server.store.lease import Holder, LeaseHeldError
from domino_arena.server.store.tables import OWNERSHIP_LEASES

Clock = Callable[[], dt.datetime]


def tournament_key(tournament_id: str) -> str:
    """The key of a tournament's lease."""
    return f"tournament:{tournament_id}"


def ladder_key(course: str, game: str) -> str:
    """The key of a ladder pool's lease: one ladder per course and game."""
    return f"ladder:{course}/{game}"


@dataclass(frozen=True, slots=True)
class Owner:
    """A lease row: the key, the host process holding it (its uuid and its node name) and
    until when (UTC)."""

    key: str
    holder: str
    node: str
    expires_at: dt.datetime


@dataclass(frozen=True, slots=True)
class Claim:
    """What :func:`claim` found: ``won`` (the key is the claimer's now), the ``owner`` row (the
    claimer's, or the other host's that holds it) and the node of a former owner whose expired
    lease was taken over (``taken_from``; None if the key was free or already the claimer's)."""

    won: bool
    owner: Owner
    taken_from: str | None = None


def claim(
    engine: Engine,
    key: str,
    holder: Holder,
    node: str,
    *,
    seconds: float,
    now: Clock = tables.now,
) -> Claim:
    """Lease ``key`` to ``holder`` (named ``node``) for ``seconds``, unless another host holds
    it live; in one transaction."""
    if seconds <= 0:
        raise ValueError(f"seconds: expected more than 0, got {seconds}")
    for attempt in (1, 2):
        try:
            return _claim(engine, key, holder, node, seconds=seconds, now=now)
        except IntegrityError:
            # PostgreSQL: another host inserted the row after our SELECT found none; the
            # second look sees (and locks) it.
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _claim(
    engine: Engine, key: str, holder: Holder, node: str, *, seconds: float, now: Clock
) -> Claim:
    with writing(engine) as connection:
        row = connection.execute(
            sa.select(OWNERSHIP_LEASES).where(OWNERSHIP_LEASES.c.key == key).with_for_update()
        ).one_or_none()
        moment = now()
        expires = moment + dt.timedelta(seconds=seconds)
        mine = Owner(key, holder.id, node, expires)
        if row is None:
            connection.execute(
                OWNERSHIP_LEASES.insert().values(
                    key=key, acquired_at=moment, **_values(holder, node, moment, expires)
                )
            )
            return Claim(True, mine)
        held = _owner(row)
        if held.holder != holder.id and held.expires_at > moment:
            return Claim(False, held)
        values = _values(holder, node, moment, expires)
        if held.holder != holder.id:
            values["acquired_at"] = moment
        connection.execute(
            OWNERSHIP_LEASES.update().where(OWNERSHIP_LEASES.c.key == key).values(**values)
        )
        return Claim(True, mine, None if held.holder == holder.id else held.node)


def renew(
    engine: Engine,
    holder: Holder,
    keys: Iterable[str],
    *,
    seconds: float,
    now: Clock = tables.now,
) -> set[str]:
    """Push the expiry of ``holder``'s leases on ``keys`` (the ones it believes it holds) to
    ``seconds`` from now; return which of them it holds no more. Its other rows are left to
    expire.

    A lease that expired but that no other host took is still ``holder``'s: it is renewed.
    """
    wanted = sorted(set(keys))
    if not wanted:
        return set()
    moment = now()
    mine = (OWNERSHIP_LEASES.c.holder == holder.id, OWNERSHIP_LEASES.c.key.in_(wanted))
    with writing(engine) as connection:
        connection.execute(
            OWNERSHIP_LEASES.update()
            .where(*mine)
            .values(renewed_at=moment, expires_at=moment + dt.timedelta(seconds=seconds))
        )
        held = connection.execute(sa.select(OWNERSHIP_LEASES.c.key).where(*mine)).scalars()
        return set(wanted) - set(held)


def release(engine: Engine, holder: Holder, key: str) -> bool:
    """Give ``key`` up if ``holder`` holds it; return whether it did."""
    with writing(engine) as connection:
        deleted = connection.execute(
            OWNERSHIP_LEASES.delete().where(
                OWNERSHIP_LEASES.c.key == key, OWNERSHIP_LEASES.c.holder == holder.id
            )
        )
        return bool(deleted.rowcount)


def release_all(engine: Engine, holder: Holder) -> int:
    """Give every lease of ``holder`` up (a host's clean shutdown); return how many."""
    with writing(engine) as connection:
        deleted = connection.execute(
            OWNERSHIP_LEASES.delete().where(OWNERSHIP_LEASES.c.holder == holder.id)
        )
        return int(deleted.rowcount)


def owners(engine: Engine, *, now: Clock = tables.now) -> list[Owner]:
    """The live leases (not expired), by key."""
    with engine.connect() as connection:
        rows = connection.execute(
            sa.select(OWNERSHIP_LEASES).order_by(OWNERSHIP_LEASES.c.key)
        ).all()
    moment = now()  # compared here: SQLite keeps times as text without their zone
    return [owner for owner in map(_owner, rows) if owner.expires_at > moment]


def check_free(engine: Engine, *, now: Clock = tables.now) -> None:
    """Check that no cluster's match host serves the database (none holds a live lease on a
    tournament or a ladder pool): a single referee must not run beside them (both would
    schedule the same tournaments); the twin of :func:`.lease.check_free`.

    A runner's leases on hosted bots and their checks (``hosted:NAME``, ``hosted-check:...``,
    server/hosting/runner.py) do not count: a runner is a remote client of whichever referee
    serves, a single one included.

    Raises:
        LeaseHeldError: some match host holds a live lease; the message names every one.
    """
    live = [owner for owner in owners(engine, now=now) if not owner.key.startswith("hosted")]
    if live:
        nodes = ", ".join(sorted({repr(owner.node) for owner in live}))
        until = tables.utc_text(max(owner.expires_at for owner in live))
        raise LeaseHeldError(
            f"a cluster's match hosts ({nodes}) serve this database until {until} unless "
            "renewed: stop them before starting a single referee",
            None,
        )


def _values(
    holder: Holder, node: str, moment: dt.datetime, expires: dt.datetime
) -> dict[str, object]:
    return {
        "holder": holder.id,
        "node": node[:255],
        "host": holder.host[:255],
        "pid": holder.pid,
        "renewed_at": moment,
        "expires_at": expires,
    }


def _owner(row: sa.Row[tuple[object, ...]]) -> Owner:
    mapping = row._mapping
    return Owner(
        key=mapping["key"],
        holder=mapping["holder"],
        node=mapping["node"],
        expires_at=tables.utc(mapping["expires_at"]),
    )

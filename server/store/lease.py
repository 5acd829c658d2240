"""The referee lease: one referee at a time serves a database (issue 9).

Two referees on one database would both schedule the same tournaments and both write their
games; until the scale-out design makes more than one safe, a referee holds a lease, the one
row of ``referee_lease`` (:data:`.tables.REFEREE_LEASE`), and renews it while it serves:

- :func:`acquire` at start, in one write transaction (``SELECT ... FOR UPDATE`` on PostgreSQL,
  SQLite's write lock taken at ``BEGIN`` by :func:`.engine.writing`): it inserts the row, or
  takes over one that expired, or one whose holder is a process of this host that no longer
  runs (a referee killed with SIGKILL starts again at once). A live lease of another referee
  raises :class:`LeaseHeldError`, naming it and when it expires.
- :func:`renew` every :data:`RENEW_SECONDS` pushes the expiry :data:`LEASE_SECONDS` ahead;
  :class:`LeaseLostError` says another referee took the lease over meanwhile.
- :func:`release` at a clean shutdown deletes the row, so the next referee need not wait.

The functions block (run them in a thread from trio or asyncio) and take the clock ``now`` as
an argument, so tests move time without sleeping. Expiry compares the clocks of the referees'
hosts: keep them in step (NTP) to well within :data:`LEASE_SECONDS`.
"""

from __future__ import annotations

import datetime as dt
import os
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from domino_arena.server.store import tables
from domino_arena.server.store.engine import StorageError, writing
from domino_arena.server.store.tables import REFEREE_LEASE

LEASE_SECONDS: Final = 30.0
"""How long a lease lasts after its last renewal: a referee that stopped renewing (killed,
cut off from the database) blocks others for at most this long."""

RENEW_SECONDS: Final = 10.0
"""How often a serving referee renews its lease: two renewals may fail before it expires."""

LEASE_ID: Final = 1
"""The ``id`` of the one row of the lease table."""

_HELD_HERE: Final[set[str]] = set()
"""The ids of the holders of this process that took a lease and did not release it: a lease
row with this host and this pid but another id is a former process's with the same pid (a
container's referee is pid 1 after each restart), so it is taken over."""

_SHOWN: Final = 64  # characters of a host name read from the database that a message shows

Clock = Callable[[], dt.datetime]


@dataclass(frozen=True, slots=True)
class Holder:
    """A referee process: its host, its pid and a uuid made at its start."""

    host: str
    pid: int
    id: str

    def __str__(self) -> str:
        return f"host {_shown(self.host)}, pid {self.pid}"


def new_holder() -> Holder:
    """The holder of this process: this host, this pid, a new random uuid."""
    return Holder(host=socket.gethostname(), pid=os.getpid(), id=str(uuid.uuid4()))


@dataclass(frozen=True, slots=True)
class Lease:
    """The lease row: who holds it, since when, last renewed when, valid until when (UTC)."""

    holder: Holder
    acquired_at: dt.datetime
    renewed_at: dt.datetime
    expires_at: dt.datetime


class LeaseError(StorageError):
    """The lease is another referee's: this one must not (or no longer) serve the database."""

    def __init__(self, message: str, lease: Lease | None) -> None:
        super().__init__(message)
        self.lease = lease


class LeaseHeldError(LeaseError):
    """Another referee holds a live lease; the message names it and when it expires."""


class LeaseLostError(LeaseError):
    """A renewal found the lease gone or held by another referee (it expired meanwhile)."""


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` runs on this host (one of another user's counts as running)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return True  # unsure: let the lease expire rather than take it over
    return True


def current(engine: Engine) -> Lease | None:
    """Return the lease row, or None when no referee holds the database."""
    with engine.connect() as connection:
        row = connection.execute(
            sa.select(REFEREE_LEASE).where(REFEREE_LEASE.c.id == LEASE_ID)
        ).one_or_none()
    return None if row is None else _lease(row)


def acquire(
    engine: Engine,
    holder: Holder,
    *,
    now: Clock = tables.now,
    seconds: float = LEASE_SECONDS,
    alive: Callable[[int], bool] = pid_alive,
) -> Lease:
    """Take the lease for ``holder`` for ``seconds``, in one transaction; return it.

    Free, expired, already ``holder``'s, or held by a process of this host that no longer runs
    (``alive`` says which pids run): the lease becomes ``holder``'s.

    Raises:
        LeaseHeldError: another referee holds a live lease; the message names its host and
            pid and the time it expires, in one line.
    """
    if seconds <= 0:
        raise ValueError(f"seconds: expected more than 0, got {seconds}")
    for attempt in (1, 2):
        try:
            return _acquire(engine, holder, now, seconds, alive)
        except IntegrityError:
            # PostgreSQL: a referee starting at the same time inserted the first row after our
            # SELECT found none; the second look sees (and locks) that row.
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _acquire(
    engine: Engine,
    holder: Holder,
    now: Clock,
    seconds: float,
    alive: Callable[[int], bool],
) -> Lease:
    with writing(engine) as connection:
        row = connection.execute(
            sa.select(REFEREE_LEASE).where(REFEREE_LEASE.c.id == LEASE_ID).with_for_update()
        ).one_or_none()
        moment = now()
        lease = Lease(holder, moment, moment, moment + dt.timedelta(seconds=seconds))
        values = _values(lease)
        if row is None:
            connection.execute(REFEREE_LEASE.insert().values(id=LEASE_ID, **values))
            _HELD_HERE.add(holder.id)
            return lease
        held = _lease(row)
        dead = _gone(held.holder, holder, alive)
        mine = held.holder.id == holder.id
        if mine:
            lease = Lease(holder, held.acquired_at, moment, lease.expires_at)
            values = _values(lease)
        elif held.expires_at > moment and not dead:
            until = tables.utc_text(held.expires_at)
            raise LeaseHeldError(
                f"another referee ({held.holder}) holds this database until {until}; "
                "stop it or wait",
                held,
            )
        connection.execute(
            REFEREE_LEASE.update().where(REFEREE_LEASE.c.id == LEASE_ID).values(**values)
        )
        _HELD_HERE.add(holder.id)
        return lease


def check_free(
    engine: Engine,
    holder: Holder,
    *,
    now: Clock = tables.now,
    alive: Callable[[int], bool] = pid_alive,
) -> None:
    """Check that no single referee serves the database, without taking the lease: a cluster's
    match host must not run beside one (both would schedule the same tournaments).

    Raises:
        LeaseHeldError: a live single referee holds the lease; the message names it.
    """
    held = current(engine)
    if held is None or held.holder.id == holder.id:
        return
    if held.expires_at > now() and not _gone(held.holder, holder, alive):
        until = tables.utc_text(held.expires_at)
        raise LeaseHeldError(
            f"a single referee ({held.holder}) serves this database until {until}: stop it "
            "before starting a cluster's match hosts",
            held,
        )


def _gone(held: Holder, holder: Holder, alive: Callable[[int], bool]) -> bool:
    """Whether the process ``held`` surely runs no more: it was on ``holder``'s host, and its
    pid is free, or is ``holder``'s own pid while no holder of this process has that id."""
    if held.host != holder.host:
        return False
    if held.pid == holder.pid == os.getpid():
        return held.id not in _HELD_HERE
    return not alive(held.pid)


def renew(
    engine: Engine, holder: Holder, *, now: Clock = tables.now, seconds: float = LEASE_SECONDS
) -> Lease:
    """Push the expiry of ``holder``'s lease to ``seconds`` from now; return the lease.

    A lease that expired but that no other referee took is still ``holder``'s: it is renewed.

    Raises:
        LeaseLostError: the lease is gone or another referee's (named in the message).
    """
    with writing(engine) as connection:
        row = connection.execute(
            sa.select(REFEREE_LEASE).where(REFEREE_LEASE.c.id == LEASE_ID).with_for_update()
        ).one_or_none()
        held = None if row is None else _lease(row)
        if held is None or held.holder.id != holder.id:
            other = "no referee" if held is None else f"another referee ({held.holder})"
            raise LeaseLostError(f"the lease on this database was lost: {other} holds it now", held)
        moment = now()
        lease = Lease(holder, held.acquired_at, moment, moment + dt.timedelta(seconds=seconds))
        connection.execute(
            REFEREE_LEASE.update()
            .where(REFEREE_LEASE.c.id == LEASE_ID)
            .values(renewed_at=lease.renewed_at, expires_at=lease.expires_at)
        )
        return lease


def release(engine: Engine, holder: Holder) -> bool:
    """Give the lease up if ``holder`` holds it; return whether it did."""
    with writing(engine) as connection:
        deleted = connection.execute(
            REFEREE_LEASE.delete().where(
                REFEREE_LEASE.c.id == LEASE_ID, REFEREE_LEASE.c.holder == holder.id
            )
        )
        _HELD_HERE.discard(holder.id)
        return bool(deleted.rowcount)


def _values(lease: Lease) -> dict[str, object]:
    return {
        "host": lease.holder.host[:255],
        "pid": lease.holder.pid,
        "holder": lease.holder.id,
        "acquired_at": lease.acquired_at,
        "renewed_at": lease.renewed_at,
        "expires_at": lease.expires_at,
    }


def _lease(row: sa.Row[tuple[object, ...]]) -> Lease:
    mapping = row._mapping
    return Lease(
        holder=Holder(host=mapping["host"], pid=mapping["pid"], id=mapping["holder"]),
        acquired_at=tables.utc(mapping["acquired_at"]),
        renewed_at=tables.utc(mapping["renewed_at"]),
        expires_at=tables.utc(mapping["expires_at"]),
    )


def _shown(text: str) -> str:
    """A host name read from the database, fit for one log line: printable and bounded."""
    cleaned = "".join(c if c.isprintable() else "?" for c in text[:_SHOWN])
    return cleaned + ("..." if len(text) > _SHOWN else "")

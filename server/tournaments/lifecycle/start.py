"""Starting a tournament: its scheduled time, and the entrants its policy chooses then.

A tournament with ``start_at`` starts by itself at that moment: the arena runs a trio task that
sleeps until then (:func:`sleep_until`, on trio's clock: the wall-clock time is mapped to trio
time when the task is scheduled, so tests with a ``MockClock`` take no real time), then starts
it if it is still CREATED (started by hand earlier, paused or cancelled: the task does nothing).
A referee restarted before that moment schedules it again (``Director.resume_tournaments``); one
restarted after it starts it at once.

Entrant policies (:func:`chosen_entrants`), applied when a CREATED tournament starts, by hand or
at its time:

* ``listed``: the entrants as created;
* ``connected``: the listed bots and every enabled bot of the course connected now;
* ``latest``: each owner's latest registered enabled bot of the course (by creation time; bots
  with no owner, made by the admin or an organizer, are not entered); the listed bots are not
  added.

A bot whose owner is disabled (docs/courses.md: owners) is entered by neither policy.

Hosted versions: at its first start each entrant with an accepted hosted version and no
organizer's pin is pinned to its current version (``server/store/hosted_settings.py``), so a
version submitted while the tournament runs never plays in it (docs/tournaments.md: versions).

Frozen baselines (``house:NAME``) are kept in every case. The entrants and their owners are then
written to the row (``Storage.set_tournament_entrants``) before any schedule is made, so a
resumed tournament plays the same schedule. If they make no schedule (too few entrants, or the
fair seating rule leaves no table), the tournament is CANCELLED at once and the reason is stored
with it (its ``verdict`` column, ``{"cancelled": REASON}``: a round robin has no verdict of its
own; :func:`cancelled_reason` reads it) and logged; a start by hand is refused with it
(FAILED_PRECONDITION). The admin API's Tournament message has no field for it yet.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Any, Final, Protocol

import trio

from domino_arena.server.play.house import house_name
from domino_arena.server.play.roster import Roster
from domino_arena.server.store.bots import BotState, StoredBot
from domino_arena.server.store.tournaments import StoredTournament, TournamentState
from domino_arena.server.tournaments.lifecycle.schedule import TournamentError, check_schedule

LOG: Final = logging.getLogger("domino_arena.server")


class StartStorage(Protocol):
    """The storage calls of :func:`choose` (blocking)."""

    def bots(
        self, *, include_deleted: bool = False, course: str | None = None
    ) -> list[StoredBot]: ...
    def set_tournament_entrants(
        self, tournament_id: str, entrants: tuple[str, ...], owners: dict[str, str] | None
    ) -> StoredTournament: ...
    def set_tournament_verdict(self, tournament_id: str, verdict: dict[str, object]) -> None: ...
    def set_tournament_state(self, tournament_id: str, state: TournamentState) -> None: ...
    def freeze_versions(self, tournament_id: str) -> StoredTournament: ...


def needs_entrants(t: StoredTournament) -> bool:
    """Whether ``t``'s entrants are still to be chosen by its policy (it has not started)."""
    return t.entrant_policy != "listed" and t.state is TournamentState.CREATED


def chosen_entrants(
    t: StoredTournament, bots: Sequence[StoredBot], connected: Collection[str]
) -> tuple[tuple[str, ...], dict[str, str]]:
    """The entrants ``t``'s policy takes now, with their owners (module doc)."""
    houses = [e for e in t.entrants if house_name(e) is not None]
    listed = [e for e in t.entrants if house_name(e) is None]
    mine = [
        b for b in bots if b.course == t.course and b.state is BotState.ENABLED and b.owner_enabled
    ]
    if t.entrant_policy == "connected":
        names = listed + sorted(
            b.name for b in mine if b.name in connected and b.name not in listed
        )
    elif t.entrant_policy == "latest":
        latest: dict[str, StoredBot] = {}
        for b in sorted(mine, key=lambda b: (b.created, b.name)):
            if b.owner:
                latest[b.owner] = b
        names = sorted(b.name for b in latest.values())
    else:
        names = listed
    owners = {b.name: b.owner for b in bots if b.owner}
    if t.owners:
        owners.update(t.owners)
    entrants = (*names, *houses)
    return entrants, {e: owners[e] for e in entrants if owners.get(e)}


def choose(
    storage: StartStorage, t: StoredTournament, connected: Collection[str]
) -> StoredTournament | str:
    """Choose and store ``t``'s entrants (blocking); return the new row, or the reason it was
    cancelled instead (too few entrants, or no table under the seating rule).

    A tournament whose entrants need no choosing is returned as it is.
    """
    if not needs_entrants(t):
        return t
    bots = storage.bots(course=t.course)
    entrants, owners = chosen_entrants(t, bots, connected)
    try:
        check_schedule(dataclasses.replace(t, entrants=entrants, owners=owners))
    except TournamentError as exc:
        reason = (
            f"cancelled at its start: entrant policy {t.entrant_policy} chose "
            f"{len(entrants)} entrant(s), which make no schedule ({exc})"
        )[:1000]
        storage.set_tournament_verdict(t.id, {"cancelled": reason})
        storage.set_tournament_state(t.id, TournamentState.CANCELLED)
        LOG.warning("tournament %s %s", t.id, reason)
        return reason
    row = storage.set_tournament_entrants(t.id, entrants, owners)
    LOG.info(
        "tournament %s: entrant policy %s chose %d entrants", t.id, t.entrant_policy, len(entrants)
    )
    return row


async def begin(
    storage: StartStorage,
    lobby: Roster,
    t: StoredTournament,
    in_thread: Callable[..., Awaitable[Any]],
) -> StoredTournament:
    """:func:`choose` ``t``'s entrants if they still are to be chosen, then, at its first start,
    freeze the hosted versions its entrants play (``Storage.freeze_versions``), running the
    storage calls with ``in_thread`` (``asyncio.to_thread`` or ``trio.to_thread.run_sync``: the
    arena starts tournaments from both sides).

    Raises:
        ValueError: too few entrants: it was cancelled (the message says why).
    """
    if needs_entrants(t):
        connected = {present.name for present in lobby.connections()}
        chosen = await in_thread(choose, storage, t, connected)
        if isinstance(chosen, str):
            raise ValueError(f"tournament '{t.id}' was {chosen}")
        assert isinstance(chosen, StoredTournament)
        t = chosen
    if t.state is TournamentState.CREATED:  # its first start: a resumed one keeps its versions
        frozen = await in_thread(storage.freeze_versions, t.id)
        assert isinstance(frozen, StoredTournament)
        t = frozen
    return t


def cancelled_reason(t: StoredTournament) -> str:
    """Why a tournament was cancelled at its start (empty if it was not)."""
    if t.kind == "compare" or not t.verdict:
        return ""
    reason = t.verdict.get("cancelled")
    return reason if isinstance(reason, str) else ""


def trio_deadline(at: dt.datetime, now: dt.datetime | None = None) -> float:
    """The trio time of the wall-clock moment ``at`` (UTC), mapped now."""
    wall = now if now is not None else dt.datetime.now(dt.UTC)
    return trio.current_time() + max(0.0, (at - wall).total_seconds())


async def sleep_until(at: dt.datetime) -> None:
    """Sleep until the wall-clock moment ``at`` (UTC) on trio's clock (module doc)."""
    await trio.sleep_until(trio_deadline(at))

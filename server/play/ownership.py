"""A cluster's match host's leases on tournaments and ladder pools, kept while it serves.

Each match host of a cluster owns the tournaments and ladder pools it runs through a lease row
each (``server/store/ownership.py``); a single referee has none (it holds its database's one
lease, ``server/store/lease.py``). The :class:`Steward` claims a key before the director starts
a tournament or the arena a ladder pool, renews every key it holds every
:attr:`Steward.renew_seconds` (a third of the lease), and calls what was registered for a key
when another host has taken it over, so this host stops running it. A host that dies stops
renewing: once its leases expire, the next round of every other host's steward
(:meth:`Steward.keep`) claims the running tournaments no live host owns and the director
resumes them (``server/tournaments/lifecycle/director.py``: ``resume_tournaments``).

The rule for the games a dead host was playing (docs/tournaments.md): a tournament game that
was not stored is played again from its start with the same seed by the new owner; a game is
never stored twice (one transaction per game; the unique (tournament, game index) as the
backstop, should an old owner that has not noticed its loss still store one). Ladder games
that were running are void (never stored, so never rated); the ladder itself is taken over
like a tournament: its settings are stored when it starts (``server/store/ladders.py``), and
the arena's :meth:`~domino_arena.server.play.arena.Arena.resume_ladders`, one of the steward's
:attr:`Steward.adopters`, claims the pool's expired lease and runs the ladder again with
them. Each of its games has a match id of its own (the runner's session), stored and rated at
most once (the unique match id of ``rated_games``).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Final, Protocol, TypeVar

import trio
from sqlalchemy.engine import Engine

from domino_arena.server.store import ownership
from domino_arena.server.store.engine import error_reason
from domino_arena.server.store.lease import Holder
from domino_arena.server.store.ownership import Claim
from domino_arena.server.store.storage import Storage
from domino_arena.server.store.tables import now as utc_now
from domino_arena.server.store.tables import utc_text
from domino_arena.server.store.tournaments import TournamentState
from domino_arena.server.store.writer import backoff, is_transient

LOG: Final = logging.getLogger("domino_arena.server")

R = TypeVar("R")

RELEASE_SECONDS: Final = 5.0
"""How long a release may wait for the database when what it names ends; the lease expires by
itself if it could not be given up."""


class RunningTournament(Protocol):
    """What the steward needs of a tournament this host runs: its runner
    (``server/tournaments/lifecycle/runner.py``), which play may not import."""

    @property
    def pausing(self) -> bool:
        """Whether it starts no new game (paused, its running games finishing)."""
        ...

    def pause(self) -> None:
        """Start no new game; the running ones finish and are kept."""
        ...

    def cancel(self) -> None:
        """End it for good: its running games are aborted."""
        ...


class OwnedElsewhereError(ValueError):
    """What this host was asked to start is another live host's (its message names it)."""


@dataclass
class Steward:
    """This host's leases: :meth:`claim` before starting, :meth:`hold` what to stop when lost,
    :meth:`keep` renewing them in the trio nursery, :meth:`release` when it ends.

    ``now`` is the clock of the lease rows (tests move it).
    """

    engine: Engine
    holder: Holder
    node: str
    lease_seconds: float = 30.0
    now: ownership.Clock = utc_now
    held: dict[str, Callable[[], None]] = field(default_factory=dict)
    """The keys this host holds -> what stops what each one names, if it is lost."""
    adopters: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    """What else :meth:`keep` runs after its ``adopt`` at every renewal (the arena's ladders:
    the director, which calls :meth:`keep`, knows only the tournaments)."""

    @property
    def renew_seconds(self) -> float:
        """How often the leases are renewed: two renewals may fail before they expire."""
        return self.lease_seconds / 3

    def claim(self, key: str) -> Claim:
        """Lease ``key`` to this host unless another live host holds it (blocking)."""
        return ownership.claim(
            self.engine,
            key,
            self.holder,
            self.node,
            seconds=self.lease_seconds,
            now=self.now,
        )

    def claim_or_refuse(self, key: str, what: str) -> Claim:
        """:meth:`claim`, raising :class:`OwnedElsewhereError` (naming the owner and when
        its lease expires) when another host holds ``key``; ``what`` names it (blocking)."""
        claim = self.claim(key)
        if not claim.won:
            until = utc_text(claim.owner.expires_at)
            raise OwnedElsewhereError(
                f"{what} runs on match host {claim.owner.node!r} (its lease lasts until "
                f"{until} unless renewed): send this call to that host"
            )
        return claim

    async def claim_tournament(self, tournament_id: str) -> bool:
        """Claim a tournament's lease (trio side); log a takeover of a dead host's."""
        claim = await trio.to_thread.run_sync(self.claim, ownership.tournament_key(tournament_id))
        if claim.won and claim.taken_from is not None:
            LOG.warning(
                "tournament taken over: id=%s from=%s (its lease expired)",
                tournament_id,
                claim.taken_from,
            )
        return claim.won

    async def follow_stored_states(
        self, storage: Storage, tournaments: Mapping[str, RunningTournament]
    ) -> None:
        """Pause or cancel this host's tournaments that an admin call to another match host
        paused or cancelled (that host found no runner of them and stored the new state)."""
        for tournament_id, runner in list(tournaments.items()):
            t = await trio.to_thread.run_sync(storage.tournament, tournament_id)
            if t is None or tournaments.get(tournament_id) is not runner:
                continue
            if t.state is TournamentState.CANCELLED:
                runner.cancel()
            elif t.state is TournamentState.PAUSED and not runner.pausing:
                runner.pause()

    def hold(self, key: str, on_lost: Callable[[], None]) -> None:
        """Keep ``key`` renewed until :meth:`release`; ``on_lost`` stops what it names."""
        self.held[key] = on_lost

    def drop(self, key: str) -> None:
        """Give ``key`` up (blocking, so in a worker thread: it leaves :attr:`held`, which
        only the event loop's thread changes, to :meth:`release`)."""
        ownership.release(self.engine, self.holder, key)

    async def release(self, key: str) -> None:
        """Stop renewing ``key`` and :meth:`drop` it, from trio: bounded and shielded (also
        called while what ``key`` names is being cancelled); an error is logged, and the lease
        expires by itself."""
        self.held.pop(key, None)
        with trio.CancelScope(shield=True), trio.move_on_after(RELEASE_SECONDS):
            try:
                await trio.to_thread.run_sync(self.drop, key)
            except Exception as error:
                LOG.warning("lease %s not released: %s", key, error_reason(error))

    def release_all(self) -> int:
        """Give every lease of this host up (blocking; at a clean shutdown)."""
        self.held.clear()
        return ownership.release_all(self.engine, self.holder)

    async def keep(self, adopt: Callable[[], Awaitable[None]]) -> None:
        """Every :attr:`renew_seconds`: renew the leases held, stop what was lost, then
        ``adopt`` and the :attr:`adopters` (claim what no live host runs); until cancelled.

        A renewal's transient database error is retried (:func:`renewing`); a lease that
        expired meanwhile and that no other host took is still this host's. ``adopt``'s errors
        are logged; it runs again at the next renewal.
        """

        async def renew() -> set[str]:
            keys = list(self.held)  # here, not in the worker thread: trio changes ``held``
            return await trio.to_thread.run_sync(self._renew, keys)

        async def renewed(lost: set[str]) -> None:
            for key in sorted(lost):
                on_lost = self.held.pop(key, None)
                if on_lost is not None:
                    LOG.error("lease %s lost: another match host took it over; stopping it", key)
                    on_lost()
            for job in (adopt, *self.adopters):
                try:
                    await job()
                except Exception as error:  # tried again at the next renewal
                    if not is_transient(error):
                        LOG.exception("what no live host runs could not be taken over")
                    else:
                        LOG.warning(
                            "what no live host runs not looked for: %s", error_reason(error)
                        )

        await renewing(renew, renewed, every=self.renew_seconds, what="leases")

    def _renew(self, keys: list[str]) -> set[str]:
        return ownership.renew(
            self.engine,
            self.holder,
            keys,
            seconds=self.lease_seconds,
            now=self.now,
        )


async def renewing(
    renew: Callable[[], Awaitable[R]],
    renewed: Callable[[R], Awaitable[None]],
    *,
    every: float,
    what: str,
) -> None:
    """Every ``every`` seconds, ``renew`` a lease (the database's one, or a host's), then hand
    what it returned to ``renewed``; until cancelled.

    A transient database error is logged (``what`` names what was not renewed) and retried
    after the writer's :func:`backoff` (capped at ``every``), forever. Any other error
    propagates (a lease another process took: the caller stops serving what it names).
    """
    attempt = 0
    while True:
        await trio.sleep(every if attempt == 0 else backoff(attempt, cap=every))
        try:
            result = await renew()
        except Exception as error:
            if not is_transient(error):
                raise
            attempt += 1
            LOG.warning(
                "%s not renewed (try %d): %s; retrying in %.1f s",
                what,
                attempt,
                error_reason(error),
                backoff(attempt, cap=every),
            )
            continue
        if attempt:
            LOG.info("%s renewed after %d failed tries", what, attempt)
        attempt = 0
        await renewed(result)

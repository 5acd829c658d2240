"""The director: every tournament's life on a referee, from its creation to its last game.

It creates a tournament (stored first), starts it at once or at its ``start_at`` (``start.py``
chooses its entrants then), runs it with a :class:`TournamentRunner` (each game played and
stored by the arena's ``play``), resumes it after a database failure or a restart, and pauses
or cancels it. The arena below it (``server/play/arena.py``) only runs matches; on a cluster's
match host, the arena's steward (``server/play/ownership.py``) holds a lease on each
tournament the director runs, so only one host runs it (docs/cluster.md).

Called from asyncio (the admin API, the main job) for create, start, pause, cancel and
progress; :meth:`Director.resume_tournaments` runs in the arena's trio nursery.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Final

import trio

from domino_arena.server.play.arena import Arena
from domino_arena.server.store import ownership
from domino_arena.server.store.engine import error_reason
from domino_arena.server.store.tournaments import StoredTournament, TournamentState
from domino_arena.server.store.writer import backoff, is_transient
from domino_arena.server.tournaments.lifecycle.runner import Progress, TournamentRunner
from domino_arena.server.tournaments.lifecycle.start import begin, sleep_until

LOG: Final = logging.getLogger("domino_arena.server")


@dataclass
class Director:
    """The tournaments of one referee (one match host on a cluster): their runners while they
    run, their scheduled starts, and the calls that change their state.

    ``arena`` plays their games (``Arena.play``) and lends its storage, lobby, house bots,
    steward and trio nursery.
    """

    arena: Arena
    tournaments: dict[str, TournamentRunner] = field(default_factory=dict)
    """The tournament id -> its runner, while it runs."""
    scheduled: set[str] = field(default_factory=set)
    """The ids of the created tournaments waiting for their ``start_at`` (a task each)."""
    on_finished: Callable[[str], Awaitable[None]] | None = None
    """Told the id of each tournament that ends here with its last game (the composition
    root queues its analysis: server/analysis/jobs.py); its errors are logged, never raised."""

    async def create_tournament(self, t: StoredTournament, start: bool) -> None:
        """Store the new tournament ``t`` and, if ``start``, start it (else at its
        ``start_at``, if it has one).

        Raises:
            ValueError: a baseline it seats is not a house bot this referee hosts.
        """
        house = self.arena.house
        missing = [name for name, _ in t.baselines if name not in house]
        if missing:
            raise ValueError(
                f"baselines: this referee hosts no house bot {', '.join(missing)} "
                f"(it hosts: {', '.join(sorted(house)) or 'none'})"
            )
        await asyncio.to_thread(self.arena.storage.add_tournament, t)
        LOG.info("tournament created: id=%s name=%r game=%s", t.id, t.name, t.game)
        if start:
            await self.start_tournament(t.id)
        elif t.start_at is not None:
            self._schedule(self.arena.check_running(), t)

    def _schedule(self, nursery: trio.Nursery, t: StoredTournament) -> None:
        """Start ``t`` by itself at its ``start_at`` (server/tournaments/lifecycle/start.py)."""
        if t.id in self.scheduled or t.start_at is None:
            return
        self.scheduled.add(t.id)
        LOG.info("tournament scheduled: id=%s start_at=%s", t.id, t.start_at.isoformat())
        nursery.start_soon(self._start_at, t.id, t.start_at, name=f"tournament {t.id} start_at")

    async def _start_at(self, tournament_id: str, start_at: dt.datetime) -> None:
        arena = self.arena
        try:
            await sleep_until(start_at)  # mapped to trio's clock now
            t = await trio.to_thread.run_sync(arena.storage.tournament, tournament_id)
            if t is None or t.state is not TournamentState.CREATED or arena.shutting_down:
                return  # started by hand, paused or cancelled meanwhile: nothing to do
            if not await self._claim(t.id):
                return  # another match host starts it
            t = await begin(arena.storage, arena.lobby, t, trio.to_thread.run_sync)
            await trio.to_thread.run_sync(
                arena.storage.set_tournament_state, t.id, TournamentState.RUNNING
            )
            if arena.nursery is not None and t.id not in self.tournaments:
                LOG.info("tournament started at its start_at: id=%s", t.id)
                self._launch(arena.nursery, t)
        except ValueError as exc:  # cancelled at its start: logged and stored already
            LOG.info("tournament not started at its start_at: id=%s: %s", tournament_id, exc)
        except Exception:
            LOG.exception("tournament could not start at its start_at: id=%s", tournament_id)
        finally:
            self.scheduled.discard(tournament_id)

    async def _stored_tournament(self, tournament_id: str) -> StoredTournament:
        """The stored tournament ``tournament_id`` (read off the event loop).

        Raises:
            KeyError: no such tournament.
        """
        t = await asyncio.to_thread(self.arena.storage.tournament, tournament_id)
        if t is None:
            raise KeyError(f"no tournament '{tournament_id}'")
        return t

    async def start_tournament(self, tournament_id: str) -> None:
        """Start (or resume) a created or paused tournament.

        Raises:
            KeyError: no such tournament.
            ValueError: it is finished, cancelled, or still pausing.
            NotAcceptingError: the referee is starting or shutting down.
        """
        arena = self.arena
        nursery = arena.check_running()
        t = await self._stored_tournament(tournament_id)
        runner = self.tournaments.get(tournament_id)
        if runner is not None:
            if runner.pausing:
                raise ValueError(
                    f"tournament '{tournament_id}' is pausing: start it again once its "
                    f"{runner.progress.running} running games have ended"
                )
            return  # running already
        if t.state in (TournamentState.FINISHED, TournamentState.CANCELLED):
            raise ValueError(f"tournament '{tournament_id}' is {t.state.value}: it cannot start")
        key = ownership.tournament_key(tournament_id)
        if arena.steward is not None:
            await asyncio.to_thread(arena.steward.claim_or_refuse, key, f"tournament '{t.id}'")
        try:
            t = await begin(arena.storage, arena.lobby, t, asyncio.to_thread)
            await asyncio.to_thread(
                arena.storage.set_tournament_state, tournament_id, TournamentState.RUNNING
            )
        except BaseException:
            if arena.steward is not None:  # free for the next try, on any host
                await asyncio.shield(asyncio.to_thread(arena.steward.drop, key))
            raise
        self._launch(nursery, t)

    def _runner(self, t: StoredTournament) -> TournamentRunner:
        arena = self.arena
        return TournamentRunner(t, storage=arena.storage, play=arena.play, lobby=arena.lobby)

    def _launch(self, nursery: trio.Nursery, t: StoredTournament) -> None:
        runner = self._runner(t)
        self.tournaments[t.id] = runner
        scope = trio.CancelScope()
        if self.arena.steward is not None:  # lost to another host: its games stop, unstored
            self.arena.steward.hold(ownership.tournament_key(t.id), scope.cancel)
        nursery.start_soon(self._run_tournament, runner, scope, name=f"tournament {t.id}")

    async def _claim(self, tournament_id: str) -> bool:
        """Whether this referee may run the tournament: on a match host, once it holds its
        lease."""
        steward = self.arena.steward
        return steward is None or await steward.claim_tournament(tournament_id)

    async def _run_tournament(self, runner: TournamentRunner, scope: trio.CancelScope) -> None:
        """Run a tournament to its end; a database failure of its own calls resumes it later.

        The games' results are saved by the writer, which retries by itself; the runner's own
        reads and state changes are retried here, by a fresh runner (which finds the games
        already stored), after a backoff. ``scope`` is cancelled when another match host took
        the tournament over: its running games end unstored, its state is left to the new owner.
        """
        tournament_id = runner.t.id
        LOG.info("tournament running: id=%s games=%d", tournament_id, runner.progress.total)
        try:
            with scope:
                await self._tournament_loop(runner)
            if scope.cancelled_caught:
                LOG.warning("tournament left to another match host: id=%s", tournament_id)
        finally:
            # Its runner (or the fresh one that replaced it): no other starts meanwhile.
            self.tournaments.pop(tournament_id, None)
            if self.arena.steward is not None:
                await self.arena.steward.release(ownership.tournament_key(tournament_id))

    async def _tournament_loop(self, runner: TournamentRunner) -> None:
        tournament_id = runner.t.id
        failures = 0
        while True:
            try:
                state = await runner.run()
            except Exception as exc:
                if not is_transient(exc) or runner.pausing:
                    # Its state stays RUNNING: the next start of the referee resumes it.
                    LOG.exception("tournament stopped by an error: id=%s", tournament_id)
                    return
                failures += 1
                delay = backoff(failures)
                LOG.warning(
                    "tournament %s: the database failed (%s); resuming in %.1f s",
                    tournament_id,
                    error_reason(exc),
                    delay,
                )
                await trio.sleep(delay)
                fresh = self._runner(runner.t)
                if self.tournaments.get(tournament_id) is runner:
                    self.tournaments[tournament_id] = fresh
                runner = fresh
                continue
            done = runner.progress.done
            LOG.info("tournament %s: id=%s done=%d", state.value, tournament_id, done)
            if state is TournamentState.FINISHED and self.on_finished is not None:
                try:
                    await self.on_finished(tournament_id)
                except Exception:
                    LOG.exception("tournament %s: what follows its end failed", tournament_id)
            return

    async def resume_tournaments(self) -> None:
        """Start a runner for every tournament left running (after a crash or a restart), and
        schedule again the created ones that have a ``start_at``.

        On a cluster's match host, only the running ones no live host holds, and then, while
        it serves, again at every renewal of its leases (:meth:`Steward.keep`): a dead host's
        tournaments are taken over once their leases expire.
        """
        nursery = self.arena.check_running()
        try:
            await self._resume(nursery)
        except Exception:
            LOG.exception("the running tournaments could not be read: none resumed")
        if self.arena.steward is not None:
            await self.arena.steward.keep(functools.partial(self._resume, nursery))

    async def _resume(self, nursery: trio.Nursery) -> None:
        arena = self.arena
        stored = await trio.to_thread.run_sync(
            arena.storage.tournaments, [TournamentState.RUNNING, TournamentState.CREATED]
        )
        for t in stored:
            if t.state is TournamentState.CREATED:
                self._schedule(nursery, t)
            elif t.id not in self.tournaments and not arena.shutting_down:
                if arena.steward is None:
                    LOG.info("tournament resumed: id=%s", t.id)
                elif not await self._claim(t.id):
                    continue
                self._launch(nursery, t)
        if arena.steward is not None:
            await arena.steward.follow_stored_states(arena.storage, self.tournaments)

    async def pause_tournament(self, tournament_id: str) -> None:
        """Start no new game of the tournament; its running games finish and are kept.

        Raises:
            KeyError: no such tournament.
            ValueError: it is finished or cancelled.
        """
        runner = self.tournaments.get(tournament_id)
        if runner is not None:
            runner.pause()
            return
        t = await self._stored_tournament(tournament_id)
        if t.state in (TournamentState.FINISHED, TournamentState.CANCELLED):
            raise ValueError(f"tournament '{tournament_id}' is {t.state.value}: it cannot pause")
        await asyncio.to_thread(
            self.arena.storage.set_tournament_state, tournament_id, TournamentState.PAUSED
        )

    async def cancel_tournament(self, tournament_id: str) -> None:
        """End the tournament for good: running games are aborted (not stored).

        Raises:
            KeyError: no such tournament.
            ValueError: it is finished.
        """
        runner = self.tournaments.get(tournament_id)
        if runner is not None:
            runner.cancel()
            return
        t = await self._stored_tournament(tournament_id)
        if t.state is TournamentState.FINISHED:
            raise ValueError(f"tournament '{tournament_id}' is finished: it cannot be cancelled")
        await asyncio.to_thread(
            self.arena.storage.set_tournament_state, tournament_id, TournamentState.CANCELLED
        )

    def tournament_progress(self, tournament_id: str) -> Progress | None:
        """The progress of a tournament whose runner is live; None otherwise."""
        runner = self.tournaments.get(tournament_id)
        return None if runner is None else runner.progress

"""The arena: the matches running now, in trio, and what happens to them when they end.

The gRPC handlers (asyncio) and the tournaments (trio) start matches here. Each match runs in
the trio nursery the app gives the :class:`Arena` (docs/decisions.md: decision 10), with its own
error boundary: a failure of ours voids it, cancellation (shutdown) aborts it and tells its bots. A
finished match is stored before anyone is told it ended.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Final, TypeVar

import trio

from domino_arena.sdk.match.notices import Step
from domino_arena.sdk.match.records import record_lines
from domino_arena.sdk.match.results import FaultPolicy, MatchResult, Termination
from domino_arena.sdk.match.seeds import bot_seed
from domino_arena.sdk.rules import Game
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.metrics import Metrics
from domino_arena.server.play import bridge, tournament_start
from domino_arena.server.play import house as hosting
from domino_arena.server.play.bridge import SHUTTING_DOWN, MatchAbortedError, NotAcceptingError
from domino_arena.server.play.ladder_runner import LadderRunner, members_of, ratings_of
from domino_arena.server.play.match_spec import FinishedMatch, MatchSpec
from domino_arena.server.play.ownership import Steward
from domino_arena.server.play.referee import play_match
from domino_arena.server.play.roster import HostedSeat, Roster, SeatFactory, signed
from domino_arena.server.play.spectators import SpectatorHub
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.play.tournament import Progress, TournamentRunner
from domino_arena.server.store import ownership
from domino_arena.server.store.engine import error_reason
from domino_arena.server.store.tables import DEFAULT_COURSE
from domino_arena.server.store.tournaments import StoredTournament, TournamentState
from domino_arena.server.store.writer import Writer, backoff, is_transient

LOG: Final = logging.getLogger("domino_arena.server")

T = TypeVar("T")

__all__ = ["LOG", "SHUTTING_DOWN", "Arena", "MatchAbortedError", "NotAcceptingError"]


@dataclass
class Arena:
    """What the servicers share: the lobby, the storage and the trio nursery of the matches.

    ``lobby`` says who is connected and ``seats`` builds the seat of a bot in a match; the
    composition root (``server/app.py``) gives the network layer's, so play never imports it.
    """

    storage: RatedStorage
    lobby: Roster
    seats: SeatFactory
    """Builds the seat of a bot (its name) in a match (its id)."""
    reconnect_grace: float = 10.0
    nursery: trio.Nursery | None = None
    """Set by the app while trio runs; None before and after."""
    shutting_down: bool = False
    running: dict[str, list[HostedSeat]] = field(default_factory=dict)
    """The match id -> its seats, while it runs."""
    metrics: Metrics = field(default_factory=Metrics)
    admin_token: str = ""
    """The admin API's token; empty: every admin call is refused."""
    spectators: SpectatorHub = field(default_factory=SpectatorHub)
    tournaments: dict[str, TournamentRunner] = field(default_factory=dict)
    """The tournament id -> its runner, while it runs."""
    scheduled: set[str] = field(default_factory=set)
    """The ids of the created tournaments waiting for their ``start_at`` (a task each)."""
    ladders: dict[tuple[str, str], LadderRunner] = field(default_factory=dict)
    """(The course, the game name) -> its continuous ladder, while it runs."""
    house: hosting.HouseBots = field(default_factory=hosting.provided)
    """The house bots it can host in-process (``house:NAME`` seats: practice, checks)."""
    node: str = ""
    """This process's node name on a cluster's match host: each match record says which host
    and which gateways handled it (``referee`` in its header). Empty on a single referee."""
    steward: Steward | None = None
    """A cluster's match host's leases (``server/play/ownership.py``): it runs a tournament or
    a ladder pool only while it holds its lease, and takes over the running tournaments no live
    host holds. None on a single referee (it holds its database's one lease)."""
    think_times: bool = True
    """Keep each step's think time in the match records; False leaves them out, so a match
    played alike writes the same bytes (the round robin's: docs/referee.md)."""
    writer: Writer = field(init=False)
    _saving: set[trio.CancelScope] = field(default_factory=set)
    """The shielded scopes of the saves in progress."""
    _abort_details: dict[str, str] = field(default_factory=dict)  # match id -> why, if not shutdown

    def __post_init__(self) -> None:
        self.writer = Writer(self.storage)

    def abandon_saves(self) -> int:
        """Let shutdown cancel the saves still in progress (retrying an unreachable database).

        A database call already running finishes (a worker thread is never abandoned); the
        retries stop. A tournament game not stored is played again at the next start. Returns
        how many saves were abandoned.
        """
        for scope in self._saving:
            scope.shield = False
        return len(self._saving)

    async def run_match(self, spec: MatchSpec, *, with_caller: bool = False) -> FinishedMatch:
        """Run ``spec`` in the trio nursery and return once it is over and stored (asyncio side);
        ``with_caller``: cancelling this call aborts the match (RunMatch, docs/admin.md).

        Raises:
            NotAcceptingError: the arena is not running.
            MatchAbortedError: the referee shut down during the match.
        """
        left = functools.partial(self._abort_details.__setitem__, spec.match_id, bridge.CALLER_LEFT)
        return await bridge.in_trio(
            self._check_running(),
            functools.partial(self.play, spec),
            aborted=f"match {spec.match_id} aborted: {SHUTTING_DOWN}",
            name=f"match {spec.match_id}",
            on_caller_cancelled=left if with_caller else None,
        )

    # -- tournaments and ladders (called from asyncio: the admin API, the main job) -------------

    def _check_running(self) -> trio.Nursery:
        if self.nursery is None or self.shutting_down:
            raise NotAcceptingError(SHUTTING_DOWN if self.shutting_down else "referee starting")
        return self.nursery

    async def create_tournament(self, t: StoredTournament, start: bool) -> None:
        """Store the new tournament ``t`` and, if ``start``, start it (else at its
        ``start_at``, if it has one).

        Raises:
            ValueError: a baseline it seats is not a house bot this referee hosts.
        """
        missing = [name for name, _ in t.baselines if name not in self.house]
        if missing:
            raise ValueError(
                f"baselines: this referee hosts no house bot {', '.join(missing)} "
                f"(it hosts: {', '.join(sorted(self.house)) or 'none'})"
            )
        await asyncio.to_thread(self.storage.add_tournament, t)
        LOG.info("tournament created: id=%s name=%r game=%s", t.id, t.name, t.game)
        if start:
            await self.start_tournament(t.id)
        elif t.start_at is not None:
            self._schedule(self._check_running(), t)

    def _schedule(self, nursery: trio.Nursery, t: StoredTournament) -> None:
        """Start ``t`` by itself at its ``start_at`` (server/play/tournament_start.py)."""
        if t.id in self.scheduled or t.start_at is None:
            return
        self.scheduled.add(t.id)
        LOG.info("tournament scheduled: id=%s start_at=%s", t.id, t.start_at.isoformat())
        nursery.start_soon(self._start_at, t.id, t.start_at, name=f"tournament {t.id} start_at")

    async def _start_at(self, tournament_id: str, start_at: dt.datetime) -> None:
        try:
            await tournament_start.sleep_until(start_at)  # mapped to trio's clock now
            t = await trio.to_thread.run_sync(self.storage.tournament, tournament_id)
            if t is None or t.state is not TournamentState.CREATED or self.shutting_down:
                return  # started by hand, paused or cancelled meanwhile: nothing to do
            if not await self._claim(t.id):
                return  # another match host starts it
            t = await tournament_start.begin(self.storage, self.lobby, t, trio.to_thread.run_sync)
            await trio.to_thread.run_sync(
                self.storage.set_tournament_state, t.id, TournamentState.RUNNING
            )
            if self.nursery is not None and t.id not in self.tournaments:
                LOG.info("tournament started at its start_at: id=%s", t.id)
                self._launch(self.nursery, t)
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
        t = await asyncio.to_thread(self.storage.tournament, tournament_id)
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
        nursery = self._check_running()
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
        if self.steward is not None:
            await asyncio.to_thread(self.steward.claim_or_refuse, key, f"tournament '{t.id}'")
        try:
            t = await tournament_start.begin(self.storage, self.lobby, t, asyncio.to_thread)
            await asyncio.to_thread(
                self.storage.set_tournament_state, tournament_id, TournamentState.RUNNING
            )
        except BaseException:
            if self.steward is not None:  # free for the next try, on any host
                await asyncio.shield(asyncio.to_thread(self.steward.drop, key))
            raise
        self._launch(nursery, t)

    def _runner(self, t: StoredTournament) -> TournamentRunner:
        return TournamentRunner(t, storage=self.storage, play=self.play, lobby=self.lobby)

    def _launch(self, nursery: trio.Nursery, t: StoredTournament) -> None:
        runner = self._runner(t)
        self.tournaments[t.id] = runner
        scope = trio.CancelScope()
        if self.steward is not None:  # lost to another host: its games stop, unstored
            self.steward.hold(ownership.tournament_key(t.id), scope.cancel)
        nursery.start_soon(self._run_tournament, runner, scope, name=f"tournament {t.id}")

    async def _claim(self, tournament_id: str) -> bool:
        """Whether this arena may run the tournament: on a match host, once it holds its lease."""
        return self.steward is None or await self.steward.claim_tournament(tournament_id)

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
            if self.steward is not None:
                await self.steward.release(ownership.tournament_key(tournament_id))

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
            return

    async def resume_tournaments(self) -> None:
        """Start a runner for every tournament left running (after a crash or a restart), and
        schedule again the created ones that have a ``start_at``.

        On a cluster's match host, only the running ones no live host holds, and then, while
        it serves, again at every renewal of its leases (:meth:`Steward.keep`): a dead host's
        tournaments are taken over once their leases expire.
        """
        nursery = self._check_running()
        try:
            await self._resume(nursery)
        except Exception:
            LOG.exception("the running tournaments could not be read: none resumed")
        if self.steward is not None:
            await self.steward.keep(functools.partial(self._resume, nursery))

    async def _resume(self, nursery: trio.Nursery) -> None:
        stored = await trio.to_thread.run_sync(
            self.storage.tournaments, [TournamentState.RUNNING, TournamentState.CREATED]
        )
        for t in stored:
            if t.state is TournamentState.CREATED:
                self._schedule(nursery, t)
            elif t.id not in self.tournaments and not self.shutting_down:
                if self.steward is None:
                    LOG.info("tournament resumed: id=%s", t.id)
                elif not await self._claim(t.id):
                    continue
                self._launch(nursery, t)
        if self.steward is not None:
            await self.steward.follow_stored_states(self.storage, self.tournaments)

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
            self.storage.set_tournament_state, tournament_id, TournamentState.PAUSED
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
            self.storage.set_tournament_state, tournament_id, TournamentState.CANCELLED
        )

    def tournament_progress(self, tournament_id: str) -> Progress | None:
        """The progress of a tournament whose runner is live; None otherwise."""
        runner = self.tournaments.get(tournament_id)
        return None if runner is None else runner.progress

    async def start_ladder(
        self,
        game: Game,
        *,
        time_control: TimeControl,
        fault_policy: FaultPolicy,
        max_strikes: int,
        max_deals: int,
        concurrency: int,
        seed: int | None,
        course: str = DEFAULT_COURSE,
    ) -> None:
        """Keep pairing ``course``'s connected bots that play ``game`` into rated games until
        stopped. Raises ValueError: a ladder of the game runs in the course, or a bad setting."""
        nursery, key = self._check_running(), (course, game.name)
        if key in self.ladders:
            raise ValueError(f"a {game.name} ladder runs already in '{course}': stop it first")
        runner = LadderRunner(
            game,
            lobby=self.lobby,
            play=self.play,
            ratings=ratings_of(self.storage, game.name),
            concurrency=concurrency,
            time_control=time_control,
            fault_policy=fault_policy,
            max_strikes=max_strikes,
            max_deals=max_deals,
            seed=seed,
            course=course,
            members=members_of(self.storage, course),
        )
        if self.steward is not None:  # one ladder per pool in the whole cluster
            pool = ownership.ladder_key(course, game.name)
            what = f"a {game.name} ladder of course '{course}'"
            await asyncio.to_thread(self.steward.claim_or_refuse, pool, what)
            if key in self.ladders:  # started meanwhile by another call to this host
                raise ValueError(f"a {game.name} ladder runs already in '{course}': stop it first")
            self.steward.hold(pool, runner.stop)
        self.ladders[key] = runner
        nursery.start_soon(self._run_ladder, runner, name=f"ladder {course}/{game.name}")

    async def _run_ladder(self, runner: LadderRunner) -> None:
        key = (runner.course, runner.game.name)
        LOG.info("ladder started: course=%s game=%s seed=%d", *key, runner.seed)
        try:
            await runner.run()
            LOG.info("ladder stopped: course=%s game=%s games=%d", *key, runner.finished)
        except Exception:
            LOG.exception("ladder stopped by an error: course=%s game=%s", *key)
        finally:
            if self.ladders.get(key) is runner:
                del self.ladders[key]
            if self.steward is not None:
                await self.steward.release(ownership.ladder_key(*key))

    async def stop_ladder(self, game_name: str, course: str = DEFAULT_COURSE) -> None:
        """Start no new ladder game of ``game_name`` in ``course``; its running games finish.
        Raises KeyError: no ladder of that game runs in the course."""
        runner = self.ladders.get((course, game_name))
        if runner is None:
            raise KeyError(f"no {game_name} ladder is running in course '{course}'")
        runner.stop()

    def seat(self, name: str, match_id: str, seed: int, index: int) -> HostedSeat:
        """The seat ``index`` of ``name`` in a match of ``seed``: a hosted house bot for
        ``house:NAME`` (seeded by the match and the seat), else the connected bot's
        (``seats``)."""
        hosted = hosting.house_name(name)
        if hosted is None:
            return self.seats(name, match_id)
        bot = self.house[hosted](bot_seed(seed, index))
        return hosting.HouseSeat(name, bot)

    async def in_trio(self, job: Callable[[], Awaitable[T]]) -> T:
        """Run the trio function ``job`` in the arena's nursery; return what it returns
        (asyncio side; as :meth:`run_match`, with the same errors)."""
        return await bridge.in_trio(self._check_running(), job)

    async def play(self, spec: MatchSpec) -> FinishedMatch:
        """Play ``spec`` and store it (trio side); return once it is stored. Its own error
        boundary: a failure of ours voids it; cancellation aborts it (bots told, not stored).

        Raises:
            Exception: the finished match could not be stored (the storage's error).
        """
        seats = [self.seat(name, spec.match_id, spec.seed, i) for i, name in enumerate(spec.bots)]
        self.running[spec.match_id] = seats
        self.lobby.seat(spec.bots)
        LOG.info(
            "match started: id=%s game=%s bots=%s seed=%d",
            spec.match_id,
            spec.game.describe(),
            ",".join(spec.bots),
            spec.seed,
        )
        finished: FinishedMatch | None = None
        game_name = spec.game.name
        metrics = self.metrics

        spectate = self.spectators.on_step(spec.match_id)

        def on_step(step: Step) -> None:
            if step.seat >= 0 and step.think_ms is not None:
                metrics.move(game_name, step.think_ms / 1000)
            spectate(step)

        metrics.match_started(game_name)
        self.spectators.started(spec)
        try:
            report = await play_match(
                spec.game,
                seats,
                match_id=spec.match_id,
                seed=spec.seed,
                time_control=spec.time_control,
                fault_policy=spec.fault_policy,
                max_strikes=spec.max_strikes,
                max_deals=spec.max_deals,
                reconnect_grace=self.reconnect_grace,
                absent=[seat for seat, bot in enumerate(spec.bots) if bot in spec.absent],
                on_step=on_step,
            )
            kept = report.record if self.think_times else report.record.without_think_times()
            record = "".join(line + "\n" for line in record_lines(signed(kept, self.node, seats)))
            faults = [0] * len(spec.bots)
            for fault in report.faults:
                faults[fault.seat] += 1
                metrics.fault(game_name, fault.kind)
            finished = FinishedMatch(spec, report.result, record, tuple(faults))
        except Exception as exc:  # our failure: the match is void, never charged to a bot
            LOG.exception("match failed: id=%s", spec.match_id)
            void = MatchResult(
                Termination.VOID,
                None,
                (0,) * len(spec.game.sides),
                detail=f"the referee failed: {type(exc).__name__}: {exc}",
            )
            finished = FinishedMatch(spec, void, None, (0,) * len(spec.bots))
        except BaseException:  # cancelled: the referee is shutting down, or the caller left
            why = self._abort_details.pop(spec.match_id, SHUTTING_DOWN)
            aborted = MatchResult(
                Termination.ABORTED, None, (0,) * len(spec.game.sides), detail=why
            )
            for seat in seats:
                seat.end(aborted)
            LOG.info("match aborted: id=%s detail=%r", spec.match_id, aborted.detail)
            metrics.match_ended(game_name, Termination.ABORTED)
            self.spectators.ended(spec.match_id, aborted)
            raise
        finally:
            for seat in seats:
                if finished is not None:
                    seat.end(finished.result)
                seat.close()
            del self.running[spec.match_id]
            self.lobby.unseat(spec.bots)
        try:
            # A finished match is written whole even if shutdown begins meanwhile; only a save
            # still retrying an unreachable database when the shutdown grace ends gives up.
            with trio.CancelScope(shield=True) as saving, metrics.storage("save_match"):
                self._saving.add(saving)
                try:
                    await self.writer.save_match(finished.to_row())
                finally:
                    self._saving.discard(saving)
        except Exception:
            LOG.exception("match not stored: id=%s", spec.match_id)
            raise
        finally:
            metrics.match_ended(game_name, finished.result.termination)
            self.spectators.ended(spec.match_id, finished.result)
        if spec.tournament_id is not None:
            metrics.tournament_game(game_name)
        self._abort_details.pop(spec.match_id, None)  # its caller left as it was being stored
        LOG.info(
            "match ended: id=%s termination=%s winner=%s scores=%s%s",
            spec.match_id,
            finished.result.termination.value,
            finished.result.winner,
            "/".join(str(s) for s in finished.result.scores),
            f" detail={finished.result.detail!r}" if finished.result.detail else "",
        )
        return finished

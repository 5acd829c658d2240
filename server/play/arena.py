"""The arena: the matches running now, in trio, and what happens to them when they end.

The gRPC handlers (asyncio), the tournaments (trio: their runners, which the director in
``server/tournaments/lifecycle/director.py`` starts) and the ladders start matches here. Each
match runs in the trio nursery the app gives the :class:`Arena` (docs/decisions.md: decision
10), with its own error boundary: a failure of ours voids it, cancellation (shutdown) aborts it
and tells its bots. A finished match is stored before anyone is told it ended.
"""

from __future__ import annotations

import asyncio
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
from domino_arena.server.play import bridge
from domino_arena.server.play import house as hosting
from domino_arena.server.play.bridge import SHUTTING_DOWN, MatchAbortedError, NotAcceptingError
from domino_arena.server.play.ladder_runner import LadderRunner, members_of, ratings_of
from domino_arena.server.play.ladder_settings import LadderSettings, settings_of, stored
from domino_arena.server.play.match_spec import FinishedMatch, MatchSpec
from domino_arena.server.play.ownership import Steward
from domino_arena.server.play.referee import play_match
from domino_arena.server.play.roster import HostedSeat, Roster, SeatFactory, signed
from domino_arena.server.play.spectators import SpectatorHub
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store import ladders as stored_ladders
from domino_arena.server.store import ownership
from domino_arena.server.store.tables import DEFAULT_COURSE
from domino_arena.server.store.writer import Writer

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
    ladders: dict[tuple[str, str], LadderRunner] = field(default_factory=dict)
    """(The course, the game name) -> its continuous ladder, while it runs."""
    house: hosting.HouseBots = field(default_factory=hosting.provided)
    """The house bots it can host in-process (``house:NAME`` seats: practice, checks)."""
    node: str = ""
    """This process's node name on a cluster's match host: each match record says which host
    and which gateways handled it (``referee`` in its header). Empty on a single referee."""
    steward: Steward | None = None
    """A cluster's match host's leases (``server/play/ownership.py``): the arena runs a ladder
    pool, and the director a tournament, only while it holds its lease; the director takes over
    the running tournaments no live host holds. None on a single referee (it holds its
    database's one lease)."""
    think_times: bool = True
    """Keep each step's think time in the match records; False leaves them out, so a match
    played alike writes the same bytes (the round robin's: docs/referee.md)."""
    analysis_waker: Callable[[], None] | None = None
    """Wakes the analysis runner (trio side; set by the app while the runner runs), so a job
    queued through the admin API starts at once rather than at the runner's next poll."""
    writer: Writer = field(init=False)
    _saving: set[trio.CancelScope] = field(default_factory=set)
    """The shielded scopes of the saves in progress."""
    _abort_details: dict[str, str] = field(default_factory=dict)  # match id -> why, if not shutdown

    def __post_init__(self) -> None:
        self.writer = Writer(self.storage)
        if self.steward is not None:  # a dead host's ladders are taken over at each renewal
            self.steward.adopters.append(self.resume_ladders)

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
            self.check_running(),
            functools.partial(self.play, spec),
            aborted=f"match {spec.match_id} aborted: {SHUTTING_DOWN}",
            name=f"match {spec.match_id}",
            on_caller_cancelled=left if with_caller else None,
        )

    # -- ladders (called from asyncio: the admin API, the main job) -----------------------------

    async def wake_analysis(self) -> None:
        """Tell the analysis runner that jobs were queued (asyncio side). Nothing when no
        runner runs, or the referee is starting or stopping: its jobs wait in the database."""
        waker = self.analysis_waker
        if waker is None or self.nursery is None or self.shutting_down:
            return

        async def wake() -> None:
            waker()

        try:
            await self.in_trio(wake)
        except NotAcceptingError:
            return

    def check_running(self) -> trio.Nursery:
        """The nursery of the matches, while the arena accepts new work.

        Raises:
            NotAcceptingError: the referee is starting or shutting down.
        """
        if self.nursery is None or self.shutting_down:
            raise NotAcceptingError(SHUTTING_DOWN if self.shutting_down else "referee starting")
        return self.nursery

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
        nursery, key = self.check_running(), (course, game.name)
        if key in self.ladders:
            raise ValueError(f"a {game.name} ladder runs already in '{course}': stop it first")
        settings = LadderSettings(
            game, time_control, fault_policy, max_strikes, max_deals, concurrency, seed, course
        )
        runner = self._ladder_runner(settings)
        if self.steward is not None:  # one ladder per pool in the whole cluster
            pool = ownership.ladder_key(course, game.name)
            what = f"a {game.name} ladder of course '{course}'"
            await asyncio.to_thread(self.steward.claim_or_refuse, pool, what)
            if key in self.ladders:  # started meanwhile by another call to this host
                raise ValueError(f"a {game.name} ladder runs already in '{course}': stop it first")
            try:  # kept for the host that takes it over if this one dies
                await asyncio.to_thread(stored_ladders.save, self.storage.engine, stored(runner))
            except BaseException:
                await asyncio.to_thread(self.steward.drop, pool)
                raise
            self.steward.hold(pool, runner.stop)
        self.ladders[key] = runner
        nursery.start_soon(self._run_ladder, runner, name=f"ladder {course}/{game.name}")

    def _ladder_runner(self, settings: LadderSettings) -> LadderRunner:
        return LadderRunner(
            settings.game,
            lobby=self.lobby,
            play=self.play,
            ratings=ratings_of(self.storage, settings.game.name),
            concurrency=settings.concurrency,
            time_control=settings.time_control,
            fault_policy=settings.fault_policy,
            max_strikes=settings.max_strikes,
            max_deals=settings.max_deals,
            seed=settings.seed,
            course=settings.course,
            members=members_of(self.storage, settings.course),
        )

    async def resume_ladders(self) -> None:
        """A cluster's host, at each renewal of its leases (trio side): stop its ladders that
        were stopped through another host (their settings deleted), and take over the stored
        ladders no live host runs (their pool's lease expired or was released)."""
        steward, engine = self.steward, self.storage.engine
        if steward is None or self.nursery is None or self.shutting_down:
            return
        before = dict(self.ladders)  # each one's settings were stored before it was listed
        found = await trio.to_thread.run_sync(stored_ladders.all_ladders, engine)
        pools = {(ladder.course, ladder.game): ladder for ladder in found}
        for key, runner in before.items():
            if key not in pools and not runner.stopping and self.ladders.get(key) is runner:
                LOG.info("ladder stopped through another host: course=%s game=%s", *key)
                runner.stop()
        for key, ladder in pools.items():
            if key in self.ladders or self.nursery is None or self.shutting_down:
                continue
            pool = ownership.ladder_key(*key)
            claim = await trio.to_thread.run_sync(steward.claim, pool)
            if not claim.won or key in self.ladders:
                continue
            try:
                runner = self._ladder_runner(settings_of(ladder))
            except ValueError as error:  # its settings no longer valid: left to expire
                LOG.error("ladder not resumed: course=%s game=%s: %s", *key, error)
                continue
            steward.hold(pool, runner.stop)
            self.ladders[key] = runner
            LOG.warning(
                "ladder taken over: course=%s game=%s from=%s",
                *key,
                claim.taken_from or "(released)",
            )
            self.nursery.start_soon(self._run_ladder, runner, name=f"ladder {'/'.join(key)}")

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
        On a cluster's host, its stored settings are deleted too, so no host takes it over: a
        ladder another host runs stops at that host's next renewal (:meth:`resume_ladders`).
        Raises KeyError: no ladder of that game runs in the course."""
        runner = self.ladders.get((course, game_name))
        forgot = False
        if self.steward is not None:
            forgot = await asyncio.to_thread(
                stored_ladders.delete, self.storage.engine, course, game_name
            )
        if runner is None and not forgot:
            raise KeyError(f"no {game_name} ladder is running in course '{course}'")
        if runner is not None:
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
        return await bridge.in_trio(self.check_running(), job)

    async def play(self, spec: MatchSpec) -> FinishedMatch:
        """Play ``spec`` and store it (trio side); return once it is stored. Its own error
        boundary: a failure of ours voids it; cancellation aborts it (bots told, not stored).

        Raises:
            Exception: the finished match could not be stored (the storage's error).
        """
        streams = spec.stream_names
        seats = [self.seat(name, spec.match_id, spec.seed, i) for i, name in enumerate(streams)]
        for seat, shown in zip(seats, spec.bots, strict=True):
            seat.name = shown  # a person's stream "person:NAME#N" plays as "person:NAME"
        self.running[spec.match_id] = seats
        self.lobby.seat(streams)
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
                seat_clocks=spec.seat_clocks(),
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
            self.lobby.unseat(streams)
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

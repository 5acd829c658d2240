"""The arena: the matches running now, in trio, and what happens to them when they end.

The gRPC handlers (asyncio) and the tournaments (trio) start matches here. Each match runs in
the trio nursery the app gives the :class:`Arena` (DESIGN.md decision 10), with its own error
boundary: a failure of ours voids it, cancellation (shutdown) aborts it and tells its bots. A
finished match is stored before anyone is told it ended.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import uuid
from dataclasses import dataclass, field
from typing import Final

import trio

from domino_arena.sdk.local import Step
from domino_arena.sdk.records import record_lines
from domino_arena.sdk.rules import Game

from .lobby import Lobby
from .metrics import Metrics
from .referee import play_match
from .remote import RemoteSeat
from .seats import FaultPolicy, MatchResult, Termination
from .storage import Storage, StoredMatch
from .timecontrol import TimeControl

LOG: Final = logging.getLogger("domino_arena.server")

DEFAULT_MAX_STRIKES: Final = 3
SHUTTING_DOWN: Final = "referee shutting down"


class NotAcceptingError(Exception):
    """The arena is starting or shutting down: no match can start."""


class MatchAbortedError(Exception):
    """The referee shut down while the match was running."""


@dataclass(frozen=True, slots=True)
class MatchSpec:
    """One match to run: the game, a connected bot per seat, the seed and the policies."""

    game: Game
    bots: tuple[str, ...]
    seed: int
    time_control: TimeControl = field(default_factory=TimeControl)
    fault_policy: FaultPolicy = FaultPolicy.SUBSTITUTE
    max_strikes: int = DEFAULT_MAX_STRIKES
    match_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    rated: bool = True
    """Counts for the Elo ladder (only normal and forfeit endings are ever rated)."""
    reconnect_grace: float | None = None
    """Seconds an absent seat has to come back; None: the arena's default."""
    tournament_id: str | None = None
    game_index: int | None = None
    """The game's position in its tournament's schedule."""
    deal_id: int | None = None
    """Games of a tournament with the same deal id are played from the same seed."""
    rotation: int | None = None


@dataclass(frozen=True, slots=True)
class FinishedMatch:
    """What :meth:`Arena.run_match` returns: the stored row's content."""

    spec: MatchSpec
    result: MatchResult
    record: str | None
    faults: tuple[int, ...]
    """Faults charged to each seat."""


@dataclass
class Arena:
    """What the servicers share: the lobby, the storage and the trio nursery of the matches."""

    storage: Storage
    reconnect_grace: float = 10.0
    lobby: Lobby = field(default_factory=Lobby)
    nursery: trio.Nursery | None = None
    """Set by the app while trio runs; None before and after."""
    shutting_down: bool = False
    running: dict[str, list[RemoteSeat]] = field(default_factory=dict)
    """The match id -> its seats, while it runs."""
    metrics: Metrics = field(default_factory=Metrics)
    admin_token: str = ""
    """The admin API's token; empty: every admin call is refused."""

    def _save(self, match: StoredMatch) -> None:
        with self.metrics.storage("save_match"):
            self.storage.save_match(match)

    async def run_match(self, spec: MatchSpec) -> FinishedMatch:
        """Run ``spec`` in the trio nursery and return once it is over and stored (asyncio side).

        Raises:
            NotAcceptingError: the arena is not running.
            MatchAbortedError: the referee shut down during the match.
        """
        if self.nursery is None or self.shutting_down:
            raise NotAcceptingError(SHUTTING_DOWN if self.shutting_down else "referee starting")
        done: asyncio.Future[FinishedMatch] = asyncio.get_running_loop().create_future()
        self.nursery.start_soon(self._match_task, spec, done, name=f"match {spec.match_id}")
        # The match owns itself: cancelling this call (the admin went away) does not stop it.
        return await asyncio.shield(done)

    async def _match_task(self, spec: MatchSpec, done: asyncio.Future[FinishedMatch]) -> None:
        """Run :meth:`play` for an asyncio caller, settling ``done`` with what it gives."""
        try:
            finished = await self.play(spec)
        except Exception as exc:
            _settle(done, error=exc)
        except BaseException:
            _settle(
                done, error=MatchAbortedError(f"match {spec.match_id} aborted: {SHUTTING_DOWN}")
            )
            raise
        else:
            _settle(done, result=finished)

    async def play(self, spec: MatchSpec) -> FinishedMatch:
        """Play ``spec`` and store it (trio side); return once it is stored.

        The match has its own error boundary: a failure of ours voids it. Cancellation aborts
        it (its bots are told) and propagates; an aborted match is not stored.

        Raises:
            Exception: the finished match could not be stored (the storage's error).
        """
        seats = [RemoteSeat(self.lobby, name, spec.match_id) for name in spec.bots]
        self.running[spec.match_id] = seats
        self.lobby.seated.update(spec.bots)
        LOG.info(
            "match started: id=%s game=%s bots=%s seed=%d",
            spec.match_id,
            spec.game.describe(),
            ",".join(spec.bots),
            spec.seed,
        )
        finished: FinishedMatch | None = None
        grace = self.reconnect_grace if spec.reconnect_grace is None else spec.reconnect_grace
        game_name = spec.game.name
        metrics = self.metrics

        def on_step(step: Step) -> None:
            if step.seat >= 0 and step.think_ms is not None:
                metrics.move(game_name, step.think_ms / 1000)

        metrics.match_started(game_name)
        try:
            report = await play_match(
                spec.game,
                seats,
                match_id=spec.match_id,
                seed=spec.seed,
                time_control=spec.time_control,
                fault_policy=spec.fault_policy,
                max_strikes=spec.max_strikes,
                reconnect_grace=grace,
                on_step=on_step,
            )
            record = "".join(line + "\n" for line in record_lines(report.record))
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
        except BaseException:  # cancelled: the referee is shutting down
            aborted = MatchResult(
                Termination.ABORTED,
                None,
                (0,) * len(spec.game.sides),
                detail=SHUTTING_DOWN,
            )
            for seat in seats:
                seat.end(aborted)
            LOG.info("match aborted: id=%s", spec.match_id)
            metrics.match_ended(game_name, Termination.ABORTED)
            raise
        finally:
            for seat in seats:
                if finished is not None:
                    seat.end(finished.result)
                seat.close()
            del self.running[spec.match_id]
            self.lobby.unseat(spec.bots)
        try:
            # A finished match is written whole even if shutdown begins meanwhile.
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(self._save, _row(finished))
        except Exception:
            LOG.exception("match not stored: id=%s", spec.match_id)
            raise
        finally:
            metrics.match_ended(game_name, finished.result.termination)
        LOG.info(
            "match ended: id=%s termination=%s winner=%s scores=%s%s",
            spec.match_id,
            finished.result.termination.value,
            finished.result.winner,
            "/".join(str(s) for s in finished.result.scores),
            f" detail={finished.result.detail!r}" if finished.result.detail else "",
        )
        return finished


def _settle(
    future: asyncio.Future[FinishedMatch],
    *,
    result: FinishedMatch | None = None,
    error: BaseException | None = None,
) -> None:
    if future.done():  # the loop is closing, or nobody waits any more
        return
    if error is not None:
        future.set_exception(error)
    else:
        assert result is not None
        future.set_result(result)


def _row(finished: FinishedMatch) -> StoredMatch:
    spec, result = finished.spec, finished.result
    return StoredMatch(
        id=spec.match_id,
        game=spec.game.name,
        options=spec.game.options(),
        seats=spec.bots,
        seed=spec.seed,
        termination=result.termination.value,
        winner=result.winner,
        scores=result.scores,
        faulted_seat=result.faulted_seat,
        fault=None if result.fault is None else result.fault.value,
        detail=result.detail,
        record=finished.record,
        created=dt.datetime.now(dt.UTC),
    )

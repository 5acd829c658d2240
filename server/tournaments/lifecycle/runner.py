"""Run a tournament: bounded concurrency, resumable, never stuck on an absent bot.

A tournament is a row (:class:`~.storage.StoredTournament`); a fixed format's schedule follows
from the row alone (:func:`schedule_of`), and so does every game's match id and seed
(:func:`match_spec`). A Swiss or knockout tournament plays round by round: each round is seated
from the results before it and stored before its first game (``adaptive.py``), so its
games follow from the row and its stored rounds.
That is what makes it resumable: the games already stored are known by their index
(``Storage.tournament_game_indexes``), a new :class:`TournamentRunner` plays the others, and a
game interrupted by a crash is replayed under the same match id on the same deal. The storage's
unique (tournament, game index) keeps every game exactly once even if a replay races a commit.

Waiting for bots (the issue: "a bot that is not connected when its game is due waits within a
limit, then the game is scored by the fault policy; the tournament never hangs"). The runner
fills its ``concurrency`` slots with the earliest games (by round) whose bots are all connected
and not already playing in this tournament. When a slot is free and no such game exists, the
earliest game that lacks a bot becomes *due*: a waiter task (which holds no slot) waits for its
absent bots for up to ``wait_seconds``. If they connect, the game is ready at once; if not, it
is played anyway with no reconnect grace for the absent bots, so the referee charges their seats
``disconnected`` and the fault policy scores it (forfeit at once, or substitute moves with
strikes until forfeited). A bot whose wait ran out is then *given up on*: its later games start
without waiting again until it is seen connected, so a bot that is gone for good costs one wait,
not one per game. No more games wait at once than there are free slots, ready games take slots
before waiting ones, and every wait has a deadline: the tournament cannot hang. House baselines
(``house:NAME`` seats, hosted by the arena) are always present: no game waits for them.

Courses (docs/tournaments.md: courses): a tournament belongs to a course, seats the course's
frozen baselines it was given as ``house:NAME`` entrants, and keeps the owners of its entrants
with the row so the fair seating rule (``scheduler.round_robin``) gives the same schedule on
every replay. A regrade (``regrade.py``) first carries over the original's games that no
replaced bot played, then plays the rest.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Final

import trio

from domino_arena.server.play.house import house_name
from domino_arena.server.play.match_spec import (
    FinishedMatch,
    MatchSpec,
)
from domino_arena.server.play.roster import Roster
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.storage import Storage
from domino_arena.server.store.tournaments import (
    StoredTournament,
    TournamentState,
)
from domino_arena.server.tournaments.lifecycle import compare, regrade
from domino_arena.server.tournaments.lifecycle.adaptive import (
    is_adaptive,
    next_round,
    round_games,
    schedule_of_rounds,
)
from domino_arena.server.tournaments.lifecycle.schedule import (
    TournamentError,
    game_of,
    match_id_of,
    match_spec,
    schedule_of,
)
from domino_arena.server.tournaments.scheduler import ScheduledGame

__all__ = ["Progress", "TournamentRunner"]

LOG: Final = logging.getLogger("domino_arena.server")

RECHECK_SECONDS: Final = 1.0
"""How often a runner with a free slot looks again for bots that connected meanwhile."""


@dataclass(frozen=True, slots=True)
class Progress:
    """Where a tournament stands, for a progress bar and the status RPC."""

    total: int
    done: int
    """Games stored, from this run and earlier ones."""
    running: int
    waiting: int
    """Due games waiting for absent bots."""


class TournamentRunner:
    """Play the games of ``t`` that are not stored yet; one runner per run (see module doc).

    Args:
        t: the tournament.
        storage: where the stored games are found and the state is kept (blocking calls, run
            in worker threads).
        play: plays one match and returns once it is stored (``Arena.play``).
        lobby: who is connected.
        on_game: called with every game this runner finished.
        recheck: seconds between looks for newly connected bots while a slot is free.
    """

    def __init__(
        self,
        t: StoredTournament,
        *,
        storage: Storage,
        play: Callable[[MatchSpec], Awaitable[FinishedMatch]],
        lobby: Roster,
        on_game: Callable[[FinishedMatch], None] | None = None,
        recheck: float = RECHECK_SECONDS,
    ) -> None:
        if not (recheck > 0 and math.isfinite(recheck)):
            raise ValueError(f"recheck must be a positive number of seconds, got {recheck}")
        self.t = t
        self.storage = storage
        self.play = play
        self.lobby = lobby
        self.on_game = on_game
        self.recheck = recheck
        self.game = game_of(t)
        self.schedule = schedule_of(t)
        self._done = 0
        self._pending: list[ScheduledGame] = []
        """Games neither started nor finished, earliest round first."""
        self._running: dict[int, tuple[str, ...]] = {}
        """The game index -> its bots, while it plays."""
        self._waiting: set[int] = set()
        """Indexes of the due games whose waiter runs."""
        self._ready: set[int] = set()
        """Indexes of the games whose wait ended (their bots came, or the time ran out)."""
        self._given_up: set[str] = set()
        """Bots whose wait ran out; their games do not wait again until they are back."""
        self._pausing = False
        self._cancelling = False
        self._error: Exception | None = None
        self._changed = trio.Event()
        self._games_scope: trio.CancelScope | None = None
        self._plan = compare.plan_of(t) if t.kind == "compare" else None
        """A comparison's plan: its games may share bots, and its SPRT may end it early."""
        self._finished_rows: list[StoredMatch] = []
        """A comparison's stored games, for its stopping rule."""
        self._decided = False
        """A comparison's SPRT has accepted a hypothesis; no more games start."""

    @property
    def progress(self) -> Progress:
        return Progress(
            total=len(self.schedule),
            done=self._done,
            running=len(self._running),
            waiting=len(self._waiting),
        )

    @property
    def pausing(self) -> bool:
        """:meth:`pause` was called: no game starts, the running ones are ending."""
        return self._pausing

    def pause(self) -> None:
        """Start no new game; :meth:`run` returns PAUSED once the running games have ended."""
        self._pausing = True
        self._changed.set()

    def cancel(self) -> None:
        """Abort the running games (they are not stored); :meth:`run` returns CANCELLED."""
        self._cancelling = True
        if self._games_scope is not None:
            self._games_scope.cancel()
        self._changed.set()

    async def run(self) -> TournamentState:
        """Play every game not stored yet; return the state the tournament is left in.

        A tournament that is FINISHED or CANCELLED is left alone (its state is returned).

        Raises:
            Exception: a game's ``play`` raised (the storage failed); the state stays RUNNING
                so a new runner resumes, and the other running games were aborted.
        """
        row = await trio.to_thread.run_sync(self.storage.tournament, self.t.id)
        if row is None:
            raise TournamentError(f"tournament {self.t.id}: not stored")
        if row.state in (TournamentState.FINISHED, TournamentState.CANCELLED):
            return row.state
        if row.regrade_of is not None:  # idempotent: a resumed regrade copies what is missing
            carried = await trio.to_thread.run_sync(
                regrade.carry_over, self.storage, row, self.schedule, match_id_of
            )
            if carried:
                LOG.info(
                    "regrade %s: %d games carried over from %s", row.id, carried, row.regrade_of
                )
        stored = await trio.to_thread.run_sync(self.storage.tournament_game_indexes, self.t.id)
        self._done = sum(1 for g in self.schedule if g.index in stored)
        self._pending = [g for g in self.schedule if g.index not in stored]
        if self._plan is not None:
            self._finished_rows = await trio.to_thread.run_sync(self._stored_rows)
            self._decided = row.verdict is not None and compare.decided(row.verdict)
            if self._decided or await self._judge(over=not self._pending):
                await self._set_state(TournamentState.FINISHED)
                return TournamentState.FINISHED
        await self._set_state(TournamentState.RUNNING)
        LOG.info(
            "tournament running: id=%s games=%d stored=%d",
            self.t.id,
            len(self.schedule),
            self._done,
        )
        while not is_adaptive(self.t) or await self._seat_round():
            with trio.CancelScope() as scope:
                self._games_scope = scope
                if self._cancelling:
                    scope.cancel()
                async with trio.open_nursery() as games, trio.open_nursery() as waiters:
                    await self._dispatch(games, waiters)
            if self._error is not None:
                raise self._error
            if not is_adaptive(self.t) or self._cancelling or self._pending:
                break
        if self._cancelling:
            state = TournamentState.CANCELLED
        elif self._pending:
            state = TournamentState.PAUSED
        else:
            state = TournamentState.FINISHED
            if self._plan is not None:
                await self._judge(over=True)
        await self._set_state(state)
        return state

    async def _seat_round(self) -> bool:
        """A Swiss or knockout tournament: make the pending games those of its stored round not
        stored yet; when every stored round is played, seat the next one and store it before
        any of its games starts (:mod:`.tournament_rounds`). False when it is over (or paused
        or cancelled before the next round)."""
        if self._pausing or self._cancelling:
            return False
        rounds = await trio.to_thread.run_sync(self.storage.tournament_rounds, self.t.id)
        stored = await trio.to_thread.run_sync(self.storage.tournament_game_indexes, self.t.id)
        self.schedule = schedule_of_rounds(self.t, rounds)
        if all(g.index in stored for g in self.schedule):
            rows = await trio.to_thread.run_sync(self._stored_rows)
            seated = await trio.to_thread.run_sync(next_round, self.t, rounds, rows)
            if seated is None:
                return False
            seated = await trio.to_thread.run_sync(self.storage.add_tournament_round, seated)
            self.schedule += round_games(self.t, seated)
            LOG.info(
                "tournament %s: round %d seated, %d tables, %d games",
                self.t.id,
                seated.number + 1,
                len(seated.tables),
                seated.games,
            )
        self._pending = [g for g in self.schedule if g.index not in stored]
        self._done = len(self.schedule) - len(self._pending)
        return True

    async def _dispatch(self, games: trio.Nursery, waiters: trio.Nursery) -> None:
        """Fill the slots until every game is done, or until paused (then let the rest end)."""
        while self._pending or self._running:
            self._changed = trio.Event()
            if self._pausing:
                waiters.cancel_scope.cancel()
                if not self._running:
                    break
            else:
                self._fill(games, waiters)
            with trio.move_on_after(self.recheck):
                await self._changed.wait()
        waiters.cancel_scope.cancel()

    def _fill(self, games: trio.Nursery, waiters: trio.Nursery) -> None:
        """Start ready games in the free slots, then make games due for the slots still free."""
        busy = {name for bots in self._running.values() for name in self._own(bots)}
        for name in list(self._given_up):
            if self.lobby.get(name) is not None:
                self._given_up.discard(name)
        free = self.t.concurrency - len(self._running)
        for g in list(self._pending):
            if free == 0:
                return
            if g.index in self._waiting or (self._plan is None and not busy.isdisjoint(g.seats)):
                continue
            absent = self._absent(g.seats)
            if absent and g.index not in self._ready and not self._given_up.issuperset(absent):
                continue
            busy.update(self._own(g.seats))
            self._pending.remove(g)
            self._ready.discard(g.index)
            self._running[g.index] = g.seats
            games.start_soon(self._play, g, bool(absent), name=f"tournament game {g.index}")
            free -= 1
        # No ready game for the slots left: the earliest games missing bots become due.
        free -= len(self._waiting)
        for g in self._pending:
            if free <= 0:
                return
            if g.index in self._waiting or g.index in self._ready or not busy.isdisjoint(g.seats):
                continue
            self._waiting.add(g.index)
            waiters.start_soon(self._wait_for, g, name=f"tournament game {g.index} waits")
            free -= 1

    def _own(self, seats: Sequence[str]) -> Sequence[str]:
        """The seats that keep a bot from another game at once: a gauntlet's baselines are
        hosted for every seat apart (scheduler.expand's ``shared``)."""
        if self.t.format != "gauntlet":
            return seats
        return [n for n in seats if house_name(n) is None]

    def _absent(self, seats: Sequence[str]) -> list[str]:
        """The bots of ``seats`` not connected; house seats are hosted, never absent."""
        return [n for n in seats if house_name(n) is None and self.lobby.get(n) is None]

    async def _wait_for(self, g: ScheduledGame) -> None:
        """Wait up to ``wait_seconds`` for the absent bots of ``g``, then mark it ready."""
        absent = self._absent(g.seats)
        try:
            with trio.move_on_after(self.t.wait_seconds) as timer:
                for name in absent:
                    await self.lobby.wait_connected(name)
        finally:  # a pause cancels the wait: the game stays pending, not ready
            self._waiting.discard(g.index)
        if timer.cancelled_caught:
            late = self._absent(g.seats)
            self._given_up.update(late)
            LOG.warning(
                "tournament game %s: %s not connected after %g s; playing without them",
                match_id_of(self.t, g.index),
                ", ".join(late),
                self.t.wait_seconds,
            )
        self._ready.add(g.index)
        self._changed.set()

    async def _play(self, g: ScheduledGame, absent: bool) -> None:
        missing = self._absent(g.seats) if absent else []
        spec = match_spec(self.t, g, absent=missing, game=self.game)
        try:
            finished = await self.play(spec)
            if self._plan is not None:  # judged before its slot frees, so no game starts late
                self._finished_rows.append(finished.to_row())
                if await self._judge(over=not self._pending and len(self._running) == 1):
                    self._pending.clear()
        except Exception as exc:  # surfaced by run() as itself, not in an exception group
            LOG.error("tournament game %s failed: %s", spec.match_id, exc)
            self._error = exc
            if self._games_scope is not None:
                self._games_scope.cancel()
            return
        finally:
            del self._running[g.index]
            self._changed.set()
        self._done += 1
        if self.on_game is not None:
            self.on_game(finished)

    def _stored_rows(self) -> list[StoredMatch]:
        return self.storage.matches(
            limit=len(self.schedule) + 1, tournament_id=self.t.id, records=False
        )

    async def _judge(self, *, over: bool) -> bool:
        """Store a comparison's state after a game; True when its SPRT has decided.

        ``over``: no game is left to play or running but the one just judged.
        """
        assert self._plan is not None
        if self._decided:  # the verdict stands; games that were running then are kept
            return True
        sets = compare.tally(self._plan, self.game.num_players, self._finished_rows)
        state = compare.verdict_of(self._plan, self.game.num_players, sets, over=over)
        await trio.to_thread.run_sync(self.storage.set_tournament_verdict, self.t.id, state)
        self._decided = compare.decided(state)
        if self._decided:
            LOG.info("comparison %s: %s after %d sets", self.t.id, state["verdict"], state["sets"])
        return self._decided

    async def _set_state(self, state: TournamentState) -> None:
        await trio.to_thread.run_sync(self.storage.set_tournament_state, self.t.id, state)

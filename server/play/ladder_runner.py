"""The continuous ladder: keep pairing the connected bots of one game into rated games.

It lives with the tournaments in play/ because, like them, it decides which matches to run; the
ratings and the matchmaking it uses are the ladder package's (server/ladder), below play.

The issue: "the referee keeps pairing connected bots into rated games (each connected bot gets
games; opponents near in rating preferred), until stopped". Whenever a slot is free the runner
asks :func:`~domino_arena.server.ladder.matchmaking.pick_tables` for tables among the bots that
are connected, play this game and are not in one of its games already, and starts them through
``play`` (the arena's :meth:`~domino_arena.server.play.arena.Arena.play`, which stores and rates
them). It looks again when a game ends and every ``recheck`` seconds, which is how newly
connected bots are noticed.

A ladder belongs to one course (docs/courses.md): it pairs only that course's bots, which
``members`` names with their owners and the course's seating rules (the lobby knows bots by
name only; the arena reads them from the storage at every pairing), and its games are stored
in that course. Two bots of one owner are seated as the course allows (the matchmaking's
same-owner rule).

A seeded :class:`random.Random` breaks the ties of the matchmaking and draws every game's
seed, so a session with the same seed and the same arrivals plays the same games.
"""

from __future__ import annotations

import logging
import math
import random
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import trio

from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.match.seeds import MAX_SEED, random_seed
from domino_arena.sdk.rules import Game
from domino_arena.server.ladder.elo import INITIAL_RATING, Rating
from domino_arena.server.ladder.matchmaking import Candidate, pick_tables
from domino_arena.server.names import is_person
from domino_arena.server.play.match_spec import (
    DEFAULT_MAX_DEALS,
    DEFAULT_MAX_STRIKES,
    FinishedMatch,
    MatchSpec,
)
from domino_arena.server.play.roster import Roster
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store.tables import DEFAULT_COURSE

LOG: Final = logging.getLogger("domino_arena.server")

RECHECK_SECONDS: Final = 1.0
"""How often an idle ladder looks for newly connected bots."""


@dataclass(frozen=True, slots=True)
class Members:
    """The bots a course's ladder may pair, and how their owners may be seated."""

    owners: Mapping[str, str] = field(default_factory=dict)
    """Each bot of the course -> its owner ("" for nobody)."""
    same_owner_tables: bool = True
    same_owner_partners: bool = True


class CourseBots(Protocol):
    """The storage calls :func:`members_of` and :func:`ratings_of` make (blocking: run in a
    worker thread)."""

    def bots(self, *, include_deleted: bool = False, course: str | None = None) -> list[Any]: ...
    def course(self, name: str) -> Any: ...
    def ratings(self, pool: str) -> Mapping[str, Rating]: ...


def ratings_of(storage: CourseBots, pool: str) -> Callable[[], Awaitable[Mapping[str, Rating]]]:
    """A ladder's ``ratings``: the pool's current ratings, read in a worker thread."""

    async def ratings() -> Mapping[str, Rating]:
        return await trio.to_thread.run_sync(storage.ratings, pool)

    return ratings


def members_of(storage: CourseBots, course: str) -> Callable[[], Awaitable[Members]]:
    """A ladder's ``members``: ``course``'s bots, owners and seating rules, read in a worker
    thread at every pairing."""

    def read() -> Members:
        found = storage.course(course)
        return Members(
            {bot.name: bot.owner for bot in storage.bots(course=course)},
            same_owner_tables=found is None or found.allow_same_owner_tables,
            same_owner_partners=found is None or found.allow_same_owner_partners,
        )

    async def members() -> Members:
        return await trio.to_thread.run_sync(read)

    return members


class LadderRunner:
    """Pair the connected bots of ``game`` into rated games until stopped or cancelled.

    Args:
        game: the game every ladder game is played in.
        lobby: who is connected, and which games each plays (``Connection.games``).
        play: plays one match and returns once it is stored (``Arena.play``).
        ratings: returns the current ratings of the game's pool; unrated bots count as 1500.
            With the storage: ``lambda: trio.to_thread.run_sync(storage.ratings, game.name)``
            (async, so the caller decides where blocking work runs).
        concurrency: games at once, at most.
        seed: fixes the pairing ties and the deals; None draws one.
        recheck: seconds between looks for new bots while nothing ends.
        on_game: called with every finished game.
        course: the course whose bots it pairs and whose games it stores.
        members: returns ``course``'s bots with their owners and its seating rules, read at
            every pairing (so a bot registered meanwhile is paired too); None: every
            connected bot, owners not considered.

    Raises:
        ValueError: ``concurrency`` below 1, a negative ``max_strikes`` or a ``recheck`` that is
            not a positive number.
    """

    def __init__(
        self,
        game: Game,
        *,
        lobby: Roster,
        play: Callable[[MatchSpec], Awaitable[FinishedMatch]],
        ratings: Callable[[], Awaitable[Mapping[str, Rating]]],
        concurrency: int = 4,
        time_control: TimeControl | None = None,
        fault_policy: FaultPolicy = FaultPolicy.SUBSTITUTE,
        max_strikes: int = DEFAULT_MAX_STRIKES,
        max_deals: int = DEFAULT_MAX_DEALS,
        seed: int | None = None,
        recheck: float = RECHECK_SECONDS,
        on_game: Callable[[FinishedMatch], None] | None = None,
        course: str = DEFAULT_COURSE,
        members: Callable[[], Awaitable[Members]] | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"ladder: concurrency must be at least 1, got {concurrency}")
        if max_strikes < 1:
            raise ValueError(f"ladder: max_strikes must be at least 1, got {max_strikes}")
        if max_deals < 1:
            raise ValueError(f"ladder: max_deals must be at least 1, got {max_deals}")
        if not (recheck > 0 and math.isfinite(recheck)):
            raise ValueError(f"ladder: recheck must be a positive number of seconds, got {recheck}")
        self.game = game
        self.lobby = lobby
        self.play = play
        self.ratings = ratings
        self.concurrency = concurrency
        self.time_control = time_control if time_control is not None else TimeControl()
        self.fault_policy = fault_policy
        self.max_strikes = max_strikes
        self.max_deals = max_deals
        self.recheck = recheck
        self.on_game = on_game
        self.course = course
        self.members = members
        self.seed = seed if seed is not None else random_seed()
        self._rng = random.Random(self.seed)
        self.session = uuid.uuid4().hex[:12]
        """Part of every match id, so ids stay unique across sessions with the same seed."""
        self.games: Counter[str] = Counter()
        """Games started this session, per bot."""
        self.playing: dict[str, tuple[str, ...]] = {}
        """The match id -> its bots, for the games running now."""
        self.started = 0
        self.finished = 0
        self._stopping = False
        self._changed = trio.Event()
        self._error: Exception | None = None
        self._nursery: trio.Nursery | None = None

    @property
    def stopping(self) -> bool:
        """Whether it starts no new game (stopped, or failed)."""
        return self._stopping

    def stop(self) -> None:
        """Start no new game; :meth:`run` returns once the running games have ended."""
        self._stopping = True
        self._changed.set()

    async def run(self) -> None:
        """Keep the slots full until :meth:`stop`; cancelling it aborts the running games.

        Raises:
            Exception: what ``play`` raised (the storage failed); the other games are aborted.
        """
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            while not self._stopping:
                self._changed = trio.Event()
                free = self.concurrency - len(self.playing)
                if free > 0:
                    for bots in await self._pick(free):
                        self._start(nursery, bots)
                with trio.move_on_after(self.recheck):
                    await self._changed.wait()
        if self._error is not None:
            raise self._error
        LOG.info("ladder stopped: game=%s games=%d", self.game.describe(), self.finished)

    async def _pick(self, free: int) -> list[tuple[str, ...]]:
        busy = {name for bots in self.playing.values() for name in bots}
        connected = [
            c.name
            for c in self.lobby.connections()
            if self.game.name in c.games and c.name not in busy and not is_person(c.name)
        ]
        allowed = Members()
        if self.members is not None and len(connected) >= self.game.num_players:
            allowed = await self.members()
            connected = [name for name in connected if name in allowed.owners]
        if len(connected) < self.game.num_players:
            return []
        ratings = await self.ratings()
        if self._stopping:
            return []
        candidates = [
            Candidate(
                name,
                ratings[name].rating if name in ratings else INITIAL_RATING,
                self.games[name],
                owner=allowed.owners.get(name, ""),
            )
            for name in connected
            if self.lobby.get(name) is not None  # it may have left while the ratings were read
        ]
        return pick_tables(
            candidates,
            self.game.num_players,
            rng=self._rng,
            partnerships=len(self.game.sides) != self.game.num_players,
            max_tables=free,
            same_owner_tables=allowed.same_owner_tables,
            same_owner_partners=allowed.same_owner_partners,
        )

    def _start(self, nursery: trio.Nursery, bots: tuple[str, ...]) -> None:
        self.started += 1
        spec = MatchSpec(
            game=self.game,
            bots=bots,
            seed=self._rng.randrange(MAX_SEED + 1),
            time_control=self.time_control,
            fault_policy=self.fault_policy,
            max_strikes=self.max_strikes,
            max_deals=self.max_deals,
            match_id=f"ladder-{self.game.name}-{self.session}-{self.started:06d}",
            rated=True,
            course=self.course,
        )
        self.playing[spec.match_id] = bots
        self.games.update(bots)
        nursery.start_soon(self._play, spec, name=f"ladder game {spec.match_id}")

    async def _play(self, spec: MatchSpec) -> None:
        try:
            finished = await self.play(spec)
        except Exception as exc:  # surfaced by run() as itself, not in an exception group
            LOG.error("ladder game failed: id=%s: %s", spec.match_id, exc)
            self._error = exc
            self._stopping = True
            assert self._nursery is not None
            self._nursery.cancel_scope.cancel()
            return
        finally:
            del self.playing[spec.match_id]
            self._changed.set()
        self.finished += 1
        if self.on_game is not None:
            self.on_game(finished)

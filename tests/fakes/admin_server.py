"""The admin and spectator servicers over real gRPC on port 0, in front of a fake arena.

The servicer's dependencies are the small :class:`~domino_arena.server.net.admin.AdminArena`
and :class:`~domino_arena.server.net.admin_tournaments.TournamentDirector` protocols;
:class:`FakeArena` implements both over a real :class:`RatedStorage` (a SQLite file) and a
real :class:`Lobby`, and records what it was asked, so every RPC is checked at the wire: the
token, each refusal with its status and message, and the answers. :class:`AdminServer` serves
it with the spectator service over a real hub, for the admin, spectator and CLI tests.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar

import grpc
import pytest

from domino_arena.sdk.match.results import FaultPolicy, MatchResult, Termination
from domino_arena.sdk.rules import Game, make_game
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.net.admin import AdminServicer
from domino_arena.server.net.live_access import LiveAccess
from domino_arena.server.net.lobby import Lobby
from domino_arena.server.net.registration import AttemptLimiter, RegistrationServicer
from domino_arena.server.net.spectators import SpectatorServicer, add_spectator_service
from domino_arena.server.net.watch_limits import DEFAULT_WATCH_LIMITS, WatchLimits
from domino_arena.server.play.match_spec import FinishedMatch, MatchSpec
from domino_arena.server.play.spectators import SpectatorHub
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tournaments import TournamentState
from domino_arena.server.tournaments.lifecycle import games_of
from domino_arena.server.tournaments.lifecycle.runner import Progress
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc
from tests.fakes.referee_server import WAIT

TOKEN: Final = "s3cret-admin-token"
T = TypeVar("T")


# -- the fake arena -------------------------------------------------------------------------------


@dataclass
class FakeLadder:
    """What the admin API shows of a running ladder."""

    game: Game
    time_control: TimeControl
    fault_policy: FaultPolicy
    max_strikes: int
    max_deals: int
    concurrency: int
    seed: int
    started: int = 0
    finished: int = 0
    course: str = "default"


@dataclass
class FakeArena:
    """The arena's admin side and its director's, without trio: tournaments change state in
    the storage at once."""

    storage: RatedStorage
    admin_token: str = TOKEN
    node: str = ""
    """A single referee's (the arena's on a cluster's host names it)."""
    lobby: Lobby = field(default_factory=Lobby)
    ladders: dict[tuple[str, str], FakeLadder] = field(default_factory=dict)
    house: dict[str, object] = field(
        default_factory=lambda: {"random": object(), "greedy": object(), "search": object()}
    )
    live: dict[str, Progress] = field(default_factory=dict)
    calls: list[tuple[str, str]] = field(default_factory=list)
    specs: list[MatchSpec] = field(default_factory=list)
    running: dict[str, list[Any]] = field(default_factory=dict)
    """As the arena's (match id -> seats): always empty, matches end at once here."""

    async def run_match(self, spec: MatchSpec, *, with_caller: bool = False) -> FinishedMatch:
        self.specs.append(spec)
        scores = (101,) + (0,) * (len(spec.game.sides) - 1)
        return FinishedMatch(
            spec, MatchResult(Termination.NORMAL, 0, scores), '{"fake": true}\n', (0,) * 2
        )

    async def create_tournament(self, t: Any, start: bool) -> None:
        self.calls.append(("create", t.id))
        await asyncio.to_thread(self.storage.add_tournament, t)
        if start:
            await self.start_tournament(t.id)

    async def start_tournament(self, tournament_id: str) -> None:
        self.calls.append(("start", tournament_id))
        await self._set(tournament_id, TournamentState.RUNNING)
        t = self.storage.tournament(tournament_id)
        assert t is not None
        self.live[tournament_id] = Progress(len(games_of(t, self.storage)), 0, 1, 0)

    async def pause_tournament(self, tournament_id: str) -> None:
        self.calls.append(("pause", tournament_id))
        self.live.pop(tournament_id)
        await self._set(tournament_id, TournamentState.PAUSED)

    async def cancel_tournament(self, tournament_id: str) -> None:
        self.calls.append(("cancel", tournament_id))
        self.live.pop(tournament_id, None)
        await self._set(tournament_id, TournamentState.CANCELLED)

    async def _set(self, tournament_id: str, state: TournamentState) -> None:
        await asyncio.to_thread(self.storage.set_tournament_state, tournament_id, state)

    async def wake_analysis(self) -> None:
        self.calls.append(("wake analysis", ""))

    def tournament_progress(self, tournament_id: str) -> Progress | None:
        return self.live.get(tournament_id)

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
        course: str = "default",
    ) -> None:
        self.calls.append(("start ladder", game.name))
        self.ladders[course, game.name] = FakeLadder(
            game,
            time_control,
            fault_policy,
            max_strikes,
            max_deals,
            concurrency,
            seed or 0,
            0,
            0,
            course,
        )

    async def stop_ladder(self, game_name: str, course: str = "default") -> None:
        self.calls.append(("stop ladder", game_name))
        del self.ladders[course, game_name]


# -- the server -----------------------------------------------------------------------------------


class AdminServer:
    """The admin and spectator servicers on 127.0.0.1:0 in a background thread's loop."""

    def __init__(
        self,
        arena: FakeArena,
        limiter: AttemptLimiter | None = None,
        *,
        watch_limits: WatchLimits = DEFAULT_WATCH_LIMITS,
        relay_token: str = "",
    ) -> None:
        self.arena = arena
        self.limiter = limiter
        self.watch_limits = watch_limits
        self.relay_token = relay_token
        self.hub = SpectatorHub()
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, daemon=True)
        self._thread.start()
        assert self._ready.wait(WAIT), "the server did not start"
        if self.error is not None:
            raise self.error
        self.address = f"127.0.0.1:{self.port}"
        self.channel = grpc.insecure_channel(self.address)
        self.admin = admin_pb_grpc.AdminServiceStub(self.channel)
        self.registration = admin_pb_grpc.RegistrationServiceStub(self.channel)
        self.spectators = admin_pb_grpc.SpectatorServiceStub(self.channel)

    def _main(self) -> None:
        async def body() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            server = grpc.aio.server()
            admin_pb_grpc.add_AdminServiceServicer_to_server(
                AdminServicer(self.arena, self.arena), server
            )
            admin_pb_grpc.add_RegistrationServiceServicer_to_server(
                RegistrationServicer(self.arena.storage, self.arena.lobby, self.limiter), server
            )
            access = LiveAccess(
                self.arena.storage,
                admin_token=self.arena.admin_token,
                relay_token=self.relay_token,
            )
            self.spectator_service = SpectatorServicer(
                self.hub,
                self.arena.storage,
                self.arena.lobby,
                lambda: self.arena.ladders,
                access=access,
                limits=self.watch_limits,
            )
            add_spectator_service(self.spectator_service, server)
            self.port = server.add_insecure_port("127.0.0.1:0")
            await server.start()
            self._ready.set()
            await self._stop.wait()
            await server.stop(0)

        try:
            asyncio.run(body())
        except BaseException as exc:
            self.error = exc
        finally:
            self._ready.set()

    def call(self, function: Callable[[], T]) -> T:
        """Run ``function`` on the server's loop thread (where the hub lives); return its value."""
        assert self._loop is not None
        future = asyncio.run_coroutine_threadsafe(_call(function), self._loop)
        return future.result(WAIT)

    def close(self) -> None:
        """Stop serving (again: nothing)."""
        if not self._thread.is_alive():
            return
        self.channel.close()
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(WAIT)


async def _call(function: Callable[[], T]) -> T:
    return function()


@contextmanager
def served_over(
    path: Path,
    *,
    watch_limits: WatchLimits = DEFAULT_WATCH_LIMITS,
    relay_token: str = "",
) -> Iterator[AdminServer]:
    """The admin and spectator services over a fake arena on a new SQLite file at ``path``,
    closed with their storage at the end (``watch_limits`` and ``relay_token``: the
    spectators')."""
    storage = RatedStorage(f"sqlite:///{path}")
    storage.open()
    server = AdminServer(FakeArena(storage), watch_limits=watch_limits, relay_token=relay_token)
    try:
        yield server
    finally:
        server.close()
        storage.close()


def stored_match(
    match_id: str,
    bots: tuple[str, str],
    winner: int | None,
    *,
    termination: str = "normal",
    tournament_id: str | None = None,
    game_index: int | None = None,
    minute: int = 0,
    rated: bool = True,
) -> StoredMatch:
    """A finished 2-player Passing Game as the arena stores it."""
    scores = (0, 0) if winner is None else ((101, 20) if winner == 0 else (20, 101))
    return StoredMatch(
        id=match_id,
        game="passing",
        options=make_game("passing").options(),
        seats=bots,
        seed=7,
        termination=termination,
        winner=winner,
        scores=scores,
        faulted_seat=None,
        fault=None,
        detail="",
        record='{"header": true}\n',
        created=dt.datetime(2026, 1, 1, 12, minute, tzinfo=dt.UTC),
        tournament_id=tournament_id,
        game_index=game_index,
        deal_id=None if game_index is None else game_index // 2,
        rotation=None if game_index is None else game_index % 2,
        side_of_seat=(0, 1),
        faults=(0, 0),
        rated=rated,
    )


def refused(call: Callable[[], object]) -> tuple[grpc.StatusCode, str]:
    """Return the status and details of a call that must fail."""
    with pytest.raises(grpc.RpcError) as info:
        call()
    error: Any = info.value
    return error.code(), error.details()

"""The admin API (``AdminService`` in admin.proto): matches, tournaments, standings, ladders
(and bots: :mod:`.admin_bots`).

Every call must carry the admin token as call metadata ``authorization: Bearer <token>``; it is
checked (in constant time) before anything else, and a refused call changes nothing. A request
the referee cannot honour ends with one status and a message that names the field, the rule and
what was expected: INVALID_ARGUMENT (the request is wrong), NOT_FOUND (no such tournament or
match), FAILED_PRECONDITION (not now, e.g. pausing a tournament that is not running).

``RunMatch`` starts one match between connected bots and answers when it ends, with the result
and the JSON Lines record; the match is stored before the answer. A match does not depend on
the admin call that started it: if the caller goes away, the match still ends and is stored.
Tournaments and ladders run in the arena's trio nursery; this module only checks requests
(:mod:`.admin_requests`), asks the :class:`AdminArena` to act, reads the storage (in worker
threads: it blocks) and answers with the messages :mod:`.admin_answers` builds.

What the servicer needs from the arena is the small :class:`AdminArena` protocol, so tests can
serve it over a fake arena.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, NoReturn, Protocol, TypeVar

import grpc
from google.protobuf.message import Message

from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import Game
from domino_arena.server.ladder import elo
from domino_arena.server.logs import MAX_MESSAGE, bounded
from domino_arena.server.net.admin_answers import (
    LadderView,
    head_to_head_rows,
    ladder_message,
    match_summary,
    pool_repeat_deal_rows,
    standing_rows,
)
from domino_arena.server.net.admin_bots import BotAdmin, BotRpcs, BotStorage
from domino_arena.server.net.admin_check import CheckRpcs
from domino_arena.server.net.admin_grades import GradeRpcs
from domino_arena.server.net.admin_requests import (
    METADATA_KEY,
    RequestError,
    fault_policy_of,
    game_name,
    game_of,
    id_of,
    in_range,
    invalid,
    ladder_numbers,
    match_spec,
    not_found,
    not_now,
    played,
    seed_of,
    time_control_of,
)
from domino_arena.server.net.admin_scope import CALLER, caller_of
from domino_arena.server.net.admin_standings import batch_answer
from domino_arena.server.net.admin_tournaments import (
    TournamentAdmin,
    TournamentArena,
    TournamentRpcs,
    TournamentStorage,
    arena_call,
)
from domino_arena.server.net.wire import connected_bots
from domino_arena.server.play.match_spec import (
    DEFAULT_MAX_DEALS,
    DEFAULT_MAX_STRIKES,
    FinishedMatch,
    MatchSpec,
)
from domino_arena.server.play.roster import Roster
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tournaments import StoredTournament
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc

DEFAULT_MATCH_LIMIT: Final = 50
DEFAULT_LADDER_CONCURRENCY: Final = 4
MAX_REPEAT_DEAL_MATCHES: Final = 100_000
"""The standings' repeat-deal check reads at most the pool's newest this many matches."""


# -- what the servicer needs --------------------------------------------------------------------


class AdminStorage(BotStorage, TournamentStorage, Protocol):
    """The storage queries the admin API makes (all blocking)."""

    def match(self, match_id: str) -> StoredMatch | None: ...
    def ratings(self, pool: str) -> dict[str, elo.Rating]: ...
    def rated_games(self, pool: str) -> list[elo.RatedGame]: ...
    def organizer_course(self, token: str) -> str | None: ...


class AdminArena(TournamentArena, Protocol):
    """What :class:`AdminServicer` asks of the arena (``server/play/arena.py``'s ``Arena``).

    The tournament and ladder calls are made from asyncio (the gRPC handlers) and return once
    the change is recorded; a runner they start runs on in the trio nursery. They may raise
    ``KeyError`` (no such tournament or ladder: NOT_FOUND) or ``ValueError`` (not in a state
    that allows it: FAILED_PRECONDITION), with a message that says so.
    """

    @property
    def lobby(self) -> Roster: ...
    @property
    def storage(self) -> AdminStorage: ...
    @property
    def admin_token(self) -> str: ...
    @property
    def ladders(self) -> Mapping[str, LadderView]:
        """The running ladders by game name."""

    async def run_match(self, spec: MatchSpec) -> FinishedMatch: ...

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
    ) -> None: ...
    async def stop_ladder(self, game_name: str) -> None: ...


# -- the servicer -------------------------------------------------------------------------------

Request = TypeVar("Request", bound=Message)
Response = TypeVar("Response", bound=Message)
_Context = grpc.aio.ServicerContext[Any, Any]


class AdminServicer(
    BotRpcs, CheckRpcs, GradeRpcs, TournamentRpcs, admin_pb_grpc.AdminServiceServicer
):
    """Every ``AdminService`` call: the token first, then the request's own checks.

    The bot and token RPCs are :class:`~.admin_bots.BotRpcs`'s; CheckBot and PracticeMatch
    are :class:`~.admin_check.CheckRpcs`'s.
    """

    def __init__(self, arena: AdminArena) -> None:
        self.arena = arena
        self.bot_admin = BotAdmin(arena.storage, arena.lobby)
        self.tournament_admin = TournamentAdmin(arena)

    async def _serve(
        self,
        context: _Context,
        handler: Callable[[Request], Awaitable[Response]],
        request: Request,
    ) -> Response:
        """Check the token, run ``handler`` and turn its refusal into the call's status."""
        try:
            metadata = context.invocation_metadata()
            if _organizer_shaped(metadata):  # a database look-up: off the event loop
                who = await self._blocking(
                    caller_of, metadata, self.arena.admin_token, self.arena.storage.organizer_course
                )
            else:
                who = caller_of(metadata, self.arena.admin_token, _no_course)
            CALLER.set(who)  # this call's task's own context (see admin_scope)
            return await handler(request)
        except RequestError as exc:
            await _abort(context, exc.status, str(exc))

    async def _blocking(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run a storage call in a worker thread (it blocks)."""
        return await asyncio.to_thread(function, *args, **kwargs)

    # -- matches ------------------------------------------------------------------------------

    async def RunMatch(  # noqa: N802
        self, request: admin_pb.RunMatchRequest, context: _Context
    ) -> admin_pb.RunMatchResponse:
        return await self._serve(context, self._run_match, request)

    async def _run_match(self, request: admin_pb.RunMatchRequest) -> admin_pb.RunMatchResponse:
        spec = match_spec(request, self.arena.lobby)
        finished, result = await played(self.arena.run_match, spec)
        return admin_pb.RunMatchResponse(
            match_id=spec.match_id, result=result, record=finished.record or ""
        )

    async def ListConnected(  # noqa: N802
        self, request: admin_pb.ListConnectedRequest, context: _Context
    ) -> admin_pb.ListConnectedResponse:
        return await self._serve(context, self._list_connected, request)

    async def _list_connected(
        self, request: admin_pb.ListConnectedRequest
    ) -> admin_pb.ListConnectedResponse:
        return admin_pb.ListConnectedResponse(bots=connected_bots(self.arena.lobby))

    async def ListMatches(  # noqa: N802
        self, request: admin_pb.ListMatchesRequest, context: _Context
    ) -> admin_pb.ListMatchesResponse:
        return await self._serve(context, self._list_matches, request)

    async def _list_matches(
        self, request: admin_pb.ListMatchesRequest
    ) -> admin_pb.ListMatchesResponse:
        in_range(request.limit, "limit")
        game = game_name(request.game) if request.game else None
        storage = self.arena.storage
        if request.tournament_id:
            await self.tournament_admin.stored_tournament(request.tournament_id)
        matches: list[StoredMatch] = await self._blocking(
            storage.matches,
            request.limit or DEFAULT_MATCH_LIMIT,
            tournament_id=request.tournament_id or None,
            bot=request.bot or None,
            game=game,
        )
        return admin_pb.ListMatchesResponse(matches=[match_summary(m) for m in matches])

    async def GetMatch(  # noqa: N802
        self, request: admin_pb.GetMatchRequest, context: _Context
    ) -> admin_pb.GetMatchResponse:
        return await self._serve(context, self._get_match, request)

    async def _get_match(self, request: admin_pb.GetMatchRequest) -> admin_pb.GetMatchResponse:
        id_of(request.match_id, "match_id", "a match id")
        match: StoredMatch | None = await self._blocking(self.arena.storage.match, request.match_id)
        if match is None:
            raise not_found(f"no stored match has id '{request.match_id}'")
        return admin_pb.GetMatchResponse(match=match_summary(match), record=match.record or "")

    # -- tournaments: TournamentRpcs (admin_tournaments.py) -----------------------------------

    # -- ratings ------------------------------------------------------------------------------

    async def GetStandings(  # noqa: N802
        self, request: admin_pb.GetStandingsRequest, context: _Context
    ) -> admin_pb.GetStandingsResponse:
        return await self._serve(context, self._get_standings, request)

    async def _get_standings(
        self, request: admin_pb.GetStandingsRequest
    ) -> admin_pb.GetStandingsResponse:
        storage = self.arena.storage
        tournament: StoredTournament | None = None
        if request.tournament_id:
            tournament = await self.tournament_admin.stored_tournament(request.tournament_id)
            if request.game and request.game != tournament.game:
                raise invalid(
                    f"game: tournament {tournament.id} plays {tournament.game}, "
                    f"not {request.game!r} (leave game empty)"
                )
        pool = tournament.game if tournament is not None else game_name(request.game)
        ratings: dict[str, elo.Rating] = await self._blocking(storage.ratings, pool)
        response = admin_pb.GetStandingsResponse(game=pool, rows=standing_rows(ratings))
        if request.head_to_head:
            games: list[elo.RatedGame] = await self._blocking(storage.rated_games, pool)
            response.head_to_head.extend(head_to_head_rows(games))
        if request.repeat_deals:
            pool_matches: list[StoredMatch] = await self._blocking(
                storage.matches, MAX_REPEAT_DEAL_MATCHES, game=pool, records=False
            )
            response.repeat_deals.extend(pool_repeat_deal_rows(pool_matches, ratings))
        if request.batch:
            tournament_id = tournament.id if tournament is not None else None
            response.batch.CopyFrom(
                await batch_answer(storage.matches, request, pool, tournament_id)
            )
        return response

    # -- ladders ------------------------------------------------------------------------------

    async def StartLadder(  # noqa: N802
        self, request: admin_pb.StartLadderRequest, context: _Context
    ) -> admin_pb.Ladder:
        return await self._serve(context, self._start_ladder, request)

    async def _start_ladder(self, request: admin_pb.StartLadderRequest) -> admin_pb.Ladder:
        game = game_of(request)
        time_control = time_control_of(request.time_control)
        policy = fault_policy_of(request.fault_policy)
        seed = seed_of(request.seed) if request.HasField("seed") else None
        ladder_numbers(request)
        if game.name in self.arena.ladders:
            raise not_now(
                f"a {game.name} ladder is running already; stop it first "
                f"(domino-arena ladder stop {game.name})"
            )
        await arena_call(
            self.arena.start_ladder(
                game,
                time_control=time_control,
                fault_policy=policy,
                max_strikes=request.max_strikes or DEFAULT_MAX_STRIKES,
                max_deals=request.max_deals or DEFAULT_MAX_DEALS,
                concurrency=request.concurrency or DEFAULT_LADDER_CONCURRENCY,
                seed=seed,
            )
        )
        ladder = self.arena.ladders.get(game.name)
        if ladder is None:
            raise RequestError(
                grpc.StatusCode.INTERNAL, f"the {game.name} ladder did not start (see the log)"
            )
        return ladder_message(ladder)

    async def StopLadder(  # noqa: N802
        self, request: admin_pb.StopLadderRequest, context: _Context
    ) -> admin_pb.StopLadderResponse:
        return await self._serve(context, self._stop_ladder, request)

    async def _stop_ladder(
        self, request: admin_pb.StopLadderRequest
    ) -> admin_pb.StopLadderResponse:
        name = game_name(request.game)
        if name not in self.arena.ladders:
            raise not_found(f"no {name} ladder is running")
        await arena_call(self.arena.stop_ladder(name))
        return admin_pb.StopLadderResponse()

    async def ListLadders(  # noqa: N802
        self, request: admin_pb.ListLaddersRequest, context: _Context
    ) -> admin_pb.ListLaddersResponse:
        return await self._serve(context, self._list_ladders, request)

    async def _list_ladders(
        self, request: admin_pb.ListLaddersRequest
    ) -> admin_pb.ListLaddersResponse:
        ladders = self.arena.ladders
        return admin_pb.ListLaddersResponse(
            ladders=[ladder_message(ladders[name]) for name in sorted(ladders)]
        )


def _organizer_shaped(metadata: Any) -> bool:
    """Whether the call's token looks like an organizer token (``COURSE:SECRET``)."""
    for key, value in metadata or ():
        if key.lower() == METADATA_KEY:
            text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
            return ":" in text
    return False


def _no_course(token: str) -> str | None:
    return None


async def _abort(context: _Context, status: grpc.StatusCode, message: str) -> NoReturn:
    await context.abort(status, bounded(message, MAX_MESSAGE))  # fits the status trailer
    raise AssertionError("abort returned")  # pragma: no cover

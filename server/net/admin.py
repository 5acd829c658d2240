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
import datetime as dt
from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import Any, Final, NoReturn, Protocol, TypeVar

import grpc
from google.protobuf.message import Message

from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import Game
from domino_arena.server.ladder import elo
from domino_arena.server.logs import MAX_MESSAGE, bounded
from domino_arena.server.net.admin_answers import (
    STATE_FROM_PROTO,
    LadderView,
    Progress,
    head_to_head_rows,
    ladder_message,
    match_summary,
    pool_repeat_deal_rows,
    progress_message,
    repeat_deal_rows,
    standing_rows,
    tournament_message,
    tournament_results,
)
from domino_arena.server.net.admin_bots import BotAdmin, BotRpcs, BotStorage
from domino_arena.server.net.admin_check import CheckRpcs
from domino_arena.server.net.admin_compare import comparison_of
from domino_arena.server.net.admin_requests import (
    RequestError,
    check_token,
    deal_mode_of,
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
    tournament_numbers,
)
from domino_arena.server.net.admin_standings import batch_answer
from domino_arena.server.net.wire import connected_bots
from domino_arena.server.play.arena import NotAcceptingError
from domino_arena.server.play.match_spec import (
    DEFAULT_MAX_DEALS,
    DEFAULT_MAX_STRIKES,
    FinishedMatch,
    MatchSpec,
)
from domino_arena.server.play.roster import Roster
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.play.tournament import TournamentError, new_tournament, schedule_of
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tournaments import StoredTournament, TournamentState
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc

DEFAULT_MATCH_LIMIT: Final = 50
DEFAULT_LADDER_CONCURRENCY: Final = 4
MAX_REPEAT_DEAL_MATCHES: Final = 100_000
"""The standings' repeat-deal check reads at most the pool's newest this many matches."""


# -- what the servicer needs --------------------------------------------------------------------


class AdminStorage(BotStorage, Protocol):
    """The storage queries the admin API makes (all blocking)."""

    def bot_names(self) -> list[str]: ...
    def match(self, match_id: str) -> StoredMatch | None: ...
    def matches(
        self,
        limit: int = 100,
        *,
        tournament_id: str | None = None,
        bot: str | None = None,
        game: str | None = None,
        records: bool = True,
    ) -> list[StoredMatch]: ...
    def ratings(self, pool: str) -> dict[str, elo.Rating]: ...
    def rated_games(self, pool: str) -> list[elo.RatedGame]: ...
    def tournament(self, tournament_id: str) -> StoredTournament | None: ...
    def tournaments(
        self, states: Collection[TournamentState] | None = None
    ) -> list[StoredTournament]: ...
    def tournament_game_indexes(self, tournament_id: str) -> set[int]: ...


class AdminArena(Protocol):
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
    async def create_tournament(self, t: StoredTournament, start: bool) -> None: ...
    async def start_tournament(self, tournament_id: str) -> None: ...
    async def pause_tournament(self, tournament_id: str) -> None: ...
    async def cancel_tournament(self, tournament_id: str) -> None: ...
    def tournament_progress(self, tournament_id: str) -> Progress | None:
        """The progress of a tournament whose runner is live; None otherwise."""

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


class AdminServicer(BotRpcs, CheckRpcs, admin_pb_grpc.AdminServiceServicer):
    """Every ``AdminService`` call: the token first, then the request's own checks.

    The bot and token RPCs are :class:`~.admin_bots.BotRpcs`'s; CheckBot and PracticeMatch
    are :class:`~.admin_check.CheckRpcs`'s.
    """

    def __init__(self, arena: AdminArena) -> None:
        self.arena = arena
        self.bot_admin = BotAdmin(arena.storage, arena.lobby)

    async def _serve(
        self,
        context: _Context,
        handler: Callable[[Request], Awaitable[Response]],
        request: Request,
    ) -> Response:
        """Check the token, run ``handler`` and turn its refusal into the call's status."""
        try:
            check_token(context.invocation_metadata(), self.arena.admin_token)
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
            await self._stored_tournament(request.tournament_id)
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

    # -- tournaments --------------------------------------------------------------------------

    async def CreateTournament(  # noqa: N802
        self, request: admin_pb.CreateTournamentRequest, context: _Context
    ) -> admin_pb.Tournament:
        return await self._serve(context, self._create_tournament, request)

    async def _create_tournament(
        self, request: admin_pb.CreateTournamentRequest
    ) -> admin_pb.Tournament:
        game = game_of(request)
        time_control = time_control_of(request.time_control)
        policy = fault_policy_of(request.fault_policy)
        tournament_numbers(request)
        optional: dict[str, Any] = {}
        if request.concurrency:
            optional["concurrency"] = request.concurrency
        if request.HasField("wait_ms"):
            optional["wait_seconds"] = request.wait_ms / 1000
        known: list[str] = await self._blocking(self.arena.storage.bot_names)
        name = request.name or f"{game.describe()}, {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC"
        try:
            t = new_tournament(
                name=name,
                game=game,
                entrants=tuple(request.entrants),
                known_bots=known,
                games_per_pairing=request.games_per_pairing or 1,
                deals=deal_mode_of(request.deals),
                time_control=time_control,
                fault_policy=policy,
                max_strikes=request.max_strikes or DEFAULT_MAX_STRIKES,
                max_deals=request.max_deals or DEFAULT_MAX_DEALS,
                seed=seed_of(request.seed) if request.HasField("seed") else None,
                rated=request.rated if request.HasField("rated") else True,
                **optional,
            )
        except (TournamentError, ValueError) as exc:
            raise invalid(str(exc)) from None
        await self._arena_call(self.arena.create_tournament(t, request.start))
        return await self._tournament(t.id)

    async def CreateComparison(  # noqa: N802
        self, request: admin_pb.CreateComparisonRequest, context: _Context
    ) -> admin_pb.Tournament:
        return await self._serve(context, self._create_comparison, request)

    async def _create_comparison(
        self, request: admin_pb.CreateComparisonRequest
    ) -> admin_pb.Tournament:
        known: list[str] = await self._blocking(self.arena.storage.bot_names)
        t = comparison_of(request, known)
        await self._arena_call(self.arena.create_tournament(t, request.start))
        return await self._tournament(t.id)

    async def StartTournament(  # noqa: N802
        self, request: admin_pb.StartTournamentRequest, context: _Context
    ) -> admin_pb.Tournament:
        return await self._serve(context, self._start_tournament, request)

    async def _start_tournament(
        self, request: admin_pb.StartTournamentRequest
    ) -> admin_pb.Tournament:
        t = await self._stored_tournament(request.tournament_id)
        live = self.arena.tournament_progress(t.id) is not None
        if t.state is TournamentState.RUNNING and live:
            raise not_now(f"tournament {t.id} is running already")
        if t.state in (TournamentState.FINISHED, TournamentState.CANCELLED):
            raise not_now(
                f"tournament {t.id} is {t.state.value}: only a created, paused or interrupted "
                "tournament can start"
            )
        await self._arena_call(self.arena.start_tournament(t.id))
        return await self._tournament(t.id)

    async def PauseTournament(  # noqa: N802
        self, request: admin_pb.PauseTournamentRequest, context: _Context
    ) -> admin_pb.Tournament:
        return await self._serve(context, self._pause_tournament, request)

    async def _pause_tournament(
        self, request: admin_pb.PauseTournamentRequest
    ) -> admin_pb.Tournament:
        t = await self._stored_tournament(request.tournament_id)
        if t.state is not TournamentState.RUNNING or self.arena.tournament_progress(t.id) is None:
            state = "not running" if t.state is TournamentState.RUNNING else t.state.value
            raise not_now(f"tournament {t.id} is {state}: only a running tournament can pause")
        await self._arena_call(self.arena.pause_tournament(t.id))
        return await self._tournament(t.id)

    async def CancelTournament(  # noqa: N802
        self, request: admin_pb.CancelTournamentRequest, context: _Context
    ) -> admin_pb.Tournament:
        return await self._serve(context, self._cancel_tournament, request)

    async def _cancel_tournament(
        self, request: admin_pb.CancelTournamentRequest
    ) -> admin_pb.Tournament:
        t = await self._stored_tournament(request.tournament_id)
        if t.state in (TournamentState.FINISHED, TournamentState.CANCELLED):
            raise not_now(f"tournament {t.id} is {t.state.value} already")
        await self._arena_call(self.arena.cancel_tournament(t.id))
        return await self._tournament(t.id)

    async def GetTournament(  # noqa: N802
        self, request: admin_pb.GetTournamentRequest, context: _Context
    ) -> admin_pb.Tournament:
        return await self._serve(context, self._get_tournament, request)

    async def _get_tournament(self, request: admin_pb.GetTournamentRequest) -> admin_pb.Tournament:
        return await self._tournament(request.tournament_id, results=True)

    async def ListTournaments(  # noqa: N802
        self, request: admin_pb.ListTournamentsRequest, context: _Context
    ) -> admin_pb.ListTournamentsResponse:
        return await self._serve(context, self._list_tournaments, request)

    async def _list_tournaments(
        self, request: admin_pb.ListTournamentsRequest
    ) -> admin_pb.ListTournamentsResponse:
        states = []
        for index, code in enumerate(request.states):
            state = STATE_FROM_PROTO.get(code)
            if state is None:
                raise invalid(
                    f"states[{index}]: unknown value {code}; expected a TournamentState "
                    "other than TOURNAMENT_STATE_UNSPECIFIED"
                )
            states.append(state)
        found: list[StoredTournament] = await self._blocking(
            self.arena.storage.tournaments, states or None
        )
        return admin_pb.ListTournamentsResponse(
            tournaments=[tournament_message(t, await self._progress(t)) for t in found]
        )

    async def _stored_tournament(self, tournament_id: str) -> StoredTournament:
        id_of(tournament_id, "tournament_id", "a tournament id")
        t: StoredTournament | None = await self._blocking(
            self.arena.storage.tournament, tournament_id
        )
        if t is None:
            raise not_found(f"no tournament has id '{tournament_id}'")
        return t

    async def _tournament(self, tournament_id: str, results: bool = False) -> admin_pb.Tournament:
        t = await self._stored_tournament(tournament_id)
        message = tournament_message(t, await self._progress(t))
        if results:
            matches: list[StoredMatch] = await self._blocking(
                self.arena.storage.matches,
                max(message.progress.total, message.progress.done, 1),
                tournament_id=t.id,
                records=False,  # results, crosstable and the check read summaries only
            )
            rows, crosstable = tournament_results(t.entrants, matches)
            message.results.extend(rows)
            message.crosstable.extend(crosstable)
            message.repeat_deals.extend(repeat_deal_rows(matches, t.entrants))
        return message

    async def _progress(self, t: StoredTournament) -> admin_pb.TournamentProgress:
        live = self.arena.tournament_progress(t.id)
        if live is not None:
            return progress_message(live)
        done: set[int] = await self._blocking(self.arena.storage.tournament_game_indexes, t.id)
        return admin_pb.TournamentProgress(total=len(schedule_of(t)), done=len(done))

    async def _arena_call(self, call: Awaitable[None]) -> None:
        """Await an arena action; its refusals become NOT_FOUND / FAILED_PRECONDITION."""
        try:
            await call
        except KeyError as exc:
            raise not_found(str(exc.args[0]) if exc.args else str(exc)) from None
        except NotAcceptingError as exc:
            raise RequestError(grpc.StatusCode.UNAVAILABLE, str(exc)) from None
        except ValueError as exc:
            raise not_now(str(exc)) from None

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
            tournament = await self._stored_tournament(request.tournament_id)
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
        await self._arena_call(
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
        await self._arena_call(self.arena.stop_ladder(name))
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


async def _abort(context: _Context, status: grpc.StatusCode, message: str) -> NoReturn:
    await context.abort(status, bounded(message, MAX_MESSAGE))  # fits the status trailer
    raise AssertionError("abort returned")  # pragma: no cover

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
(:mod:`.admin_requests`), asks the :class:`AdminArena` (matches, ladders) or the
:class:`~.admin_tournaments.TournamentDirector` (tournaments) to act, reads the storage (in
worker threads: it blocks) and answers with the messages :mod:`.admin_answers` builds.

Every call is scoped by its caller (:mod:`.admin_scope`): the admin sees every course, a
course's organizer only its own. The lobby knows bots by name only, so a call that concerns
connected bots (RunMatch, ListConnected) reads their courses from the storage.

What the servicer needs from the arena and the director is two small protocols, so tests can
serve it over a fake of each.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, NoReturn, Protocol

import grpc

from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import Game
from domino_arena.server.ladder import elo
from domino_arena.server.logs import MAX_MESSAGE, bounded, quote
from domino_arena.server.net.admin_analyses import AnalysisRpcs
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
from domino_arena.server.net.admin_courses import CourseRpcs, CourseStorage
from domino_arena.server.net.admin_grades import GradeRpcs
from domino_arena.server.net.admin_owners import OwnerRpcs
from domino_arena.server.net.admin_requests import (
    RequestError,
    bot_name_of,
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
from domino_arena.server.net.admin_scope import CALLER, caller, caller_of
from domino_arena.server.net.admin_serving import Context, Request, Response
from domino_arena.server.net.admin_tournaments import (
    TournamentAdmin,
    TournamentArena,
    TournamentDirector,
    TournamentRpcs,
    TournamentStorage,
    arena_call,
)
from domino_arena.server.net.hosted_bots import HostedAdminRpcs
from domino_arena.server.net.live_wire import connected_bots
from domino_arena.server.play.match_spec import (
    DEFAULT_MAX_DEALS,
    DEFAULT_MAX_STRIKES,
    FinishedMatch,
    MatchSpec,
)
from domino_arena.server.play.roster import Roster
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store.bots import StoredBot, course_of_match
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tables import DEFAULT_COURSE, HOUSE_PREFIX
from domino_arena.server.store.tournaments import StoredTournament
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc

DEFAULT_MATCH_LIMIT: Final = 50
DEFAULT_LADDER_CONCURRENCY: Final = 4
MAX_REPEAT_DEAL_MATCHES: Final = 100_000
"""The standings' repeat-deal check reads at most the pool's newest this many matches."""


# -- what the servicer needs --------------------------------------------------------------------


class AdminStorage(BotStorage, CourseStorage, TournamentStorage, Protocol):
    """The storage queries the admin API makes (all blocking)."""

    def match(self, match_id: str) -> StoredMatch | None: ...
    def matches(
        self,
        limit: int = 100,
        *,
        tournament_id: str | None = None,
        bot: str | None = None,
        game: str | None = None,
        records: bool = True,
        course: str | None = None,
    ) -> list[StoredMatch]: ...
    def ratings(self, pool: str) -> dict[str, elo.Rating]: ...
    def rated_games(self, pool: str) -> list[elo.RatedGame]: ...
    def organizer_course(self, token: str) -> str | None: ...


class AdminArena(TournamentArena, Protocol):
    """What :class:`AdminServicer` asks of the arena (``server/play/arena.py``'s ``Arena``).

    The ladder calls are made from asyncio (the gRPC handlers) and return once the change is
    recorded; a runner they start runs on in the trio nursery. They may raise ``KeyError`` (no
    such ladder: NOT_FOUND) or ``ValueError`` (not in a state that allows it:
    FAILED_PRECONDITION), with a message that says so.
    """

    @property
    def lobby(self) -> Roster: ...
    @property
    def storage(self) -> AdminStorage: ...
    @property
    def admin_token(self) -> str: ...
    @property
    def node(self) -> str:
        """A cluster's match host's node name; empty on a single referee."""

    @property
    def ladders(self) -> Mapping[tuple[str, str], LadderView]:
        """The running ladders by (course, game name)."""

    @property
    def house(self) -> Mapping[str, object]:
        """The house bots the referee hosts, by name (a course's baselines are some)."""

    @property
    def running(self) -> Mapping[str, object]:
        """The matches running now, by id."""

    async def run_match(self, spec: MatchSpec, *, with_caller: bool = False) -> FinishedMatch:
        """Play ``spec``; ``with_caller``: cancelling this call aborts the match."""

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
    ) -> None: ...
    async def stop_ladder(self, game_name: str, course: str = DEFAULT_COURSE) -> None: ...
    async def wake_analysis(self) -> None:
        """Tell the analysis runner that jobs were queued (:mod:`.admin_analyses`)."""


# -- the servicer -------------------------------------------------------------------------------


class AdminServicer(
    AnalysisRpcs,
    BotRpcs,
    CheckRpcs,
    CourseRpcs,
    GradeRpcs,
    HostedAdminRpcs,
    OwnerRpcs,
    TournamentRpcs,
    admin_pb_grpc.AdminServiceServicer,
):
    """Every ``AdminService`` call: the token first, then the request's own checks.

    The bot and token RPCs are :class:`~.admin_bots.BotRpcs`'s; CheckBot and PracticeMatch
    are :class:`~.admin_check.CheckRpcs`'s; courses and invites are
    :class:`~.admin_courses.CourseRpcs`'s; owners :class:`~.admin_owners.OwnerRpcs`'s; hosted
    bots' versions and logs :class:`~.hosted_bots.HostedAdminRpcs`'s; analyses
    :class:`~.admin_analyses.AnalysisRpcs`'s.
    """

    def __init__(
        self,
        arena: AdminArena,
        director: TournamentDirector,
        sign_record: Callable[[str], str] | None = None,
    ) -> None:
        self.arena = arena
        self.director = director
        """Runs every tournament's life: create, start, pause, cancel, progress."""
        self.sign_record = sign_record
        """Signs each record handed out (``serve --record-key``); None: unsigned."""
        self.bot_admin = BotAdmin(arena.storage, arena.lobby)
        self.tournament_admin = TournamentAdmin(arena, director)

    async def _serve(
        self,
        context: Context,
        handler: Callable[[Request], Awaitable[Response]],
        request: Request,
    ) -> Response:
        """Check the token, run ``handler`` and turn its refusal into the call's status."""
        try:
            # An organizer token is looked up in the database: off the event loop.
            who = await self._blocking(
                caller_of,
                context.invocation_metadata(),
                self.arena.admin_token,
                self.arena.storage.organizer_course,
            )
            CALLER.set(who)  # this call's task's own context (see admin_scope)
            return await handler(request)
        except RequestError as exc:
            await _abort(context, exc.status, str(exc))

    async def _blocking(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run a storage call in a worker thread (it blocks)."""
        return await asyncio.to_thread(function, *args, **kwargs)

    # -- matches ------------------------------------------------------------------------------

    async def RunMatch(  # noqa: N802
        self, request: admin_pb.RunMatchRequest, context: Context
    ) -> admin_pb.RunMatchResponse:
        return await self._serve(context, self._run_match, request)

    async def _run_match(self, request: admin_pb.RunMatchRequest) -> admin_pb.RunMatchResponse:
        """Play the match; a call the client cancels (``match run`` stopped by Ctrl-C) aborts
        it. The client may name it (``match_id``) to show its id before the answer."""
        course = await self._match_course(request)
        spec = dataclasses.replace(match_spec(request, self.arena.lobby), course=course)
        if request.match_id and (
            spec.match_id in self.arena.running
            or await self._blocking(self.arena.storage.match, spec.match_id) is not None
        ):
            raise RequestError(
                grpc.StatusCode.ALREADY_EXISTS, f"match_id: a match has the id {spec.match_id}"
            )
        finished, result = await played(
            functools.partial(self.arena.run_match, with_caller=True), spec
        )
        return admin_pb.RunMatchResponse(
            match_id=spec.match_id, result=result, record=self._handed_out(finished.record)
        )

    async def _match_course(self, request: admin_pb.RunMatchRequest) -> str:
        """The course a RunMatch is played in; every bot must belong to it. Checked before the
        lobby is asked, so an organizer learns nothing (not even "not connected") of another
        course's bots: they are NOT_FOUND, as bots that do not exist."""
        who = caller()
        wanted = who.course_of(request.course) if request.course or not who.is_admin else ""
        stored: list[StoredBot | None] = []
        for index, name in enumerate(request.bots):
            bot_name_of(name, f"bots[{index}]")
            bot: StoredBot | None = await self._blocking(self.arena.storage.bot, name)
            if bot is None or not who.sees(bot.course):
                raise not_found(f"bots[{index}]: no bot is named '{name}'")
            stored.append(bot)
        seated = [bot for bot in stored if bot is not None]
        try:
            course = wanted or course_of_match(seated) or DEFAULT_COURSE
        except ValueError as exc:
            raise invalid(f"bots: {exc}") from None
        for index, bot in enumerate(stored):
            if bot is not None and bot.course != course:
                raise invalid(
                    f"bots[{index}]: bot '{bot.name}' belongs to course '{bot.course}', not "
                    f"'{course}': a match is played within one course (set course)"
                )
        return course

    async def _course_bots(self, course: str | None) -> set[str] | None:
        """The names of ``course``'s bots (deleted ones too); None for every course."""
        if course is None:
            return None
        bots: list[StoredBot] = await self._blocking(
            functools.partial(self.arena.storage.bots, include_deleted=True, course=course)
        )
        return {bot.name for bot in bots}

    async def ListConnected(  # noqa: N802
        self, request: admin_pb.ListConnectedRequest, context: Context
    ) -> admin_pb.ListConnectedResponse:
        return await self._serve(context, self._list_connected, request)

    async def _list_connected(
        self, request: admin_pb.ListConnectedRequest
    ) -> admin_pb.ListConnectedResponse:
        members = await self._course_bots(caller().listing(request.course))
        bots = connected_bots(self.arena.lobby)
        return admin_pb.ListConnectedResponse(
            bots=[b for b in bots if members is None or b.name in members]
        )

    async def ListMatches(  # noqa: N802
        self, request: admin_pb.ListMatchesRequest, context: Context
    ) -> admin_pb.ListMatchesResponse:
        return await self._serve(context, self._list_matches, request)

    async def _list_matches(
        self, request: admin_pb.ListMatchesRequest
    ) -> admin_pb.ListMatchesResponse:
        in_range(request.limit, "limit")
        game = game_name(request.game) if request.game else None
        course = caller().listing(request.course)
        storage = self.arena.storage
        if request.tournament_id:
            await self._seen_tournament(request.tournament_id)
        matches: list[StoredMatch] = await self._blocking(
            storage.matches,
            request.limit or DEFAULT_MATCH_LIMIT,
            tournament_id=request.tournament_id or None,
            bot=request.bot or None,
            game=game,
            course=course,
        )
        return admin_pb.ListMatchesResponse(matches=[match_summary(m) for m in matches])

    async def GetMatch(  # noqa: N802
        self, request: admin_pb.GetMatchRequest, context: Context
    ) -> admin_pb.GetMatchResponse:
        return await self._serve(context, self._get_match, request)

    async def _get_match(self, request: admin_pb.GetMatchRequest) -> admin_pb.GetMatchResponse:
        id_of(request.match_id, "match_id", "a match id")
        match: StoredMatch | None = await self._blocking(self.arena.storage.match, request.match_id)
        if match is None or not caller().sees(match.course):
            raise not_found(f"no stored match has id '{request.match_id}'")
        return admin_pb.GetMatchResponse(
            match=match_summary(match), record=self._handed_out(match.record)
        )

    def _handed_out(self, record: str | None) -> str:
        """A record as the API hands it out: signed when the referee has a key ("" for none)."""
        if not record or self.sign_record is None:
            return record or ""
        return self.sign_record(record)

    # -- tournaments: TournamentRpcs (admin_tournaments.py) -----------------------------------

    async def _seen_tournament(self, tournament_id: str) -> StoredTournament:
        """The tournament ``tournament_id`` if the caller sees its course; another course's is
        NOT_FOUND with the message of a missing one."""
        t = await self.tournament_admin.stored_tournament(tournament_id)
        caller().check_sees(t.course, f"no tournament has id '{tournament_id}'")
        return t

    # -- ratings ------------------------------------------------------------------------------

    async def GetStandings(  # noqa: N802
        self, request: admin_pb.GetStandingsRequest, context: Context
    ) -> admin_pb.GetStandingsResponse:
        return await self._serve(context, self._get_standings, request)

    async def _get_standings(
        self, request: admin_pb.GetStandingsRequest
    ) -> admin_pb.GetStandingsResponse:
        storage = self.arena.storage
        course = caller().listing(request.course)
        tournament: StoredTournament | None = None
        if request.tournament_id:
            tournament = await self._seen_tournament(request.tournament_id)
            if request.game and request.game != tournament.game:
                raise invalid(
                    f"game: tournament {tournament.id} plays {tournament.game}, "
                    f"not {request.game!r} (leave game empty)"
                )
        pool = tournament.game if tournament is not None else game_name(request.game)
        members = await self._course_bots(course)

        def shown(bot: str) -> bool:  # the course's bots and the house baselines
            return members is None or bot in members or bot.startswith(HOUSE_PREFIX)

        ratings: dict[str, elo.Rating] = await self._blocking(storage.ratings, pool)
        ratings = {bot: rating for bot, rating in ratings.items() if shown(bot)}
        response = admin_pb.GetStandingsResponse(game=pool, rows=standing_rows(ratings))
        if request.head_to_head:
            games: list[elo.RatedGame] = await self._blocking(storage.rated_games, pool)
            response.head_to_head.extend(
                row for row in head_to_head_rows(games) if shown(row.bot) and shown(row.opponent)
            )
        if request.repeat_deals:
            pool_matches: list[StoredMatch] = await self._blocking(
                functools.partial(
                    storage.matches,
                    MAX_REPEAT_DEAL_MATCHES,
                    game=pool,
                    records=False,
                    course=course,
                )
            )
            response.repeat_deals.extend(pool_repeat_deal_rows(pool_matches, ratings))
        if request.batch:
            # The batch fit (NumPy, SciPy: about 55 MiB) is imported by the first request for
            # it, not by every referee.
            from domino_arena.server.net.admin_standings import batch_answer  # noqa: PLC0415

            tournament_id = tournament.id if tournament is not None else None
            matches = functools.partial(storage.matches, course=course)
            fixed = (
                {f"{HOUSE_PREFIX}{bot}": rating for bot, rating in tournament.baselines}
                if tournament is not None
                else None
            )
            response.batch.CopyFrom(
                await batch_answer(matches, request, pool, tournament_id, fixed)
            )
        return response

    # -- ladders ------------------------------------------------------------------------------

    async def StartLadder(  # noqa: N802
        self, request: admin_pb.StartLadderRequest, context: Context
    ) -> admin_pb.Ladder:
        return await self._serve(context, self._start_ladder, request)

    async def _start_ladder(self, request: admin_pb.StartLadderRequest) -> admin_pb.Ladder:
        game = game_of(request)
        time_control = time_control_of(request.time_control)
        policy = fault_policy_of(request.fault_policy)
        seed = seed_of(request.seed) if request.HasField("seed") else None
        ladder_numbers(request)
        course = await self.bot_admin.existing_course(request.course)
        key = (course, game.name)
        if key in self.arena.ladders:
            where, flag = _in_course(course)
            raise not_now(
                f"a {game.name} ladder is running already{where}; stop it first "
                f"(domino-arena ladder stop {game.name}{flag})"
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
                course=course,
            )
        )
        ladder = self.arena.ladders.get(key)
        if ladder is None:
            raise RequestError(
                grpc.StatusCode.INTERNAL, f"the {game.name} ladder did not start (see the log)"
            )
        return ladder_message(ladder)

    async def StopLadder(  # noqa: N802
        self, request: admin_pb.StopLadderRequest, context: Context
    ) -> admin_pb.StopLadderResponse:
        return await self._serve(context, self._stop_ladder, request)

    async def _stop_ladder(
        self, request: admin_pb.StopLadderRequest
    ) -> admin_pb.StopLadderResponse:
        name = game_name(request.game)
        course = caller().course_of(request.course)
        # A cluster's host also stops a ladder another host runs (through its stored settings).
        if (course, name) not in self.arena.ladders and not self.arena.node:
            raise not_found(f"no {name} ladder is running{_in_course(course)[0]}")
        await arena_call(self.arena.stop_ladder(name, course))
        return admin_pb.StopLadderResponse()

    async def ListLadders(  # noqa: N802
        self, request: admin_pb.ListLaddersRequest, context: Context
    ) -> admin_pb.ListLaddersResponse:
        return await self._serve(context, self._list_ladders, request)

    async def _list_ladders(
        self, request: admin_pb.ListLaddersRequest
    ) -> admin_pb.ListLaddersResponse:
        course = caller().listing(request.course)
        ladders = self.arena.ladders
        return admin_pb.ListLaddersResponse(
            ladders=[
                ladder_message(ladders[key])
                for key in sorted(ladders)
                if course is None or key[0] == course
            ]
        )


def _in_course(course: str) -> tuple[str, str]:
    """Words and a CLI flag naming ``course`` in a message (nothing for the default one)."""
    if course == DEFAULT_COURSE:
        return "", ""
    return f" in course {quote(course)}", f" --course {quote(course)}"


async def _abort(context: Context, status: grpc.StatusCode, message: str) -> NoReturn:
    await context.abort(status, bounded(message, MAX_MESSAGE))  # fits the status trailer
    raise AssertionError("abort returned")  # pragma: no cover

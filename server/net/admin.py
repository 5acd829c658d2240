"""The admin API (``AdminService`` in admin.proto): matches, tournaments, standings, ladders.

Every call must carry the admin token as call metadata ``authorization: Bearer <token>``; it is
checked (in constant time) before anything else, and a refused call changes nothing. A request
the referee cannot honour ends with one status and a message that names the field, the rule and
what was expected: INVALID_ARGUMENT (the request is wrong), NOT_FOUND (no such tournament or
match), FAILED_PRECONDITION (not now, e.g. pausing a tournament that is not running).

``RunMatch`` starts one match between connected bots and answers when it ends, with the result
and the JSON Lines record; the match is stored before the answer. A match does not depend on
the admin call that started it: if the caller goes away, the match still ends and is stored.
Tournaments and ladders run in the arena's trio nursery; this module only checks requests,
asks the :class:`AdminArena` to act, and reads the storage (in worker threads: it blocks).

What the servicer needs from the arena is the small :class:`AdminArena` protocol, so tests can
serve it over a fake arena.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hmac
import secrets
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, Final, NoReturn, Protocol, TypeVar

import grpc
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from domino_arena.sdk.match.results import FaultKind, FaultPolicy, MatchResult, Termination
from domino_arena.sdk.rules import GAMES, Game, make_game
from domino_arena.sdk.wire.convert import ConversionError, game_from_proto, game_to_proto
from domino_arena.server.ladder import elo
from domino_arena.server.net.lobby import Lobby
from domino_arena.server.net.remote import FAULT_POLICY_TO_PROTO, result_to_proto
from domino_arena.server.play.arena import MatchAbortedError, NotAcceptingError
from domino_arena.server.play.match_spec import DEFAULT_MAX_STRIKES, FinishedMatch, MatchSpec
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.play.tournament import TournamentError, new_tournament, schedule_of
from domino_arena.server.store.storage import (
    MAX_SEED,
    RATED_TERMINATIONS,
    StoredMatch,
    StoredTournament,
    TournamentState,
    rated_game_of,
    sides_of,
)
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc
from domino_arena.v1 import referee_pb2 as pb

FAULT_POLICY_FROM_PROTO: Final[dict[pb.FaultPolicy.ValueType, FaultPolicy]] = {
    pb.FAULT_POLICY_UNSPECIFIED: FaultPolicy.SUBSTITUTE,
    pb.FAULT_POLICY_FORFEIT: FaultPolicy.FORFEIT,
    pb.FAULT_POLICY_SUBSTITUTE: FaultPolicy.SUBSTITUTE,
}

STATE_TO_PROTO: Final[dict[TournamentState, admin_pb.TournamentState.ValueType]] = {
    TournamentState.CREATED: admin_pb.TOURNAMENT_STATE_CREATED,
    TournamentState.RUNNING: admin_pb.TOURNAMENT_STATE_RUNNING,
    TournamentState.PAUSED: admin_pb.TOURNAMENT_STATE_PAUSED,
    TournamentState.CANCELLED: admin_pb.TOURNAMENT_STATE_CANCELLED,
    TournamentState.FINISHED: admin_pb.TOURNAMENT_STATE_FINISHED,
}
STATE_FROM_PROTO: Final = {code: state for state, code in STATE_TO_PROTO.items()}

METADATA_KEY: Final = "authorization"
DEFAULT_MATCH_LIMIT: Final = 50
MAX_MATCH_LIMIT: Final = 1000
DEFAULT_LADDER_CONCURRENCY: Final = 4
TOKEN_HELP: Final = (
    "send call metadata 'authorization: Bearer <token>' "
    "(the CLI: --admin-token or $DOMINO_ARENA_ADMIN_TOKEN)"
)


class RequestError(Exception):
    """An admin request the referee refuses, with the status to answer."""

    def __init__(self, status: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.status = status


def _invalid(message: str) -> RequestError:
    return RequestError(grpc.StatusCode.INVALID_ARGUMENT, message)


def _not_found(message: str) -> RequestError:
    return RequestError(grpc.StatusCode.NOT_FOUND, message)


def _not_now(message: str) -> RequestError:
    return RequestError(grpc.StatusCode.FAILED_PRECONDITION, message)


# -- what the servicer needs --------------------------------------------------------------------


class Progress(Protocol):
    """How far a running tournament is (``TournamentRunner.progress``)."""

    @property
    def total(self) -> int: ...
    @property
    def done(self) -> int: ...
    @property
    def running(self) -> int: ...
    @property
    def waiting(self) -> int: ...


class LadderView(Protocol):
    """A running ladder as the admin API shows it (``LadderRunner``)."""

    @property
    def game(self) -> Game: ...
    @property
    def time_control(self) -> TimeControl: ...
    @property
    def fault_policy(self) -> FaultPolicy: ...
    @property
    def max_strikes(self) -> int: ...
    @property
    def concurrency(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def started(self) -> int: ...
    @property
    def finished(self) -> int: ...


class AdminStorage(Protocol):
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
    ) -> list[StoredMatch]: ...
    def ratings(self, pool: str) -> dict[str, elo.Rating]: ...
    def rated_games(self, pool: str) -> list[elo.RatedGame]: ...
    def tournament(self, tournament_id: str) -> StoredTournament | None: ...
    def tournaments(
        self, states: Collection[TournamentState] | None = None
    ) -> list[StoredTournament]: ...
    def tournament_game_indexes(self, tournament_id: str) -> set[int]: ...


class AdminArena(Protocol):
    """What :class:`AdminServicer` asks of the arena (``server/arena.py``'s ``Arena``).

    The tournament and ladder calls are made from asyncio (the gRPC handlers) and return once
    the change is recorded; a runner they start runs on in the trio nursery. They may raise
    ``KeyError`` (no such tournament or ladder: NOT_FOUND) or ``ValueError`` (not in a state
    that allows it: FAILED_PRECONDITION), with a message that says so.
    """

    @property
    def lobby(self) -> Lobby: ...
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
        concurrency: int,
        seed: int | None,
    ) -> None: ...
    async def stop_ladder(self, game_name: str) -> None: ...


# -- checking requests --------------------------------------------------------------------------


def check_token(metadata: Iterable[tuple[str, str | bytes]] | None, expected: str) -> None:
    """Accept the call only if its metadata carries ``Bearer <expected>``.

    Raises:
        RequestError: UNAUTHENTICATED: the token is missing, malformed or wrong, or the
            referee has none (then every call is refused).
    """
    unauthenticated = grpc.StatusCode.UNAUTHENTICATED
    values = [value for key, value in metadata or () if key.lower() == METADATA_KEY]
    if not values:
        raise RequestError(unauthenticated, f"admin token missing: {TOKEN_HELP}")
    value = values[0]
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    scheme, _, token = text.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise RequestError(
            unauthenticated,
            f"admin token missing: the authorization metadata is not 'Bearer <token>'; "
            f"{TOKEN_HELP}",
        )
    if not expected:
        raise RequestError(
            unauthenticated,
            "wrong admin token: this referee has no admin token set, so its admin API is closed",
        )
    if not hmac.compare_digest(token.encode(), expected.encode()):
        raise RequestError(unauthenticated, "wrong admin token")


def game_of(message: Message, field: str = "game") -> Game:
    """Return the game of a ``GameConfig`` field of a request (``HasField`` checked).

    Raises:
        RequestError: INVALID_ARGUMENT naming ``field``.
    """
    if not message.HasField(field):
        raise _invalid(f"{field}: missing; expected a game configuration")
    try:
        return game_from_proto(getattr(message, field), field)
    except ConversionError as exc:
        raise _invalid(str(exc)) from None
    except ValueError as exc:
        raise _invalid(f"{field}: {exc}") from None


def game_name(name: str, field: str = "game") -> str:
    """Check a game name (a rating pool or a filter).

    Raises:
        RequestError: INVALID_ARGUMENT: empty or unknown.
    """
    known = ", ".join(sorted(GAMES))
    if not name:
        raise _invalid(f"{field}: missing; expected one of {known}")
    if name not in GAMES:
        raise _invalid(f"{field}: unknown game '{name}'; expected one of {known}")
    return name


def time_control_of(message: pb.TimeControl, field: str = "time_control") -> TimeControl:
    """Return the time control of a request (zeros: the defaults)."""
    try:
        return TimeControl.from_ms(message.move_ms, message.bank_ms, message.grace_ms)
    except ValueError as exc:
        raise _invalid(f"{field}: {exc}") from None


def fault_policy_of(value: pb.FaultPolicy.ValueType, field: str = "fault_policy") -> FaultPolicy:
    policy = FAULT_POLICY_FROM_PROTO.get(value)
    if policy is None:
        raise _invalid(
            f"{field}: unknown value {value}; expected FAULT_POLICY_FORFEIT or "
            "FAULT_POLICY_SUBSTITUTE (or unset: substitute)"
        )
    return policy


def seed_of(value: int, field: str = "seed") -> int:
    if value > MAX_SEED:
        raise _invalid(f"{field}: must be at most {MAX_SEED}, got {value}")
    return value


def match_spec(request: admin_pb.RunMatchRequest, lobby: Lobby) -> MatchSpec:
    """Check ``request`` against the game and the lobby and return the match to run.

    Raises:
        RequestError: INVALID_ARGUMENT for a bad game, seat count, seed, time control or
            policy; FAILED_PRECONDITION for a bot that is not connected or does not play it.
    """
    game = game_of(request)
    bots = tuple(request.bots)
    if len(bots) != game.num_players:
        raise _invalid(
            f"bots: {game.describe()} needs {game.num_players} bots, one per seat, got {len(bots)}"
        )
    twice = sorted({b for b in bots if bots.count(b) > 1})
    if twice:
        raise _invalid(f"bots: {', '.join(twice)} listed twice: a bot plays one seat per match")
    for name in bots:
        connection = lobby.get(name)
        if connection is None:
            raise _not_now(f"bot '{name}' is not connected")
        if game.name not in connection.games:
            raise _not_now(
                f"bot '{name}' does not play {game.name} (it plays {', '.join(connection.games)})"
            )
    seed = seed_of(request.seed) if request.has_seed else secrets.randbelow(10**9)
    return MatchSpec(
        game=game,
        bots=bots,
        seed=seed,
        time_control=time_control_of(request.time_control),
        fault_policy=fault_policy_of(request.fault_policy),
        max_strikes=request.max_strikes or DEFAULT_MAX_STRIKES,
    )


# -- building answers ---------------------------------------------------------------------------


def _timestamp(moment: dt.datetime) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(moment.astimezone(dt.UTC) if moment.tzinfo else moment)
    return stamp


def _time_control_message(move_ms: int, bank_ms: int, grace_ms: int) -> pb.TimeControl:
    return pb.TimeControl(move_ms=move_ms, bank_ms=bank_ms, grace_ms=grace_ms)


def match_summary(match: StoredMatch) -> admin_pb.MatchSummary:
    """Return the summary of a stored match (everything but its record)."""
    result = MatchResult(
        Termination(match.termination),
        match.winner,
        match.scores,
        faulted_seat=match.faulted_seat,
        fault=None if match.fault is None else FaultKind(match.fault),
        detail=match.detail,
    )
    summary = admin_pb.MatchSummary(
        match_id=match.id,
        game=game_to_proto(make_game(match.game, **match.options)),
        bots=match.seats,
        seed=match.seed,
        result=result_to_proto(result, sides_of(match)),
        faults=match.faults or (0,) * len(match.seats),
        rated=match.rated,
        tournament_id=match.tournament_id or "",
        game_index=-1 if match.game_index is None else match.game_index,
        deal_id=-1 if match.deal_id is None else match.deal_id,
        rotation=-1 if match.rotation is None else match.rotation,
    )
    summary.created.CopyFrom(_timestamp(match.created))
    return summary


def tournament_message(
    t: StoredTournament, progress: admin_pb.TournamentProgress
) -> admin_pb.Tournament:
    """Return a tournament's settings, state and progress (its results are added apart)."""
    message = admin_pb.Tournament(
        id=t.id,
        name=t.name,
        game=game_to_proto(make_game(t.game, **t.options)),
        entrants=t.entrants,
        games_per_pairing=t.games_per_pairing,
        duplicate_deals=t.duplicate_deals,
        time_control=_time_control_message(*t.time_control_ms),
        fault_policy=FAULT_POLICY_TO_PROTO[FaultPolicy(t.fault_policy)],
        max_strikes=t.max_strikes,
        concurrency=t.concurrency,
        wait_ms=round(t.wait_seconds * 1000),
        seed=t.seed,
        rated=t.rated,
        state=STATE_TO_PROTO[t.state],
        progress=progress,
    )
    message.created.CopyFrom(_timestamp(t.created))
    message.updated.CopyFrom(_timestamp(t.updated))
    return message


def head_to_head_rows(games: Sequence[elo.RatedGame]) -> list[admin_pb.HeadToHead]:
    """Every pair of bots that met, with the first bot's wins, draws and losses."""
    return [
        admin_pb.HeadToHead(
            bot=a, opponent=b, wins=record.wins, draws=record.draws, losses=record.losses
        )
        for (a, b), record in sorted(elo.head_to_head(games).items())
    ]


def tournament_results(
    entrants: Sequence[str], matches: Sequence[StoredMatch]
) -> tuple[list[admin_pb.EntrantResult], list[admin_pb.HeadToHead]]:
    """Return the results per entrant (best first) and the crosstable of a tournament.

    Only counted games (normal ends and forfeits) count, rated or not; ``performance`` is the
    Elo of these games alone, played in the order they were stored.
    """
    counted = [m for m in matches if m.termination in RATED_TERMINATIONS]
    counted.sort(key=lambda m: (m.created, m.game_index if m.game_index is not None else -1))
    games = [rated_game_of(m) for m in counted]
    ratings = elo.replay(games)
    rows = []
    for bot in entrants:
        rating = ratings.get(bot, elo.Rating())
        rows.append(
            admin_pb.EntrantResult(
                bot=bot,
                games=rating.games,
                wins=rating.wins,
                draws=rating.draws,
                losses=rating.losses,
                faults=rating.faults,
                points=rating.wins + rating.draws / 2,
                performance=rating.rating,
            )
        )
    rows.sort(key=lambda r: (-r.points, -r.performance, r.bot))
    return rows, head_to_head_rows(games)


def ladder_message(ladder: LadderView) -> admin_pb.Ladder:
    return admin_pb.Ladder(
        game=game_to_proto(ladder.game),
        time_control=_time_control_message(*ladder.time_control.to_ms()),
        fault_policy=FAULT_POLICY_TO_PROTO[ladder.fault_policy],
        max_strikes=ladder.max_strikes,
        concurrency=ladder.concurrency,
        seed=ladder.seed,
        started=ladder.started,
        finished=ladder.finished,
    )


# -- the servicer -------------------------------------------------------------------------------

Request = TypeVar("Request", bound=Message)
Response = TypeVar("Response", bound=Message)
_Context = grpc.aio.ServicerContext[Any, Any]


class AdminServicer(admin_pb_grpc.AdminServiceServicer):
    """Every ``AdminService`` call: the token first, then the request's own checks."""

    def __init__(self, arena: AdminArena) -> None:
        self.arena = arena

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
        try:
            finished = await self.arena.run_match(spec)
        except (NotAcceptingError, MatchAbortedError) as exc:
            raise RequestError(grpc.StatusCode.UNAVAILABLE, str(exc)) from None
        except Exception as exc:  # e.g. the database refused the finished match
            raise RequestError(
                grpc.StatusCode.INTERNAL,
                f"the match was played but not stored: {type(exc).__name__}: {exc}",
            ) from None
        game = spec.game
        sides = tuple(game.side_of(s) for s in range(game.num_players))
        return admin_pb.RunMatchResponse(
            match_id=spec.match_id,
            result=result_to_proto(finished.result, sides),
            record=finished.record or "",
        )

    async def ListConnected(  # noqa: N802
        self, request: admin_pb.ListConnectedRequest, context: _Context
    ) -> admin_pb.ListConnectedResponse:
        return await self._serve(context, self._list_connected, request)

    async def _list_connected(
        self, request: admin_pb.ListConnectedRequest
    ) -> admin_pb.ListConnectedResponse:
        lobby = self.arena.lobby
        return admin_pb.ListConnectedResponse(
            bots=[
                admin_pb.ConnectedBot(name=c.name, games=c.games, matches=lobby.seated[c.name])
                for c in lobby.connections()
            ]
        )

    async def ListMatches(  # noqa: N802
        self, request: admin_pb.ListMatchesRequest, context: _Context
    ) -> admin_pb.ListMatchesResponse:
        return await self._serve(context, self._list_matches, request)

    async def _list_matches(
        self, request: admin_pb.ListMatchesRequest
    ) -> admin_pb.ListMatchesResponse:
        if request.limit > MAX_MATCH_LIMIT:
            raise _invalid(f"limit: must be at most {MAX_MATCH_LIMIT}, got {request.limit}")
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
        if not request.match_id:
            raise _invalid("match_id: missing; expected a match id")
        match: StoredMatch | None = await self._blocking(self.arena.storage.match, request.match_id)
        if match is None:
            raise _not_found(f"no stored match has id '{request.match_id}'")
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
                duplicate_deals=(
                    request.duplicate_deals if request.HasField("duplicate_deals") else True
                ),
                time_control=time_control,
                fault_policy=policy,
                max_strikes=request.max_strikes or DEFAULT_MAX_STRIKES,
                seed=seed_of(request.seed) if request.HasField("seed") else None,
                rated=request.rated if request.HasField("rated") else True,
                **optional,
            )
        except (TournamentError, ValueError) as exc:
            raise _invalid(str(exc)) from None
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
            raise _not_now(f"tournament {t.id} is running already")
        if t.state in (TournamentState.FINISHED, TournamentState.CANCELLED):
            raise _not_now(
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
            raise _not_now(f"tournament {t.id} is {state}: only a running tournament can pause")
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
            raise _not_now(f"tournament {t.id} is {t.state.value} already")
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
                raise _invalid(
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
        if not tournament_id:
            raise _invalid("tournament_id: missing; expected a tournament id")
        t: StoredTournament | None = await self._blocking(
            self.arena.storage.tournament, tournament_id
        )
        if t is None:
            raise _not_found(f"no tournament has id '{tournament_id}'")
        return t

    async def _tournament(self, tournament_id: str, results: bool = False) -> admin_pb.Tournament:
        t = await self._stored_tournament(tournament_id)
        message = tournament_message(t, await self._progress(t))
        if results:
            matches: list[StoredMatch] = await self._blocking(
                self.arena.storage.matches,
                max(message.progress.total, message.progress.done, 1),
                tournament_id=t.id,
            )
            rows, crosstable = tournament_results(t.entrants, matches)
            message.results.extend(rows)
            message.crosstable.extend(crosstable)
        return message

    async def _progress(self, t: StoredTournament) -> admin_pb.TournamentProgress:
        live = self.arena.tournament_progress(t.id)
        if live is not None:
            return admin_pb.TournamentProgress(
                total=live.total, done=live.done, running=live.running, waiting=live.waiting
            )
        done: set[int] = await self._blocking(self.arena.storage.tournament_game_indexes, t.id)
        return admin_pb.TournamentProgress(total=len(schedule_of(t)), done=len(done))

    async def _arena_call(self, call: Awaitable[None]) -> None:
        """Await an arena action; its refusals become NOT_FOUND / FAILED_PRECONDITION."""
        try:
            await call
        except KeyError as exc:
            raise _not_found(str(exc.args[0]) if exc.args else str(exc)) from None
        except NotAcceptingError as exc:
            raise RequestError(grpc.StatusCode.UNAVAILABLE, str(exc)) from None
        except ValueError as exc:
            raise _not_now(str(exc)) from None

    # -- ratings ------------------------------------------------------------------------------

    async def GetStandings(  # noqa: N802
        self, request: admin_pb.GetStandingsRequest, context: _Context
    ) -> admin_pb.GetStandingsResponse:
        return await self._serve(context, self._get_standings, request)

    async def _get_standings(
        self, request: admin_pb.GetStandingsRequest
    ) -> admin_pb.GetStandingsResponse:
        pool = game_name(request.game)
        storage = self.arena.storage
        ratings: dict[str, elo.Rating] = await self._blocking(storage.ratings, pool)
        response = admin_pb.GetStandingsResponse(
            game=pool,
            rows=[
                admin_pb.StandingRow(
                    rank=rank,
                    bot=bot,
                    rating=rating.rating,
                    uncertainty=rating.uncertainty,
                    games=rating.games,
                    wins=rating.wins,
                    draws=rating.draws,
                    losses=rating.losses,
                    faults=rating.faults,
                )
                for rank, (bot, rating) in enumerate(elo.standings(ratings), start=1)
            ],
        )
        if request.head_to_head:
            games: list[elo.RatedGame] = await self._blocking(storage.rated_games, pool)
            response.head_to_head.extend(head_to_head_rows(games))
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
        if game.name in self.arena.ladders:
            raise _not_now(
                f"a {game.name} ladder is running already; stop it first "
                f"(domino-arena ladder stop {game.name})"
            )
        await self._arena_call(
            self.arena.start_ladder(
                game,
                time_control=time_control,
                fault_policy=policy,
                max_strikes=request.max_strikes or DEFAULT_MAX_STRIKES,
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
            raise _not_found(f"no {name} ladder is running")
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
    await context.abort(status, message)
    raise AssertionError("abort returned")  # pragma: no cover


SERVICE_NAMES: Final[Sequence[str]] = (
    pb.DESCRIPTOR.services_by_name["BotService"].full_name,
    admin_pb.DESCRIPTOR.services_by_name["AdminService"].full_name,
    admin_pb.DESCRIPTOR.services_by_name["SpectatorService"].full_name,
)
"""The full names of the services of the referee (for health checking and reflection)."""

"""The admin API: run a match between connected bots, list the connected bots.

``RunMatch`` starts one match between connected bots and answers when it ends, with the result
and the JSON Lines record; the match is stored before the answer. A match does not depend on
the admin call that started it: if the caller goes away, the match still ends and is stored.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import Final

import grpc

from domino_arena.sdk.convert import ConversionError, game_from_proto
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc
from domino_arena.v1 import referee_pb2 as pb

from .arena import DEFAULT_MAX_STRIKES, Arena, MatchAbortedError, MatchSpec, NotAcceptingError
from .lobby import Lobby
from .remote import result_to_proto
from .seats import FaultPolicy
from .storage import MAX_SEED
from .timecontrol import TimeControl

FAULT_POLICY_FROM_PROTO: Final[dict[pb.FaultPolicy.ValueType, FaultPolicy]] = {
    pb.FAULT_POLICY_UNSPECIFIED: FaultPolicy.SUBSTITUTE,
    pb.FAULT_POLICY_FORFEIT: FaultPolicy.FORFEIT,
    pb.FAULT_POLICY_SUBSTITUTE: FaultPolicy.SUBSTITUTE,
}


class RequestError(Exception):
    """An admin request the referee refuses, with the status to answer."""

    def __init__(self, status: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.status = status


def match_spec(request: admin_pb.RunMatchRequest, lobby: Lobby) -> MatchSpec:
    """Check ``request`` against the game and the lobby and return the match to run.

    Raises:
        RequestError: INVALID_ARGUMENT for a bad game, seat count, seed, time control or
            policy; FAILED_PRECONDITION for a bot that is not connected or does not play it.
    """
    invalid = grpc.StatusCode.INVALID_ARGUMENT
    if not request.HasField("game"):
        raise RequestError(invalid, "game: missing")
    try:
        game = game_from_proto(request.game)
    except (ConversionError, ValueError) as exc:
        raise RequestError(invalid, f"game: {exc}") from None
    bots = tuple(request.bots)
    if len(bots) != game.num_players:
        raise RequestError(
            invalid,
            f"bots: {game.describe()} needs {game.num_players} bots, one per seat, got {len(bots)}",
        )
    twice = sorted({b for b in bots if bots.count(b) > 1})
    if twice:
        raise RequestError(
            invalid, f"bots: {', '.join(twice)} listed twice: a bot plays one seat per match"
        )
    for name in bots:
        connection = lobby.get(name)
        if connection is None:
            raise RequestError(
                grpc.StatusCode.FAILED_PRECONDITION, f"bot '{name}' is not connected"
            )
        if game.name not in connection.games:
            raise RequestError(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"bot '{name}' does not play {game.name} (it plays {', '.join(connection.games)})",
            )
    if request.has_seed:
        if request.seed > MAX_SEED:
            raise RequestError(invalid, f"seed: must be at most {MAX_SEED}, got {request.seed}")
        seed = request.seed
    else:
        seed = secrets.randbelow(10**9)
    tc = request.time_control
    try:
        time_control = TimeControl.from_ms(tc.move_ms, tc.bank_ms, tc.grace_ms)
    except ValueError as exc:
        raise RequestError(invalid, f"time_control: {exc}") from None
    policy = FAULT_POLICY_FROM_PROTO.get(request.fault_policy)
    if policy is None:
        raise RequestError(invalid, f"fault_policy: unknown value {request.fault_policy}")
    return MatchSpec(
        game=game,
        bots=bots,
        seed=seed,
        time_control=time_control,
        fault_policy=policy,
        max_strikes=request.max_strikes or DEFAULT_MAX_STRIKES,
    )


class AdminServicer(admin_pb_grpc.AdminServiceServicer):
    """``RunMatch`` and ``ListConnected``."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena

    async def RunMatch(  # noqa: N802
        self,
        request: admin_pb.RunMatchRequest,
        context: grpc.aio.ServicerContext[admin_pb.RunMatchRequest, admin_pb.RunMatchResponse],
    ) -> admin_pb.RunMatchResponse:
        try:
            spec = match_spec(request, self.arena.lobby)
            finished = await self.arena.run_match(spec)
        except RequestError as exc:
            await context.abort(exc.status, str(exc))
        except (NotAcceptingError, MatchAbortedError) as exc:
            await context.abort(grpc.StatusCode.UNAVAILABLE, str(exc))
        except Exception as exc:  # e.g. the database refused the finished match
            await context.abort(
                grpc.StatusCode.INTERNAL,
                f"the match was played but not stored: {type(exc).__name__}: {exc}",
            )
        game = spec.game
        sides = tuple(game.side_of(s) for s in range(game.num_players))
        return admin_pb.RunMatchResponse(
            match_id=spec.match_id,
            result=result_to_proto(finished.result, sides),
            record=finished.record or "",
        )

    async def ListConnected(  # noqa: N802
        self,
        request: admin_pb.ListConnectedRequest,
        context: grpc.aio.ServicerContext[
            admin_pb.ListConnectedRequest, admin_pb.ListConnectedResponse
        ],
    ) -> admin_pb.ListConnectedResponse:
        lobby = self.arena.lobby
        return admin_pb.ListConnectedResponse(
            bots=[
                admin_pb.ConnectedBot(name=c.name, games=c.games, matches=lobby.seated[c.name])
                for c in lobby.connections()
            ]
        )


SERVICE_NAMES: Final[Sequence[str]] = (
    pb.DESCRIPTOR.services_by_name["BotService"].full_name,
    admin_pb.DESCRIPTOR.services_by_name["AdminService"].full_name,
)
"""The full names of the services of the referee (for health checking and reflection)."""

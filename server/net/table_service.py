"""The TableService: the web face seats a signed-in person as one more remote seat.

docs/decisions.md: decision 21; docs/people.md. Every call needs the relay token (``serve
--relay-token-file``) as ``authorization: Bearer <token>``: the referee trusts the web face to
say who the person is, as it trusts it to show each course's signed-in matches only to its
people (:mod:`.live_access`). ``SeatPerson`` checks the request (:mod:`.table_checks`), opens a
ticket (``server/play/people.py``) and starts, in the arena's trio nursery, the task that waits
for the seat's Hello and then plays the match; it answers at once with the seat's name and
one-time token. ``ListOpponents`` says whom the person may choose.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hmac
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

import grpc
from google.protobuf.message import Message

from domino_arena.server.net.admin_requests import RequestError, bearer_token, game_of
from domino_arena.server.net.table_checks import (
    PeopleStorage,
    load_person,
    opponent_bots,
    opponents_of,
    seat_spec,
)
from domino_arena.server.net.wire import time_control_to_proto
from domino_arena.server.play.arena import Arena, NotAcceptingError
from domino_arena.server.play.people import BoundError, Table, human_clock
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc

Request = TypeVar("Request", bound=Message)
Response = TypeVar("Response", bound=Message)
Context = grpc.aio.ServicerContext[Any, Any]

RELAY_HELP: Final = (
    "send call metadata 'authorization: Bearer <relay token>' (serve --relay-token-file): "
    "only the web face seats people"
)


def check_relay(metadata: Any, relay_token: str) -> None:
    """Accept the call only with the relay token.

    Raises:
        RequestError: UNAUTHENTICATED: missing, malformed or wrong, or the referee has none.
    """
    unauthenticated = grpc.StatusCode.UNAUTHENTICATED
    try:
        token = bearer_token(metadata)
    except RequestError:
        raise RequestError(unauthenticated, f"relay token missing: {RELAY_HELP}") from None
    if not relay_token:
        raise RequestError(unauthenticated, "this referee has no relay token: it seats no people")
    if not hmac.compare_digest(token.encode(), relay_token.encode()):
        raise RequestError(unauthenticated, f"wrong relay token: {RELAY_HELP}")


class TableServicer(admin_pb_grpc.TableServiceServicer):
    """SeatPerson and ListOpponents over the ``arena``, with the people's ``table``."""

    def __init__(self, arena: Arena, table: Table, relay_token: str) -> None:
        self.arena = arena
        self.table = table
        self.relay_token = relay_token
        self.storage: PeopleStorage = arena.storage

    async def _serve(
        self,
        context: Context,
        handler: Callable[[Request], Awaitable[Response]],
        request: Request,
    ) -> Response:
        try:
            check_relay(context.invocation_metadata(), self.relay_token)
            return await handler(request)
        except RequestError as exc:
            await context.abort(exc.status, str(exc))
        except BoundError as exc:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))
        except NotAcceptingError as exc:
            await context.abort(grpc.StatusCode.UNAVAILABLE, str(exc))
        raise AssertionError("unreachable: abort raises")

    async def SeatPerson(  # noqa: N802
        self, request: admin_pb.SeatPersonRequest, context: Context
    ) -> admin_pb.SeatPersonResponse:
        return await self._serve(context, self._seat, request)

    async def ListOpponents(  # noqa: N802
        self, request: admin_pb.ListOpponentsRequest, context: Context
    ) -> admin_pb.ListOpponentsResponse:
        return await self._serve(context, self._opponents, request)

    async def _seat(self, request: admin_pb.SeatPersonRequest) -> admin_pb.SeatPersonResponse:
        arena, table = self.arena, self.table
        person = await asyncio.to_thread(load_person, self.storage, request)
        game_of(request)  # the game's field is checked before the opponents' names
        stored = await asyncio.to_thread(opponent_bots, self.storage, list(request.opponents))
        spec = seat_spec(request, person, stored, arena.house, arena.lobby)
        clock = human_clock(person.course.human_move_ms)
        spec = dataclasses.replace(spec, person_time=clock)  # the bots keep the practice clock
        nursery = arena.check_running()
        ticket = table.open(spec, request.seat, person.course.name, person.name)
        nursery.start_soon(
            table.seat_and_play,
            ticket,
            arena.lobby.wait_connected,
            arena.play,
            name=f"person seat {ticket.seat_name}",
        )
        response = admin_pb.SeatPersonResponse(
            match_id=spec.match_id,
            seat_name=ticket.seat_name,
            seat_token=ticket.token,
            players=ticket.spec.bots,
            time_control=time_control_to_proto(clock),
        )
        left = max(0.0, ticket.connect_by - table.clock())
        response.connect_by.FromNanoseconds(round((time.time() + left) * 1e9))
        return response

    async def _opponents(
        self, request: admin_pb.ListOpponentsRequest
    ) -> admin_pb.ListOpponentsResponse:
        person = await asyncio.to_thread(load_person, self.storage, request)
        game = game_of(request)
        bots = await asyncio.to_thread(self.storage.bots, course=person.course.name)
        arena = self.arena
        return admin_pb.ListOpponentsResponse(
            opponents=opponents_of(person, game, bots, arena.house, arena.lobby),
            time_control=time_control_to_proto(human_clock(person.course.human_move_ms)),
        )

"""The referee's ``TableService`` for the web face: seat a person, list their opponents.

Every call carries the referee's relay token (``authorization: Bearer <relay token>``): the
referee trusts the web face to say who the person is, as it trusts it to relay signed-in live
matches (docs/web.md: live matches). A refusal becomes a :class:`~..params.WebError` whose
status says whose problem it is (a field of the form: 400; an opponent the person may not face:
403; an opponent not connected: 409; a bound: 429; the referee or its token: 503) and whose
message is the referee's own words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import grpc

from domino_arena.sdk.client.tls import ClientTls
from domino_arena.sdk.rules import Game
from domino_arena.sdk.wire import game_to_proto
from domino_arena.server.web.params import WebError
from domino_arena.v1 import admin_pb2, admin_pb2_grpc, referee_pb2

CALL_SECONDS: Final = 10.0
"""How long one call may take."""

ROLES: Final = {
    "student": admin_pb2.PERSON_ROLE_STUDENT,
    "organizer": admin_pb2.PERSON_ROLE_ORGANIZER,
    "admin": admin_pb2.PERSON_ROLE_ADMIN,
}
STATUS_OF: Final = {
    "INVALID_ARGUMENT": 400,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "FAILED_PRECONDITION": 409,
    "RESOURCE_EXHAUSTED": 429,
}
"""The page's status for each refusal of the referee's; any other is a 503."""


@dataclass(frozen=True, slots=True)
class Person:
    """Who sits at the table, as the web face signed them in (the proto's ``Person``)."""

    course: str
    role: str
    """``student``, ``organizer`` or ``admin``."""
    name: str
    """The shown name (seated as ``person:NAME``)."""
    owner: str = ""
    """A student's owner name (their own bots are always allowed); else empty."""

    def message(self) -> admin_pb2.Person:
        return admin_pb2.Person(
            course=self.course, role=ROLES[self.role], name=self.name, owner=self.owner
        )


@dataclass(frozen=True, slots=True)
class Opponent:
    """One bot a person may choose to face."""

    name: str
    house: bool
    own: bool
    connected: bool


@dataclass(frozen=True, slots=True)
class Clock:
    """A time control, in milliseconds."""

    move_ms: int
    bank_ms: int
    grace_ms: int


@dataclass(frozen=True, slots=True)
class Opponents:
    """ListOpponents' answer: who may be chosen, and the clock a person gets in the course."""

    opponents: tuple[Opponent, ...]
    clock: Clock


@dataclass(frozen=True, slots=True)
class Seated:
    """SeatPerson's answer: the match, and how to connect its seat (the token is secret)."""

    match_id: str
    seat_name: str
    seat_token: str
    players: tuple[str, ...]
    clock: Clock


class Tables:
    """A client of one referee's ``TableService`` (one channel, made in the running loop on
    first use, closed by :meth:`close`)."""

    def __init__(self, server: str, relay_token: str, *, tls: ClientTls | None = None) -> None:
        self.server = server
        self.tls = tls
        self._metadata = (("authorization", f"Bearer {relay_token}"),)
        self._channel: grpc.aio.Channel | None = None
        self._stub: admin_pb2_grpc.TableServiceAsyncStub | None = None

    def _table(self) -> admin_pb2_grpc.TableServiceAsyncStub:
        if self._stub is None:
            if self.tls is None:
                self._channel = grpc.aio.insecure_channel(self.server)
            else:
                self._channel = grpc.aio.secure_channel(self.server, self.tls.credentials())
            self._stub = admin_pb2_grpc.TableServiceStub(self._channel)
        return self._stub

    async def close(self) -> None:
        channel, self._channel, self._stub = self._channel, None, None
        if channel is not None:
            await channel.close()

    def _refusal(self, exc: grpc.aio.AioRpcError) -> WebError:
        code, words = exc.code().name, exc.details() or ""
        if code in STATUS_OF:
            return WebError(STATUS_OF[code], words or code)
        if code == "UNAUTHENTICATED":
            return WebError(
                503,
                f"the referee at {self.server} refused this web face's relay token: seating "
                "people needs the token the referee holds (domino-arena web --relay-token-file)",
            )
        return WebError(503, f"the referee at {self.server} cannot be reached ({code}: {words})")

    async def opponents(self, person: Person, game: Game) -> Opponents:
        """The opponents ``person`` may choose for ``game``, each with whether it is connected.

        Raises:
            WebError: the referee refused or cannot be reached.
        """
        request = admin_pb2.ListOpponentsRequest(person=person.message(), game=game_to_proto(game))
        try:
            answer = await self._table().ListOpponents(
                request, metadata=self._metadata, timeout=CALL_SECONDS
            )
        except grpc.aio.AioRpcError as exc:
            raise self._refusal(exc) from None
        return Opponents(
            tuple(Opponent(o.name, o.house, o.own, o.connected) for o in answer.opponents),
            _clock(answer.time_control),
        )

    async def seat(
        self,
        person: Person,
        game: Game,
        seat: int,
        opponents: tuple[str, ...],
        *,
        max_deals: int,
        seed: int | None = None,
    ) -> Seated:
        """Seat ``person`` at ``seat`` of a new practice match of ``game`` (unrated) against
        ``opponents`` (the other seats in order).

        Raises:
            WebError: the referee refused (the status and its words: see the module) or cannot
                be reached.
        """
        request = admin_pb2.SeatPersonRequest(
            person=person.message(),
            game=game_to_proto(game),
            seat=seat,
            opponents=opponents,
            max_deals=max_deals,
        )
        if seed is not None:
            request.seed = seed
        try:
            answer = await self._table().SeatPerson(
                request, metadata=self._metadata, timeout=CALL_SECONDS
            )
        except grpc.aio.AioRpcError as exc:
            raise self._refusal(exc) from None
        return Seated(
            answer.match_id,
            answer.seat_name,
            answer.seat_token,
            tuple(answer.players),
            _clock(answer.time_control),
        )


def _clock(message: referee_pb2.TimeControl) -> Clock:
    return Clock(message.move_ms, message.bank_ms, message.grace_ms)

"""The referee's ``TableService`` for the web face: seat a person, list their opponents.

The calls go through the SDK's :class:`~domino_arena.sdk.client.tables.TableClient` (only the
SDK's client speaks gRPC), with the referee's relay token: the referee trusts the web face to
say who the person is, as it trusts it to relay signed-in live matches (docs/people.md). A
refusal becomes a :class:`~..params.WebError` whose
status says whose problem it is (a field of the form: 400; an opponent the person may not face:
403; an opponent not connected: 409; a bound: 429; the referee or its token: 503) and whose
message is the referee's own words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from domino_arena.sdk.client.tables import TableClient, TableError
from domino_arena.sdk.client.tls import ClientTls
from domino_arena.sdk.rules import Game
from domino_arena.sdk.wire import game_to_proto
from domino_arena.server.web.params import WebError
from domino_arena.v1 import admin_pb2, referee_pb2

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
    """The web face's side of one referee's ``TableService`` (see the module)."""

    def __init__(self, server: str, relay_token: str, *, tls: ClientTls | None = None) -> None:
        self.server = server
        self._client = TableClient(server, relay_token, tls=tls)

    async def close(self) -> None:
        await self._client.close()

    def _refusal(self, exc: TableError) -> WebError:
        code, words = exc.code, exc.message
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
            answer = await self._client.list_opponents(request)
        except TableError as exc:
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
            answer = await self._client.seat_person(request)
        except TableError as exc:
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

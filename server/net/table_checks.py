"""The TableService's requests, checked field by field before a seat is opened (docs/people.md).

Every check raises :class:`~.admin_requests.RequestError` with a message that names the field
and what was expected: INVALID_ARGUMENT for a wrong field, PERMISSION_DENIED for an opponent the
person may not face (another owner's bot that does not allow people) or a disabled owner,
FAILED_PRECONDITION for an opponent that is not connected or does not play the game. The game's
checks are PracticeMatch's (:mod:`.admin_requests`).

Who may face whom: anyone may face the house bots the referee hosts; a student may face their
own bots and the bots of their course whose owners allow people; the course's organizer and the
admin may face any bot of the course.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

import grpc

from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import Game
from domino_arena.server.logs import quote
from domino_arena.server.names import HOUSE_PREFIX, PERSON_NAME, PERSON_NAME_RULE, PERSON_PREFIX
from domino_arena.server.net.admin_requests import (
    RequestError,
    bot_name_of,
    game_of,
    invalid,
    not_now,
    seed_of,
)
from domino_arena.server.play.match_spec import DEFAULT_MAX_DEALS, MatchSpec
from domino_arena.server.play.roster import Roster
from domino_arena.server.store.bots import BotState, StoredBot
from domino_arena.server.store.courses import StoredCourse
from domino_arena.server.store.owners import StoredOwner
from domino_arena.v1 import admin_pb2 as admin_pb

MAX_PERSON_DEALS: Final = 100
"""The most deals a person's match may be capped at (``SeatPersonRequest.max_deals``)."""
DEFAULT_OPPONENT: Final = "greedy"
"""The house bot in every other seat when a SeatPerson names none."""

STUDENT: Final = admin_pb.PERSON_ROLE_STUDENT
ORGANIZER: Final = admin_pb.PERSON_ROLE_ORGANIZER
ADMIN: Final = admin_pb.PERSON_ROLE_ADMIN
ROLES: Final = {STUDENT: "student", ORGANIZER: "organizer", ADMIN: "admin"}


class PeopleStorage(Protocol):
    """What the checks ask the storage (blocking: called in a worker thread)."""

    def course(self, name: str) -> StoredCourse | None: ...
    def owner(self, course: str, name: str) -> StoredOwner | None: ...
    def bot(self, name: str) -> StoredBot | None: ...
    def bots(
        self, *, include_deleted: bool = False, course: str | None = None
    ) -> list[StoredBot]: ...


def denied(message: str) -> RequestError:
    return RequestError(grpc.StatusCode.PERMISSION_DENIED, message)


@dataclass(frozen=True, slots=True)
class Seated:
    """A person, checked, with their course as stored."""

    name: str
    role: int
    owner: str
    course: StoredCourse

    @property
    def seat(self) -> str:
        """The name the record gives the person's seat."""
        return f"{PERSON_PREFIX}{self.name}"

    def may_face(self, bot: StoredBot) -> bool:
        """Whether this person may choose ``bot`` (of their course) as an opponent."""
        if self.role != STUDENT:
            return True
        return bot.owner == self.owner or bot.allow_people


def person_fields(person: admin_pb.Person) -> tuple[str, int, str]:
    """The name, role and owner of ``person`` if their shape is right (no storage asked).

    Raises:
        RequestError: INVALID_ARGUMENT naming the field.
    """
    if not PERSON_NAME.fullmatch(person.name):
        shown = "missing" if not person.name else f"bad name {quote(person.name, 64)}"
        raise invalid(f"person.name: {shown}; expected {PERSON_NAME_RULE}")
    if not person.course:
        raise invalid("person.course: missing; expected the course the person signed in to")
    if person.role not in ROLES:
        raise invalid(
            f"person.role: {person.role} is not a role; expected PERSON_ROLE_STUDENT, "
            "PERSON_ROLE_ORGANIZER or PERSON_ROLE_ADMIN"
        )
    if person.role == STUDENT and not person.owner:
        raise invalid("person.owner: missing; a student is signed in as an owner of the course")
    if person.role != STUDENT and person.owner:
        raise invalid(
            f"person.owner: only a student has an owner; expected it empty for the "
            f"{ROLES[person.role]}"
        )
    return person.name, person.role, person.owner


def load_person(
    storage: PeopleStorage, message: admin_pb.SeatPersonRequest | admin_pb.ListOpponentsRequest
) -> Seated:
    """Check the request's ``person`` against the storage (blocking: a worker thread).

    Raises:
        RequestError: INVALID_ARGUMENT naming the field; PERMISSION_DENIED for a disabled owner.
    """
    if not message.HasField("person"):
        raise invalid("person: missing; expected who sits (course, role, name)")
    name, role, owner = person_fields(message.person)
    course = storage.course(message.person.course)
    if course is None:
        raise invalid(f"person.course: no course is named {quote(message.person.course, 64)}")
    if role == STUDENT:
        stored = storage.owner(course.name, owner)
        if stored is None:
            raise invalid(f"person.owner: course '{course.name}' has no owner {quote(owner, 64)}")
        if not stored.enabled:
            raise denied(
                f"person.owner: owner '{owner}' is disabled by the course's organizer: they may "
                "not play until enabled"
            )
    return Seated(name, role, owner, course)


def opponent_bots(storage: PeopleStorage, opponents: Sequence[str]) -> dict[str, StoredBot | None]:
    """The stored bot of each opponent that is not a house bot (blocking: a worker thread);
    each name's syntax is checked first (INVALID_ARGUMENT naming ``opponents[i]``)."""
    found: dict[str, StoredBot | None] = {}
    for index, name in enumerate(opponents):
        if not name.startswith(HOUSE_PREFIX):
            bot_name_of(name, f"opponents[{index}]")
            found[name] = storage.bot(name)
    return found


def seat_spec(
    request: admin_pb.SeatPersonRequest,
    person: Seated,
    stored: Mapping[str, StoredBot | None],
    house: Mapping[str, object],
    lobby: Roster,
) -> MatchSpec:
    """Check the rest of a SeatPerson request; return the match, the person's seat named
    ``person:NAME`` (the caller opens its ticket and sets the clocks).

    Raises:
        RequestError: INVALID_ARGUMENT naming the field; PERMISSION_DENIED for an opponent the
            person may not face; FAILED_PRECONDITION for one not connected or not playing the
            game.
    """
    game = game_of(request)
    if request.seat >= game.num_players:
        raise invalid(
            f"seat: {game.describe()} has seats 0-{game.num_players - 1}, got {request.seat}"
        )
    others = game.num_players - 1
    opponents = list(request.opponents) or [f"{HOUSE_PREFIX}{DEFAULT_OPPONENT}"] * others
    if len(opponents) != others:
        raise invalid(
            f"opponents: {game.describe()} needs {others} opponents, one per other seat, "
            f"got {len(opponents)}"
        )
    for index, name in enumerate(opponents):
        field = f"opponents[{index}]"
        if name.startswith(HOUSE_PREFIX):
            if name.removeprefix(HOUSE_PREFIX) not in house:
                raise invalid(
                    f"{field}: unknown house bot {quote(name, 64)}; expected one of "
                    f"{', '.join(HOUSE_PREFIX + h for h in sorted(house))}"
                )
            continue
        if opponents.index(name) != index:
            raise invalid(f"{field}: '{name}' is listed twice: a bot plays one seat per match")
        check_opponent(field, name, stored.get(name), person=person, game=game, lobby=lobby)
    seed = seed_of(request.seed) if request.HasField("seed") else secrets.randbelow(10**9)
    if request.max_deals > MAX_PERSON_DEALS:
        raise invalid(
            f"max_deals: must be at most {MAX_PERSON_DEALS}, got {request.max_deals} "
            f"(the range is 0-{MAX_PERSON_DEALS}; 0: the game's own end)"
        )
    bots = list(opponents)
    bots.insert(request.seat, person.seat)
    return MatchSpec(
        game=game,
        bots=tuple(bots),
        seed=seed,
        fault_policy=FaultPolicy.SUBSTITUTE,
        max_deals=request.max_deals or DEFAULT_MAX_DEALS,
        rated=request.rated,
        course=person.course.name,
    )


def check_opponent(
    field: str,
    name: str,
    bot: StoredBot | None,
    *,
    person: Seated,
    game: Game,
    lobby: Roster,
) -> None:
    """Check one bot opponent: of the person's course, one they may face, connected and
    playing ``game``."""
    course = person.course.name
    if bot is None or bot.state is BotState.DELETED or bot.course != course:
        raise invalid(f"{field}: course '{course}' has no bot named '{name}'")
    if not person.may_face(bot):
        raise denied(
            f"{field}: bot '{name}' is another owner's and its owner does not allow people "
            "to play it (domino-arena bot allow-people)"
        )
    present = lobby.get(name)
    if present is None:
        raise not_now(f"{field}: bot '{name}' is not connected")
    if game.name not in present.games:
        raise not_now(
            f"{field}: bot '{name}' does not play {game.name} (it plays {', '.join(present.games)})"
        )


def opponents_of(
    person: Seated,
    game: Game,
    bots: Sequence[StoredBot],
    house: Mapping[str, object],
    lobby: Roster,
) -> list[admin_pb.Opponent]:
    """ListOpponents: the house bots, then the course's bots the person may face (``bots``:
    the course's), by name; a connected bot that does not play ``game`` is left out."""
    listed = [
        admin_pb.Opponent(name=f"{HOUSE_PREFIX}{name}", house=True, connected=True)
        for name in sorted(house)
    ]
    for bot in sorted(bots, key=lambda b: b.name):
        if bot.state is not BotState.ENABLED or not bot.owner_enabled:
            continue
        if not person.may_face(bot):
            continue
        present = lobby.get(bot.name)
        if present is not None and game.name not in present.games:
            continue
        listed.append(
            admin_pb.Opponent(
                name=bot.name,
                own=person.role == STUDENT and bot.owner == person.owner,
                connected=present is not None,
            )
        )
    return listed

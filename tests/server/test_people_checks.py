"""TableService's checks and refusals over real gRPC (docs/people.md): each bad field named,
who may face whom, the bounds, the one-time seat token, the expiry, AllowPeople and the course's
human clock. The bots and the person's seat are raw gRPC clients (tests/fakes/referee_server.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final

import grpc
import pytest

from domino_arena.bots import HOUSE_BOTS
from domino_arena.sdk.rules import make_game
from domino_arena.sdk.wire import game_to_proto
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.clocks import FakeClock
from tests.fakes.referee_server import ADMIN_METADATA, WAIT, Ended, Referee

RELAY: Final = "test-relay-token"
RELAY_METADATA: Final = (("authorization", f"Bearer {RELAY}"),)
COURSE: Final = "class"
STRAIGHT: Final = game_to_proto(make_game("straight"))
STUDENT: Final = admin_pb.PERSON_ROLE_STUDENT
ORGANIZER: Final = admin_pb.PERSON_ROLE_ORGANIZER


@dataclass
class Class:
    """A referee with the course ``class``: owners ann and bob, each with a connected bot, and
    carl's bot, never connected."""

    referee: Referee
    storage: RatedStorage
    tables: admin_pb_grpc.TableServiceStub
    registration: admin_pb_grpc.RegistrationServiceStub
    owner_tokens: dict[str, str]
    clock: FakeClock


@pytest.fixture(scope="module")
def school(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Class]:
    storage = RatedStorage(f"sqlite:///{tmp_path_factory.mktemp('people') / 'people.db'}")
    storage.open()
    storage.create_course(COURSE)
    owner_tokens, bot_tokens = {}, {}
    for owner in ("ann", "bob", "carl"):
        code = storage.create_invites(COURSE, 1)[0].code
        issued = storage.register_bot(code, f"{owner}-bot", owner)
        owner_tokens[owner], bot_tokens[owner] = issued.owner_token, issued.token
    referee = Referee(storage, relay_token=RELAY)
    referee.app.arena.house = dict(HOUSE_BOTS)
    clock = FakeClock(1000.0)
    referee.app.table.clock = clock
    for owner in ("ann", "bob"):
        referee.connect(f"{owner}-bot", bot_tokens[owner])
    yield Class(
        referee,
        storage,
        admin_pb_grpc.TableServiceStub(referee.channel),
        admin_pb_grpc.RegistrationServiceStub(referee.channel),
        owner_tokens,
        clock,
    )
    referee.close()
    storage.close()


def student(name: str) -> admin_pb.Person:
    return admin_pb.Person(course=COURSE, role=STUDENT, name=name, owner=name)


def organizer(name: str = "teacher") -> admin_pb.Person:
    return admin_pb.Person(course=COURSE, role=ORGANIZER, name=name)


def seat_request(
    person: admin_pb.Person, *opponents: str, **fields: object
) -> admin_pb.SeatPersonRequest:
    """A SeatPerson request for ``person`` in Straight, seat 0."""
    request = admin_pb.SeatPersonRequest(person=person, game=STRAIGHT, opponents=opponents)
    for name, value in fields.items():
        setattr(request, name, value)
    return request


def refused(call: Callable[[], object]) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as caught:
        call()
    return caught.value.code(), caught.value.details() or ""


def seat(school: Class, request: admin_pb.SeatPersonRequest) -> admin_pb.SeatPersonResponse:
    return school.tables.SeatPerson(request, metadata=RELAY_METADATA, timeout=WAIT)


def test_only_the_relay_token_seats_people(school: Class) -> None:
    request = seat_request(organizer("o1"))
    metadatas: list[tuple[tuple[tuple[str, str], ...], str]] = [
        ((), "relay token missing"),
        (ADMIN_METADATA, "wrong relay token"),
    ]
    for metadata, words in metadatas:

        def call(m: tuple[tuple[str, str], ...] = metadata) -> object:
            return school.tables.SeatPerson(request, metadata=m, timeout=WAIT)

        code, details = refused(call)
        assert code == grpc.StatusCode.UNAUTHENTICATED
        assert details.startswith(words)


BAD_FIELDS: Final = [
    ("person", admin_pb.SeatPersonRequest(game=STRAIGHT), "person: missing"),
    ("person.name", seat_request(admin_pb.Person(course=COURSE, role=ORGANIZER, name="a b")), ""),
    ("person.name", seat_request(admin_pb.Person(course=COURSE, role=ORGANIZER)), ""),
    ("person.course", seat_request(admin_pb.Person(role=ORGANIZER, name="t")), ""),
    (
        "person.course",
        seat_request(admin_pb.Person(course="nowhere", role=ORGANIZER, name="t")),
        "no course is named 'nowhere'",
    ),
    ("person.role", seat_request(admin_pb.Person(course=COURSE, name="t")), ""),
    ("person.owner", seat_request(admin_pb.Person(course=COURSE, role=STUDENT, name="t")), ""),
    (
        "person.owner",
        seat_request(admin_pb.Person(course=COURSE, role=ORGANIZER, name="t", owner="ann")),
        "only a student has an owner",
    ),
    ("person.owner", seat_request(student("dora")), "course 'class' has no owner 'dora'"),
    ("game", admin_pb.SeatPersonRequest(person=organizer()), "game: missing"),
    ("seat", seat_request(organizer(), seat=2), "seats 0-1, got 2"),
    ("opponents", seat_request(organizer(), "house:greedy", "house:random"), "needs 1"),
    ("opponents[0]", seat_request(organizer(), "house:nobody"), "unknown house bot"),
    ("opponents[0]", seat_request(organizer(), "not a name!"), "bad bot name"),
    ("opponents[0]", seat_request(organizer(), "person:ann"), "bad bot name"),
    ("opponents[0]", seat_request(organizer(), "nobody-bot"), "has no bot named"),
    ("max_deals", seat_request(organizer(), max_deals=101), "at most 100, got 101"),
]


@pytest.mark.parametrize(("field", "request_", "words"), BAD_FIELDS)
def test_a_bad_field_is_named(
    school: Class, field: str, request_: admin_pb.SeatPersonRequest, words: str
) -> None:
    code, details = refused(lambda: seat(school, request_))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert details.startswith(f"{field}: "), details
    assert words in details


def test_a_student_faces_their_own_bots_and_those_that_allow_people(school: Class) -> None:
    code, details = refused(lambda: seat(school, seat_request(student("ann"), "bob-bot")))
    assert code == grpc.StatusCode.PERMISSION_DENIED
    assert details.startswith("opponents[0]: bot 'bob-bot' is another owner's")
    own = seat(school, seat_request(student("ann"), "ann-bot", seat=1))
    assert list(own.players) == ["ann-bot", "person:ann"]
    assert seat(school, seat_request(organizer("o2"), "bob-bot")).players[1] == "bob-bot"

    allowed = school.registration.AllowPeople(
        admin_pb.AllowPeopleRequest(bot="bob-bot", allow=True),
        metadata=(("authorization", f"Bearer {school.owner_tokens['bob']}"),),
        timeout=WAIT,
    )
    assert allowed.allow_people
    assert seat(school, seat_request(student("ann"), "bob-bot")).players[1] == "bob-bot"
    listed = school.referee.admin.ListBots(admin_pb.ListBotsRequest(), timeout=WAIT)
    assert {b.name: b.allow_people for b in listed.bots}["bob-bot"]
    code, details = refused(
        lambda: school.registration.AllowPeople(
            admin_pb.AllowPeopleRequest(bot="bob-bot", allow=False),
            metadata=(("authorization", f"Bearer {school.owner_tokens['ann']}"),),
            timeout=WAIT,
        )
    )
    assert code == grpc.StatusCode.PERMISSION_DENIED
    school.registration.AllowPeople(
        admin_pb.AllowPeopleRequest(bot="bob-bot", allow=False),
        metadata=(("authorization", f"Bearer {school.owner_tokens['bob']}"),),
        timeout=WAIT,
    )


def test_an_opponent_must_be_connected(school: Class) -> None:
    code, details = refused(lambda: seat(school, seat_request(organizer("o3"), "carl-bot")))
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert details == "opponents[0]: bot 'carl-bot' is not connected"


def test_list_opponents_says_whom_a_person_may_choose(school: Class) -> None:
    def listed(person: admin_pb.Person) -> list[tuple[str, bool, bool, bool]]:
        answer = school.tables.ListOpponents(
            admin_pb.ListOpponentsRequest(person=person, game=STRAIGHT),
            metadata=RELAY_METADATA,
            timeout=WAIT,
        )
        return [(o.name, o.house, o.own, o.connected) for o in answer.opponents]

    house = [(f"house:{name}", True, False, True) for name in sorted(HOUSE_BOTS)]
    assert listed(student("carl")) == [*house, ("carl-bot", False, True, False)]
    assert listed(organizer()) == [
        *house,
        ("ann-bot", False, False, True),
        ("bob-bot", False, False, True),
        ("carl-bot", False, False, False),
    ]


def test_a_person_has_at_most_two_matches_at_once(school: Class) -> None:
    seat(school, seat_request(organizer("busy")))
    seat(school, seat_request(organizer("busy")))
    code, details = refused(lambda: seat(school, seat_request(organizer("busy"))))
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert details.startswith("people.per_person: 'busy' has 2 matches waiting or running")


def test_a_seat_token_admits_one_connection_and_bots_know_a_person_sits(school: Class) -> None:
    given = seat(school, seat_request(organizer("eve"), "ann-bot", seed=5))
    seated = school.referee.connect(given.seat_name, given.seat_token)
    start = seated.wait_kind("match_start").match_start
    assert list(start.players) == ["person:eve", "ann-bot"]
    assert list(start.people) == [True, False]
    assert start.time_control.move_ms == 60_000
    ann = next(b for b in school.referee.bots if b is not seated and b.messages("welcome"))
    bot_start = ann.wait_for(
        lambda m: (
            isinstance(m, pb.RefereeMessage)
            and m.WhichOneof("message") == "match_start"
            and m.match_start.match_id == given.match_id
        ),
        "ann-bot's match start",
    )
    assert isinstance(bot_start, pb.RefereeMessage)
    assert list(bot_start.match_start.people) == [True, False]
    assert bot_start.match_start.time_control.move_ms == 1000  # the bots' practice clock

    again = school.referee.bot()
    again.hello(given.seat_name, given.seat_token)
    end = again.wait_end()
    assert end.code == grpc.StatusCode.UNAUTHENTICATED
    assert "is taken: a seat token admits one connection" in end.details
    seated.wait_kind("match_end")


def test_a_seat_that_misses_connect_by_is_refused_and_its_match_never_stored(
    school: Class,
) -> None:
    given = seat(school, seat_request(organizer("late")))
    school.clock.now += 31
    late = school.referee.bot()
    late.hello(given.seat_name, given.seat_token)
    end = late.wait_end()
    assert isinstance(end, Ended)
    assert end.code == grpc.StatusCode.UNAUTHENTICATED
    assert end.details == f"seat '{given.seat_name}' expired: it did not connect by its connect_by"
    assert school.storage.match(given.match_id) is None


def test_no_bot_can_be_a_person(school: Class) -> None:
    code, details = refused(
        lambda: school.referee.admin.CreateBot(
            admin_pb.CreateBotRequest(name="person:ann", course=COURSE), timeout=WAIT
        )
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert "bad bot name" in details
    posing = school.referee.bot()
    posing.hello("person:ann", "some-token")
    end = posing.wait_end()
    assert end.code == grpc.StatusCode.UNAUTHENTICATED
    assert "a person's seat is person:NAME#N" in end.details
    guessing = school.referee.bot()
    guessing.hello("person:ann#999", "some-token")
    assert "no seat 'person:ann#999' is waiting" in guessing.wait_end().details


def test_the_course_sets_the_persons_move_time(school: Class) -> None:
    admin = school.referee.admin
    course = admin.UpdateCourse(
        admin_pb.UpdateCourseRequest(course=COURSE, human_move_ms=15_000), timeout=WAIT
    )
    assert course.human_move_ms == 15_000
    try:
        given = seat(school, seat_request(organizer("quick")))
        assert given.time_control.move_ms == 15_000
        code, details = refused(
            lambda: admin.UpdateCourse(
                admin_pb.UpdateCourseRequest(course=COURSE, human_move_ms=600_001), timeout=WAIT
            )
        )
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        assert details.startswith("human_move_ms: must be at most 600000")
    finally:
        admin.UpdateCourse(
            admin_pb.UpdateCourseRequest(course=COURSE, human_move_ms=0), timeout=WAIT
        )

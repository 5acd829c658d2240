"""The admin API's courses and invites over real gRPC (tests/fakes/admin_server.py): what each
call answers, and each refusal's status and message (the field named, the rule stated)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.v1 import admin_pb2 as admin_pb
from tests.fakes.admin_server import TOKEN, AdminServer, FakeArena, refused
from tests.fakes.referee_server import WAIT


@pytest.fixture
def server(tmp_path: Path) -> Iterator[AdminServer]:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'courses.db'}")
    storage.open()
    server = AdminServer(FakeArena(storage))
    yield server
    server.close()
    storage.close()


def call(server: AdminServer, method: str, request: Any, token: str = TOKEN) -> Any:
    metadata = (("authorization", f"Bearer {token}"),)
    return getattr(server.admin, method)(request, metadata=metadata, timeout=WAIT)


def test_create_shows_the_organizer_token_once_and_it_manages_the_course(
    server: AdminServer,
) -> None:
    made = call(
        server,
        "CreateCourse",
        admin_pb.CreateCourseRequest(
            name="cs101",
            title="Intro",
            allow_same_owner_partners=True,
            baselines=[admin_pb.Baseline(bot="greedy", rating=1500)],
        ),
    )
    assert made.organizer_token.startswith("cs101:")
    course = made.course
    assert (course.name, course.title, course.allow_same_owner_partners) == ("cs101", "Intro", True)
    assert [(b.bot, b.rating) for b in course.baselines] == [("greedy", 1500.0)]
    assert course.HasField("organizer_token_issued") and course.bots == 0
    own = call(server, "GetCourse", admin_pb.GetCourseRequest(), made.organizer_token)
    assert own.name == "cs101"
    changed = call(
        server,
        "UpdateCourse",
        admin_pb.UpdateCourseRequest(title="Intro 2", set_baselines=True),
        made.organizer_token,
    )
    assert (changed.title, list(changed.baselines)) == ("Intro 2", [])
    listed = call(server, "ListCourses", admin_pb.ListCoursesRequest())
    assert [c.name for c in listed.courses] == ["cs101", "default"]
    rotated = call(
        server, "RotateOrganizerToken", admin_pb.RotateOrganizerTokenRequest(course="cs101")
    )
    assert rotated.organizer_token != made.organizer_token
    status, details = refused(
        lambda: call(server, "GetCourse", admin_pb.GetCourseRequest(), made.organizer_token)
    )
    assert status is grpc.StatusCode.UNAUTHENTICATED and details.startswith("wrong organizer token")


@pytest.mark.parametrize(
    ("method", "request_", "status", "words"),
    [
        (
            "CreateCourse",
            admin_pb.CreateCourseRequest(name="no spaces"),
            grpc.StatusCode.INVALID_ARGUMENT,
            "course: bad course name 'no spaces'",
        ),
        (
            "CreateCourse",
            admin_pb.CreateCourseRequest(name="default"),
            grpc.StatusCode.ALREADY_EXISTS,
            "course: a course named 'default' exists already",
        ),
        (
            "CreateCourse",
            admin_pb.CreateCourseRequest(
                name="x", baselines=[admin_pb.Baseline(bot="alphazero", rating=1)]
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "baselines[0].bot: unknown house bot 'alphazero'; expected one of greedy, random, "
            "search",
        ),
        (
            "CreateCourse",
            admin_pb.CreateCourseRequest(name="x", title="t" * 201),
            grpc.StatusCode.INVALID_ARGUMENT,
            "title: expected at most 200 characters, got 201",
        ),
        (
            "RotateOrganizerToken",
            admin_pb.RotateOrganizerTokenRequest(course="default"),
            grpc.StatusCode.INVALID_ARGUMENT,
            "course: the course 'default' has no organizer token",
        ),
        (
            "RotateOrganizerToken",
            admin_pb.RotateOrganizerTokenRequest(course="nowhere"),
            grpc.StatusCode.NOT_FOUND,
            "no course is named 'nowhere'",
        ),
        (
            "GetCourse",
            admin_pb.GetCourseRequest(course="nowhere"),
            grpc.StatusCode.NOT_FOUND,
            "course: no course is named 'nowhere'",
        ),
        (
            "UpdateCourse",
            admin_pb.UpdateCourseRequest(baselines=[admin_pb.Baseline(bot="greedy", rating=1)]),
            grpc.StatusCode.INVALID_ARGUMENT,
            "baselines: set set_baselines",
        ),
        (
            "CreateInvites",
            admin_pb.CreateInvitesRequest(count=0),
            grpc.StatusCode.INVALID_ARGUMENT,
            "count: expected 1-1000 codes, got 0",
        ),
        (
            "CreateInvites",
            admin_pb.CreateInvitesRequest(count=1, uses=1001),
            grpc.StatusCode.INVALID_ARGUMENT,
            "uses: expected 1-1000 owners per code, got 1001",
        ),
        (
            "RevokeInvite",
            admin_pb.RevokeInviteRequest(id="nothing"),
            grpc.StatusCode.NOT_FOUND,
            "id: no invite has id 'nothing'",
        ),
        (
            "GetCourse",
            admin_pb.GetCourseRequest(course="x\n" * 100),
            grpc.StatusCode.INVALID_ARGUMENT,
            "course: bad course name 'x\\nx\\n",
        ),
        (
            "StopLadder",
            admin_pb.StopLadderRequest(game="passing", course="x\ny"),
            grpc.StatusCode.NOT_FOUND,
            "no passing ladder is running in course 'x\\ny'",
        ),
        (
            "RevokeInvite",
            admin_pb.RevokeInviteRequest(id="a\nb"),
            grpc.StatusCode.NOT_FOUND,
            "id: no invite has id 'a\\nb'",
        ),
        (
            "RevokeInvite",
            admin_pb.RevokeInviteRequest(),
            grpc.StatusCode.INVALID_ARGUMENT,
            "id: ",
        ),
    ],
)
def test_every_refusal_names_the_field_and_the_rule(
    server: AdminServer, method: str, request_: Any, status: grpc.StatusCode, words: str
) -> None:
    code, details = refused(lambda: call(server, method, request_))
    assert (code, details[: len(words)]) == (status, words)


def test_an_expiry_in_the_past_is_refused(server: AdminServer) -> None:
    request = admin_pb.CreateInvitesRequest(count=1)
    request.expires.FromDatetime(dt.datetime(2020, 1, 1, tzinfo=dt.UTC))
    code, details = refused(lambda: call(server, "CreateInvites", request))
    assert code is grpc.StatusCode.INVALID_ARGUMENT
    assert details.startswith("expires: expected a time in the future")


def test_invites_are_made_listed_and_revoked(server: AdminServer) -> None:
    request = admin_pb.CreateInvitesRequest(count=3, uses=2)
    request.expires.FromDatetime(dt.datetime.now(dt.UTC) + dt.timedelta(days=1))
    made = call(server, "CreateInvites", request).invites
    assert len(made) == 3 and all(i.code.startswith("default:") for i in made)
    assert {(i.invite.uses, i.invite.used, i.invite.course) for i in made} == {(2, 0, "default")}
    listed = call(server, "ListInvites", admin_pb.ListInvitesRequest()).invites
    assert sorted(i.id for i in listed) == sorted(i.invite.id for i in made)
    assert all(i.HasField("expires") for i in listed)
    revoked = call(server, "RevokeInvite", admin_pb.RevokeInviteRequest(id=made[0].invite.id))
    assert revoked.revoked

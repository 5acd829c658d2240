"""Who may watch, through the admin API over real gRPC (tests/fakes/admin_server.py): a
course's live view is created, read, listed and changed (an organizer its own course's, the
admin any), a tournament takes one or its course's, and a value the protocol does not define is
INVALID_ARGUMENT naming the field (docs/courses.md: live view)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import grpc
import pytest

from domino_arena.sdk.rules import make_game
from domino_arena.sdk.wire import game_to_proto
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.store.tournaments import TournamentState
from domino_arena.v1 import admin_pb2 as admin_pb
from tests.fakes.admin_server import TOKEN, AdminServer, FakeArena, refused
from tests.fakes.referee_server import WAIT

UNDEFINED: Final = admin_pb.LiveView.ValueType(9)
WORDS: Final = (
    "live_view: unknown value 9; expected LIVE_VIEW_PUBLIC, LIVE_VIEW_SIGNED_IN or LIVE_VIEW_NONE"
)


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[RatedStorage]:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'live.db'}")
    storage.open()
    yield storage
    storage.close()


@pytest.fixture
def server(storage: RatedStorage) -> Iterator[AdminServer]:
    server = AdminServer(FakeArena(storage))
    yield server
    server.close()


def call(server: AdminServer, method: str, request: Any, token: str = TOKEN) -> Any:
    metadata = (("authorization", f"Bearer {token}"),)
    return getattr(server.admin, method)(request, metadata=metadata, timeout=WAIT)


def course(server: AdminServer, name: str, **fields: Any) -> tuple[admin_pb.Course, str]:
    made = call(server, "CreateCourse", admin_pb.CreateCourseRequest(name=name, **fields))
    return made.course, made.organizer_token


def tournament(server: AdminServer, token: str, **fields: Any) -> admin_pb.Tournament:
    request = admin_pb.CreateTournamentRequest(
        game=game_to_proto(make_game("passing")), entrants=["a1", "b1"], **fields
    )
    answer: admin_pb.Tournament = call(server, "CreateTournament", request, token)
    return answer


def test_a_course_is_public_unless_created_otherwise_and_shows_it_everywhere(
    server: AdminServer,
) -> None:
    opened, _ = course(server, "open")
    assert opened.live_view == admin_pb.LIVE_VIEW_PUBLIC  # unspecified: public
    quiet, organizer = course(server, "quiet", live_view=admin_pb.LIVE_VIEW_SIGNED_IN)
    assert quiet.live_view == admin_pb.LIVE_VIEW_SIGNED_IN
    listed = call(server, "ListCourses", admin_pb.ListCoursesRequest())
    assert {c.name: c.live_view for c in listed.courses} == {
        "default": admin_pb.LIVE_VIEW_PUBLIC,
        "open": admin_pb.LIVE_VIEW_PUBLIC,
        "quiet": admin_pb.LIVE_VIEW_SIGNED_IN,
    }
    own = call(server, "GetCourse", admin_pb.GetCourseRequest(), organizer)
    assert own.live_view == admin_pb.LIVE_VIEW_SIGNED_IN


def test_an_organizer_changes_its_own_courses_live_view_and_the_admin_any(
    server: AdminServer, storage: RatedStorage
) -> None:
    _, organizer = course(server, "quiet")
    course(server, "other", live_view=admin_pb.LIVE_VIEW_NONE)
    hidden = call(
        server,
        "UpdateCourse",
        admin_pb.UpdateCourseRequest(live_view=admin_pb.LIVE_VIEW_NONE),
        organizer,
    )
    assert hidden.live_view == admin_pb.LIVE_VIEW_NONE
    assert storage.live_view("quiet", None) == "none"
    retitled = call(server, "UpdateCourse", admin_pb.UpdateCourseRequest(title="Q"), organizer)
    assert retitled.live_view == admin_pb.LIVE_VIEW_NONE  # unspecified: unchanged
    status, details = refused(
        lambda: call(
            server,
            "UpdateCourse",
            admin_pb.UpdateCourseRequest(course="other", live_view=admin_pb.LIVE_VIEW_PUBLIC),
            organizer,
        )
    )
    assert status is grpc.StatusCode.PERMISSION_DENIED and details.startswith("course:")
    assert storage.live_view("other", None) == "none"
    for name in ("other", "default"):
        opened = call(
            server,
            "UpdateCourse",
            admin_pb.UpdateCourseRequest(course=name, live_view=admin_pb.LIVE_VIEW_SIGNED_IN),
        )
        assert opened.live_view == admin_pb.LIVE_VIEW_SIGNED_IN
        assert storage.live_view(name, None) == "signed-in"


def test_a_tournament_takes_a_live_view_or_its_courses(
    server: AdminServer, storage: RatedStorage
) -> None:
    _, organizer = course(server, "quiet", live_view=admin_pb.LIVE_VIEW_SIGNED_IN)
    storage.create_bot("a1", course="quiet", owner="ann")
    storage.create_bot("b1", course="quiet", owner="bob")
    inherits = tournament(server, organizer)
    assert inherits.live_view == admin_pb.LIVE_VIEW_UNSPECIFIED  # the course's, as created
    assert storage.live_view("quiet", inherits.id) == "signed-in"
    final = tournament(server, organizer, live_view=admin_pb.LIVE_VIEW_NONE)
    assert final.live_view == admin_pb.LIVE_VIEW_NONE
    assert storage.live_view("quiet", final.id) == "none"
    got = call(server, "GetTournament", admin_pb.GetTournamentRequest(tournament_id=final.id))
    assert got.live_view == admin_pb.LIVE_VIEW_NONE
    listed = call(server, "ListTournaments", admin_pb.ListTournamentsRequest(), organizer)
    assert {t.id: t.live_view for t in listed.tournaments} == {
        inherits.id: admin_pb.LIVE_VIEW_UNSPECIFIED,
        final.id: admin_pb.LIVE_VIEW_NONE,
    }
    # A regrade replays the original as it was set, its live view too.
    storage.set_tournament_state(final.id, TournamentState.FINISHED)
    storage.create_bot("a2", course="quiet", owner="ann")
    regrade = admin_pb.RegradeTournamentRequest(
        tournament_id=final.id, replace=[admin_pb.Replacement(bot="a1", by="a2")]
    )
    again = call(server, "RegradeTournament", regrade, organizer)
    assert again.live_view == admin_pb.LIVE_VIEW_NONE
    assert storage.live_view("quiet", again.id) == "none"


@pytest.mark.parametrize(
    ("method", "request_"),
    [
        ("CreateCourse", admin_pb.CreateCourseRequest(name="c9", live_view=UNDEFINED)),
        ("UpdateCourse", admin_pb.UpdateCourseRequest(course="c1", live_view=UNDEFINED)),
        (
            "CreateTournament",
            admin_pb.CreateTournamentRequest(
                course="c1",
                game=game_to_proto(make_game("passing")),
                entrants=["a1", "b1"],
                live_view=UNDEFINED,
            ),
        ),
    ],
)
def test_a_value_the_protocol_does_not_define_is_refused_naming_the_field(
    server: AdminServer, storage: RatedStorage, method: str, request_: Any
) -> None:
    course(server, "c1")
    storage.create_bot("a1", course="c1", owner="ann")
    storage.create_bot("b1", course="c1", owner="bob")
    status, details = refused(lambda: call(server, method, request_))
    assert (status, details) == (grpc.StatusCode.INVALID_ARGUMENT, WORDS)
    assert storage.course("c9") is None
    assert storage.live_view("c1", None) == "public"
    assert storage.tournaments() == []

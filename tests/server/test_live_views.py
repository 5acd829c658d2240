"""Live views at the referee (issue 29): a course or tournament shows its running matches to
anyone (public), to its own people (signed-in: its organizer's and owners' tokens, the admin, a
relay) or to nobody (none). Checked on the wire: ListLive leaves out what the caller may not
see, Watch refuses it with the status and the reason.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import grpc
import pytest

from domino_arena.sdk.rules import make_game
from domino_arena.server.net.lobby import Connection
from domino_arena.server.play.match_spec import MatchSpec
from domino_arena.server.store.live_views import LIVE_VIEW_NONE, LIVE_VIEW_SIGNED_IN
from domino_arena.v1 import admin_pb2 as admin_pb
from tests.fakes.admin_server import TOKEN, AdminServer, served_over
from tests.fakes.live_match import spec_of
from tests.fakes.referee_server import WAIT

RELAY: Final = "relay-secret"


@dataclasses.dataclass
class Courses:
    referee: AdminServer
    organizer: dict[str, str]
    """The organizer token of each course."""
    owner: dict[str, str]
    """An owner's token of each course."""


@pytest.fixture
def courses(tmp_path: Path) -> Iterator[Courses]:
    with served_over(tmp_path / "views.db", relay_token=RELAY) as referee:
        storage = referee.arena.storage
        organizer, owner = {}, {}
        for name, view in (("open", "public"), ("class", LIVE_VIEW_SIGNED_IN), ("exam", "none")):
            organizer[name] = storage.create_course(name, live_view=view).token
            storage.create_bot(f"{name}-bot", course=name, owner="s01")
            owner[name] = storage.issue_owner_token(name, "s01").token
        for name in ("open", "class", "exam"):
            spec = dataclasses.replace(spec_of(make_game("passing"), 1, match_id=name), course=name)
            start(referee, spec)
        yield Courses(referee, organizer, owner)


def start(referee: AdminServer, spec: MatchSpec) -> None:
    referee.call(lambda: referee.hub.started(spec))


def metadata(token: str | None) -> Any:
    return None if token is None else (("authorization", f"Bearer {token}"),)


def listed(referee: AdminServer, token: str | None) -> dict[str, int]:
    answer = referee.spectators.ListLive(
        admin_pb.ListLiveRequest(), timeout=WAIT, metadata=metadata(token)
    )
    return {m.match_id: m.live_view for m in answer.matches}


def watched(referee: AdminServer, match_id: str, token: str | None) -> Any:
    """The start of a watch (then the watch is cancelled), or the refusal's code and text."""
    stream: Any = referee.spectators.Watch(
        admin_pb.WatchRequest(match_id=match_id), timeout=WAIT, metadata=metadata(token)
    )
    try:
        start_message = next(stream)
    except grpc.RpcError as exc:
        error: Any = exc
        return error.code(), error.details()
    stream.cancel()
    return start_message.start


def test_without_a_token_only_public_matches_are_listed_and_watched(courses: Courses) -> None:
    referee = courses.referee
    assert listed(referee, None) == {"open": admin_pb.LIVE_VIEW_PUBLIC}
    start_message = watched(referee, "open", None)
    assert (start_message.course, start_message.live_view) == ("open", admin_pb.LIVE_VIEW_PUBLIC)
    code, details = watched(referee, "class", None)
    assert code is grpc.StatusCode.UNAUTHENTICATED
    assert "course 'class' only (live view: signed-in)" in details and "Bearer" in details
    code, details = watched(referee, "exam", None)
    assert code is grpc.StatusCode.PERMISSION_DENIED
    assert "shows no live view of it (live view: none)" in details


def test_a_course_token_adds_its_own_signed_in_matches_and_no_other(courses: Courses) -> None:
    referee = courses.referee
    for token in (courses.organizer["class"], courses.owner["class"]):
        assert set(listed(referee, token)) == {"open", "class"}
        assert watched(referee, "class", token).live_view == admin_pb.LIVE_VIEW_SIGNED_IN
    other = courses.organizer["open"]
    assert set(listed(referee, other)) == {"open"}
    code, details = watched(referee, "class", other)
    assert code is grpc.StatusCode.PERMISSION_DENIED
    assert "this token is not of that course" in details


def test_the_admin_and_a_relay_see_every_signed_in_match_and_nobody_a_none(
    courses: Courses,
) -> None:
    referee = courses.referee
    for token in (TOKEN, RELAY):
        assert set(listed(referee, token)) == {"open", "class"}
        assert watched(referee, "class", token).course == "class"
        code, _ = watched(referee, "exam", token)
        assert code is grpc.StatusCode.PERMISSION_DENIED
    assert watched(referee, "exam", courses.organizer["exam"])[0] is (
        grpc.StatusCode.PERMISSION_DENIED
    )


def test_a_wrong_token_is_refused_and_a_disabled_owner_sees_only_the_public(
    courses: Courses,
) -> None:
    referee = courses.referee
    code, details = watched(referee, "open", "class:not-a-token")
    assert code is grpc.StatusCode.UNAUTHENTICATED
    assert details.startswith("watch token: not a token of this referee's courses")
    referee.arena.storage.set_owner_enabled("exam", "s01", False)
    with pytest.raises(grpc.RpcError) as info:
        listed(referee, courses.owner["exam"])
    error: Any = info.value
    assert error.code() is grpc.StatusCode.UNAUTHENTICATED


def test_a_course_changed_to_none_hides_its_next_matches_even_from_the_admin(
    courses: Courses,
) -> None:
    referee = courses.referee
    storage = referee.arena.storage
    storage.update_course("open", live_view=LIVE_VIEW_NONE)
    spec = dataclasses.replace(spec_of(make_game("passing"), 2, match_id="t-game"), course="open")
    start(referee, spec)
    assert "t-game" not in listed(referee, TOKEN), "the course's none"


def test_an_anonymous_course_shows_aliases_to_others_and_names_to_its_own(
    tmp_path: Path,
) -> None:
    """The live lobby was the one place an anonymous course's bots went by their names, and
    every course's connected bots were listed to anyone."""
    with served_over(tmp_path / "anonymous.db") as referee:
        storage = referee.arena.storage
        organizer = storage.create_course("anon", anonymous=True).token
        storage.create_bot("zed", course="anon", owner="s01")
        storage.create_bot("amy", course="anon", owner="s02")
        storage.create_course("exam", live_view=LIVE_VIEW_NONE)
        storage.create_bot("hidden", course="exam", owner="s03")
        spec = dataclasses.replace(
            spec_of(make_game("passing"), 1, match_id="anon-game"), bots=("zed", "amy")
        )
        start(referee, dataclasses.replace(spec, course="anon"))
        for name in ("zed", "hidden"):
            connection = Connection(name, ["passing"])
            referee.call(lambda c=connection: referee.arena.lobby.connect(c))  # type: ignore[misc]

        def lobby(token: str | None) -> tuple[list[str], list[str]]:
            answer = referee.spectators.ListLive(
                admin_pb.ListLiveRequest(), timeout=WAIT, metadata=metadata(token)
            )
            (match,) = answer.matches
            return list(match.players), sorted(bot.name for bot in answer.connected)

        assert lobby(None) == (["Bot 1", "Bot 2"], ["Bot 1"]), "aliases; the exam's bot unlisted"
        assert lobby(organizer) == (["zed", "amy"], ["zed"])
        # A course with no live view lists its bots to nobody here (ListConnected does, to the
        # admin and its organizer).
        assert lobby(TOKEN) == (["zed", "amy"], ["zed"])
        assert list(watched(referee, "anon-game", None).players) == ["Bot 1", "Bot 2"]
        assert list(watched(referee, "anon-game", organizer).players) == ["zed", "amy"]

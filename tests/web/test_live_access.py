"""Issue 29, "spectating can be made private", the web face's side: a signed-in match is shown
only to a browser with a current session of its course, and to any other it does not exist.

The referee sends each match's course and live view (the lead's side); until it does, the
lobby's matches are built here as the SDK decodes them, and the browser's sessions are the
course pages' real signed cookies over a real storage. The web face's 404 for a match a
browser may not see is checked over the real spectator service."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.requests import Request
from starlette.responses import Response

from domino_arena.sdk.client.spectator import (
    LiveMatch,
    LiveView,
    Lobby,
    live_view_from_proto,
)
from domino_arena.sdk.rules import make_game
from domino_arena.sdk.wire import ConversionError
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.web.live import LiveSource
from domino_arena.server.web.live_access import allowed_for
from domino_arena.server.web.live_pages import visible
from domino_arena.server.web.params import WebError
from domino_arena.server.web.sessions import Session, Sessions
from domino_arena.v1 import admin_pb2 as admin_pb
from tests.fakes.admin_server import AdminServer, served_over
from tests.fakes.live_match import MATCH_ID, start


def a_match(match_id: str, course: str, view: LiveView) -> LiveMatch:
    return LiveMatch(
        match_id=match_id,
        game=make_game("straight"),
        players=("a", "b"),
        tournament_id=None,
        started=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
        steps=3,
        deal=1,
        scores=(0, 0),
        watchers=1,
        course=course,
        live_view=view,
    )


LOBBY = Lobby(
    matches=(
        a_match("open", "default", LiveView.PUBLIC),
        a_match("mine", "secret", LiveView.SIGNED_IN),
        a_match("theirs", "other", LiveView.SIGNED_IN),
        a_match("nobody", "secret", LiveView.NONE),
        a_match("old-referee", "", LiveView.PUBLIC),
    ),
    connected=(),
)


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[RatedStorage]:
    stored = RatedStorage(f"sqlite:///{tmp_path / 'access.db'}")
    stored.open()
    for course in ("secret", "other"):
        stored.create_course(course)
    yield stored
    stored.close()


def request_with(cookie: str = "") -> Request:
    headers = [(b"cookie", cookie.encode())] if cookie else []
    return Request({"type": "http", "method": "GET", "path": "/live", "headers": headers})


def session_cookie(sessions: Sessions, session: Session) -> str:
    """The cookie the course pages set for ``session`` (as a browser sends it back)."""
    response = Response()
    sessions.open(response, request_with(), session)
    return response.headers["set-cookie"].split(";", 1)[0]


def shown(lobby: Lobby, request: Request, sessions: Sessions, storage: RatedStorage) -> list[str]:
    allowed = allowed_for(request, sessions, storage)
    return [m.match_id for m in asyncio.run(visible(lobby, allowed)).matches]


def organizer_stamp(storage: RatedStorage, course: str) -> str:
    stored = storage.course(course)
    assert stored is not None and stored.organizer_token_issued is not None
    return stored.organizer_token_issued.isoformat()


def test_the_live_view_is_decoded_strictly() -> None:
    assert live_view_from_proto(admin_pb.LIVE_VIEW_UNSPECIFIED, "x") is LiveView.PUBLIC
    assert live_view_from_proto(admin_pb.LIVE_VIEW_SIGNED_IN, "x") is LiveView.SIGNED_IN
    assert live_view_from_proto(admin_pb.LIVE_VIEW_NONE, "x") == "none"
    with pytest.raises(ConversionError, match=r"matches\.live_view"):
        live_view_from_proto(9, "matches.live_view")


def test_a_signed_in_match_is_listed_only_to_its_course_s_signed_in_browsers(
    storage: RatedStorage,
) -> None:
    sessions = Sessions()
    anyone = request_with()
    assert shown(LOBBY, anyone, sessions, storage) == ["open", "old-referee"]
    storage.rotate_organizer_token("secret")
    organizer = Session("organizer", "secret", "", organizer_stamp(storage, "secret"))
    signed = request_with(session_cookie(sessions, organizer))
    assert shown(LOBBY, signed, sessions, storage) == ["open", "mine", "old-referee"]
    # Without the web face's sessions nobody is signed in.
    assert [
        m.match_id for m in asyncio.run(visible(LOBBY, allowed_for(signed, None, None))).matches
    ] == [
        "open",
        "old-referee",
    ]
    # A rotated organizer token ends the session here as on the course pages.
    storage.rotate_organizer_token("secret")
    assert shown(LOBBY, signed, sessions, storage) == ["open", "old-referee"]


def test_a_student_s_bot_session_shows_its_course_s_signed_in_matches(
    storage: RatedStorage,
) -> None:
    sessions = Sessions()
    (invite,) = storage.create_invites("secret", 1, uses=1)
    issued = storage.register_bot(invite.code, "zelda", "owner-z")
    bot = storage.bot("zelda")
    assert bot is not None and bot.token_issued is not None and issued.token
    student = Session("bot", "secret", "zelda", bot.token_issued.isoformat())
    signed = request_with(session_cookie(sessions, student))
    assert shown(LOBBY, signed, sessions, storage) == ["open", "mine", "old-referee"]
    forged = Session("bot", "other", "zelda", bot.token_issued.isoformat())  # not its course
    elsewhere = request_with(session_cookie(sessions, forged))
    assert shown(LOBBY, elsewhere, sessions, storage) == ["open", "old-referee"]
    stranger = Sessions()  # another web face's key: its cookies do not verify here
    assert shown(LOBBY, request_with(session_cookie(stranger, student)), sessions, storage) == [
        "open",
        "old-referee",
    ]


@pytest.fixture
def referee(tmp_path: Path) -> Iterator[AdminServer]:
    with served_over(tmp_path / "live.db") as server:
        yield server


def test_a_match_a_browser_may_not_see_is_a_404_like_an_unknown_one(
    referee: AdminServer,
) -> None:
    start(referee)
    live = LiveSource(referee.address, linger_seconds=0)

    async def nobody(course: str, view: LiveView) -> bool:
        return False

    async def body() -> tuple[list[str], int]:
        messages = []
        for attempt in (
            live.snapshot(MATCH_ID, nobody),
            live.open(MATCH_ID, "10.0.0.1", nobody),
            live.open("nope", "10.0.0.1"),
        ):
            with pytest.raises(WebError) as refused:
                await attempt
            assert refused.value.status == 404
            messages.append(refused.value.message.replace("'nope'", f"'{MATCH_ID}'"))
        streams = live.streams
        await live.close()
        return messages, streams

    messages, streams = asyncio.run(body())
    assert len(set(messages)) == 1, "not to be told apart from an unknown id"
    assert streams == 0, "a refused stream holds no slot"

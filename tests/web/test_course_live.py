"""The live pages of an anonymous course's match over the real spectator service: its players'
aliases in every page, JSON and event, never their names."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from domino_arena.server.web.app import create_app
from domino_arena.server.web.live import LiveSource
from tests.browser.live_harness import AsgiCall, events_of, parse_sse
from tests.fakes.admin_server import AdminServer, served_over
from tests.fakes.course_site import ANONYMOUS_BOTS, HIDDEN
from tests.fakes.live_match import EVENTS, MATCH_ID, end, start


@pytest.fixture
def referee(tmp_path: Path) -> Iterator[AdminServer]:
    with served_over(tmp_path / "live.db") as server:
        storage = server.arena.storage
        storage.create_course("secret", anonymous=True)
        (invite,) = storage.create_invites("secret", 1, uses=len(ANONYMOUS_BOTS))
        for bot, owner in ANONYMOUS_BOTS:
            storage.register_bot(invite.code, bot, owner)
        yield server


def test_a_live_match_of_an_anonymous_course_shows_aliases(referee: AdminServer) -> None:
    zelda, yorick = (bot for bot, _ in ANONYMOUS_BOTS)
    game_steps = start(referee, bots=(zelda, yorick))
    live = LiveSource(referee.address)
    app = create_app(referee.arena.storage, live=live)
    with TestClient(app) as client:
        for path in ("/live", f"/live/{MATCH_ID}", "/", "/api/live", f"/api/live/{MATCH_ID}"):
            answer = client.get(path)
            assert answer.status_code == 200, path
            assert not [n for n in HIDDEN if n in answer.text], path
        (match,) = client.get("/api/live").json()["matches"]
        assert match["players"] == ["Bot 1", "Bot 2"]
        # The live match's page links its course (known by its registered players).
        link = client.get(f"/api/live/{MATCH_ID}").json()["course_link"]
        assert (link["name"], link["url"]) == ("secret", "/courses/secret")
        assert 'Course: <a href="/courses/secret">' in client.get(f"/live/{MATCH_ID}").text

    async def follow() -> str:
        call = AsgiCall(app, EVENTS).start()
        assert await call.wait_started() == 200
        await asyncio.to_thread(end, referee, game_steps[5])
        body = await call.finished()
        await live.close()
        return body

    body = asyncio.run(follow())
    assert not [n for n in HIDDEN if n in body]
    stream = parse_sse(body)
    (started,) = events_of(stream, "start")
    assert started.data["players"] == ["Bot 1", "Bot 2"]
    assert "Bot 1" in stream.events[-1].data["result"]


def test_the_organizer_sees_who_is_connected_to_the_referee(referee: AdminServer) -> None:
    token = referee.arena.storage.rotate_organizer_token("secret").token
    app = create_app(referee.arena.storage, live=LiveSource(referee.address))
    with TestClient(app, follow_redirects=False) as client:
        form = client.get("/courses/secret/organizer").text
        csrf = form.split('name="csrf" value="', 1)[1].split('"', 1)[0]
        signed = client.post("/courses/secret/organizer", data={"csrf": csrf, "token": token})
        assert signed.status_code == 303
        connected = client.get("/api/courses/secret/organizer").json()["connected"]
        assert connected == {"referee": referee.address, "message": None, "bots": []}
        page = client.get("/courses/secret/organizer").text
        assert f"None of the course's bots is connected to {referee.address}" in page

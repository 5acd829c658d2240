"""Issue 29, "spectating can be made private", end to end: a referee with live views
(server/net/live_access.py) and a web face holding its relay token show a signed-in course's
running match to the browsers signed in to that course, and to every other browser it does not
exist (not listed; its page, JSON and events the 404 of an unknown id)."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest
from starlette.testclient import TestClient

from domino_arena.sdk.rules import make_game
from domino_arena.server.web.app import create_app
from domino_arena.server.web.live import LiveSource
from domino_arena.server.web.live_feed import sse_json
from tests.browser.live_harness import AsgiCall, parse_sse
from tests.fakes.admin_server import AdminServer, served_over
from tests.fakes.live_match import spec_of, steps

pytest.importorskip(
    "domino_arena.server.net.live_access",
    reason="the referee's live views (server/net/live_access.py) are not in this tree",
)

RELAY: Final = "relay-secret"
COURSES: Final = (("open", "public"), ("class", "signed-in"))


@dataclasses.dataclass
class Referee:
    server: AdminServer
    organizer: str
    """The organizer token of the course ``class``."""


@pytest.fixture
def referee(tmp_path: Path) -> Iterator[Referee]:
    options: dict[str, Any] = {"relay_token": RELAY}  # the referee's side of issue 29
    with served_over(tmp_path / "private.db", **options) as server:
        storage = server.arena.storage
        tokens = {name: storage.create_course(name, live_view=view).token for name, view in COURSES}
        game = make_game("passing")
        for name, _ in COURSES:
            spec = dataclasses.replace(spec_of(game, 1, match_id=name), course=name)
            server.call(functools.partial(server.hub.started, spec))
            feed = server.hub.on_step(name)
            for step in list(steps(game, 1))[:4]:
                server.call(functools.partial(feed, step))
        yield Referee(server, tokens["class"])


def signed_in(client: TestClient, token: str) -> None:
    """Sign ``client`` in as the organizer of ``class`` through the course's own form."""
    form = client.get("/courses/class/organizer").text
    csrf = form.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    answer = client.post("/courses/class/organizer", data={"csrf": csrf, "token": token})
    assert answer.status_code == 303


def unknown(live: LiveSource, match_id: str) -> str:
    return f"no live match has id {match_id!r} at the referee {live.server}"


def test_a_signed_in_match_is_shown_to_its_course_only(referee: Referee) -> None:
    server = referee.server
    live = LiveSource(server.address, relay_token=RELAY, linger_seconds=0)
    app = create_app(server.arena.storage, live=live)
    with TestClient(app, follow_redirects=False) as anyone:
        assert [m["id"] for m in anyone.get("/api/live").json()["matches"]] == ["open"]
        assert 'href="/live/class"' not in anyone.get("/live").text
        assert 'href="/live/class"' not in anyone.get("/").text
        for path in ("/api/live/class", "/api/live/class/events"):
            answer = anyone.get(path)
            assert (answer.status_code, answer.json()["error"]) == (404, unknown(live, "class"))
        assert anyone.get("/live/class").status_code == 404
        assert anyone.get("/api/live/open").json()["state"] == "live"
    with TestClient(app, follow_redirects=False) as organizer:
        signed_in(organizer, referee.organizer)
        listed = organizer.get("/api/live").json()["matches"]
        assert [m["id"] for m in listed] == ["open", "class"]
        match = organizer.get("/api/live/class").json()
        assert match["state"] == "live" and match["step"] == 4
        assert '<section class="table"' in organizer.get("/live/class").text
        cookies = "; ".join(f"{k}={v}" for k, v in organizer.cookies.items())

    async def follow(cookie: str) -> tuple[int, str]:
        call = AsgiCall(app, "/api/live/class/events", cookies=cookie).start()
        status = await call.wait_started()
        if status == 200:
            await call.wait_for('"step":4,')
            call.disconnect()
        body = await call.finished()
        await live.close()
        return status, body

    status, body = asyncio.run(follow(cookies))
    assert status == 200
    names = [e.name for e in parse_sse(body).events]
    assert names[0] == "start" and names.count("step") == 4
    status, body = asyncio.run(follow(""))
    assert status == 404 and sse_json(unknown(live, "class"))[1:-1] in body


def test_without_the_relay_token_the_web_face_shows_public_matches_only(
    referee: Referee,
) -> None:
    live = LiveSource(referee.server.address, linger_seconds=0)
    app = create_app(referee.server.arena.storage, live=live)
    with TestClient(app, follow_redirects=False) as organizer:
        signed_in(organizer, referee.organizer)
        assert [m["id"] for m in organizer.get("/api/live").json()["matches"]] == ["open"]
        answer = organizer.get("/api/live/class")
        assert (answer.status_code, answer.json()["error"]) == (404, unknown(live, "class"))

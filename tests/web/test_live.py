"""The live pages over the real spectator service (a real hub fed by the test, as
tests/server/test_spectators.py does): no referee, a referee down, unknown and finished matches,
escaping of a hostile bot name in every page and event, and the bounds of the event streams
(how many, how far behind, heartbeats, and a browser that goes away releases its gRPC stream)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import make_game
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.web.app import create_app
from domino_arena.server.web.live import LiveSource
from domino_arena.server.web.live_pages import NO_REFEREE
from tests.browser.live_harness import AsgiCall, events_of, parse_sse
from tests.fakes.admin_server import AdminServer, FakeLadder, served_over, stored_match
from tests.fakes.live_match import EVENTS, MATCH_ID, end, start, watch_unsubscribes
from tests.fakes.referee_server import WAIT
from tests.fakes.web import ESCAPED, HOSTILE


@pytest.fixture
def referee(tmp_path: Path) -> Iterator[AdminServer]:
    with served_over(tmp_path / "live.db") as server:
        yield server


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


# -- no referee, a referee down ---------------------------------------------------------------


def test_without_a_referee_the_live_pages_say_so(tmp_path: Path) -> None:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'none.db'}")
    storage.open()
    with TestClient(create_app(storage)) as client:
        page = client.get("/live")
        assert page.status_code == 200 and "No referee is connected" in page.text
        api = client.get("/api/live").json()
        assert api == {
            "referee": None,
            "message": NO_REFEREE,
            "matches": [],
            "connected": [],
            "ladders": [],
        }
        one = client.get("/live/x")
        assert one.status_code == 200 and "No referee is connected" in one.text
        assert client.get("/api/live/x").json()["referee"] is None
        stream = client.get("/api/live/x/events")
        assert stream.status_code == 503
        assert stream.json()["error"].startswith("No referee is connected")
        assert "live" not in client.get("/api/").json()  # the home page as before
    storage.close()


def test_a_referee_that_is_down_is_a_clear_503_and_the_home_page_still_answers(
    tmp_path: Path,
) -> None:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'down.db'}")
    storage.open()
    storage.add_bot("alice")
    address = f"127.0.0.1:{closed_port()}"
    now = [0.0]
    live = LiveSource(address, clock=lambda: now[0])
    with TestClient(create_app(storage, live=live)) as client:
        page = client.get("/live")
        assert page.status_code == 503
        assert f"the referee at {address} cannot be reached (UNAVAILABLE" in page.text
        api = client.get("/api/live")
        assert api.status_code == 503 and "cannot be reached" in api.json()["error"]
        home = client.get("/api/")
        assert home.status_code == 200
        assert home.json()["live"]["error"].startswith(f"the referee at {address}")
        assert "cannot be reached" in client.get("/").text
        bot = client.get("/api/bots/alice").json()["connection"]
        assert bot["connected"] is None and "cannot be reached" in bot["error"]
        assert "Connection unknown" in client.get("/bots/alice").text
        assert live.lobby_calls == 1, "a failure is kept for a second too"
        now[0] += 1.0
        assert client.get("/api/live").status_code == 503 and live.lobby_calls == 2
        assert client.get("/api/live/x/events").status_code == 503
    storage.close()


def test_the_lobby_is_asked_at_most_once_a_second(referee: AdminServer) -> None:
    now = [100.0]
    live = LiveSource(referee.address, clock=lambda: now[0])
    referee.arena.storage.add_bot("alice")
    start(referee)
    with TestClient(create_app(referee.arena.storage, live=live)) as client:
        for _ in range(5):
            (match,) = client.get("/api/live").json()["matches"]
        client.get("/")
        assert live.lobby_calls == 1
        assert match["id"] == MATCH_ID and match["steps"] == 6
        assert match["url"] == f"/live/{MATCH_ID}" and match["players"] == ["alice", "bob"]
        now[0] += 1.01
        client.get("/api/live")
        assert live.lobby_calls == 2
        assert client.get("/api/bots/alice").json()["connection"] == {
            "connected": False,
            "games": [],
            "matches": 0,
            "error": None,
        }


def test_the_running_ladders_are_on_the_live_and_home_pages(referee: AdminServer) -> None:
    game = make_game("straight")
    referee.arena.ladders["default", "straight"] = FakeLadder(
        game, TimeControl(), FaultPolicy.SUBSTITUTE, 3, 1000, 2, 41, started=12, finished=9
    )
    with TestClient(create_app(referee.arena.storage, live=LiveSource(referee.address))) as c:
        expected = [{"game": "straight", "title": game.describe(), "started": 12, "finished": 9}]
        assert c.get("/api/live").json()["ladders"] == expected
        assert c.get("/api/").json()["live"]["ladders"] == expected
        for page in ("/live", "/"):
            text = c.get(page).text
            assert "Ladders running" in text and "12 games started, 9 over" in text
            assert "41" not in text.split("Ladders running", 1)[1].split("</ul>", 1)[0]


# -- unknown and finished matches ------------------------------------------------------------


def test_unknown_and_finished_matches(referee: AdminServer) -> None:
    referee.arena.storage.save_match(stored_match("stored", ("alice", "bob"), 0))
    with TestClient(create_app(referee.arena.storage, live=LiveSource(referee.address))) as c:
        missing = c.get("/live/nope")
        assert missing.status_code == 404 and "no live match has id &#39;nope&#39;" in missing.text
        assert c.get("/api/live/nope").status_code == 404
        assert c.get("/api/live/nope/events").json() == {
            "error": f"no live match has id 'nope' at the referee {referee.address}",
            "status": 404,
        }
        over = c.get("/live/stored")
        assert over.status_code == 200 and 'href="/matches/stored"' in over.text
        assert "is over" in over.text
        data = c.get("/api/live/stored").json()
        assert (data["state"], data["replay"]) == ("over", "/matches/stored")
        gone = c.get("/api/live/stored/events")
        assert gone.status_code == 410 and "/matches/stored" in gone.json()["error"]
        long_id = "x" * 201
        assert c.get(f"/api/live/{long_id}").status_code == 400


def test_a_match_seen_over_is_answered_without_asking_the_referee_again(tmp_path: Path) -> None:
    """A crowd leaving a finished game retries it for a while: each retry opened a refused
    watch at the referee. The web face remembers the answer (ENDED_SECONDS)."""
    with served_over(tmp_path / "ended.db") as referee:
        referee.arena.storage.save_match(stored_match("stored", ("alice", "bob"), 0))
        source = LiveSource(referee.address)
        with TestClient(create_app(referee.arena.storage, live=source)) as c:
            assert c.get("/api/live/stored/events").status_code == 410
            assert c.get("/api/live/nope/events").status_code == 404
            referee.close()  # the referee is gone: only a remembered answer can be given now
            again = c.get("/api/live/stored/events")
            assert again.status_code == 410 and "/matches/stored" in again.json()["error"]
            assert c.get("/api/live/nope/events").status_code == 404
            assert c.get("/api/live/other/events").status_code == 503, "asked, and unreachable"


# -- escaping ----------------------------------------------------------------------------------


def test_a_hostile_bot_name_is_escaped_in_every_page_and_event(referee: AdminServer) -> None:
    game_steps = start(referee, bots=(HOSTILE, "bob"))
    live = LiveSource(referee.address)
    app = create_app(referee.arena.storage, live=live)
    with TestClient(app) as client:
        for path in ("/live", f"/live/{MATCH_ID}", "/"):
            page = client.get(path)
            assert page.status_code == 200, path
            assert ESCAPED in page.text and HOSTILE not in page.text, path
        assert client.get(f"/api/live/{MATCH_ID}").json()["start"]["players"][0] == HOSTILE

    async def follow() -> str:
        call = AsgiCall(app, EVENTS).start()
        assert await call.wait_started() == 200
        assert call.headers["content-type"].startswith("text/event-stream")
        await asyncio.to_thread(end, referee, game_steps[5])
        body = await call.finished()
        await live.close()
        return body

    body = asyncio.run(follow())
    assert HOSTILE not in body and "<" not in body and ">" not in body
    stream = parse_sse(body)
    (started,) = events_of(stream, "start")
    assert started.data["players"] == [HOSTILE, "bob"]
    step_events = list(events_of(stream, "step"))
    assert [e.data["step"] for e in step_events] == list(range(1, 7))
    # A late watcher's backlog: only the latest step carries its table.
    assert [e.data["table"] is not None for e in step_events] == [False] * 5 + [True]
    html = [e.data["html"] for e in step_events if "html" in e.data]
    assert html and all(ESCAPED in h and HOSTILE not in h for h in html)
    assert [e.name for e in stream.events][-1] == "end"
    assert HOSTILE in stream.events[-1].data["result"]


# -- the bounds ------------------------------------------------------------------------------


def test_streams_are_bounded_and_the_last_browser_to_go_releases_the_match_s_watch(
    referee: AdminServer,
) -> None:
    start(referee)
    live = LiveSource(referee.address, max_streams=2, linger_seconds=0)
    app = create_app(referee.arena.storage, live=live)
    dropped = watch_unsubscribes(referee)

    def watchers() -> int:
        return referee.call(lambda: referee.hub.watchers(MATCH_ID))

    async def body() -> None:
        first = AsgiCall(app, EVENTS, client="10.0.0.1").start()
        second = AsgiCall(app, EVENTS, client="10.0.0.2").start()
        assert await first.wait_started() == 200 and await second.wait_started() == 200
        await first.wait_for("event: step")
        await second.wait_for("event: step")
        assert live.streams == 2 and live.browsers(MATCH_ID) == 2
        assert await asyncio.to_thread(watchers) == 1, "two browsers, one watch at the referee"
        head = AsgiCall(app, EVENTS, method="HEAD").start()
        assert await head.wait_started() == 200
        await head.finished()
        assert live.streams == 2  # a HEAD holds no slot
        third = AsgiCall(app, EVENTS, client="10.0.0.3").start()
        assert await third.wait_started() == 503
        assert "too many live streams: 2 are open, the most this web face" in await third.finished()
        first.disconnect()
        await first.finished()
        assert live.streams == 1 and live.browsers(MATCH_ID) == 1
        again = AsgiCall(app, EVENTS, client="10.0.0.3").start()
        assert await again.wait_started() == 200  # the freed slot is taken again
        await again.wait_for("event: step")
        assert await asyncio.to_thread(watchers) == 1
        for call in (second, again):
            call.disconnect()
            await call.finished()
        assert live.streams == 0
        released = await asyncio.to_thread(dropped.acquire, timeout=WAIT)
        assert released, "the last browser went and the watch was not released"
        assert live.feed_of(MATCH_ID) is None
        await live.close()

    asyncio.run(body())
    assert watchers() == 0


def test_a_slow_browser_is_cut_and_told_why(referee: AdminServer) -> None:
    game_steps = start(referee, n=0)
    live = LiveSource(referee.address, queue_bound=3, linger_seconds=0)
    app = create_app(referee.arena.storage, live=live)
    dropped = watch_unsubscribes(referee)

    async def body() -> tuple[str, int]:
        slow = AsgiCall(app, EVENTS, client="10.0.0.1")
        slow.reading.clear()  # this browser reads nothing for now
        slow.start()
        assert await slow.wait_started() == 200
        keen = AsgiCall(app, EVENTS, client="10.0.0.2").start()
        assert await keen.wait_started() == 200
        feed = live.feed_of(MATCH_ID)
        assert feed is not None
        step = referee.hub.on_step(MATCH_ID)
        for n, s in enumerate(game_steps[:10], 1):
            await asyncio.to_thread(referee.call, lambda s=s: step(s))
            await keen.wait_for(f'"step":{n},')  # a browser that reads keeps up
        waiting = feed.total
        slow.reading.set()
        text = await slow.finished()
        assert live.streams == 1, "the keen browser follows on"
        keen.disconnect()
        await keen.finished()
        assert await asyncio.to_thread(dropped.acquire, timeout=WAIT)
        await live.close()
        return text, waiting

    text, waiting = asyncio.run(body())
    events = parse_sse(text).events
    assert [e.name for e in events] == ["start", "cut"]
    reason = events[-1].data["reason"]
    assert waiting >= 10
    assert reason.startswith(
        f"cut: {waiting} events of match {MATCH_ID} were waiting for this browser"
    )
    assert "(at most 3 may)" in reason and "reload to watch again" in reason
    assert referee.call(lambda: referee.hub.watchers(MATCH_ID)) == 0


def test_a_browser_that_was_busy_gets_everything_pending_in_one_write(
    referee: AdminServer,
) -> None:
    game_steps = start(referee, n=0)
    live = LiveSource(referee.address)
    app = create_app(referee.arena.storage, live=live)

    async def body() -> AsgiCall:
        call = AsgiCall(app, EVENTS)
        call.reading.clear()
        call.start()
        assert await call.wait_started() == 200
        feed = live.feed_of(MATCH_ID)
        assert feed is not None
        step = referee.hub.on_step(MATCH_ID)
        await asyncio.to_thread(referee.call, lambda: [step(s) for s in game_steps[:12]])
        while feed.follower.steps < 12:  # the deal's hand end is an event too
            await feed.grown(feed.total)
        call.reading.set()
        await call.wait_for('"step":12,')
        call.disconnect()
        await call.finished()
        await live.close()
        return call

    call = asyncio.run(body())
    # The first write (retry and start) was waiting; the twelve steps came as one more.
    assert len(call.chunks) == 2, [c[:40] for c in call.chunks]
    assert call.chunks[1].count(b"event: step\n") == 12


def test_a_quiet_stream_carries_heartbeats(referee: AdminServer) -> None:
    start(referee)
    live = LiveSource(referee.address, heartbeat_seconds=0.01)  # only while nothing comes
    app = create_app(referee.arena.storage, live=live)

    async def body() -> str:
        call = AsgiCall(app, EVENTS).start()
        assert await call.wait_started() == 200
        await call.wait_for(": heartbeat\n\n")
        call.disconnect()
        text = await call.finished()
        await live.close()
        return text

    stream = parse_sse(asyncio.run(body()))
    assert stream.comments >= 1 and stream.retry == 5000
    assert [e.name for e in stream.events][:1] == ["start"]

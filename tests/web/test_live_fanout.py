"""Issue 29, the web face's side of failures 1 and 3, over the real spectator service: a crowd of
browsers on one live match costs the referee one watch (its ``ListLive`` counts one watcher)
and every browser still gets every event in order; one client address cannot take every live
stream; a reload or a page load reuses the match's watch instead of opening another."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from domino_arena.sdk.client.spectator import Spectator
from domino_arena.server.web.app import create_app
from domino_arena.server.web.live import LiveSource
from tests.browser.live_harness import AsgiCall, parse_sse
from tests.fakes.admin_server import AdminServer, served_over
from tests.fakes.live_match import EVENTS, MATCH_ID, end, start, watch_unsubscribes
from tests.fakes.referee_server import WAIT

CROWD: Final = 300


@pytest.fixture
def referee(tmp_path: Path) -> Iterator[AdminServer]:
    with served_over(tmp_path / "live.db") as server:
        yield server


def counted_subscribes(referee: AdminServer) -> list[str]:
    """The match ids of every watch the referee's hub opened from now on."""
    opened: list[str] = []
    lock = threading.Lock()
    original = referee.hub.subscribe

    def subscribe(match_id: str):  # type: ignore[no-untyped-def]
        with lock:
            opened.append(match_id)
        return original(match_id)

    referee.hub.subscribe = subscribe  # type: ignore[method-assign]
    return opened


async def referee_watchers(address: str) -> int:
    """The match's watchers as the referee's ``ListLive`` counts them."""
    async with Spectator(address) as spectator:
        (match,) = [m for m in (await spectator.lobby()).matches if m.match_id == MATCH_ID]
    return match.watchers


def test_a_crowd_on_one_match_is_one_watch_at_the_referee(referee: AdminServer) -> None:
    game_steps = start(referee)
    opened = counted_subscribes(referee)
    live = LiveSource(referee.address, queue_bound=len(game_steps) + 50, linger_seconds=0)
    app = create_app(referee.arena.storage, live=live)

    async def body() -> tuple[list[str], dict[str, object]]:
        # Each browser from its own address (one address may hold a few streams only).
        crowd = [
            AsgiCall(app, EVENTS, client=f"10.1.{i // 250}.{i % 250}").start() for i in range(CROWD)
        ]
        assert {await call.wait_started() for call in crowd} == {200}
        for call in crowd:
            await call.wait_for('"step":6,')
        assert await referee_watchers(referee.address) == 1, "one watch, whatever the crowd"
        assert opened == [MATCH_ID]
        lobby = AsgiCall(app, "/api/live")
        lobby.start()
        listed = json.loads(await lobby.finished())["matches"][0]
        feed = live.feed_of(MATCH_ID)
        assert feed is not None
        step = referee.hub.on_step(MATCH_ID)
        await asyncio.to_thread(referee.call, lambda: [step(s) for s in game_steps[6:-1]])
        await asyncio.to_thread(end, referee, game_steps[-2])
        bodies = [await call.finished() for call in crowd]
        assert live.streams == 0
        await live.close()
        return bodies, listed

    bodies, listed = asyncio.run(body())
    assert (listed["watchers"], listed["browsers"]) == (1, CROWD)
    assert len(set(bodies)) == 1, "every browser got the same bytes"
    events = parse_sse(bodies[0]).events
    names = [e.name for e in events]
    assert names[0] == "start" and names[-1] == "end"
    steps = [e.data["step"] for e in events if e.name == "step"]
    assert steps == list(range(1, len(game_steps))), "every step fed, in order"
    assert opened == [MATCH_ID], "no browser opened a watch of its own"


def test_one_client_cannot_take_every_stream(referee: AdminServer) -> None:
    start(referee)
    live = LiveSource(referee.address, max_streams=10, max_streams_per_client=3)
    app = create_app(referee.arena.storage, live=live)
    greedy, other = "203.0.113.7", "198.51.100.9"

    async def body() -> None:
        held = [AsgiCall(app, EVENTS, client=greedy).start() for _ in range(3)]
        assert [await call.wait_started() for call in held] == [200] * 3
        refused = AsgiCall(app, EVENTS, client=greedy).start()
        assert await refused.wait_started() == 503
        error = json.loads(await refused.finished())["error"]
        assert error == (
            "too many live streams from your address: 3 are open, the most one client may "
            "hold; close one to open another"
        )
        second = AsgiCall(app, EVENTS, client=other).start()
        assert await second.wait_started() == 200, "another client still gets a stream"
        await second.wait_for("event: start")
        assert live.streams_of == {greedy: 3, other: 1}
        held[0].disconnect()
        await held[0].finished()
        again = AsgiCall(app, EVENTS, client=greedy).start()
        assert await again.wait_started() == 200, "a freed stream may be opened again"
        for call in (*held[1:], second, again):
            call.disconnect()
            await call.finished()
        assert live.streams_of == {}
        await live.close()

    asyncio.run(body())


def test_the_caps_are_checked_when_made() -> None:
    with pytest.raises(ValueError, match="max_streams_per_client and queue_bound: expected"):
        LiveSource("127.0.0.1:1", max_streams_per_client=0)
    with pytest.raises(ValueError, match="linger_seconds: expected at least 0, got -1"):
        LiveSource("127.0.0.1:1", linger_seconds=-1)


def test_a_page_load_and_a_reload_reuse_the_match_s_watch(referee: AdminServer) -> None:
    start(referee)
    opened = counted_subscribes(referee)
    dropped = watch_unsubscribes(referee)
    live = LiveSource(referee.address, linger_seconds=3600)  # the test ends it with close()
    app = create_app(referee.arena.storage, live=live)

    async def body() -> None:
        page = AsgiCall(app, f"/api/live/{MATCH_ID}").start()
        data = json.loads(await page.finished())
        assert data["state"] == "live" and data["step"] == 6 and data["table"] is not None
        feed = live.feed_of(MATCH_ID)
        assert feed is not None and feed.readers == 0, "the page's watch lingers"
        first = AsgiCall(app, EVENTS).start()
        assert await first.wait_started() == 200
        await first.wait_for('"step":6,')
        first.disconnect()
        await first.finished()
        reload = AsgiCall(app, EVENTS).start()
        assert await reload.wait_started() == 200
        await reload.wait_for('"step":6,')
        assert live.feed_of(MATCH_ID) is feed and feed.readers == 1
        again = AsgiCall(app, f"/live/{MATCH_ID}").start()
        assert '<section class="table"' in await again.finished()
        assert opened == [MATCH_ID], "page, stream, reload and page: one watch"
        assert await referee_watchers(referee.address) == 1
        reload.disconnect()
        await reload.finished()
        await live.close()
        assert live.feed_of(MATCH_ID) is None

    asyncio.run(body())
    assert dropped.acquire(timeout=WAIT), "closing the web face ends its watch"
    assert referee.call(lambda: referee.hub.watchers(MATCH_ID)) == 0

"""Issue 32, the server's side of playback at human speed: one replay step's table as a
fragment (``/matches/{id}/table?step=N``, bounds checked), the timeline's marks (every hand's
start and every fault at its step, each a ``?step=N`` link), the names of seats and steps, and
live step events that each carry their table's HTML, drawn once per step per match whatever
the number of browsers."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jinja2
import pytest

from domino_arena.server.web.app import create_app
from domino_arena.server.web.live import LiveSource
from domino_arena.server.web.seat_names import seat_label, step_who
from domino_arena.server.web.table import hand_starts
from tests.browser.live_harness import AsgiCall, events_of, parse_sse
from tests.fakes.admin_server import AdminServer, served_over
from tests.fakes.live_match import EVENTS, MATCH_ID, end, start
from tests.fakes.web import FORFEIT_ID, PageTiles, Site, match_id_of


@pytest.fixture
def referee(tmp_path: Path) -> Iterator[AdminServer]:
    with served_over(tmp_path / "live.db") as server:
        yield server


# -- the replay's step fragment --------------------------------------------------------------


def test_a_step_s_fragment_is_the_page_s_part_for_that_step(site: Site) -> None:
    match_id = match_id_of("straight", 0)
    total = len(site.played[match_id].record.steps)
    for step in (0, 1, total // 2, total):
        page = site.client.get(f"/matches/{match_id}", params={"step": step}).text
        fragment = site.client.get(f"/matches/{match_id}/table", params={"step": step})
        assert fragment.status_code == 200, fragment.text
        assert fragment.headers["content-type"].startswith("text/html")
        assert "<html" not in fragment.text and "<nav" not in fragment.text  # a fragment
        assert f'data-step="{step}"' in fragment.text
        assert fragment.text.strip() in page, f"the page includes the same fragment at {step}"
        assert PageTiles(fragment.text).hands == PageTiles(page).hands
    whole = site.client.get(f"/matches/{match_id}/table").text
    assert f'data-step="{total}"' in whole, "without a step: the end, as the page"


@pytest.mark.parametrize("step", ["-1", "99999", "x", "1.5"])
def test_a_step_out_of_range_is_a_400_naming_step(site: Site, step: str) -> None:
    match_id = match_id_of("passing", 0)
    response = site.client.get(f"/matches/{match_id}/table", params={"step": step})
    assert response.status_code == 400
    assert "step: " in response.text


def test_an_unknown_match_s_fragment_is_a_404(site: Site) -> None:
    response = site.client.get("/matches/no-such-match/table", params={"step": 0})
    assert response.status_code == 404
    assert "no stored match has id" in response.text


# -- the timeline ----------------------------------------------------------------------------


def marks(page: str, kind: str) -> list[tuple[str, int]]:
    """The timeline's links of ``kind`` (``tl-hand``, ``tl-fault``, ``tl-step``): each one's
    href and its data-step."""
    found = re.findall(rf'<a href="([^"]*)" class="{kind}" data-step="(\d+)"', page)
    return [(href, int(step)) for href, step in found]


def test_the_timeline_marks_every_hand_s_start(site: Site) -> None:
    match_id = match_id_of("moon", 0)
    record = site.played[match_id].record
    starts = hand_starts(record)
    assert len(starts) > 2, "a Moon game of several hands"
    page = site.client.get(f"/matches/{match_id}", params={"step": 5}).text
    assert marks(page, "tl-hand") == [(f"?step={s}", s) for s in starts]
    steps = marks(page, "tl-step")
    assert steps == [(f"?step={s}", s) for s in range(len(record.steps) + 1)], "every step"
    assert (
        '<a href="?step=5" class="tl-step" data-step="5" tabindex="-1" aria-current="step">' in page
    )
    assert page.count('aria-current="step"') == 1
    labels = re.findall(r">hand (\d+)</text>", page)
    assert labels[:2] == ["1", "2"], "the hands are labelled"
    assert "0 faults" in page
    timeline = site.client.get(f"/api/matches/{match_id}", params={"step": 5}).json()
    shown = timeline["replay"]["timeline"]
    assert [h["step"] for h in shown["hands"]] == starts
    framed = re.search(r'id="timeline-now" x="([\d.]+)"', page)
    assert framed is not None
    unit = shown["unit"]
    assert float(framed[1]) == shown["pad"] + 5 * unit - unit / 2 - 1, "step 5 is framed"


def test_the_timeline_marks_a_fault_at_its_step(site: Site) -> None:
    api = site.client.get(f"/api/matches/{FORFEIT_ID}").json()
    (fault,) = api["faults"]
    page = site.client.get(f"/matches/{FORFEIT_ID}", params={"step": 0}).text
    assert marks(page, "tl-fault") == [(f"?step={fault['step']}", fault["step"])]
    assert "1 fault" in page
    assert re.search(
        rf"<title>Fault at step {fault['step']}: timeout by \w+ \(seat {fault['seat']}\)", page
    )
    assert ">fault</text>" in page, "a mark with text, not a colour alone"
    assert f'<a href="?step={fault["step"]}#replay">' in page, "the faults table links it too"
    (mark,) = api["replay"]["timeline"]["faults"]
    assert (mark["step"], mark["seat"], mark["forfeited"]) == (fault["step"], fault["seat"], True)


# -- names ------------------------------------------------------------------------------------


def test_seats_and_steps_are_named_in_words() -> None:
    assert seat_label("alice") == "alice"
    assert seat_label("person:Ann") == "Ann (person)"
    assert seat_label("house:greedy", 2) == "greedy (house bot, seat 2)"
    assert seat_label("bob", 1) == "bob (seat 1)"
    players = ["alice", "person:Ann"]
    assert step_who(None, players, 3) == "the deal of hand 3"
    assert step_who(-1, players, 2) == "the deal of hand 2"
    assert step_who(1, players, 2) == "Ann (person, seat 1)"
    assert step_who(5, players, 2) == "seat 5"


def test_a_replayed_deal_reads_the_deal_of_its_hand(site: Site) -> None:
    match_id = match_id_of("moon", 0)
    starts = hand_starts(site.played[match_id].record)
    fragment = site.client.get(f"/matches/{match_id}/table", params={"step": starts[2]}).text
    assert f"Step {starts[2] - 1}: the deal of hand 3</p>" in fragment
    assert "the deal: " not in fragment


# -- the live events --------------------------------------------------------------------------


def counted_renders(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """A list that grows by one each time the template ``name`` is rendered."""
    renders: list[int] = []
    original = jinja2.Template.render

    def render(self: jinja2.Template, *args: Any, **kwargs: Any) -> str:
        if self.name == name:
            renders.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(jinja2.Template, "render", render)
    return renders


def test_every_live_step_carries_its_table_drawn_once_per_match(
    referee: AdminServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    renders = counted_renders(monkeypatch, "live_table.html")
    game_steps = start(referee, n=0)
    live = LiveSource(referee.address, queue_bound=len(game_steps) + 50, linger_seconds=0)
    app = create_app(referee.arena.storage, live=live)

    async def body() -> list[str]:
        browsers = [AsgiCall(app, EVENTS, client=f"10.0.0.{i}").start() for i in (1, 2)]
        for call in browsers:
            assert await call.wait_started() == 200
            await call.wait_for("event: start")
        step = referee.hub.on_step(MATCH_ID)
        await asyncio.to_thread(referee.call, lambda: [step(s) for s in game_steps[:-1]])
        await asyncio.to_thread(end, referee, game_steps[-2])
        bodies = [await call.finished() for call in browsers]
        await live.close()
        return bodies

    bodies = asyncio.run(body())
    assert bodies[0] == bodies[1], "both browsers got the same bytes"
    steps = [e.data for e in events_of(parse_sse(bodies[0]), "step")]
    assert [s["step"] for s in steps] == list(range(1, len(game_steps)))
    assert all(s["html"] and 'class="table"' in s["html"] for s in steps), "every step's table"
    assert len(renders) == len(steps), "one render per step per match, not per browser"
    deals = [s for s in steps if s["seat"] is None]
    assert deals, "the match deals again"
    for s in deals:
        assert s["who"] == f"the deal of hand {s['deal']}"
    played = [s for s in steps if s["seat"] is not None]
    assert {s["who"] for s in played} == {"alice (seat 0)", "bob (seat 1)"}


def test_a_late_first_browser_gets_the_backlog_without_tables_then_every_table(
    referee: AdminServer,
) -> None:
    """The referee keeps no table of a step nobody watched: the web face's first watch of a
    running match gets the steps so far bare but for the latest (docs/web.md: the event
    stream); the live page starts from that latest table, and every step after it has one."""
    game_steps = start(referee, n=6)
    live = LiveSource(referee.address, queue_bound=len(game_steps) + 50, linger_seconds=0)
    app = create_app(referee.arena.storage, live=live)

    async def body() -> str:
        call = AsgiCall(app, EVENTS).start()
        assert await call.wait_started() == 200
        await call.wait_for('"step":6,')
        step = referee.hub.on_step(MATCH_ID)
        await asyncio.to_thread(referee.call, lambda: [step(s) for s in game_steps[6:12]])
        await asyncio.to_thread(end, referee, game_steps[11])
        text = await call.finished()
        await live.close()
        return text

    steps = [e.data for e in events_of(parse_sse(asyncio.run(body())), "step")]
    assert ["html" in s for s in steps] == [False] * 5 + [True] * 7
    assert all("who" in s for s in steps)

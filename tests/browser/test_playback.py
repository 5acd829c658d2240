"""Issue 32 in Chromium: a replay plays at 4 steps a second and steps with the keys without a
page load (the step's table fetched and swapped in, the address following), a fault's mark on
the timeline shows its step, the timeline scrolls in its own box at 360 px; a live match
followed at 1 step a second falls behind while the referee plays on, and "jump to the
present" shows the latest table and the end. Every pace runs on Playwright's clock (paused),
so no test waits for real time."""

from __future__ import annotations

import re
from typing import Any, Final

from playwright.sync_api import Page, expect

from domino_arena.sdk.match.records import MatchRecord, parse_record
from domino_arena.sdk.rules import make_game
from domino_arena.sdk.wire import game_to_proto
from domino_arena.server.web.table import replay_states
from domino_arena.v1 import admin_pb2 as admin_pb
from tests.browser import live_harness
from tests.browser.conftest import LiveSite, Watched
from tests.browser.harness import artifacts_dir
from tests.browser.live_harness import BOTS, Arena, Gate
from tests.fakes.referee_server import WAIT
from tests.fakes.web import FORFEIT_ID, match_id_of

arena = live_harness.arena
"""The module's referee and web face (a fixture)."""

CLOCK_START: Final = 1_767_225_600_000
"""The browser's fake time (2026-01-01, in ms)."""
TIMEOUT_MS: Final = WAIT * 1000

READ_HANDS = """() => {
  const hands = {};
  for (const hand of document.querySelectorAll("#replay .hand")) {
    const tiles = hand.querySelectorAll(".tile[data-tile]");
    hands[hand.dataset.seat] = [...tiles].map(t => t.dataset.tile);
  }
  return hands;
}"""


def loads_of(page: Page) -> list[str]:
    """The URLs of every page load from now on."""
    loads: list[str] = []
    page.on("load", lambda loaded: loads.append(loaded.url))
    return loads


def shows(page: Page, record: MatchRecord, step: int) -> None:
    """The replay shows step ``step`` of ``record`` (waiting for it): its title, its hands (the
    engine's), the timeline's frame and the address."""
    replay = page.locator("#replay")
    expect(replay).to_have_attribute("data-step", str(step))
    expect(page.locator("#replay-title")).to_have_text(
        re.compile(rf"^Replay: step {step} of {len(record.steps)}, hand \d+$")
    )
    state = replay_states(record, step)
    hands: dict[str, Any] = page.evaluate(READ_HANDS)
    assert hands == {str(s): [str(t) for t in hand] for s, hand in enumerate(state.hands)}
    expect(page.locator('#timeline a.tl-step[aria-current="step"]')).to_have_attribute(
        "data-step", str(step)
    )
    assert page.url.endswith(f"?step={step}")


def test_a_replay_plays_at_4_steps_a_second_without_a_reload(
    live_site: LiveSite, page: Page
) -> None:
    match_id = match_id_of("moon", 0)
    record = live_site.site.played[match_id].record
    page.clock.install(time=CLOCK_START)
    page.clock.pause_at(CLOCK_START + 1_000)
    page.goto(f"{live_site.url}/matches/{match_id}?step=0")
    loads = loads_of(page)
    page.select_option("#speed", "4")
    page.get_by_role("button", name="play").click()
    shows(page, record, 1)  # at once
    play = page.locator("#play")
    expect(play).to_have_attribute("aria-pressed", "true")
    expect(page.get_by_role("button", name="pause")).to_have_count(1)
    for step in (2, 3, 4):
        page.clock.run_for(250)  # a quarter second a step
        shows(page, record, step)
    page.clock.run_for(200)  # not yet a quarter second: no step
    expect(page.locator("#replay")).to_have_attribute("data-step", "4")
    page.select_option("#speed", "0.5")  # two seconds a step from now
    page.clock.run_for(1_000)
    expect(page.locator("#replay")).to_have_attribute("data-step", "4")
    page.clock.run_for(1_000)
    shows(page, record, 5)
    page.keyboard.press(" ")  # pauses
    expect(play).to_have_attribute("aria-pressed", "false")
    page.clock.run_for(10_000)
    shows(page, record, 5)
    assert loads == [], "every step was swapped in: no page load"


def test_the_keys_step_without_a_reload(live_site: LiveSite, page: Page) -> None:
    match_id = match_id_of("doubles", 0)
    record = live_site.site.played[match_id].record
    total = len(record.steps)
    page.goto(f"{live_site.url}/matches/{match_id}?step=3")
    loads = loads_of(page)
    for key, step in [
        ("ArrowRight", 4),
        ("ArrowRight", 5),
        ("ArrowLeft", 4),
        ("End", total),
        ("ArrowRight", total),
        ("Home", 0),
        ("ArrowLeft", 0),
    ]:
        page.keyboard.press(key)
        shows(page, record, step)
    page.focus("#speed")  # a focused select keeps its own keys
    page.keyboard.press("ArrowRight")
    shows(page, record, 0)
    page.locator("#next").click()
    shows(page, record, 1)
    expect(page.locator("#prev")).to_have_attribute("href", "?step=0")
    expect(page.locator("#next")).to_have_attribute("href", "?step=2")
    assert loads == []
    page.reload()  # the address links the step shown
    shows(page, record, 1)


def test_a_fault_s_mark_shows_its_step(live_site: LiveSite, page: Page) -> None:
    page.goto(f"{live_site.url}/matches/{FORFEIT_ID}?step=0")
    loads = loads_of(page)
    mark = page.locator("#timeline a.tl-fault")
    expect(mark).to_have_count(1)
    step = int(mark.get_attribute("data-step") or "-1")
    assert step > 0
    expect(mark).to_contain_text("fault")
    mark.click()
    expect(page.locator("#replay")).to_have_attribute("data-step", str(step))
    assert page.url.endswith(f"?step={step}")
    page.locator("#first").click()
    expect(page.locator("#replay")).to_have_attribute("data-step", "0")
    page.locator("table.faults a").click()  # the faults table's link too
    expect(page.locator("#replay")).to_have_attribute("data-step", str(step))
    assert loads == []


def test_the_timeline_scrolls_in_its_own_box_at_360_px(live_site: LiveSite, page: Page) -> None:
    page.set_viewport_size({"width": 360, "height": 740})
    page.goto(f"{live_site.url}/matches/{match_id_of('moon', 0)}?step=100")
    box = page.locator("#timeline-box")
    widths = box.evaluate("b => [b.scrollWidth, b.clientWidth]")
    assert widths[0] > widths[1], "a long match scrolls inside the box"
    frame = page.locator("#timeline-now").bounding_box()
    shown = box.bounding_box()
    assert frame is not None and shown is not None
    assert shown["x"] <= frame["x"] <= shown["x"] + shown["width"], "scrolled to the step"
    page_width = page.evaluate("document.documentElement.scrollWidth")
    assert page_width <= 360, f"the page scrolls sideways: {page_width} px"
    page.screenshot(path=str(artifacts_dir() / "replay-timeline-360.png"), full_page=True)


def test_a_live_match_at_1_step_a_second_falls_behind_then_jumps_to_the_present(
    arena: Arena, watched: Watched
) -> None:
    page = watched.page
    game = make_game("straight")
    gate = Gate()
    arena.hold(gate)
    request = admin_pb.RunMatchRequest(
        game=game_to_proto(game), bots=BOTS[: game.num_players], has_seed=True, seed=7
    )
    running = arena.referee.admin.RunMatch.future(request, timeout=WAIT * 6)
    match_id = gate.held()
    page.clock.install(time=CLOCK_START)
    page.clock.pause_at(CLOCK_START + 1_000)
    page.goto(f"{arena.url}/live/{match_id}")
    live = page.locator("#live")
    expect(live).to_have_attribute("data-followed", "yes", timeout=TIMEOUT_MS)
    held = int(live.get_attribute("data-step") or "0")
    expect(page.locator("#pace")).to_have_value("1")
    behind = page.locator("#live-behind")
    expect(behind).to_have_text("Up to the present.")
    gate.open()
    # The first step plays at once; at 1 a second the next waits for the page's clock, which
    # stands still: every later step is buffered while the referee plays the match out.
    expect(live).to_have_attribute("data-step", str(held + 1), timeout=TIMEOUT_MS)
    expect(behind).to_have_text(re.compile(r"^[1-9]\d* steps? behind$"), timeout=TIMEOUT_MS)
    total = len(parse_record(running.result().record).steps)
    waiting = total - held - 1
    expect(behind).to_have_text(f"{waiting} steps behind", timeout=TIMEOUT_MS)
    expect(live).to_have_attribute("data-state", "live")  # the end arrived, not yet shown
    expect(page.locator("#live-over")).to_be_hidden()
    page.clock.run_for(1_000)
    expect(live).to_have_attribute("data-step", str(held + 2))
    expect(behind).to_have_text(f"{waiting - 1} steps behind")
    page.screenshot(path=str(artifacts_dir() / "live-behind.png"), full_page=True)
    page.get_by_role("button", name="jump to the present").click()
    expect(live).to_have_attribute("data-step", str(total))
    expect(behind).to_have_text("Up to the present.")
    expect(live).to_have_attribute("data-state", "over")
    expect(page.locator("#live-status")).to_contain_text("Match over: ")
    expect(page.locator("#live-over")).to_be_visible()
    scores = " / ".join(str(s) for s in running.result().result.scores)
    expect(page.locator("#live-table .scores")).to_contain_text(scores)
    expect(page.locator("#live-last")).to_contain_text(f"Step {total - 1}: ")

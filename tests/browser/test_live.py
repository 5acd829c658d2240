"""The live viewer in Chromium: a page opened on a match that house-style raw bots play through a
real referee follows it to its end without a reload (the table swapped in from the event stream),
then says the match is over with its final scores and links the replay, which opens."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from domino_arena.sdk.match.records import parse_record
from domino_arena.sdk.rules import make_game
from domino_arena.sdk.wire import game_to_proto
from domino_arena.v1 import admin_pb2 as admin_pb
from tests.browser import live_harness
from tests.browser.conftest import Watched
from tests.browser.harness import artifacts_dir
from tests.browser.live_harness import BOTS, Arena, Gate
from tests.fakes.referee_server import WAIT

arena = live_harness.arena
"""The module's referee and web face (a fixture)."""

TIMEOUT_MS = WAIT * 1000


def test_the_live_view_follows_a_match_to_its_end_without_a_reload(
    arena: Arena, watched: Watched
) -> None:
    page = watched.page
    game = make_game("straight")
    gate = Gate()
    arena.hold(gate)
    request = admin_pb.RunMatchRequest(
        game=game_to_proto(game), bots=BOTS[: game.num_players], has_seed=True, seed=4
    )
    running = arena.referee.admin.RunMatch.future(request, timeout=WAIT * 6)
    match_id = gate.held()
    loads: list[str] = []
    page.on("load", lambda loaded: loads.append(loaded.url))
    page.goto(f"{arena.url}/live/{match_id}")
    live = page.locator("#live")
    expect(live).to_have_attribute("data-state", "live")
    held_step = int(live.get_attribute("data-step") or "0")
    assert held_step >= 1
    expect(page.locator("#live-table .table")).to_have_count(1)  # drawn by the server
    expect(page.locator("#live-over")).to_be_hidden()
    expect(live).to_have_attribute("data-followed", "yes", timeout=TIMEOUT_MS)
    page.screenshot(path=str(artifacts_dir() / "live-held.png"), full_page=True)
    page.select_option("#pace", "live")  # as it comes (the default plays 1 step a second)
    gate.open()
    expect(live).to_have_attribute("data-state", "over", timeout=TIMEOUT_MS)
    result = running.result()
    total = len(parse_record(result.record).steps)
    expect(live).to_have_attribute("data-step", str(total))
    assert total > held_step, "the page moved on from where it was drawn"
    scores = "-".join(str(s) for s in result.result.scores)
    expect(page.locator("#live-status")).to_contain_text(re.compile(f"Match over: .*{scores}"))
    expect(page.locator("#live-over")).to_be_visible()
    expect(page.locator("#live-table .scores")).to_contain_text(
        " / ".join(str(s) for s in result.result.scores)
    )
    expect(page.locator("#live-last")).to_contain_text(f"Step {total - 1}:")  # from 0
    assert loads == [f"{arena.url}/live/{match_id}"], "the page was never reloaded"
    page.screenshot(path=str(artifacts_dir() / "live-over.png"), full_page=True)
    page.locator("#replay-link").click()
    expect(page).to_have_url(f"{arena.url}/matches/{match_id}")
    expect(page.locator("#replay")).to_have_count(1)
    assert arena.live.streams == 0

"""The drawn table in Chromium: a replay of each game mid-hand at a laptop's width and a phone's
(360 px) shows the SVG table, which fits the width (the page never scrolls sideways); the
screenshots go to the artifacts folder for a person to look at."""

from __future__ import annotations

from typing import Final

import pytest
from playwright.sync_api import Page

from domino_arena.sdk.match.records import MatchRecord
from domino_arena.sdk.rules import MoonState
from domino_arena.server.web.table import hand_starts, replay_states
from tests.browser.conftest import LiveSite
from tests.browser.harness import artifacts_dir
from tests.fakes.web import GAMES_PLAYED, match_id_of

WIDTHS: Final = (1366, 360)
STYLED = """() => getComputedStyle(document.querySelector("svg.domino-table")).maxWidth !== "none"
"""
"""Whether the page's stylesheet styles the table (its size is bounded)."""


def mid_hand(record: MatchRecord) -> int:
    """A step of the first hand worth looking at: in Straight its last (the fullest cross), in
    Moon the first with two tiles in the trick, else two thirds of the way through."""
    starts = hand_starts(record)
    end = (starts[1] - 1) if len(starts) > 1 else len(record.steps)
    if record.game == "straight":
        return end - 1
    if record.game == "moon":
        for step in range(end):
            state = replay_states(record, step)
            if isinstance(state, MoonState) and len(state.trick) == 2 and state.tricks:
                return step
    return max(1, end * 2 // 3)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("game", GAMES_PLAYED)
def test_a_replay_draws_its_table_within_the_width(
    live_site: LiveSite, page: Page, game: str, width: int
) -> None:
    match_id = match_id_of(game, 0)
    step = mid_hand(live_site.site.played[match_id].record)
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_site.url}/matches/{match_id}?step={step}")
    table = page.locator("#replay svg.domino-table")
    assert page.evaluate(STYLED), "style.css bounds the drawn table's width"
    assert table.is_visible()
    box = table.bounding_box()
    assert box is not None and 0 < box["width"] <= width and box["height"] > 100
    assert page.locator("#replay .hand .tile[data-tile]").count() > 0, "hands face up"
    assert page.evaluate("document.documentElement.scrollWidth") <= width, "no sideways scroll"
    page.locator("#replay").screenshot(path=artifacts_dir() / f"table-{game}-{width}.png")

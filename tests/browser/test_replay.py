"""The replay viewer in Chromium: stepped with → through a whole recorded match of each game,
it shows at every step exactly the tiles the rules engine holds after that many steps of the
record; ← Home End, the step and hand links and space (play/pause) move as they say. With
JavaScript each step is swapped in without a page load (tests/browser/test_playback.py checks
that), so a check waits for the step asked for rather than for a navigation."""

from __future__ import annotations

from collections import Counter
from typing import Any, Final

import pytest
from playwright.sync_api import Page, expect

from domino_arena.sdk.match.records import MatchRecord
from domino_arena.sdk.rules import (
    DoublesState,
    GameState,
    MoonState,
    PassingState,
    StraightState,
    Tile,
)
from domino_arena.sdk.rules.linegame import LineGameState
from domino_arena.server.web.table import hand_starts, replay_states
from tests.browser.conftest import LiveSite
from tests.fakes.web import GAMES_PLAYED, match_id_of

Laid = tuple[str, str]
"""A tile as the page shows it: its ``data-tile`` and its accessible name (a laid tile's name is
its numbers in the order they lie; the tile played last adds ", played last")."""

READ_TILES = """() => {
  const shown = {hands: {}, table: [], boneyard: [], outside: []};
  for (const hand of document.querySelectorAll("#replay .hand")) {
    shown.hands[hand.dataset.seat] = [];
  }
  for (const el of document.querySelectorAll("#replay .tile[data-tile]")) {
    const tile = [el.dataset.tile, el.getAttribute("aria-label").split(",")[0]];
    const hand = el.closest(".hand");
    if (hand) { shown.hands[hand.dataset.seat].push(el.dataset.tile); }
    else if (el.closest(".boneyard")) { shown.boneyard.push(el.dataset.tile); }
    else if (el.closest(".table")) { shown.table.push(tile); }
    else { shown.outside.push(tile); }
  }
  const replay = document.getElementById("replay");
  const title = replay.querySelector("h2").textContent;
  return {...shown, step: Number(replay.dataset.step), title: title};
}"""
"""Every tile the replay shows, by where it is (run in the page)."""


def pairs(laid: tuple[tuple[int, int], ...]) -> list[Laid]:
    return [(str(Tile(a, b)), f"{a}-{b}") for a, b in laid]


def plain(tiles: list[Tile]) -> list[Laid]:
    return [(str(t), str(t)) for t in tiles]


def table_of(state: GameState) -> list[Laid]:
    """The tiles on the table of ``state``, in the order the page lays them out (Doubles: one
    spinner after another, each tile the way the drawing found it could lie, so
    :func:`check_step` compares only which tiles are there)."""
    if isinstance(state, StraightState):
        layout = state.layout
        if layout.spinner is None:
            return pairs(layout.line)
        laid = [*pairs(layout.line), *plain([Tile(layout.spinner, layout.spinner)])]
        return laid + [tile for arm in layout.arms for tile in pairs(arm)]
    if isinstance(state, DoublesState):
        return plain(list(state.placed))
    if isinstance(state, PassingState):
        return pairs(state.line)
    assert isinstance(state, MoonState)
    kept = [t for t in (state.widow, state.discard) if t is not None]
    played = [tile for _, tile in state.trick]
    won = [tile for trick in state.tricks for _, tile in trick.plays]
    return plain(kept + played + won)


def check_step(page: Page, record: MatchRecord, step: int) -> None:
    """The page shows step ``step`` of ``record``: exactly the engine's tiles there (once the
    step asked for is swapped in)."""
    expect(page.locator("#replay")).to_have_attribute("data-step", str(step))
    state = replay_states(record, step)
    shown: dict[str, Any] = page.evaluate(READ_TILES)
    where = f"{record.game} at step {step}"
    assert shown["step"] == step, where
    assert shown["title"].startswith(f"Replay: step {step} of {len(record.steps)},"), where
    assert shown["hands"] == {
        str(seat): [str(t) for t in hand] for seat, hand in enumerate(state.hands)
    }, where
    if isinstance(state, DoublesState):  # the record does not say which way a tile lies
        assert Counter(t for t, _ in shown["table"]) == Counter(t for t, _ in table_of(state))
    else:
        assert [tuple(t) for t in shown["table"]] == table_of(state), where
    boneyard = state.boneyard if isinstance(state, LineGameState) else ()
    assert shown["boneyard"] == [str(t) for t in boneyard], where
    assert shown["outside"] == [], where
    if isinstance(state, StraightState):  # every tile of the layout is drawn, none twice
        assert Counter(t for t, _ in shown["table"]) == Counter(map(str, state.layout.tiles()))


CLOCK_START: Final = 1_767_225_600_000
"""The browser's fake time in the play test (2026-01-01, in ms)."""


def press(page: Page, key: str) -> None:
    """Press ``key`` (the step it shows is swapped in: :func:`check_step` waits for it)."""
    page.keyboard.press(key)


def click(page: Page, selector: str) -> None:
    page.click(selector)


def shortest_match(live_site: LiveSite, game: str) -> tuple[str, MatchRecord]:
    """The stored match of ``game`` with the fewest steps (the suite's CPU is bounded)."""
    ids = [match_id_of(game, n) for n in (0, 1)]
    best = min(ids, key=lambda i: len(live_site.site.played[i].record.steps))
    return best, live_site.site.played[best].record


@pytest.mark.parametrize("game", GAMES_PLAYED)
def test_stepping_through_a_whole_match_shows_the_record_s_tiles_at_every_step(
    live_site: LiveSite, page: Page, game: str
) -> None:
    match_id, record = shortest_match(live_site, game)
    page.goto(f"{live_site.url}/matches/{match_id}?step=0")
    check_step(page, record, 0)
    for step in range(1, len(record.steps) + 1):
        press(page, "ArrowRight")
        check_step(page, record, step)
    assert page.url.endswith(f"?step={len(record.steps)}")


def test_the_keys_and_links_move_through_the_match(live_site: LiveSite, page: Page) -> None:
    match_id, record = shortest_match(live_site, "passing")
    total = len(record.steps)
    page.goto(f"{live_site.url}/matches/{match_id}")
    check_step(page, record, total)
    for back in range(1, 4):
        press(page, "ArrowLeft")
        check_step(page, record, total - back)
    press(page, "Home")
    check_step(page, record, 0)
    press(page, "ArrowLeft")  # at the first step, ← stays there
    check_step(page, record, 0)
    press(page, "End")
    check_step(page, record, total)
    press(page, "ArrowRight")  # at the end, → stays there
    check_step(page, record, total)
    starts = hand_starts(record)
    assert len(starts) > 1, "the match should have several hands"
    for hand, start in reversed(list(enumerate(starts, start=1))):
        click(page, f"nav.hands a >> text='{hand}'")
        check_step(page, record, start)
        assert page.text_content("nav.hands a.current") == str(hand)
    for link, step in [("#next", 1), ("#next", 2), ("#prev", 1), ("#last", total), ("#first", 0)]:
        click(page, link)
        check_step(page, record, step)


def test_space_plays_and_pauses_on_the_play_timer(live_site: LiveSite, page: Page) -> None:
    """The play timer runs on Playwright's clock, so the test never waits a second; the clock is
    paused (installed time flows on its own otherwise, and a slow machine would see the timer
    step while the test reads the page)."""
    match_id, record = shortest_match(live_site, "straight")
    page.clock.install(time=CLOCK_START)
    page.clock.pause_at(CLOCK_START + 1_000)
    page.goto(f"{live_site.url}/matches/{match_id}?step=0")
    assert page.text_content("#play") == "▶ play"
    press(page, " ")
    check_step(page, record, 1)
    expect(page.locator("#play")).to_have_text("⏸ pause")
    for step in (2, 3):
        page.clock.run_for(1_000)  # 1 step a second, the default speed
        check_step(page, record, step)
    press(page, " ")
    expect(page.locator("#play")).to_have_text("▶ play")
    check_step(page, record, 3)
    assert "play=" not in page.url
    page.clock.run_for(5_000)  # paused: no timer steps on
    check_step(page, record, 3)
    assert page.url.endswith("?step=3")


def test_the_step_box_jumps_to_a_step_and_its_keys_stay_in_the_box(
    live_site: LiveSite, page: Page
) -> None:
    match_id, record = shortest_match(live_site, "doubles")
    page.goto(f"{live_site.url}/matches/{match_id}?step=0")
    box = page.get_by_label("Step")
    box.fill("7")
    box.press("ArrowLeft")  # moves the caret: the replay's own keys leave a focused box alone
    assert page.url.endswith("?step=0")
    with page.expect_navigation():  # the step box is a plain form: a page load
        box.press("Enter")
    assert page.url.endswith("?step=7")
    check_step(page, record, 7)

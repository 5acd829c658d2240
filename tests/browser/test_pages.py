"""Every page of the web face in Chromium: no console error anywhere, a screenshot of each
kept as a test artifact, the standings showing what the storage holds, the keyboard reaching
everything, and stored hostile text shown as text, never run."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from domino_arena.sdk.rules import GAMES
from domino_arena.server.ladder import elo
from tests.browser.conftest import LiveSite, Watched
from tests.browser.harness import artifacts_dir
from tests.fakes.web import BOTS, HOSTILE, TOURNAMENT_ID, match_id_of

PAGES = {
    "home": "/",
    **{f"standings-{game}": f"/games/{game}/standings" for game in GAMES},
    "tournaments": "/tournaments",
    "tournament": f"/tournaments/{TOURNAMENT_ID}",
    "bot": f"/bots/{BOTS[0]}",
    "matches": "/matches",
    "live-no-referee": "/live",
    **{f"match-{game}": f"/matches/{match_id_of(game, 0)}" for game in GAMES},
    "match-step": f"/matches/{match_id_of('moon', 0)}?step=5",
    "not-found": "/no/such/page",
}
"""Each page by the name of its screenshot."""


@pytest.mark.parametrize("name", list(PAGES))
def test_every_page_loads_without_a_console_error_and_is_photographed(
    live_site: LiveSite, watched: Watched, name: str
) -> None:
    page = watched.page
    response = page.goto(live_site.url + PAGES[name])
    assert response is not None
    if name == "not-found":
        assert response.status == 404
        expect(page.locator("main")).to_contain_text("no page at /no/such/page")
        # The expected problems are the page's own 404 and Chromium's console line about it
        # (its icon and style sheet load).
        problems = watched.watch.take()
        assert f"HTTP 404: {live_site.url}/no/such/page" in problems
        assert all("/no/such/page" in problem for problem in problems), problems
    else:
        assert response.status == 200
        expect(page.locator("main h1")).to_be_visible()
    page.screenshot(path=artifacts_dir() / f"{name}.png", full_page=True)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_standings_page_shows_what_the_storage_holds(
    live_site: LiveSite, page: Page, game: str
) -> None:
    page.goto(f"{live_site.url}/games/{game}/standings?per_page=100")
    rows = page.locator("table.standings tbody tr").all_inner_texts()
    table = elo.standings(live_site.site.storage.ratings(game))
    if not table:
        assert rows == ["No rated games yet."]
        return
    shown = [re.split(r"\t", row) for row in rows]
    assert len(shown) == len(table)
    for cells, (rank, (bot, rating)) in zip(shown, enumerate(table, start=1), strict=True):
        assert cells[0] == str(rank)
        assert cells[1] == bot
        assert cells[2] == f"{rating.rating:.1f}"
        assert cells[4:9] == [
            str(rating.games),
            str(rating.wins),
            str(rating.draws),
            str(rating.losses),
            str(rating.faults),
        ]


def test_sorting_the_standings_by_a_column_orders_its_rows(live_site: LiveSite, page: Page) -> None:
    page.goto(f"{live_site.url}/games/straight/standings")
    page.get_by_role("link", name="Bot", exact=True).click()
    expect(page).to_have_url(re.compile(r"sort=bot"))
    names = page.locator("table.standings tbody tr td:nth-child(2)").all_inner_texts()
    assert names == sorted(names)


def test_the_keyboard_reaches_the_page_and_follows_links(live_site: LiveSite, page: Page) -> None:
    page.goto(live_site.url + "/")
    page.keyboard.press("Tab")
    skip = page.locator("a.skip")
    expect(skip).to_be_focused()
    expect(skip).to_be_visible()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"#main$"))
    expect(page.locator("main")).to_be_focused()
    page.goto(live_site.url + "/")
    for _ in range(10):  # the skip link, the brand, then Tournaments
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent") == "Tournaments":
            break
    page.keyboard.press("Enter")
    expect(page).to_have_url(live_site.url + "/tournaments")
    expect(page.locator("main h1")).to_be_visible()


def test_stored_hostile_text_is_shown_as_text_and_never_runs(
    live_site: LiveSite, page: Page
) -> None:
    page.goto(f"{live_site.url}/tournaments/{TOURNAMENT_ID}")
    expect(page.locator("main h1")).to_contain_text(HOSTILE)
    assert page.locator("main script").count() == 0
    # The watched fixture fails the test on the dialog an executed alert(1) would open.

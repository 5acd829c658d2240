"""A person plays in Chromium: a whole game (a match of one deal) of each of the four games by
mouse and another by keyboard, against house bots, through a real referee; and the leak walk of
everything the person's page and its event stream carried, against the stored record replayed
by the rules engine step by step.

The web face's pace between the bots' steps is 0 here (tests/fakes/people.py), and every wait
is Playwright's ``expect``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Final

import pytest
from playwright.sync_api import Browser, Page, expect

from domino_arena.sdk.rules import Tile
from tests.browser.conftest import Watched
from tests.browser.harness import PageWatch, artifacts_dir
from tests.browser.looks import look_at
from tests.fakes.people import COURSE, STUDENT_BOT, PlaySite, play_site, seat_leaks, tiles_in
from tests.fakes.referee_server import WAIT

TIMEOUT_MS: Final = WAIT * 1000
GAMES: Final = ("passing-2p", "straight-2p", "doubles-2p", "moon")
TURN_OR_OVER: Final = re.compile("^(turn|over)$")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlaySite]:
    with play_site(tmp_path_factory.mktemp("play"), per_person=8) as made:
        yield made


KEEP_VIEWS: Final = """
(() => {
  // Keep every view event this page receives, as its data line (the leak walk reads them).
  const Original = window.EventSource;
  window.keptViews = [];
  function Kept(url, init) {
    const source = new Original(url, init);
    source.addEventListener("view", (event) => window.keptViews.push(event.data));
    return source;
  }
  Kept.prototype = Original.prototype;
  Kept.CONNECTING = Original.CONNECTING;
  Kept.OPEN = Original.OPEN;
  Kept.CLOSED = Original.CLOSED;
  window.EventSource = Kept;
})();
"""


@dataclass
class Served:
    """What the web face sent the browser about the match: the table's pages (read as they
    load) and every view its event stream delivered (kept by :data:`KEEP_VIEWS`)."""

    pages: list[tuple[str, str]] = field(default_factory=list)
    views: list[str] = field(default_factory=list)

    def page(self, page: Page) -> None:
        """Keep the table page just loaded (before anything navigates away from it)."""
        api = page.url.replace("/play/", "/api/play/")
        for url in (page.url, api):
            response = page.request.get(url)
            assert response.status == 200, url
            self.pages.append((url, response.text()))
        self.pages.append((page.url, page.content()))

    def kept(self, page: Page) -> None:
        self.views = list(page.evaluate("window.keptViews"))


def sign_in(page: Page, site: PlaySite) -> None:
    page.goto(f"{site.url}/courses/{COURSE}/me")
    page.get_by_label("Bot name").fill(STUDENT_BOT)
    page.get_by_label("Token").fill(site.tokens[STUDENT_BOT])
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("h1")).to_have_text(f"My bot: {STUDENT_BOT}")


def start(page: Page, site: PlaySite, game: str, opponent: str) -> str:
    """Choose ``game`` on the form, seat 0, one deal, ``opponent`` in every other seat; start.
    Return the match id."""
    page.get_by_role("link", name="Play a game yourself").click()
    page.get_by_label("Game", exact=True).select_option(game)
    page.get_by_role("button", name="Choose this game").click()
    page.get_by_label("Your seat").select_option("0")
    page.get_by_label("1 deal").check()
    selects = page.locator("select[name^=opponent_]")
    for index in range(selects.count()):
        selects.nth(index).select_option(opponent)
    page.get_by_role("button", name="Start the match").click()
    expect(page).to_have_url(re.compile(r"/play/[^/]+$"))
    expect(page.locator(".seat-label.bot").first).to_be_visible()
    expect(page.locator(".play-seats .you .seat-label.person")).to_have_text("person")
    return page.url.rsplit("/", 1)[1]


def play_to_the_end(page: Page, keyboard: bool, served: Served | None = None) -> int:
    """Play every turn (by mouse: click an action, or its mark on the table; by keyboard: 1,
    Enter, or Tab then Enter) until the match is over; return how many moves the person made.
    ``served`` keeps the table's page, its JSON and the page as drawn now at each turn."""
    play = page.locator("#play")
    moves = 0
    while True:
        expect(play).to_have_attribute("data-state", TURN_OR_OVER, timeout=TIMEOUT_MS)
        if play.get_attribute("data-state") == "over":
            return moves
        version = play.get_attribute("data-version") or ""
        if served is not None:
            served.page(page)
        buttons = page.locator("#play-actions [data-action]")
        count = buttons.count()
        if keyboard:
            expect(buttons.first).to_be_focused()  # the focus lands on the first action
            if moves % 3 == 0:
                page.keyboard.press("Enter")
            elif moves % 3 == 1 or count == 1:
                page.keyboard.press("1")
            else:
                page.keyboard.press("Tab")
                expect(buttons.nth(1)).to_be_focused()
                page.keyboard.press("Enter")
        else:
            # Every other move by its mark on the drawn table, where there is one.
            marks = page.locator("#play-table svg [data-action]")
            if moves % 2 == 0 and marks.count():
                marks.nth(moves % marks.count()).click()
            else:
                buttons.nth(moves % count).click()
        moves += 1
        expect(play).not_to_have_attribute("data-version", version, timeout=TIMEOUT_MS)
        expect(page.locator("#play-error")).to_be_hidden()


def check_no_leak(site: PlaySite, served: Served, match_id: str, seat: int) -> int:
    """The leak walk: every view the stream delivered, and every page, against the position
    after the steps it says it was told of. Returns how many tiles it looked at (it must see
    some)."""
    record = site.record(match_id)
    seen = 0
    assert served.views, "the page received no view from its event stream"
    for raw in served.views:
        view = json.loads(raw)
        assert view["match_id"] == match_id and view["seat"] == seat
        found = seat_leaks(raw, record, view["step"], seat, match_id)
        assert not found, f"view {view['version']} (step {view['step']}): {found}"
        if view["table"] is not None:
            assert set(view["table"]) >= {"own_hand", "viewer"}
            assert not {"hands", "boneyard"} & set(view["table"])
            assert view["table"].get("widow") is None
        seen += len(tiles_in(raw))
    assert served.pages, "no page was read"
    for url, text in served.pages:
        if "/api/" in url:
            steps = json.loads(text)["step"]
        else:
            found_step = re.search(r'id="play"[^>]* data-step="(\d+)"', text)
            assert found_step is not None, url
            steps = int(found_step.group(1))
        assert not seat_leaks(text, record, steps, seat, match_id), url
        seen += len(tiles_in(text))
    return seen


@pytest.mark.parametrize("keyboard", [False, True], ids=["mouse", "keyboard"])
@pytest.mark.parametrize("game", GAMES)
def test_a_person_plays_a_whole_game(
    site: PlaySite, watched: Watched, game: str, keyboard: bool
) -> None:
    page = watched.page
    page.add_init_script(KEEP_VIEWS)
    served = Served()
    sign_in(page, site)
    match_id = start(page, site, game, "house:random" if keyboard else "house:greedy")
    moves = play_to_the_end(page, keyboard, served)
    assert moves > 0
    status = page.locator("#play-status")
    expect(status).to_contain_text("Match over:")
    record = site.record(match_id)
    assert record.seats[0].startswith("person:")
    assert record.seats[1].startswith("house:")
    person_steps = [s for s in record.steps if s.seat == 0]
    assert len(person_steps) == moves, "every move the person made is in the record"
    page.screenshot(path=str(artifacts_dir() / f"play-{game}-over.png"), full_page=True)
    served.kept(page)
    assert check_no_leak(site, served, match_id, seat=0) > 0, "the walk saw no tile"
    page.locator("#replay-link").click()
    expect(page).to_have_url(f"{site.url}/matches/{match_id}")
    expect(page.locator("#replay")).to_have_count(1)


def test_the_table_shows_the_person_s_hand_and_the_bots_face_down(
    site: PlaySite, watched: Watched
) -> None:
    page = watched.page
    sign_in(page, site)
    match_id = start(page, site, "straight-2p", "house:greedy")
    play = page.locator("#play")
    expect(play).to_have_attribute("data-state", TURN_OR_OVER, timeout=TIMEOUT_MS)
    if play.get_attribute("data-state") == "turn":
        own = page.locator("#play-table .hand:not(.face-down) [data-tile]")
        hand = [Tile.parse(t.get_attribute("data-tile") or "") for t in own.all()]
        assert hand, "the person's hand is face up"
        expect(page.locator("#play-clock")).to_contain_text(" s")
        page.screenshot(path=str(artifacts_dir() / "play-turn.png"), full_page=True)
    play_to_the_end(page, keyboard=False)
    assert site.record(match_id).seats[0].startswith("person:")


def test_without_javascript_the_person_plays_by_plain_forms(
    site: PlaySite, browser: Browser
) -> None:
    """Each action is a button of a plain form (POST, then back to the table), and the page
    reloads itself while the person waits (a ``noscript`` refresh)."""
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    watch = PageWatch(page)
    try:
        sign_in(page, site)
        match_id = start(page, site, "passing-2p", "house:greedy")
        play = page.locator("#play")
        moves = 0
        while True:
            expect(play).to_have_attribute("data-state", TURN_OR_OVER, timeout=TIMEOUT_MS)
            if play.get_attribute("data-state") == "over":
                break
            page.locator("#play-actions button").first.click()  # a plain POST, then a 303
            expect(page).to_have_url(f"{site.url}/play/{match_id}")
            moves += 1
        expect(page.locator("#play-status")).to_contain_text("Match over:")
        record = site.record(match_id)
        assert len([s for s in record.steps if s.seat == 0]) == moves > 0
    finally:
        context.close()
    assert watch.problems == [], watch.problems


@pytest.mark.parametrize(("game", "seats"), [("moon", 3), ("doubles-2p", 2)])
def test_the_play_pages_fit_a_phone_and_pass_axe(
    site: PlaySite, watched: Watched, game: str, seats: int
) -> None:
    """The form and the person's table at a turn, at 1366 and 360 px, light and dark: no
    serious or critical axe violation, no sideways scroll, the other seats face down."""
    page = watched.page
    sign_in(page, site)
    page.get_by_role("link", name="Play a game yourself").click()
    expect(page.locator("main h1")).to_be_visible()
    wrong = look_at(page, f"play-form-{game}")
    assert wrong == [], "\n\n".join(wrong)
    page.go_back()
    start(page, site, game, "house:random")
    play = page.locator("#play")
    expect(play).to_have_attribute("data-state", TURN_OR_OVER, timeout=TIMEOUT_MS)
    if play.get_attribute("data-state") == "turn":
        others = page.locator("#play-table .hand.face-down")
        expect(others).to_have_count(seats - 1)
    wrong = look_at(page, f"play-table-{game}")
    assert wrong == [], "\n\n".join(wrong)
    play_to_the_end(page, keyboard=True)

"""A Swiss's rounds and a 64-entrant knockout's bracket in Chromium: no console error (the
drawing breaks no Content-Security-Policy rule), the page never wider than the window at
1200 and 360 pixels, the bracket scrolling sideways in its own box, reachable by keyboard;
screenshots kept as test artifacts."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Final

import pytest

from domino_arena.server.ladder.ratings_store import RatedStorage
from tests.browser.conftest import Watched
from tests.browser.harness import artifacts_dir, serve
from tests.fakes.round_tournaments import play_knockout, round_tournament, store_round
from tests.fakes.web import HOSTILE, web_app

SWISS_ID: Final = "swiss-cup"
KNOCKOUT_ID: Final = "ko-64"
PAGES: Final = {"swiss": f"/tournaments/{SWISS_ID}", "knockout": f"/tournaments/{KNOCKOUT_ID}"}


@pytest.fixture(scope="module")
def rounds_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The web app over a Swiss of five two rounds in and a knockout of 64 played out."""
    storage = RatedStorage(f"sqlite:///{tmp_path_factory.mktemp('rounds') / 'arena.db'}")
    storage.open()
    five = ("ann", "ben", "cat", "dan", HOSTILE)
    swiss = round_tournament(SWISS_ID, five, format="swiss", rounds=3, seeding=five)
    # A real tournament publishes its seed's commitment: 64 hex digits that must wrap at 360 px.
    swiss = dataclasses.replace(swiss, seed_commitment="9f" * 32, seed_salt="ab" * 16)
    storage.add_tournament(swiss)
    pairs = [("ann", "ben"), ("cat", "dan")]
    store_round(storage, swiss, 0, pairs, {p: [p[0], p[1]] for p in pairs}, byes=(HOSTILE,))
    pairs = [("ann", "cat"), ("ben", HOSTILE)]
    store_round(storage, swiss, 1, pairs, {pairs[1]: [HOSTILE]}, byes=("dan",))
    field = tuple(f"entrant-{n:02d}" for n in range(1, 65))
    ko = round_tournament(
        KNOCKOUT_ID, field, format="knockout", knockout={"sets": 1, "max_sets": 1}
    )
    storage.add_tournament(ko)
    play_knockout(storage, ko)
    try:
        with serve(web_app(storage)) as url:
            yield url
    finally:
        storage.close()


@pytest.mark.parametrize("width", [1200, 360])
@pytest.mark.parametrize("name", list(PAGES))
def test_the_rounds_pages_load_cleanly_and_never_widen_the_window(
    rounds_url: str, watched: Watched, name: str, width: int
) -> None:
    page = watched.page
    page.set_viewport_size({"width": width, "height": 800})
    response = page.goto(rounds_url + PAGES[name])
    assert response is not None and response.status == 200
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    if name == "knockout":
        box = page.locator("div.bracket-scroll")
        sizes = box.evaluate("e => [e.scrollWidth, e.clientWidth]")
        assert sizes[0] > sizes[1]  # six stages and the champion: it scrolls, inside its box
        assert page.locator("svg.bracket text.entrant").count() >= 64 + 32
        box.focus()
        page.keyboard.press("ArrowRight")  # the scroll may be smooth: wait for it to move
        page.wait_for_function(
            "() => document.querySelector('div.bracket-scroll').scrollLeft > 0", timeout=5000
        )
    page.screenshot(path=artifacts_dir() / f"rounds-{name}-{width}.png", full_page=True)

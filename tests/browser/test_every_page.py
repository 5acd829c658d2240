"""Every page of the web face in Chromium at a laptop's width (1366 px) and a phone's (360 px):
never wider than the window on the phone (a wide table scrolls inside its own box), no
accessibility violation of a serious or critical impact by axe-core in the light palette or
the dark one, and a full-page screenshot of each kept as a test artifact
(``<page>-1366.png``, ``<page>-360.png``, ``<page>-360-dark.png``): docs/web.md, look and
accessibility.

The pages: the public ones over :mod:`tests.fakes.web`'s games, a Swiss and a knockout, the
course pages over :mod:`tests.fakes.course_site`'s courses (a student and the organizer signed
in through the forms, a bot registered), the error page, and the live pages following a real
referee with a match held at its gate (:mod:`tests.browser.live_harness`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final

import pytest
from playwright.sync_api import Page, expect

from domino_arena.sdk.rules import GAMES, make_game
from domino_arena.sdk.wire import game_to_proto
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.v1 import admin_pb2 as admin_pb
from tests.browser import live_harness
from tests.browser.conftest import Watched
from tests.browser.harness import serve
from tests.browser.live_harness import BOTS as LIVE_BOTS
from tests.browser.live_harness import Arena, Gate
from tests.browser.looks import look_at
from tests.fakes.analysed import analyse_stored, lost_by
from tests.fakes.course_site import ANONYMOUS, PUBLIC, PUBLIC_CUP, Courses, filled_courses
from tests.fakes.referee_server import WAIT
from tests.fakes.round_tournaments import play_knockout, round_tournament, store_round
from tests.fakes.web import BOTS, FORFEIT_ID, TOURNAMENT_ID, match_id_of, web_app

arena = live_harness.arena
"""The module's referee and web face (a fixture)."""

ANALYSED: Final = match_id_of("passing", 1)
"""A match analysed for both seats (its strip, marks and seat figures; its seats' bot pages
show their analysed games): :func:`every_page_site`."""
SWISS_ID: Final = "swiss-five"
KNOCKOUT_ID: Final = "ko-eight"
PAGES: Final = {
    "home": "/",
    **{f"standings-{game}": f"/games/{game}/standings" for game in GAMES},
    "tournaments": "/tournaments",
    "tournament": f"/tournaments/{TOURNAMENT_ID}",
    "swiss": f"/tournaments/{SWISS_ID}",
    "knockout": f"/tournaments/{KNOCKOUT_ID}",
    "bot": f"/bots/{BOTS[0]}",
    "matches": "/matches",
    "live-no-referee": "/live",
    **{f"match-{game}": f"/matches/{match_id_of(game, 0)}" for game in GAMES},
    "match-step": f"/matches/{match_id_of('moon', 0)}?step=5",
    "match-forfeit": f"/matches/{FORFEIT_ID}",
    "match-analysed": f"/matches/{ANALYSED}?step=5",
    "courses": "/courses",
    "course": f"/courses/{PUBLIC}",
    "course-anonymous": f"/courses/{ANONYMOUS}",
    "course-tournaments": f"/courses/{PUBLIC}/tournaments",
    "course-tournament": f"/tournaments/{PUBLIC_CUP}",
    "course-matches": f"/courses/{PUBLIC}/matches",
    "course-register": f"/courses/{PUBLIC}/register",
    "course-me-login": f"/courses/{PUBLIC}/me",
    "course-organizer-login": f"/courses/{PUBLIC}/organizer",
    "not-found": "/no/such/page",
}
"""Each page that a plain visit shows, by the name of its screenshots."""
FORMS: Final = ("course-registered", "course-me", "course-organizer")
"""The pages a form leads to (a bot registered, a student and the organizer signed in)."""


@dataclass(frozen=True)
class Site:
    """The web app over the filled storage, and the courses made in it."""

    url: str
    courses: Courses


@pytest.fixture(scope="module")
def every_page_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """:func:`filled_courses`' storage (the default course's games and two courses), plus a
    Swiss of five one round in and a knockout of eight played out, :data:`ANALYSED` and a game
    ada-bot lost analysed (My bot lists its mistakes), served by uvicorn."""
    folder = tmp_path_factory.mktemp("every-page")
    with filled_courses(folder) as (storage, courses):
        _add_rounds(storage)
        analyse_stored(storage, ANALYSED)
        lost, seat = lost_by(storage, "ada-bot", courses.matches[PUBLIC])
        analyse_stored(storage, lost, seats=[seat])
        with serve(web_app(storage)) as url:
            yield Site(url, courses)


def _add_rounds(storage: RatedStorage) -> None:
    five = ("ann", "ben", "cat", "dan", "eve")
    swiss = round_tournament(SWISS_ID, five, format="swiss", rounds=3, seeding=five)
    storage.add_tournament(swiss)
    pairs = [("ann", "ben"), ("cat", "dan")]
    store_round(storage, swiss, 0, pairs, {p: [p[0], p[1]] for p in pairs}, byes=("eve",))
    eight = tuple(f"entrant-{n}" for n in range(1, 9))
    knockout = round_tournament(
        KNOCKOUT_ID, eight, format="knockout", knockout={"sets": 1, "max_sets": 1}
    )
    storage.add_tournament(knockout)
    play_knockout(storage, knockout)


@pytest.mark.parametrize("name", list(PAGES))
def test_every_page_fits_a_phone_and_passes_axe(
    every_page_site: Site, watched: Watched, name: str
) -> None:
    page = watched.page
    response = page.goto(every_page_site.url + PAGES[name])
    assert response is not None
    if name == "not-found":
        assert response.status == 404
        problems = watched.watch.take()
        assert all("/no/such/page" in problem for problem in problems), problems
    else:
        assert response.status == 200
    expect(page.locator("main h1")).to_be_visible()
    wrong = look_at(page, name)
    assert wrong == [], "\n\n".join(wrong)


def _register(site: Site, page: Page) -> None:
    page.goto(f"{site.url}/courses/{PUBLIC}/register")
    page.get_by_label("Invite code").fill(site.courses.codes[PUBLIC])
    page.get_by_label("Bot name").fill("every-page-bot")
    page.get_by_label("Owner (your student id or address)").fill("every-page-student")
    page.get_by_role("button", name="Register").click()
    expect(page.locator(".issued")).to_be_visible()


def _sign_in_student(site: Site, page: Page) -> None:
    page.goto(f"{site.url}/courses/{PUBLIC}/me")
    page.get_by_label("Bot name").fill("ada-bot")
    page.get_by_label("Token").fill(site.courses.tokens["ada-bot"])
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("h1")).to_have_text("My bot: ada-bot")


def _sign_in_organizer(site: Site, page: Page) -> None:
    page.goto(f"{site.url}/courses/{PUBLIC}/organizer")
    page.get_by_label("Organizer token").fill(site.courses.organizer[PUBLIC])
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("table.owners")).to_be_visible()


OPEN: Final[dict[str, Callable[[Site, Page], None]]] = {
    "course-registered": _register,
    "course-me": _sign_in_student,
    "course-organizer": _sign_in_organizer,
}


@pytest.mark.parametrize("name", FORMS)
def test_the_pages_behind_the_forms_fit_a_phone_and_pass_axe(
    every_page_site: Site, watched: Watched, name: str
) -> None:
    OPEN[name](every_page_site, watched.page)
    wrong = look_at(watched.page, name)
    assert wrong == [], "\n\n".join(wrong)


def test_the_live_pages_fit_a_phone_and_pass_axe(arena: Arena, watched: Watched) -> None:
    """The live list, a live match held at its gate and the home page's live section, with a
    real referee; then the match is let go and played out."""
    page = watched.page
    game = make_game("straight")
    gate = Gate()
    arena.hold(gate)
    request = admin_pb.RunMatchRequest(
        game=game_to_proto(game), bots=LIVE_BOTS[: game.num_players], has_seed=True, seed=9
    )
    running = arena.referee.admin.RunMatch.future(request, timeout=WAIT * 6)
    match_id = gate.held()
    wrong: list[str] = []
    try:
        for name, path in (
            ("live", "/live"),
            ("live-match", f"/live/{match_id}"),
            ("home-live", "/"),
        ):
            page.goto(arena.url + path)
            expect(page.locator("main h1")).to_be_visible()
            if name == "live-match":
                expect(page.locator("#live")).to_have_attribute("data-followed", "yes")
            wrong += [f"{name}: {w}" for w in look_at(page, name)]
        page.goto("about:blank")  # the live page's stream closes before the match ends
    finally:
        gate.open()
        running.result()
    assert wrong == [], "\n\n".join(wrong)

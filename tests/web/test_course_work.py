"""Course work on the global pages (docs/web.md: courses): the pages of a course's tournament,
match and bot link the course; ``/matches`` filtered by a course's bot or tournament lists its
matches (a bot of an anonymous course stays hidden); the home page lists the active courses;
the long lists page."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.store.tables import DEFAULT_COURSE, now
from domino_arena.server.web import activity
from domino_arena.server.web.scoped import match_counts, tournament_counts
from tests.fakes.course_site import (
    ANONYMOUS,
    ANONYMOUS_BOTS,
    COURSE_START,
    HIDDEN,
    PUBLIC,
    PUBLIC_BOTS,
    SECRET_CUP,
    CourseSite,
    course_game,
)
from tests.fakes.store import a_match
from tests.fakes.web import TOURNAMENT_ID, a_tournament, web_app

CS101_LINK = {"name": PUBLIC, "title": "Intro to game bots", "url": f"/courses/{PUBLIC}"}
CS101_HTML = f'Course: <a href="/courses/{PUBLIC}">Intro to game bots</a>'


def test_a_course_s_tournament_match_and_bot_pages_link_the_course(
    course_site: CourseSite,
) -> None:
    client = course_site.client
    ada = PUBLIC_BOTS[0][0]
    for path in ("/tournaments/cs101-cup", "/matches/cs101-0", f"/bots/{ada}"):
        assert client.get("/api" + path).json()["course_link"] == CS101_LINK, path
        assert CS101_HTML in client.get(path).text, path
    secret = client.get(f"/api/tournaments/{SECRET_CUP}").json()["course_link"]
    assert secret == {"name": ANONYMOUS, "title": "The blind league", "url": "/courses/secret"}


def test_the_default_course_s_pages_and_a_house_bot_s_link_no_course(
    course_site: CourseSite,
) -> None:
    client = course_site.client
    for path in (f"/tournaments/{TOURNAMENT_ID}", "/matches/passing-0", "/bots/alice"):
        assert client.get("/api" + path).json()["course_link"] is None, path
        assert "Course: " not in client.get(path).text, path
    # house:random plays in every course: its page is no one course's.
    assert client.get("/api/bots/house:random").json()["course_link"] is None


def test_a_bot_s_chart_stays_a_drawing_beside_an_anonymous_course(
    course_site: CourseSite,
) -> None:
    """The public names are scrubbed from every page; a drawn chart is markup and stays so
    (escaped, it would show as SVG source text)."""
    page = course_site.client.get("/bots/ada-bot").text
    assert '<figure class="rating-chart" data-game="passing">\n<svg class="rating-chart"' in page
    assert "&lt;svg" not in page


def test_all_of_a_course_bot_s_matches_are_listed(course_site: CourseSite) -> None:
    client = course_site.client
    ada = PUBLIC_BOTS[0][0]
    assert f'href="/matches?bot={ada}"' in client.get(f"/bots/{ada}").text
    data = client.get(f"/api/matches?bot={ada}&per_page=100").json()
    stored = [course_site.storage.match(m) for m in course_site.courses.matches[PUBLIC]]
    expected = [m.id for m in stored if m is not None and ada in m.seats]
    assert sorted(m["id"] for m in data["matches"]) == sorted(expected)
    assert len(expected) == 4
    assert data["course_link"] == CS101_LINK
    assert data["filters"] == {"bot": ada, "game": None, "tournament": None, "course": None}
    assert CS101_HTML in client.get(f"/matches?bot={ada}").text


def test_matches_filtered_by_a_course_s_tournament_or_course(course_site: CourseSite) -> None:
    client = course_site.client
    cup = client.get(f"/api/matches?tournament={SECRET_CUP}").json()
    assert [m["id"] for m in cup["matches"]] == ["secret-0"]
    assert set(cup["matches"][0]["seats"]) == {"Bot 1", "Bot 2"}  # still aliases
    assert cup["course_link"]["name"] == ANONYMOUS
    # house:random: every course's matches, or one course's when it is named.
    every = client.get("/api/matches?bot=house:random&per_page=100").json()
    assert every["course_link"] is None and len(every["matches"]) == 4
    named = client.get(f"/api/matches?bot=house:random&course={PUBLIC}&per_page=100").json()
    assert {m["course"] for m in named["matches"]} == {PUBLIC} and len(named["matches"]) == 4
    other = client.get(f"/api/matches?bot=house:random&course={DEFAULT_COURSE}").json()
    assert other["matches"] == [] and other["course_link"] is None
    page = client.get(f"/matches?course={PUBLIC}").text
    assert f'<input type="hidden" name="course" value="{PUBLIC}">' in page
    # Unfiltered, the global list is still the default course's.
    assert {m["course"] for m in client.get("/api/matches").json()["matches"]} == {DEFAULT_COURSE}


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (f"bot={ANONYMOUS_BOTS[0][0]}", f"no bot is called {ANONYMOUS_BOTS[0][0]!r}"),
        (
            f"bot={ANONYMOUS_BOTS[1][0]}&course={ANONYMOUS}",
            f"no bot is called {ANONYMOUS_BOTS[1][0]!r}",
        ),
        ("tournament=no-such-cup", "no tournament has id 'no-such-cup'"),
        ("course=no-such-course", "no course is named 'no-such-course'"),
    ],
)
def test_a_filter_that_names_nothing_public_is_a_404(
    course_site: CourseSite, query: str, message: str
) -> None:
    answer = course_site.client.get(f"/api/matches?{query}")
    assert (answer.status_code, answer.json()["error"]) == (404, message)
    page = course_site.client.get(f"/matches?{query}")
    assert page.status_code == 404
    # It says what was asked for, and nothing else of the course.
    shown = page.text.replace(message.replace("'", "&#39;"), "")
    assert not [name for name in HIDDEN if name in shown]


def test_the_home_page_s_active_courses_are_those_of_the_window(
    course_site: CourseSite,
) -> None:
    storage = course_site.storage
    during = activity.home(storage, COURSE_START + dt.timedelta(days=1))
    assert [(c["name"], c["matches"]) for c in during["active_courses"]] == [
        (PUBLIC, 6),
        (ANONYMOUS, 4),
    ]
    first = during["active_courses"][0]
    assert (first["title"], first["url"], first["anonymous"]) == (
        "Intro to game bots",
        f"/courses/{PUBLIC}",
        False,
    )
    assert (during["active_days"], during["active_more"]) == (activity.ACTIVE_DAYS, False)
    later = COURSE_START + dt.timedelta(days=activity.ACTIVE_DAYS + 1)
    assert activity.home(storage, later)["active_courses"] == []


def test_the_course_counts_read_the_same_on_both_databases(rated_storage: RatedStorage) -> None:
    """The grouped counts of the home page and ``/courses`` (SQLite and PostgreSQL)."""
    for course in ("c1", "c2"):
        rated_storage.create_course(course)
    placed = [("c1", 0), ("c1", 1), ("c1", 2), ("c2", 3), (DEFAULT_COURSE, 4), ("c2", 5)]
    for n, (course, minute) in enumerate(placed):
        stored = dataclasses.replace(a_match(f"m{n}", minute=minute), course=course)
        rated_storage.save_match(stored)
    engine = rated_storage.engine
    since = a_match("x", minute=1).created
    assert activity.busiest(engine, since, 5) == [
        ("c1", 2, a_match("x", minute=2).created),
        ("c2", 2, a_match("x", minute=5).created),
    ]
    assert activity.busiest(engine, since, 1) == [("c1", 2, a_match("x", minute=2).created)]
    assert match_counts(engine, ["c1", DEFAULT_COURSE, "nope"]) == {"c1": 3, DEFAULT_COURSE: 1}
    rated_storage.add_tournament(dataclasses.replace(a_tournament("t"), id="t1", course="c2"))
    assert tournament_counts(engine, ["c1", "c2"]) == {"c2": 1}


# -- a referee whose only work is a course's --------------------------------------------------


@dataclass(frozen=True)
class CourseOnly:
    storage: RatedStorage
    client: TestClient


@pytest.fixture(scope="module")
def course_only(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CourseOnly]:
    """A referee with no match of the default course: 5 matches of ``cs101`` and 2 of an
    anonymous course, played in the last hour, and 12 tournaments of the default course."""
    path: Path = tmp_path_factory.mktemp("course-only") / "arena.db"
    storage = RatedStorage(f"sqlite:///{path}")
    storage.open()
    storage.create_course(PUBLIC, title="Intro to game bots")
    storage.create_course(ANONYMOUS, title="The blind league", anonymous=True)
    for course, bots in ((PUBLIC, PUBLIC_BOTS), (ANONYMOUS, ANONYMOUS_BOTS)):
        (invite,) = storage.create_invites(course, 1, uses=len(bots))
        for bot, owner in bots:
            storage.register_bot(invite.code, bot, owner)
    start = now() - dt.timedelta(hours=1)
    seats = (PUBLIC_BOTS[0][0], PUBLIC_BOTS[1][0])
    for n in range(5):
        at = start + dt.timedelta(minutes=n)
        storage.save_match(course_game(seats, f"recent-{n}", at, PUBLIC, 400 + n))
    hidden = (ANONYMOUS_BOTS[0][0], ANONYMOUS_BOTS[1][0])
    for n in range(2):
        at = start + dt.timedelta(minutes=10 + n)
        storage.save_match(course_game(hidden, f"hidden-{n}", at, ANONYMOUS, 500 + n))
    for n in range(12):
        made = start + dt.timedelta(seconds=n)
        storage.add_tournament(
            dataclasses.replace(a_tournament(f"cup {n}"), id=f"cup-{n}", created=made)
        )
    with TestClient(web_app(storage)) as client:
        yield CourseOnly(storage, client)
    storage.close()


def test_the_home_page_lists_a_busy_course_instead_of_no_matches(
    course_only: CourseOnly,
) -> None:
    client = course_only.client
    data = client.get("/api/").json()
    assert data["recent"] == []
    assert [(c["name"], c["matches"]) for c in data["active_courses"]] == [
        (PUBLIC, 5),
        (ANONYMOUS, 2),
    ]
    page = client.get("/").text
    assert "No matches." not in page
    assert "No matches outside the courses yet" in page
    row = f'<a href="/courses/{PUBLIC}">{PUBLIC}</a></td><td>Intro to game bots</td><td>5</td>'
    assert row in page
    assert not [name for name in HIDDEN if name in page + client.get("/api/").text]


def test_the_home_page_shows_the_latest_tournaments_and_links_the_rest(
    course_only: CourseOnly,
) -> None:
    data = course_only.client.get("/api/").json()
    shown = [t["id"] for t in data["tournaments"]]
    assert shown == [f"cup-{n}" for n in range(12 - activity.HOME_TOURNAMENTS, 12)]
    assert data["tournaments_more"] is True
    assert 'href="/tournaments">All tournaments</a>' in course_only.client.get("/").text


def test_the_tournaments_and_courses_lists_page(course_only: CourseOnly) -> None:
    client = course_only.client
    first = client.get("/api/tournaments?per_page=5").json()
    assert [t["id"] for t in first["tournaments"]] == [f"cup-{n}" for n in range(5)]
    assert (first["has_next"], first["total"], first["page"]) == (True, 12, 1)
    last = client.get("/api/tournaments?per_page=5&page=3").json()
    assert [t["id"] for t in last["tournaments"]] == ["cup-10", "cup-11"]
    assert last["has_next"] is False
    assert 'rel="next" href="?per_page=5&amp;page=2"' in client.get("/tournaments?per_page=5").text
    courses = client.get("/api/courses?per_page=2").json()
    assert [c["name"] for c in courses["courses"]] == [PUBLIC, DEFAULT_COURSE]
    assert (courses["has_next"], courses["total"]) == (True, 3)
    assert courses["courses"][0]["matches"] == 5
    rest = client.get("/api/courses?per_page=2&page=2").json()
    assert [(c["name"], c["matches"]) for c in rest["courses"]] == [(ANONYMOUS, 2)]
    assert client.get("/api/courses?per_page=0").status_code == 400

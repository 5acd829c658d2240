"""The course pages: the list, a course's leaderboard, tournaments and matches, and the global
pages' rule (they show the default course); anonymous courses' names on every public page."""

from __future__ import annotations

import datetime as dt
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from starlette.testclient import TestClient

from domino_arena.server.store.bots import BotState, StoredBot
from domino_arena.server.store.courses import StoredCourse
from domino_arena.server.store.tables import DEFAULT_COURSE
from domino_arena.server.web.scoped import PublicNames
from tests.fakes.course_site import (
    ANONYMOUS,
    ANONYMOUS_BOTS,
    BASELINE_RATING,
    HIDDEN,
    PUBLIC,
    PUBLIC_CUP,
    SECRET_CUP,
    SECRET_FORFEIT,
    CourseSite,
    json_keys,
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "web.md"


def test_the_courses_page_lists_every_course_with_its_counts(course_site: CourseSite) -> None:
    data = course_site.client.get("/api/courses").json()
    by_name = {c["name"]: c for c in data["courses"]}
    assert set(by_name) == {DEFAULT_COURSE, PUBLIC, ANONYMOUS}
    cs101 = by_name[PUBLIC]
    assert (cs101["title"], cs101["bots"], cs101["owners"]) == ("Intro to game bots", 2, 2)
    assert (cs101["tournaments"], cs101["matches"]) == (1, 6)
    assert cs101["baselines"] == [{"bot": "house:random", "rating": BASELINE_RATING}]
    assert by_name[ANONYMOUS]["anonymous"] is True
    page = course_site.client.get("/courses")
    assert page.status_code == 200
    assert 'href="/courses/cs101"' in page.text and "Intro to game bots" in page.text


def test_a_course_leaderboard_fits_its_own_games_holding_its_baseline(
    course_site: CourseSite,
) -> None:
    data = course_site.client.get(f"/api/courses/{PUBLIC}").json()
    assert data["course"]["name"] == PUBLIC
    (board,) = data["boards"]
    assert board["game"] == "passing"
    official = board["official"]
    assert official["games"] == 6
    rows = {row["bot"]: row for row in official["rows"]}
    assert set(rows) == {"ada-bot", "bea-bot", "house:random"}  # no bot of another course
    baseline = rows["house:random"]
    assert baseline["rating"] == pytest.approx(BASELINE_RATING)
    assert baseline["mark"] == "baseline, fixed at 1200"
    assert rows["ada-bot"]["mark"] is None
    assert official["fixed"] == [{"bot": "house:random", "rating": BASELINE_RATING}]
    page = course_site.client.get(f"/courses/{PUBLIC}")
    assert "baseline, fixed at 1200" in page.text
    assert "house:random held at 1200" in page.text


def test_a_course_with_no_games_says_so(course_site: CourseSite) -> None:
    course_site.storage.create_course("empty-course")
    assert course_site.client.get("/api/courses/empty-course").json()["boards"] == []
    assert (
        "No games played in this course yet" in course_site.client.get("/courses/empty-course").text
    )


def test_a_course_lists_its_tournaments_and_matches_only(course_site: CourseSite) -> None:
    data = course_site.client.get(f"/api/courses/{PUBLIC}/tournaments").json()
    assert [t["id"] for t in data["tournaments"]] == [PUBLIC_CUP]
    page = course_site.client.get(f"/courses/{PUBLIC}/tournaments")
    assert f'href="/tournaments/{PUBLIC_CUP}"' in page.text
    matches = course_site.client.get(f"/api/courses/{PUBLIC}/matches?per_page=100").json()
    assert sorted(m["id"] for m in matches["matches"]) == sorted(
        course_site.courses.matches[PUBLIC]
    )
    assert {m["course"] for m in matches["matches"]} == {PUBLIC}


@pytest.mark.parametrize(
    "path",
    ["/courses/nope", "/courses/nope/tournaments", "/courses/nope/matches", "/courses/nope/me"],
)
def test_an_unknown_course_is_a_404(course_site: CourseSite, path: str) -> None:
    api = course_site.client.get("/api" + path)
    assert api.status_code == 404
    assert api.json()["error"] == "no course is named 'nope'"
    assert course_site.client.get(path).status_code == 404


def test_the_global_pages_show_the_default_course(course_site: CourseSite) -> None:
    client = course_site.client
    tournaments = client.get("/api/tournaments").json()["tournaments"]
    assert {t["course"] for t in tournaments} == {DEFAULT_COURSE}
    home = client.get("/api/").json()
    assert {m["course"] for m in home["recent"]} == {DEFAULT_COURSE}
    assert {t["course"] for t in home["tournaments"]} == {DEFAULT_COURSE}
    matches = client.get("/api/matches?per_page=100").json()["matches"]
    assert matches and {m["course"] for m in matches} == {DEFAULT_COURSE}
    rows = client.get("/api/games/passing/standings").json()
    assert {r["bot"] for r in rows["rows"]} == {"alice", "bob"}
    assert {r["bot"] for r in rows["official"]["rows"]} == {"alice", "bob"}
    # A course's tournament and match keep their own pages.
    assert client.get(f"/api/tournaments/{PUBLIC_CUP}").status_code == 200
    assert client.get("/api/matches/cs101-0").json()["match"]["course"] == PUBLIC


# -- anonymous courses ----------------------------------------------------------------------


class Links(HTMLParser):
    def __init__(self, page: str) -> None:
        super().__init__()
        self.links: list[str] = []
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.links.append(href)


def _leaks(text: str) -> list[str]:
    return [name for name in HIDDEN if name in text]


def _crawl(client: TestClient, starts: list[str], most: int = 250) -> list[str]:
    """Every page linked from ``starts`` on this site (not the replay's steps, not static files),
    breadth first, at most ``most``; each page's HTML and JSON are checked for leaks."""
    seen: list[str] = []
    queue = list(starts)
    while queue and len(seen) < most:
        path = queue.pop(0)
        if path in seen:
            continue
        seen.append(path)
        page = client.get(path)
        assert page.status_code == 200, f"{path}: {page.status_code}"  # no link is broken
        assert not _leaks(page.text), f"{path} shows {_leaks(page.text)}"
        if not path.startswith("/api") and page.status_code == 200:
            api = client.get("/api" + path if path != "/" else "/api/")
            assert not _leaks(api.text), f"/api{path} shows {_leaks(api.text)}"
        for href in Links(page.text).links:
            url = urlsplit(urljoin("http://testserver" + path, href))
            if url.netloc != "testserver" or url.path.startswith("/static"):
                continue
            if "step=" in url.query:
                continue
            target = url.path + (f"?{url.query}" if url.query else "")
            if target not in seen:
                queue.append(target)
    return seen


def test_no_public_page_shows_a_real_name_of_an_anonymous_course(
    course_site: CourseSite,
) -> None:
    """By construction: every page reachable from the home page and the courses, and every
    page of the anonymous course's matches and tournament, HTML and JSON."""
    client = course_site.client
    secret = course_site.courses.matches[ANONYMOUS]
    starts = [
        "/",
        "/courses",
        f"/courses/{ANONYMOUS}",
        f"/courses/{ANONYMOUS}/tournaments",
        f"/courses/{ANONYMOUS}/matches",
        f"/tournaments/{SECRET_CUP}",
        "/live",
        "/tournaments",
        "/matches",
        *(f"/matches/{m}" for m in secret),
        *(f"/matches/{m}?step={s}" for m in secret for s in (0, 3)),
    ]
    visited = _crawl(client, starts)
    assert f"/matches/{SECRET_FORFEIT}" in visited
    # The aliases stand where the names were.
    data = client.get(f"/api/matches/{SECRET_FORFEIT}").json()
    assert set(data["match"]["seats"]) == {"Bot 1", "Bot 2"}
    assert "sent no answer" in data["match"]["detail"]
    assert any(f["reason"].endswith("sent no answer") for f in data["faults"])
    cup = client.get(f"/api/tournaments/{SECRET_CUP}").json()
    assert cup["name"] == "Cup of Bot 1"
    assert cup["entrants"] == ["Bot 1", "Bot 2"]
    assert {row["bot"] for row in cup["results"]} == {"Bot 1", "Bot 2"}


def test_an_anonymous_course_s_bot_has_no_public_page(course_site: CourseSite) -> None:
    name = ANONYMOUS_BOTS[0][0]
    assert course_site.client.get(f"/api/bots/{name}").status_code == 404
    assert course_site.client.get(f"/bots/{name}").status_code == 404
    assert course_site.client.get("/api/bots/ada-bot").status_code == 200


def test_aliases_are_shown_on_the_anonymous_leaderboard(course_site: CourseSite) -> None:
    data = course_site.client.get(f"/api/courses/{ANONYMOUS}").json()
    (board,) = data["boards"]
    assert {row["bot"] for row in board["official"]["rows"]} == {"Bot 1", "Bot 2"}
    page = course_site.client.get(f"/courses/{ANONYMOUS}").text
    assert not re.search(r'href="/bots/', page)  # an alias has no bot page to link


def test_the_scrubber_replaces_names_in_keys_values_and_text() -> None:
    at = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    course = StoredCourse("c", "C", at, at, anonymous=True)
    bots = [
        StoredBot("ann", BotState.ENABLED, at, at, "c", "ann@school"),
        StoredBot("ann-2", BotState.DELETED, at + dt.timedelta(1), None, "c", "ann@school"),
    ]
    names = PublicNames.of([course], lambda _: bots)
    scrubbed = names.scrub({"ann-2": ["ann beat ann-2", 3, None], "by": "ann@school"})
    assert scrubbed == {"Bot 2": ["Bot 1 beat Bot 2", 3, None], "by": "Student 1"}
    assert names.hidden("ann-2") and not names.hidden("house:random")
    assert PublicNames.of([], lambda _: []).scrub({"ann": "ann"}) == {"ann": "ann"}


@pytest.mark.parametrize(
    "path",
    [
        "/courses",
        f"/courses/{PUBLIC}",
        f"/courses/{PUBLIC}/tournaments",
        f"/courses/{PUBLIC}/matches",
    ],
)
def test_every_course_json_key_is_documented(course_site: CourseSite, path: str) -> None:
    documented = set(re.findall(r"`([a-z_]+)`", DOCS.read_text(encoding="utf-8")))
    answer = course_site.client.get("/api" + path).json()
    assert sorted(json_keys(answer) - documented) == []


def test_the_crawl_reaches_the_anonymous_course_s_pages(course_site: CourseSite) -> None:
    visited = _crawl(course_site.client, ["/courses"], most=60)
    assert f"/courses/{ANONYMOUS}/matches" in visited
    assert len(visited) >= 20

"""The student's "My bot" page (server/web/my_bot.py): the official standing the leaderboard
shows, rank of all, games, the live Elo chart named as such, and faults grouped by reason with a
link to the replay of each step."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Final

import pytest
from starlette.testclient import TestClient

from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.web.app import create_app
from domino_arena.server.web.my_bot import SHOWN_PER_REASON
from domino_arena.server.web.sessions import RateLimit
from tests.fakes.bots import CRASH_MESSAGE
from tests.fakes.course_site import PUBLIC, Courses, add_crashes, filled_courses
from tests.fakes.web import schedule_length

CSRF_FIELD: Final = re.compile(r'name="csrf" value="([0-9a-f]{64})"')
CRASHES: Final = 8
"""Games in which ada-bot crashes 3 times (more faults than a group links)."""
REASON: Final = f"ValueError: {CRASH_MESSAGE}"


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RatedStorage, Courses]]:
    with filled_courses(tmp_path_factory.mktemp("my-bot")) as (storage, made):
        add_crashes(storage, "ada-bot", "bea-bot", CRASHES)
        yield storage, made


def signed_in(filled: tuple[RatedStorage, Courses], bot: str, token: str = "") -> TestClient:
    """A client signed in to ``bot``'s page of the public course (``token``: the course
    fake's token of the bot by default)."""
    storage, courses = filled
    app = create_app(storage, tournament_total=schedule_length, rate_limit=RateLimit(failures=50))
    client = TestClient(app, follow_redirects=False)
    path = f"/courses/{PUBLIC}/me"
    found = CSRF_FIELD.search(client.get(path).text)
    assert found is not None
    answer = client.post(
        path, data={"csrf": found.group(1), "bot": bot, "token": token or courses.tokens[bot]}
    )
    assert answer.status_code == 303, answer.text
    return client


def test_my_bot_shows_the_leaderboard_s_rating_and_rank(
    filled: tuple[RatedStorage, Courses],
) -> None:
    client = signed_in(filled, "ada-bot")
    data = client.get(f"/api/courses/{PUBLIC}/me").json()
    board = client.get(f"/api/courses/{PUBLIC}").json()["boards"][0]
    rows = board["official"]["rows"]
    (row,) = [r for r in rows if r["bot"] == "ada-bot"]
    (standing,) = data["standings"]
    shown = ("bot", "rating", "text", "interval_text", "rank", "provisional", "note", "games")
    assert {key: standing[key] for key in shown} == {key: row[key] for key in shown}
    ranked = sum(1 for r in rows if r["rank"] is not None)
    assert (standing["game"], standing["title"], standing["of"]) == (
        "passing",
        board["title"],
        ranked,
    )
    assert standing["games"] == 4 + CRASHES, "the course's games and the crashed ones"
    page = client.get(f"/courses/{PUBLIC}/me").text
    rank = "not ranked" if standing["rank"] is None else f"{standing['rank']} of {ranked}"
    assert f'<td class="rank">{rank}</td>' in page
    assert f'<td class="rating">{html.escape(standing["text"])}</td>' in page
    (chart,) = data["rating_history"]
    assert chart["game"] == "passing" and chart["svg"].startswith("<svg")
    assert "the live Elo after each of its" in page


def test_faults_are_grouped_by_reason_with_a_link_to_each_step(
    filled: tuple[RatedStorage, Courses],
) -> None:
    client = signed_in(filled, "ada-bot")
    data = client.get(f"/api/courses/{PUBLIC}/me").json()
    (group,) = data["fault_groups"]
    assert (group["kind"], group["label"], group["reason"]) == ("bot_error", "bot error", REASON)
    assert (group["count"], group["forfeits"]) == (3 * CRASHES, CRASHES)
    assert data["faults_total"] == 3 * CRASHES
    places = group["matches"]
    assert [p["match_id"] for p in places] == [
        f"{PUBLIC}-crash-{n}" for n in range(CRASHES - 1, CRASHES - 1 - len(places), -1)
    ]
    assert sum(len(p["steps"]) for p in places) == group["shown"] == SHOWN_PER_REASON
    newest = places[0]
    assert len(newest["steps"]) == 3, "each crashed game forfeits at its third bot error"
    first = newest["steps"][0]
    assert first["link"] == f"/matches/{newest['match_id']}?step={first['step']}#replay"
    replay = client.get(first["link"].partition("#")[0])
    assert replay.status_code == 200
    assert f"ValueError: {CRASH_MESSAGE}" in replay.text
    page = client.get(f"/courses/{PUBLIC}/me").text
    assert page.count(f"bot error: {REASON}") == 1, "one row for the 24 faults"
    assert f"and {3 * CRASHES - SHOWN_PER_REASON} more" in page
    assert f'href="{first["link"]}"' in page


def test_a_bot_without_games_says_it_is_not_rated(filled: tuple[RatedStorage, Courses]) -> None:
    storage, courses = filled
    token = storage.register_bot(courses.codes[PUBLIC], "new-bot", "newcomer").token
    client = signed_in(filled, "new-bot", token)
    data = client.get(f"/api/courses/{PUBLIC}/me").json()
    assert (data["standings"], data["rating_history"], data["fault_groups"]) == ([], [], [])
    page = client.get(f"/courses/{PUBLIC}/me").text
    assert "Not rated yet" in page and "No faults charged to this bot." in page

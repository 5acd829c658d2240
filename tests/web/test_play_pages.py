"""The person's pages (server/web/people): the form and its checks, CSRF, the owner check, the
bounds, and the moves, over a real referee that seats people (its TableService) and plays house
bots, with the web face served by uvicorn and a real HTTP client.

The checks that come before the referee is asked (signed in? CSRF? each field) are also made
without a referee, where the form says that none is connected.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from typing import Any

import httpx2 as httpx
import pytest
from starlette.testclient import TestClient

from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.web.app import create_app
from domino_arena.server.web.params import WebError
from domino_arena.server.web.people import form as play_form
from domino_arena.server.web.people.registry import PersonMatches
from domino_arena.server.web.people.tables import Person
from domino_arena.server.web.sessions import RateLimit
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.course_site import PUBLIC, Courses, filled_courses
from tests.fakes.people import COURSE, OTHER_BOT, STUDENT_BOT, PlaySite, play_site
from tests.fakes.referee_server import WAIT, RawBot, first_legal

CSRF_FIELD = re.compile(r'name="csrf" value="([0-9a-f]{64})"')
PLAY = f"/courses/{PUBLIC}/play"
FORM = f"/courses/{PUBLIC}/register"
"""A course page that always shows a form: its CSRF token is the play form's too (one cookie
for the course pages)."""


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RatedStorage, Courses]]:
    with filled_courses(tmp_path_factory.mktemp("play-forms")) as made:
        yield made


@pytest.fixture
def client(filled: tuple[RatedStorage, Courses]) -> TestClient:
    """The web face without a referee (the form's own checks come first)."""
    app = create_app(filled[0], rate_limit=RateLimit(failures=1000))
    return TestClient(app, follow_redirects=False)


def csrf_of(client: TestClient, path: str) -> str:
    page = client.get(path)
    assert page.status_code == 200, page.text
    found = CSRF_FIELD.search(page.text)
    assert found is not None, page.text
    return found.group(1)


def sign_in_student(client: TestClient, courses: Courses, bot: str = "ada-bot") -> None:
    path = f"/courses/{PUBLIC}/me"
    answer = client.post(
        path, data={"csrf": csrf_of(client, path), "bot": bot, "token": courses.tokens[bot]}
    )
    assert answer.status_code == 303, answer.text


def sign_in_organizer(client: TestClient, courses: Courses) -> None:
    path = f"/courses/{PUBLIC}/organizer"
    token = courses.organizer[PUBLIC]
    answer = client.post(path, data={"csrf": csrf_of(client, path), "token": token})
    assert answer.status_code == 303, answer.text


def test_the_form_says_how_to_sign_in_to_a_signed_out_browser(client: TestClient) -> None:
    page = client.get(PLAY)
    assert page.status_code == 200
    assert "Sign in first" in page.text
    assert f'href="/courses/{PUBLIC}/me"' in page.text
    assert f'href="/courses/{PUBLIC}/organizer"' in page.text
    assert 'name="seat"' not in page.text
    assert client.get("/courses/nowhere/play").status_code == 404


def test_the_student_s_and_the_organizer_s_pages_link_the_form(
    client: TestClient, filled: tuple[RatedStorage, Courses]
) -> None:
    sign_in_student(client, filled[1])
    assert f'href="{PLAY}"' in client.get(f"/courses/{PUBLIC}/me").text
    sign_in_organizer(client, filled[1])
    assert f'href="{PLAY}"' in client.get(f"/courses/{PUBLIC}/organizer").text


def test_without_a_referee_the_form_says_none_can_seat_people(
    client: TestClient, filled: tuple[RatedStorage, Courses]
) -> None:
    sign_in_student(client, filled[1])
    page = client.get(PLAY)
    assert "You play as" in page.text and ">ada<" in page.text
    assert "cannot seat people" in page.text


def test_a_post_without_the_csrf_token_is_refused(
    client: TestClient, filled: tuple[RatedStorage, Courses]
) -> None:
    sign_in_student(client, filled[1])
    csrf_of(client, FORM)  # the cookie, but not the field
    answer = client.post(PLAY, data={"game": "moon", "seat": "0", "deals": "1"})
    assert answer.status_code == 403 and "csrf" in answer.text
    answer = client.post(PLAY, data={"csrf": "0" * 64, "game": "moon"})
    assert answer.status_code == 403


def test_a_post_signed_out_is_refused_with_where_to_sign_in(client: TestClient) -> None:
    token = csrf_of(client, FORM)
    answer = client.post(PLAY, data={"csrf": token, "game": "moon", "seat": "0", "deals": "1"})
    assert answer.status_code == 401
    assert f"/courses/{PUBLIC}/me" in answer.text


GOOD = {"game": "moon", "seat": "1", "deals": "1", "opponent_1": "house:random", "opponent_2": "x"}


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"game": "chess"}, "game: expected one of"),
        ({"seat": "3"}, "seat: expected 0 to 2"),
        ({"seat": "-1"}, "seat: expected 0 to 2"),
        ({"deals": "2"}, "deals: expected 1, 3 or 0"),
        ({"opponent_2": ""}, "opponent 2: choose a bot"),
        ({"opponent_1": "b" * 81}, "opponent 1: choose a bot"),
    ],
)
def test_each_bad_field_is_named(
    client: TestClient,
    filled: tuple[RatedStorage, Courses],
    change: dict[str, str],
    named: str,
) -> None:
    sign_in_student(client, filled[1])
    token = csrf_of(client, FORM)
    answer = client.post(PLAY, data={"csrf": token, **GOOD, **change})
    assert answer.status_code == 400, answer.text
    assert named in answer.text
    assert 'role="alert"' in answer.text  # said on the form, which is shown again


def test_an_organizer_s_shown_name_is_checked(
    client: TestClient, filled: tuple[RatedStorage, Courses]
) -> None:
    sign_in_organizer(client, filled[1])
    token = csrf_of(client, FORM)
    answer = client.post(PLAY, data={"csrf": token, **GOOD, "name": "<b>me</b>"})
    assert answer.status_code == 400
    assert "name: 1 to 64 letters" in answer.text
    assert "<b>me</b>" not in answer.text and "&lt;b&gt;me&lt;/b&gt;" in answer.text


def test_an_unknown_match_is_a_404_and_its_moves_need_the_csrf_token(client: TestClient) -> None:
    assert client.get("/play/nope").status_code == 404
    assert client.get("/api/play/nope").status_code == 404
    assert client.get("/api/play/nope/events").status_code == 404
    assert client.post("/play/nope/act", data={"action": "pass"}).status_code == 403
    assert client.post("/play/nope/other", data={"action": "pass"}).status_code == 405


def test_the_bounds_are_per_person_and_in_all() -> None:
    matches = PersonMatches(per_person=1, in_all=2)
    ada, bea, cy = (Person(PUBLIC, "student", name, name) for name in ("ada", "bea", "cy"))
    with matches.reserve(ada):
        with pytest.raises(WebError) as mine, matches.reserve(ada):
            pass
        assert mine.value.status == 429
        assert "the most one person may (1)" in mine.value.message
        with matches.reserve(bea):
            with pytest.raises(WebError) as everyone, matches.reserve(cy):
                pass
            assert everyone.value.status == 503
            assert "plays 2 for people now" in everyone.value.message
    with matches.reserve(cy):  # the places are given back
        assert matches.running() == 1


# -- over a real referee that seats people ----------------------------------------------------


@pytest.fixture(scope="module")
def referee_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlaySite]:
    with play_site(tmp_path_factory.mktemp("play-referee"), per_person=1) as made:
        yield made


def browser(site: PlaySite) -> httpx.Client:
    """A browser of its own (its own cookies), never through a proxy."""
    return httpx.Client(base_url=site.url, follow_redirects=False, trust_env=False, timeout=WAIT)


def signed_in(site: PlaySite, bot: str = STUDENT_BOT) -> httpx.Client:
    client = browser(site)
    me = f"/courses/{COURSE}/me"
    token = CSRF_FIELD.search(client.get(me).text)
    assert token is not None
    answer = client.post(me, data={"csrf": token.group(1), "bot": bot, "token": site.tokens[bot]})
    assert answer.status_code == 303, answer.text
    return client


def start_match(
    client: httpx.Client, game: str = "moon", opponent: str = "house:random"
) -> httpx.Response:
    path = f"/courses/{COURSE}/play"
    form = client.get(path, params={"game": game})
    assert form.status_code == 200, form.text
    token = CSRF_FIELD.search(form.text)
    assert token is not None, form.text
    players = play_form.GAMES[game].num_players
    opponents = {f"opponent_{i}": opponent for i in range(1, players)}
    return client.post(
        path, data={"csrf": token.group(1), "game": game, "seat": "0", "deals": "1", **opponents}
    )


def view_at_turn(client: httpx.Client, match_id: str) -> dict[str, Any]:
    """The person's view once it is their turn (read from the event stream)."""
    with client.stream("GET", f"/api/play/{match_id}/events") as stream:
        for line in stream.iter_lines():
            if line.startswith("data: "):
                view: dict[str, Any] = json.loads(line.removeprefix("data: "))
                if view["state"] in ("turn", "over"):
                    return view
    raise AssertionError("the stream ended before the person's turn")


def test_the_form_lists_the_opponents_and_the_clock(referee_site: PlaySite) -> None:
    client = signed_in(referee_site)
    page = client.get(f"/courses/{COURSE}/play", params={"game": "moon"})
    assert page.status_code == 200
    assert 'value="house:random"' in page.text and 'value="house:greedy"' in page.text
    assert page.text.count('name="opponent_') == 2  # Moon: two other seats
    assert "s a move" in page.text  # the course's human clock


def test_a_match_is_its_owner_s_only_and_an_illegal_action_names_the_legal_ones(
    referee_site: PlaySite,
) -> None:
    # The opponent is the student's own bot, which plays until the test holds it: once the
    # person has moved, it is not their turn until the test says so.
    hold = threading.Event()

    def held(bot: RawBot, request: pb.ActionRequest) -> None:
        if not hold.is_set():
            first_legal(bot, request)

    referee_site.referee.connect(STUDENT_BOT, referee_site.tokens[STUDENT_BOT], policy=held)
    ada = signed_in(referee_site)
    answer = start_match(ada, "straight-2p", STUDENT_BOT)
    assert answer.status_code == 303, answer.text
    table = answer.headers["location"]
    match_id = table.rsplit("/", 1)[1]
    page = ada.get(table)
    assert page.status_code == 200 and page.headers["cache-control"] == "no-store"
    assert "person" in page.text and "bot" in page.text
    csrf = re.search(r'data-csrf="([0-9a-f]{64})"', page.text)  # the table's own token
    assert csrf is not None
    # Another session (another student, or nobody) does not see it, nor act in it.
    for other in (signed_in(referee_site, OTHER_BOT), browser(referee_site)):
        for path in (table, f"/api{table}", f"/api{table}/events"):
            assert other.get(path).status_code == 404, path
        own = CSRF_FIELD.search(other.get(f"/courses/{COURSE}/register").text)
        assert own is not None
        # With its own CSRF token (for the course pages' cookie): not this page's cookie.
        refused = other.post(f"{table}/act", data={"csrf": own.group(1), "action": "pass"})
        assert refused.status_code in (403, 404)
    view = view_at_turn(ada, match_id)
    assert view["state"] == "turn", view["status"]
    legal = [a["action"] for a in view["legal"]]
    wrong = ada.post(f"{table}/act", data={"csrf": csrf.group(1), "action": "bid 5"})
    assert wrong.status_code == 400
    message = wrong.json()["error"]
    assert "is not legal now" in message and all(a in message for a in legal)
    garbled = ada.post(f"{table}/act", data={"csrf": csrf.group(1), "action": "jump"})
    assert garbled.status_code == 400 and "legal now" in garbled.json()["error"]
    no_csrf = ada.post(f"{table}/act", data={"action": legal[0]})
    assert no_csrf.status_code == 403
    hold.set()
    play = next(a for a in legal if a.startswith("play"))  # then the bot is to move
    done = ada.post(f"{table}/act", data={"csrf": csrf.group(1), "action": play})
    assert done.status_code == 204
    again = ada.post(f"{table}/act", data={"csrf": csrf.group(1), "action": play})
    assert again.status_code == 400 and "not your turn" in again.json()["error"]
    # One match a person here (per_person=1): a second is refused, naming the bound.
    second = start_match(ada)
    assert second.status_code == 429
    assert "the most one person may (1)" in second.text

"""The organizer's Disable / Enable of an owner on the web (server/web/owner_switch.py): through
the referee's admin API when the web face follows one (the owner's bots' streams close at once),
in the storage when it follows none; refused without the session or the CSRF field, for an
unknown owner or another course's, each refusal one escaped line counted by the rate limit."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass

import grpc
import httpx2 as httpx
import pytest
from starlette.testclient import TestClient

from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.net.admin_owners import OWNER_DISABLED
from domino_arena.server.store.bots import BotCheck
from domino_arena.server.web.app import create_app
from domino_arena.server.web.live import LiveSource
from domino_arena.server.web.owner_switch import NEXT_HELLO, OrganizerTokens
from domino_arena.server.web.sessions import RateLimit
from tests.fakes.course_site import ANONYMOUS, ANONYMOUS_BOTS, PUBLIC, Courses, filled_courses
from tests.fakes.referee_server import Referee
from tests.fakes.web import schedule_length

CSRF_FIELD = re.compile(r'name="csrf" value="([0-9a-f]{64})"')
ORGANIZER = f"/courses/{PUBLIC}/organizer"
SWITCH = ORGANIZER + "/owners"


@dataclass(frozen=True)
class Site:
    storage: RatedStorage
    courses: Courses
    referee: Referee

    @contextlib.contextmanager
    def client(self, *, live: bool = False, limit: RateLimit | None = None) -> Iterator[TestClient]:
        source = LiveSource(self.referee.address, lobby_seconds=0.0) if live else None
        app = create_app(
            self.storage, tournament_total=schedule_length, live=source, rate_limit=limit
        )
        with TestClient(app, follow_redirects=False) as client:
            yield client


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with filled_courses(tmp_path_factory.mktemp("owners")) as (storage, made):
        referee = Referee(storage)
        try:
            yield Site(storage, made, referee)
        finally:
            referee.close()


@pytest.fixture
def client(site: Site) -> Iterator[TestClient]:
    """A web face that follows no referee."""
    with site.client() as client:
        yield client


def csrf_of(client: TestClient, path: str = ORGANIZER) -> str:
    page = client.get(path)
    assert page.status_code == 200, page.text
    found = CSRF_FIELD.search(page.text)
    assert found is not None
    return found.group(1)


def sign_in(client: TestClient, site: Site, course: str = PUBLIC) -> None:
    path = f"/courses/{course}/organizer"
    token = csrf_of(client, path)
    answer = client.post(path, data={"csrf": token, "token": site.courses.organizer[course]})
    assert answer.status_code == 303


def switch(client: TestClient, owner: str, action: str, path: str = SWITCH) -> httpx.Response:
    return client.post(path, data={"csrf": csrf_of(client), "owner": owner, "action": action})


def state_of(client: TestClient, owner: str) -> bool:
    data = client.get("/api" + ORGANIZER).json()
    found: bool = next(o["enabled"] for o in data["owners"] if o["owner"] == owner)
    return found


def test_disable_then_enable_round_trip_without_a_referee(client: TestClient, site: Site) -> None:
    sign_in(client, site)
    token = site.courses.tokens["bea-bot"]
    page = client.get(ORGANIZER).text
    assert NEXT_HELLO.split(":")[0] in page  # the page says what "disable" does here
    assert 'value="disable"' in page and ">Disable</button>" in page
    answer = switch(client, "bea", "disable")
    assert answer.status_code == 303
    assert answer.headers["location"] == ORGANIZER + "#owners"
    assert state_of(client, "bea") is False
    assert site.storage.check_bot("bea-bot", token) == BotCheck.OWNER_DISABLED
    assert ">Enable</button>" in client.get(ORGANIZER).text
    assert switch(client, "bea", "enable").status_code == 303
    assert state_of(client, "bea") is True
    assert site.storage.check_bot("bea-bot", token) == BotCheck.OK


def test_without_the_csrf_field_nothing_changes(client: TestClient, site: Site) -> None:
    sign_in(client, site)
    answer = client.post(SWITCH, data={"owner": "bea", "action": "disable"})
    assert answer.status_code == 403 and "csrf" in answer.text
    assert state_of(client, "bea") is True


def test_without_the_session_nothing_changes(client: TestClient, site: Site) -> None:
    answer = switch(client, "bea", "disable")
    assert answer.status_code == 401
    assert f"not signed in as the organizer of {PUBLIC}" in answer.text
    sign_in(client, site)  # a session of this course opens no other course
    other = switch(
        client, ANONYMOUS_BOTS[0][1], "disable", f"/courses/{ANONYMOUS}/organizer/owners"
    )
    assert other.status_code == 401
    assert state_of(client, "bea") is True


def test_an_unknown_owner_or_another_course_s_is_one_escaped_line(
    client: TestClient, site: Site
) -> None:
    sign_in(client, site)
    unknown = switch(client, "<b>nobody</b>", "disable")
    assert unknown.status_code == 404
    assert f"course &#39;{PUBLIC}&#39; has no owner named &#39;&lt;b&gt;nobody" in unknown.text
    assert "<b>nobody" not in unknown.text
    foreign = ANONYMOUS_BOTS[0][1]
    theirs = switch(client, foreign, "disable")
    assert theirs.status_code == 404 and "has no owner named" in theirs.text
    stored = site.storage.owner(ANONYMOUS, foreign)
    assert stored is not None and stored.enabled
    bad = switch(client, "bea", "delete")
    assert bad.status_code == 400 and "action: expected disable or enable" in bad.text


def test_refusals_count_against_the_rate_limit(site: Site) -> None:
    with site.client(limit=RateLimit(failures=2)) as client:
        sign_in(client, site)
        assert switch(client, "nobody", "disable").status_code == 404
        assert switch(client, "nobody", "enable").status_code == 404
        assert switch(client, "bea", "disable").status_code == 429
        assert state_of(client, "bea") is True


def test_with_a_referee_the_owner_s_bots_stop_at_once(site: Site) -> None:
    """The web face calls the admin API's DisableOwner with the organizer's token: the owner's
    connected bot's stream is closed there and then, and its token is refused until enabled."""
    token = site.courses.tokens["ada-bot"]
    bot = site.referee.connect("ada-bot", token, policy=None)
    with site.client(live=True) as client:
        sign_in(client, site)
        page = client.get(ORGANIZER).text
        assert NEXT_HELLO.split(":")[0] not in page
        assert switch(client, "ada", "disable").status_code == 303
        end = bot.wait_end()
        assert end.code is grpc.StatusCode.UNAUTHENTICATED
        assert end.details == OWNER_DISABLED.format(owner="ada", name="ada-bot")
        assert state_of(client, "ada") is False
        assert site.storage.check_bot("ada-bot", token) == BotCheck.OWNER_DISABLED
        assert switch(client, "ada", "enable").status_code == 303
        assert state_of(client, "ada") is True
    again = site.referee.connect("ada-bot", token, policy=None)
    again.close()


def test_an_unreachable_referee_changes_nothing(site: Site) -> None:
    app = create_app(site.storage, live=LiveSource("127.0.0.1:1"))
    with TestClient(app, follow_redirects=False) as client:
        sign_in(client, site)
        answer = switch(client, "bea", "disable")
        assert answer.status_code == 503
        assert "cannot be reached" in answer.text and "is unchanged" in answer.text
        assert state_of(client, "bea") is True


def test_the_held_token_is_the_current_one_and_expires() -> None:
    now = [0.0]
    tokens = OrganizerTokens(seconds=10, clock=lambda: now[0])
    tokens.keep(PUBLIC, "stamp-1", "token-1")
    assert tokens.token(PUBLIC, "stamp-1") == "token-1"
    assert tokens.token(PUBLIC, "stamp-0") is None  # a rotated token's session
    now[0] = 10.0
    assert tokens.token(PUBLIC, "stamp-1") is None

"""The course forms: registration, the student's own bot, the organizer's view; their sessions,
CSRF tokens and rate limit."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2 as httpx
import pytest
from starlette.testclient import TestClient

from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.store.bots import BotCheck
from domino_arena.server.store.courses import INVITE_REFUSED
from domino_arena.server.web.app import create_app
from domino_arena.server.web.forms import BOT_REFUSED, NOT_CONNECTED, ORGANIZER_REFUSED
from domino_arena.server.web.params import WebError
from domino_arena.server.web.sessions import MAX_FORM_BYTES, RateLimit
from domino_arena.server.web.views import WebStorage
from tests.fakes.course_site import (
    ANONYMOUS,
    ANONYMOUS_BOTS,
    PUBLIC,
    SECRET_FORFEIT,
    Courses,
    filled_courses,
    json_keys,
)
from tests.fakes.web import schedule_length

DOCS = Path(__file__).resolve().parents[2] / "docs" / "web.md"
CSRF_FIELD = re.compile(r'name="csrf" value="([0-9a-f]{64})"')


class Clock:
    """A clock the test moves by hand (no sleeping)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass(frozen=True)
class Forms:
    storage: RatedStorage
    courses: Courses
    clock: Clock
    limit: RateLimit

    def client(self, base_url: str = "http://testserver") -> TestClient:
        app = create_app(self.storage, tournament_total=schedule_length, rate_limit=self.limit)
        return TestClient(app, base_url=base_url, follow_redirects=False)


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RatedStorage, Courses]]:
    with filled_courses(tmp_path_factory.mktemp("forms")) as made:
        yield made


@pytest.fixture
def forms(filled: tuple[RatedStorage, Courses]) -> Forms:
    clock = Clock()
    return Forms(filled[0], filled[1], clock, RateLimit(failures=50, clock=clock))


def csrf_of(client: TestClient, path: str) -> str:
    """The form's CSRF token (the GET also sets the csrf cookie in the client)."""
    page = client.get(path)
    assert page.status_code == 200, page.text
    found = CSRF_FIELD.search(page.text)
    assert found is not None
    return found.group(1)


def post(client: TestClient, path: str, form: str | None = None, **fields: str) -> httpx.Response:
    """POST ``fields`` to ``path`` with the CSRF token of the page ``form`` (default: path)."""
    token = csrf_of(client, form or path)
    return client.post(path, data={"csrf": token, **fields})


# -- registration ---------------------------------------------------------------------------


def test_registration_shows_the_token_once_and_the_token_works(forms: Forms) -> None:
    client = forms.client()
    path = f"/courses/{PUBLIC}/register"
    answer = post(client, path, code=forms.courses.codes[PUBLIC], bot="cat-bot", owner="cat")
    assert answer.status_code == 200
    assert answer.headers["cache-control"] == "no-store"
    assert "Copy it now, it is shown once." in answer.text
    token = re.search(r'<code class="token" id="token">([0-9a-f]+)</code>', answer.text)
    assert token is not None
    assert forms.storage.check_bot("cat-bot", token.group(1)) == BotCheck.OK
    stored = forms.storage.bot("cat-bot")
    assert stored is not None and (stored.course, stored.owner) == (PUBLIC, "cat")


@pytest.mark.parametrize(
    "code",
    [
        "nonsense",
        f"{PUBLIC}:000000000000:{'0' * 64}",
        "from-the-other-course",  # replaced below by the anonymous course's real code
    ],
)
def test_a_refused_code_gets_one_message(forms: Forms, code: str) -> None:
    if code == "from-the-other-course":
        code = forms.courses.codes[ANONYMOUS]
    client = forms.client()
    answer = post(client, f"/courses/{PUBLIC}/register", code=code, bot="dog-bot", owner="dog")
    assert answer.status_code == 400
    assert INVITE_REFUSED in answer.text
    assert forms.storage.bot("dog-bot") is None


def test_a_bad_name_or_a_taken_one_says_which_field(forms: Forms) -> None:
    client = forms.client()
    path = f"/courses/{PUBLIC}/register"
    code = forms.courses.codes[PUBLIC]
    taken = post(client, path, code=code, bot="ada-bot", owner="eve")
    assert taken.status_code == 400 and "bot name:" in taken.text
    bad = post(client, path, code=code, bot="ok-name", owner="bad owner!")
    assert bad.status_code == 400 and "owner:" in bad.text


def test_a_post_without_the_csrf_token_is_refused(forms: Forms) -> None:
    client = forms.client()
    path = f"/courses/{PUBLIC}/register"
    csrf_of(client, path)  # the cookie is there; the field is not
    answer = client.post(path, data={"code": forms.courses.codes[PUBLIC], "bot": "x", "owner": "y"})
    assert answer.status_code == 403
    assert "csrf" in answer.text
    other = forms.client()  # a field from another browser's page
    token = csrf_of(client, path)
    assert other.post(path, data={"csrf": token, "code": "x"}).status_code == 403


def test_failed_form_posts_are_rate_limited_per_address(forms: Forms) -> None:
    limit = RateLimit(failures=3, seconds=60, clock=forms.clock)
    limited = Forms(forms.storage, forms.courses, forms.clock, limit)
    client = limited.client()
    path = f"/courses/{PUBLIC}/register"
    for _ in range(3):
        assert post(client, path, code="wrong", bot="b", owner="o").status_code == 400
    answer = post(client, path, code="wrong", bot="b", owner="o")
    assert answer.status_code == 429
    assert "too many failed form posts from your address: at most 3 every 60 s" in answer.text
    forms.clock.now += 61
    assert post(client, path, code="wrong", bot="b", owner="o").status_code == 400


def test_correct_sign_ins_are_never_limited(forms: Forms) -> None:
    """Issue 28: a class behind one address signs in as often as it likes; only failures
    count (here 2 allowed, and 12 correct sign-ins pass around them)."""
    limit = RateLimit(failures=2, seconds=60, clock=forms.clock)
    client = Forms(forms.storage, forms.courses, forms.clock, limit).client()
    path = f"/courses/{PUBLIC}/me"
    good = {"bot": "ada-bot", "token": forms.courses.tokens["ada-bot"]}
    for _ in range(12):
        assert post(client, path, **good).status_code == 303
    assert post(client, path, bot="ada-bot", token="0" * 64).status_code == 401
    assert post(client, path, **good).status_code == 303
    assert post(client, path, bot="ada-bot", token="0" * 64).status_code == 401
    assert post(client, path, **good).status_code == 429


def test_the_rate_limit_table_is_bounded() -> None:
    clock = Clock()
    limit = RateLimit(failures=1, addresses=2, clock=clock)
    for address in ("a", "b", "c"):
        limit.failed(address)
    assert len(limit) == 2
    limit.check("a")  # forgotten, so its failure too
    with pytest.raises(WebError):
        limit.check("c")


def test_a_large_or_foreign_body_is_refused(forms: Forms) -> None:
    client = forms.client()
    path = f"/courses/{PUBLIC}/register"
    token = csrf_of(client, path)
    big = client.post(path, data={"csrf": token, "code": "x" * (MAX_FORM_BYTES + 1)})
    assert big.status_code == 413
    json = client.post(path, json={"csrf": token})
    assert json.status_code == 415


def test_other_pages_still_refuse_posts(forms: Forms) -> None:
    client = forms.client()
    assert client.post("/matches").status_code == 405
    assert client.post(f"/courses/{PUBLIC}").status_code == 405


# -- the student's own bot ------------------------------------------------------------------


def _session_cookie(answer: httpx.Response) -> str:
    (cookie,) = [v for k, v in answer.headers.multi_items() if k == "set-cookie" and "session" in v]
    return cookie


def test_the_student_signs_in_and_sees_the_real_name_faults_and_replays(forms: Forms) -> None:
    zelda = ANONYMOUS_BOTS[0][0]
    client = forms.client()
    path = f"/courses/{ANONYMOUS}/me"
    answer = post(client, path, bot=zelda, token=forms.courses.tokens[zelda])
    assert answer.status_code == 303
    cookie = _session_cookie(answer)
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Secure" not in cookie
    assert forms.courses.tokens[zelda] not in cookie
    page = client.get(path)
    assert page.status_code == 200
    assert zelda in page.text  # the student's own page shows the real name
    assert f'href="/matches/{SECRET_FORFEIT}"' in page.text
    data = client.get(f"/api{path}").json()
    assert data["bot"] == zelda
    (group,) = data["fault_groups"]
    assert (group["kind"], group["count"]) == ("timeout", 1)
    assert group["reason"] == f"{zelda} sent no answer"
    assert [place["match_id"] for place in group["matches"]] == [SECRET_FORFEIT]
    assert {m["id"] for m in data["matches"]} >= {SECRET_FORFEIT, "secret-0"}
    out = post(client, path + "/logout", path)
    assert out.status_code == 303
    assert client.get(f"/api{path}").status_code == 401


def test_a_session_over_https_is_secure(forms: Forms) -> None:
    client = forms.client("https://testserver")
    answer = post(
        client, f"/courses/{PUBLIC}/me", bot="ada-bot", token=forms.courses.tokens["ada-bot"]
    )
    assert answer.status_code == 303
    assert "Secure" in _session_cookie(answer)


@pytest.mark.parametrize(
    ("course", "bot", "token"),
    [
        (PUBLIC, "ada-bot", "0" * 64),  # a wrong token
        (PUBLIC, "nobody", "0" * 64),  # an unknown bot
        (ANONYMOUS, "ada-bot", None),  # the right token, another course's page
    ],
)
def test_a_wrong_bot_or_token_is_refused(
    forms: Forms, course: str, bot: str, token: str | None
) -> None:
    client = forms.client()
    answer = post(
        client, f"/courses/{course}/me", bot=bot, token=token or forms.courses.tokens[bot]
    )
    assert answer.status_code == 401
    assert BOT_REFUSED in answer.text
    assert client.get(f"/api/courses/{course}/me").status_code == 401


def test_a_rotated_token_ends_the_session(forms: Forms, tmp_path: Path) -> None:
    client = forms.client()
    path = f"/courses/{PUBLIC}/me"
    issued = forms.storage.register_bot(forms.courses.codes[PUBLIC], "rot-bot", "rot")
    assert post(client, path, bot="rot-bot", token=issued.token).status_code == 303
    assert client.get(f"/api{path}").status_code == 200
    forms.storage.rotate_token("rot-bot")
    assert client.get(f"/api{path}").status_code == 401


def test_a_forged_session_cookie_is_ignored(forms: Forms) -> None:
    client = forms.client()
    client.cookies.set(f"session_bot_{PUBLIC}", "eyJraW5kIjogImJvdCJ9.0000")
    assert client.get(f"/api/courses/{PUBLIC}/me").status_code == 401


# -- the organizer --------------------------------------------------------------------------


def test_the_organizer_signs_in_and_sees_invites_bots_owners(forms: Forms) -> None:
    client = forms.client()
    path = f"/courses/{PUBLIC}/organizer"
    answer = post(client, path, token=forms.courses.organizer[PUBLIC])
    assert answer.status_code == 303
    assert forms.courses.organizer[PUBLIC] not in _session_cookie(answer)
    page = client.get(path)
    assert page.status_code == 200
    code = forms.courses.codes[PUBLIC]
    assert code not in page.text and code.split(":")[2] not in page.text
    assert NOT_CONNECTED in page.text
    data = client.get(f"/api{path}").json()
    invites = {i["id"]: i for i in data["invites"]}
    assert code.split(":")[1] in invites
    assert set(next(iter(invites.values()))) == {
        "id", "uses", "used", "created", "expires", "revoked", "usable", "owners"
    }  # fmt: skip
    bots = {b["name"]: b for b in data["bots"]}
    assert bots["ada-bot"]["owner"] == "ada" and bots["ada-bot"]["state"] == "enabled"
    ada = next(o for o in data["owners"] if o["owner"] == "ada")
    assert (ada["bots"], ada["bot_names"], ada["enabled"]) == (1, ["ada-bot"], True)
    assert ada["invite"] in invites and "ada" in invites[ada["invite"]]["owners"]
    assert ada["token_issued"] is not None
    assert data["connected"] == {"referee": None, "message": NOT_CONNECTED, "bots": []}
    # The session is this course's only.
    assert client.get(f"/api/courses/{ANONYMOUS}/organizer").status_code == 401
    assert post(client, path + "/logout", path).status_code == 303
    assert client.get(f"/api{path}").status_code == 401


@pytest.mark.parametrize("which", ["wrong", "other course"])
def test_a_wrong_organizer_token_is_refused(forms: Forms, which: str) -> None:
    token = "cs101:" + "0" * 64 if which == "wrong" else forms.courses.organizer[ANONYMOUS]
    client = forms.client()
    answer = post(client, f"/courses/{PUBLIC}/organizer", token=token)
    assert answer.status_code == 401
    assert ORGANIZER_REFUSED in answer.text


def test_the_storage_protocol_is_the_app_s(forms: Forms) -> None:
    storage: WebStorage = forms.storage  # mypy checks RatedStorage has every call
    assert storage.course(PUBLIC) is not None


def test_every_session_json_key_is_documented(forms: Forms) -> None:
    documented = set(re.findall(r"`([a-z_]+)`", DOCS.read_text(encoding="utf-8")))
    client = forms.client()
    zelda = ANONYMOUS_BOTS[0][0]
    post(client, f"/courses/{ANONYMOUS}/me", bot=zelda, token=forms.courses.tokens[zelda])
    post(client, f"/courses/{PUBLIC}/organizer", token=forms.courses.organizer[PUBLIC])
    for path in (f"/api/courses/{ANONYMOUS}/me", f"/api/courses/{PUBLIC}/organizer"):
        answer = client.get(path)
        assert answer.status_code == 200
        assert sorted(json_keys(answer.json()) - documented) == [], path


# -- owners (docs/courses.md: owners) ---------------------------------------------------------

OWNER_TOKEN = re.compile(r'<code class="token" id="owner-token">([^<]+)</code>')


def test_the_owner_token_registers_a_later_version_and_signs_in(forms: Forms) -> None:
    client = forms.client()
    path = f"/courses/{PUBLIC}/register"
    (invite,) = forms.storage.create_invites(PUBLIC, 1)
    first = post(client, path, code=invite.code, bot="fox-v1", owner="fox")
    assert first.status_code == 200 and "Copy it now too, it is shown once." in first.text
    found = OWNER_TOKEN.search(first.text)
    assert found is not None and found.group(1).startswith(f"{PUBLIC}:fox:")
    owner_token = found.group(1)
    later = post(client, path, owner_token=owner_token, bot="fox-v2")
    assert later.status_code == 200 and 'id="owner-token"' not in later.text
    stored = forms.storage.bot("fox-v2")
    assert stored is not None and (stored.course, stored.owner) == (PUBLIC, "fox")
    me = f"/courses/{PUBLIC}/me"
    assert post(client, me, bot="fox-v1", token=owner_token).status_code == 303
    assert client.get(f"/api{me}").json()["bot"] == "fox-v1"
    assert post(client, me, bot="ada-bot", token=owner_token).status_code == 401  # not its bot
    forms.storage.rotate_owner_token(owner_token)  # ends the session opened with it
    assert client.get(f"/api{me}").status_code == 401


def test_an_invite_naming_an_existing_owner_or_a_wrong_owner_token_is_refused(
    forms: Forms,
) -> None:
    client = forms.client()
    path = f"/courses/{PUBLIC}/register"
    (invite,) = forms.storage.create_invites(PUBLIC, 1)
    taken = post(client, path, code=invite.code, bot="ada-v2", owner="ada")
    assert taken.status_code == 400 and "is already an owner of course" in taken.text
    assert forms.storage.bot("ada-v2") is None
    wrong = post(client, path, owner_token=f"{PUBLIC}:ada:{'0' * 64}", bot="ada-v2")
    assert wrong.status_code == 400 and "owner token not accepted" in wrong.text
    other = post(client, path, owner_token=f"{ANONYMOUS}:ada:{'0' * 64}", bot="ada-v2")
    assert other.status_code == 400 and "owner token not accepted" in other.text
    both = post(client, path, owner_token=f"{PUBLIC}:ada:{'0' * 64}", code=invite.code, bot="x")
    assert both.status_code == 400 and "owner token: give it alone" in both.text

"""Hosted bots on the web face (docs/web.md: hosted bots): the student's upload (multipart,
CSRF, bounded before it is read, the owner's only), the versions listed with their status and
reports, and the match page's logs, shown to the seat's owner and the organizer only."""

from __future__ import annotations

import asyncio
import datetime as dt
import io
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from domino_arena.server.hosting.spec.submissions import Submission, pack
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.store import hosted
from domino_arena.server.web.app import create_app
from domino_arena.server.web.hosted_views import SUSPENDED
from domino_arena.server.web.sessions import RateLimit
from domino_arena.server.web.uploads import MAX_UPLOAD_BYTES
from tests.fakes.course_site import PUBLIC, Courses, csrf_of, filled_courses, sign_in
from tests.fakes.web import schedule_length

BOT_SOURCE: Final = b'''"""A hosted bot: the first legal action."""
from domino_arena.sdk.bot import Bot


class FirstBot(Bot):
    def choose(self, observation):
        return observation.legal_actions[0]
'''
ME: Final = f"/courses/{PUBLIC}/me"
MATCH: Final = "cs101-2"
"""A stored match of the public course: ada-bot against bea-bot."""
NOW: Final = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
PART_HEAD: Final = (
    b'--xyz\r\nContent-Disposition: form-data; name="file"; filename="big.py"\r\n\r\n'
)
"""The start of a multipart body: a file part whose bytes follow."""


def versions_path(bot: str) -> str:
    return f"/courses/{PUBLIC}/bots/{bot}/versions"


@dataclass(frozen=True)
class Site:
    storage: RatedStorage
    courses: Courses
    app: Starlette

    def client(self) -> TestClient:
        return TestClient(self.app, follow_redirects=False)

    def student(self, bot: str) -> TestClient:
        """A client signed in to ``bot``'s page with the bot's token."""
        client = self.client()
        sign_in(client, PUBLIC, "me", bot=bot, token=self.courses.tokens[bot])
        return client

    def organizer(self) -> TestClient:
        client = self.client()
        sign_in(client, PUBLIC, "organizer", token=self.courses.organizer[PUBLIC])
        return client


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with filled_courses(tmp_path_factory.mktemp("hosted-pages")) as (storage, made):
        app = create_app(
            storage, tournament_total=schedule_length, rate_limit=RateLimit(failures=1000)
        )
        yield Site(storage, made, app)


def upload(
    client: TestClient,
    bot: str,
    name: str,
    content: bytes,
    *,
    command: str = "",
    games: tuple[str, ...] = ("passing",),
    csrf: str | None = None,
) -> Any:
    """POST the upload form of ``bot`` as the page's form sends it (multipart)."""
    token = csrf_of(client, ME) if csrf is None else csrf
    fields: dict[str, Any] = {"csrf": token, "command": command, "games": list(games)}
    return client.post(versions_path(bot), data=fields, files={"file": (name, content)})


def zipped(members: dict[str, bytes]) -> bytes:
    """A zip of ``members`` as ``zip -r`` makes one on Linux (regular files' Unix modes; a
    ``.sh`` executable)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o100755 if name.endswith(".sh") else 0o100644) << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def me_json(client: TestClient) -> dict[str, Any]:
    answer = client.get(f"/api{ME}")
    assert answer.status_code == 200, answer.text
    data: dict[str, Any] = answer.json()
    return data


# -- the upload -------------------------------------------------------------------------------


def test_a_python_file_is_stored_as_a_version_being_checked(site: Site) -> None:
    client = site.student("ada-bot")
    answer = upload(client, "ada-bot", "firstbot.py", BOT_SOURCE, games=("passing", "moon"))
    assert answer.status_code == 303, answer.text
    assert answer.headers["location"] == f"{ME}#versions"
    (version, *_) = me_json(client)["hosting"]["versions"]
    (stored, *_) = hosted.versions(site.storage.engine, "ada-bot")
    assert version["number"] == stored.number
    assert (version["kind"], version["entry"]) == ("python", "firstbot.py:FirstBot")
    assert (version["status"], version["games"]) == ("checking", ["passing", "moon"])
    assert version["submitter"] == "owner ada"
    assert version["sha"] == stored.sha256[:12] and len(version["sha"]) == 12
    page = client.get(ME).text
    assert f"Version {stored.number} is being checked" in page
    assert '<span class="badge status-checking">being checked</span>' in page


def test_an_archive_with_a_command_is_a_command_version(site: Site) -> None:
    client = site.student("ada-bot")
    archive = zipped({"run.sh": b"#!/bin/sh\nexec python3 bot.py\n", "bot.py": b"print()\n"})
    answer = upload(client, "ada-bot", "bot.zip", archive, command="./run.sh")
    assert answer.status_code == 303, answer.text
    (version, *_) = me_json(client)["hosting"]["versions"]
    assert (version["kind"], version["entry"], version["files"]) == ("command", "./run.sh", 2)


@pytest.mark.parametrize(
    ("name", "content", "command", "reason"),
    [
        (
            "evil.zip",
            zipped({"../evil.py": b"x = 1\n"}),
            "./run.sh",
            "member ../evil.py: a path outside the submission",
        ),
        ("bot.exe", b"MZ", "", "file: 'bot.exe' is neither a .py file nor an archive"),
        ("bot.zip", zipped({"run.sh": b"exit 0\n"}), "", "command: an archive needs"),
        ("empty.py", b"", "", "file: 'empty.py' is empty"),
        ("notabot.py", b"x = 1\n", "", "notabot.py: no subclass of Bot"),
    ],
)
def test_a_bad_upload_is_refused_with_its_reason_on_the_page(
    site: Site, name: str, content: bytes, command: str, reason: str
) -> None:
    client = site.student("ada-bot")
    before = len(hosted.versions(site.storage.engine, "ada-bot"))
    answer = upload(client, "ada-bot", name, content, command=command)
    assert answer.status_code == 400
    assert 'role="alert"' in answer.text and reason in answer.text.replace("&#39;", "'")
    assert f'value="{command}"' in answer.text, "the form keeps what was typed"
    assert len(hosted.versions(site.storage.engine, "ada-bot")) == before


def test_no_game_ticked_is_refused(site: Site) -> None:
    answer = upload(site.student("ada-bot"), "ada-bot", "firstbot.py", BOT_SOURCE, games=())
    assert answer.status_code == 400
    assert "games: tick at least one game" in answer.text


def test_a_body_past_the_bound_is_a_413(site: Site) -> None:
    client = site.student("ada-bot")
    answer = upload(client, "ada-bot", "big.py", b"#" * (MAX_UPLOAD_BYTES + 1))
    assert answer.status_code == 413
    assert "the upload is too large: at most 3145728 bytes" in answer.text


def _drive(
    app: Starlette, path: str, headers: dict[str, str], chunks: int, size: int
) -> tuple[int, int]:
    """POST ``chunks`` chunks of ``size`` bytes to ``app`` through ASGI; return the status and
    how many chunks the app asked for (to see where it stopped reading)."""
    asked = 0
    status = 0

    async def receive() -> dict[str, Any]:
        nonlocal asked
        if asked >= chunks:
            return {"type": "http.disconnect"}
        asked += 1
        body = (PART_HEAD if asked == 1 else b"") + b"x" * size
        return {"type": "http.request", "body": body, "more_body": asked < chunks}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }
    asyncio.run(app(scope, receive, send))  # type: ignore[arg-type]
    return status, asked


@pytest.mark.parametrize("declared", [True, False])
def test_a_big_body_is_refused_before_it_is_read_whole(site: Site, declared: bool) -> None:
    """With a Content-Length past the bound nothing is read; without one (chunked), reading
    stops at the first chunk past it."""
    client = site.student("ada-bot")
    size, chunks = 64 << 10, 2 * MAX_UPLOAD_BYTES // (64 << 10)
    headers = {
        "content-type": "multipart/form-data; boundary=xyz",
        "cookie": "; ".join(f"{k}={v}" for k, v in client.cookies.items()),
    }
    if declared:
        headers["content-length"] = str(size * chunks)
    status, asked = _drive(site.app, versions_path("ada-bot"), headers, chunks, size)
    assert status == 413
    if declared:
        assert asked == 0
    else:  # the chunk that passed the bound was the last read
        read = len(PART_HEAD) + asked * size
        assert read - size <= MAX_UPLOAD_BYTES < read, (asked, chunks)


def test_only_the_owner_signed_in_may_upload(site: Site) -> None:
    engine = site.storage.engine
    before = len(hosted.versions(engine, "ada-bot"))
    other = site.student("bea-bot")
    answer = upload(other, "ada-bot", "firstbot.py", BOT_SOURCE)
    assert answer.status_code == 403
    assert "only the owner of &#39;ada-bot&#39;" in answer.text
    anonymous = site.client()
    token = csrf_of(anonymous, ME)  # the sign-in form's
    answer = upload(anonymous, "ada-bot", "firstbot.py", BOT_SOURCE, csrf=token)
    assert answer.status_code == 401
    assert "not signed in" in answer.text
    assert len(hosted.versions(engine, "ada-bot")) == before


def test_an_upload_without_the_csrf_token_is_a_403(site: Site) -> None:
    client = site.student("ada-bot")
    before = len(hosted.versions(site.storage.engine, "ada-bot"))
    answer = upload(client, "ada-bot", "firstbot.py", BOT_SOURCE, csrf="")
    assert answer.status_code == 403 and "csrf" in answer.text
    answer = upload(client, "ada-bot", "firstbot.py", BOT_SOURCE, csrf="0" * 64)
    assert answer.status_code == 403
    assert len(hosted.versions(site.storage.engine, "ada-bot")) == before


# -- the versions ----------------------------------------------------------------------------


def a_submission(folder: Path) -> Submission:
    path = folder / "firstbot.py"
    path.write_bytes(BOT_SOURCE)
    return pack(path)


def test_versions_show_their_status_reports_and_a_suspension(site: Site, tmp_path: Path) -> None:
    engine, bot = site.storage.engine, "bea-bot"
    submission = a_submission(tmp_path)
    first = hosted.add_version(engine, bot, submission, submitter="owner bea", games=(), now=NOW)
    report = "rejected: <script>alert(1)</script> ImportError: no module named numpy"
    hosted.set_verdict(engine, bot, first.number, accepted=False, report=report)
    second = hosted.add_version(engine, bot, submission, submitter="owner bea", games=(), now=NOW)
    hosted.set_verdict(engine, bot, second.number, accepted=True, report="passed")
    for n in range(hosted.SUSPEND_AFTER_CRASHES):
        hosted.record_match_log(engine, f"m{n}", bot, second.number, "boom", crashed=True, now=NOW)

    client = site.student(bot)
    page = client.get(ME).text
    notice = f"Version {second.number} is {SUSPENDED}."
    assert notice in page
    assert "suspended after 3 crashing matches in a row: submit a fixed version" in notice
    assert '<span class="badge status-suspended">suspended</span>' in page
    assert '<span class="badge status-rejected">rejected</span>' in page
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; ImportError" in page
    assert "<summary>Why it was rejected</summary>" in page
    rows = me_json(client)["hosting"]["versions"]
    assert [(r["number"], r["status"]) for r in rows] == [
        (second.number, "suspended"),
        (first.number, "rejected"),
    ]
    assert me_json(client)["hosting"]["checking"] is None

    answer = upload(client, bot, "firstbot.py", BOT_SOURCE)
    assert answer.status_code == 303
    page = client.get(ME).text
    assert notice not in page, "the latest version is no longer the suspended one"
    assert f"Version {second.number + 1} is being checked" in page


# -- the logs ----------------------------------------------------------------------------------


def test_a_seat_s_log_is_shown_to_its_owner_and_the_organizer_only(
    site: Site, tmp_path: Path
) -> None:
    engine = site.storage.engine
    version = hosted.add_version(
        engine, "ada-bot", a_submission(tmp_path), submitter="owner ada", games=(), now=NOW
    )
    hosted.set_verdict(engine, "ada-bot", version.number, accepted=True, report="")
    text = "turn 3: <b>thinking</b>\x1b[31m red\nTraceback: ValueError"
    hosted.record_match_log(engine, MATCH, "ada-bot", version.number, text, crashed=True, now=NOW)
    readers = {
        "owner": (site.student("ada-bot"), True),
        "organizer": (site.organizer(), True),
        "another student": (site.student("bea-bot"), False),
        "anonymous": (site.client(), False),
    }
    for who, (client, sees) in readers.items():
        page = client.get(f"/matches/{MATCH}")
        data = client.get(f"/api/matches/{MATCH}")
        assert page.status_code == data.status_code == 200, who
        assert ("thinking" in page.text) is sees, who
        assert ("thinking" in data.text) is sees, who
        if not sees:
            assert data.json()["logs"] == [], who
            assert "Bot logs" not in page.text, who
            continue
        (log,) = data.json()["logs"]
        assert (log["bot"], log["version"], log["crashed"]) == ("ada-bot", version.number, True)
        assert log["text"] == text.replace("\x1b", "\ufffd")
        assert "turn 3: &lt;b&gt;thinking&lt;/b&gt;\ufffd[31m red" in page.text, who
        assert '<pre class="log" tabindex="0">' in page.text
        assert page.headers["cache-control"] == "no-store", who
        assert data.headers["cache-control"] == "no-store", who


def test_the_owner_token_reaches_every_bot_of_its_owner_and_the_bot_token_one(
    site: Site, tmp_path: Path
) -> None:
    """Signed in with the owner token, a student uploads for and reads the logs of each of
    their bots; signed in with one bot's token, that bot's only."""
    storage, engine = site.storage, site.storage.engine
    first = storage.register_bot(site.courses.codes[PUBLIC], "cleo-bot", "cleo")
    second = storage.register_with_owner_token(first.owner_token, "cleo-two")
    version = hosted.add_version(
        engine, "cleo-two", a_submission(tmp_path), submitter="owner cleo", games=(), now=NOW
    )
    hosted.set_verdict(engine, "cleo-two", version.number, accepted=True, report="")
    text = "cleo-two's stderr"
    hosted.record_match_log(engine, MATCH, "cleo-two", version.number, text, crashed=False, now=NOW)
    as_owner, as_bot = site.client(), site.client()
    sign_in(as_owner, PUBLIC, "me", bot="cleo-bot", token=first.owner_token)
    sign_in(as_bot, PUBLIC, "me", bot="cleo-bot", token=first.token)
    clients = {"owner": as_owner, "bot": as_bot}
    logs = {who: c.get(f"/api/matches/{MATCH}").json()["logs"] for who, c in clients.items()}
    assert [log["bot"] for log in logs["owner"]] == ["cleo-two"]
    assert logs["bot"] == []
    assert upload(as_bot, "cleo-two", "firstbot.py", BOT_SOURCE).status_code == 403
    assert upload(as_owner, "cleo-two", "firstbot.py", BOT_SOURCE).status_code == 303
    (newest, *_) = hosted.versions(engine, second.bot.name)
    assert (newest.number, newest.submitter) == (version.number + 1, "owner cleo")


def test_past_the_day_s_versions_an_upload_is_a_429_saying_when(site: Site, tmp_path: Path) -> None:
    storage, engine = site.storage, site.storage.engine
    issued = storage.register_bot(site.courses.codes[PUBLIC], "dan-bot", "dan")
    submission, now = a_submission(tmp_path), dt.datetime.now(dt.UTC)
    for _ in range(hosted.MAX_VERSIONS_PER_DAY):
        hosted.add_version(engine, "dan-bot", submission, submitter="owner dan", games=(), now=now)
    client = site.client()
    sign_in(client, PUBLIC, "me", bot="dan-bot", token=issued.token)
    answer = upload(client, "dan-bot", "firstbot.py", BOT_SOURCE)
    assert answer.status_code == 429
    assert 'role="alert"' in answer.text and str(hosted.MAX_VERSIONS_PER_DAY) in answer.text
    assert len(hosted.versions(engine, "dan-bot")) == hosted.MAX_VERSIONS_PER_DAY

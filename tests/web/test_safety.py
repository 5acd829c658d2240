"""The web face is read-only, escapes every stored text and sends a strict CSP with everything.

The storage holds :data:`~tests.fakes.web.HOSTILE` (``<script>alert(1)</script>``) as a
tournament's name, a match's detail and a fault's reason: no page may carry it unescaped.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from domino_arena.server.web.security import CONTENT_SECURITY_POLICY
from tests.fakes.web import (
    BOTS,
    ESCAPED,
    FORFEIT_ID,
    GAMES_PLAYED,
    HOSTILE,
    TOURNAMENT_ID,
    Site,
    match_id_of,
)

TEMPLATES = Path(__file__).resolve().parents[2] / "server" / "web" / "templates"

EVERY_PAGE = [
    "/",
    "/tournaments",
    f"/tournaments/{TOURNAMENT_ID}",
    "/matches",
    f"/matches/{FORFEIT_ID}",
    f"/matches/{FORFEIT_ID}?step=3",
    *(f"/games/{game}/standings" for game in GAMES_PLAYED),
    *(f"/bots/{bot}" for bot in BOTS),
    *(f"/matches/{match_id_of(game, 0)}" for game in GAMES_PLAYED),
]
SHOWS_HOSTILE = {
    "/": "the tournament's name",
    "/tournaments": "the tournament's name",
    f"/tournaments/{TOURNAMENT_ID}": "the tournament's name",
    "/matches": "the forfeit's detail (in its result)",
    f"/matches/{FORFEIT_ID}": "the detail and the fault's reason",
}


@pytest.mark.parametrize("path", EVERY_PAGE)
def test_stored_text_is_escaped_on_every_page(site: Site, path: str) -> None:
    page = site.client.get(path)
    assert page.status_code == 200
    assert HOSTILE not in page.text
    assert "<script>" not in page.text
    if path in SHOWS_HOSTILE:
        assert ESCAPED in page.text, SHOWS_HOSTILE[path]


def test_the_hostile_text_is_shown_where_it_was_stored(site: Site) -> None:
    match_page = site.client.get(f"/matches/{FORFEIT_ID}").text
    assert f"no answer: {ESCAPED}" in match_page
    loser = site.client.get(f"/api/matches/{FORFEIT_ID}").json()["faults"][0]["seat"]
    bot_page = site.client.get(f"/bots/{BOTS[loser]}").text
    assert f"no answer: {ESCAPED}" in bot_page
    api = site.client.get(f"/api/tournaments/{TOURNAMENT_ID}")
    assert api.headers["content-type"] == "application/json"
    assert api.json()["name"] == HOSTILE


def test_a_hostile_url_is_escaped_in_the_error_page(site: Site) -> None:
    page = site.client.get("/matches/" + HOSTILE.replace("/", "%2F"))
    assert page.status_code == 404
    assert HOSTILE not in page.text
    assert "&lt;script&gt;" in page.text
    search = site.client.get("/matches", params={"bot": HOSTILE})
    assert search.status_code == 200
    assert HOSTILE not in search.text


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/api/",
        "/matches/nope",
        "/api/matches/nope",
        "/static/style.css",
        "/static/replay.js",
        "/games/moon/standings?sort=x",
        "/no/such/page",
    ],
)
def test_every_response_carries_the_security_headers(site: Site, path: str) -> None:
    response = site.client.get(path)
    assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["x-frame-options"] == "DENY"


def test_the_policy_allows_no_inline_script_or_style() -> None:
    directives = dict(d.strip().split(" ", 1) for d in CONTENT_SECURITY_POLICY.split(";"))
    assert directives["default-src"] == "'self'"
    assert directives["script-src"] == "'self'"
    assert directives["style-src"] == "'self'"
    assert "unsafe-inline" not in CONTENT_SECURITY_POLICY
    assert "unsafe-eval" not in CONTENT_SECURITY_POLICY


def test_the_templates_hold_no_inline_script_style_or_handler() -> None:
    for path in sorted(TEMPLATES.glob("*.html")):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"<script(?![^>]*\bsrc=)", text), f"{path.name}: inline script"
        assert "<style" not in text, f"{path.name}: inline style"
        assert not re.search(r"\sstyle=", text), f"{path.name}: style attribute"
        assert not re.search(r"\son[a-z]+=", text), f"{path.name}: event handler attribute"
        assert "| safe" not in text and "|safe" not in text, f"{path.name}: unescaped output"


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
@pytest.mark.parametrize("path", ["/", "/api/matches", f"/tournaments/{TOURNAMENT_ID}"])
def test_the_web_face_is_read_only(site: Site, method: str, path: str) -> None:
    response = site.client.request(method, path)
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, HEAD"
    assert f"method {method} is not allowed: the web face is read-only" in response.text
    assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY


def test_head_is_answered_without_a_body(site: Site) -> None:
    response = site.client.head("/matches")
    assert response.status_code == 200
    assert response.content == b""

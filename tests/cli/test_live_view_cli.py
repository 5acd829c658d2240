"""``--live-view`` on the command line against the admin API on port 0 (real servicers and
SQLite storage, the fake arena of tests/fakes/admin_server.py): a course's and a tournament's
live view set, shown in the lists and details, changed, and stored as the referee reads it
(docs/courses.md: live view)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.admin_server import AdminServer

from .harness import admin, admin_server, run, table_rows


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AdminServer]:
    with admin_server(tmp_path, monkeypatch) as server:
        yield server


def views(capsys: pytest.CaptureFixture[str], server: AdminServer) -> dict[str, str]:
    """Each course's live view as ``course list`` shows it."""
    rows = table_rows(admin(capsys, server, "course", "list"))
    column = rows[0].index("live view")
    return {row[0]: row[column] for row in rows[1:]}


def test_a_courses_live_view_is_set_shown_and_changed(
    capsys: pytest.CaptureFixture[str], server: AdminServer
) -> None:
    code, _, err = run(
        capsys, "course", "create", "cs101", "--live-view", "signed-in", "--server", server.address
    )
    assert code == 0, err
    code, _, err = run(capsys, "course", "create", "open", "--server", server.address)
    assert code == 0, err
    assert views(capsys, server) == {"cs101": "signed-in", "default": "public", "open": "public"}
    shown = json.loads(admin(capsys, server, "course", "show", "cs101", "--json"))
    assert shown["live_view"] == "LIVE_VIEW_SIGNED_IN"
    changed = admin(capsys, server, "course", "update", "cs101", "--live-view", "none")
    assert table_rows(changed)[1][6] == "none"
    assert server.arena.storage.live_view("cs101", None) == "none"
    admin(capsys, server, "course", "update", "cs101", "--title", "Intro")  # unchanged
    assert views(capsys, server)["cs101"] == "none"
    assert server.arena.storage.live_view("cs101", None) == "none"


def test_a_live_view_not_one_of_the_three_is_refused_before_any_call(
    capsys: pytest.CaptureFixture[str], server: AdminServer
) -> None:
    code, out, err = run(
        capsys, "course", "create", "cs101", "--live-view", "private", "--server", server.address
    )
    assert (code, out) == (2, "")
    assert "argument --live-view: invalid choice: 'private' (choose from " in err
    assert all(view in err for view in ("public", "signed-in", "none"))
    assert server.arena.storage.course("cs101") is None


def test_a_tournaments_live_view_is_its_own_or_its_courses(
    capsys: pytest.CaptureFixture[str], server: AdminServer
) -> None:
    made = admin(
        capsys, server, "tournament", "create", "passing", "--bots", "alice,bob", "--name", "final"
    )
    inherits = made.split()[1]
    assert "  live view: the course's\n" in made
    made = admin(
        capsys,
        server,
        *("tournament", "create", "passing", "--bots", "alice,bob", "--name", "quiet"),
        *("--live-view", "none"),
    )
    hidden = made.split()[1]
    assert "  live view: none\n" in made
    assert "  live view: none\n" in admin(capsys, server, "tournament", "status", hidden)
    rows = table_rows(admin(capsys, server, "tournament", "list"))
    column = rows[0].index("live view")
    assert {row[0]: row[column] for row in rows[1:]} == {inherits: "course's", hidden: "none"}
    storage = server.arena.storage
    assert storage.live_view("default", inherits) == "public"
    assert storage.live_view("default", hidden) == "none"
    admin(capsys, server, "course", "update", "default", "--live-view", "signed-in")
    assert storage.live_view("default", inherits) == "signed-in"
    assert storage.live_view("default", hidden) == "none"

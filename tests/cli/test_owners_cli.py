"""``bot register`` with an owner token and ``owner list|disable|enable|issue-token|
rotate-token`` against the admin and registration services on port 0 (real servicers and SQLite
storage, the fake arena of tests/fakes/admin_server.py; docs/courses.md: owners)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from domino_arena.server.store.bots import BotCheck
from tests.fakes.admin_server import AdminServer

from .harness import admin, admin_server, run, table_rows


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AdminServer]:
    with admin_server(tmp_path, monkeypatch) as server:
        storage = server.arena.storage
        monkeypatch.setenv("DOMINO_ARENA_ADMIN_TOKEN", storage.create_course("cs101").token)
        yield server


def register(
    capsys: pytest.CaptureFixture[str], server: AdminServer, *args: str
) -> tuple[int, str, str]:
    return run(capsys, "bot", "register", *args, "--server", server.address)


def test_a_student_registers_versions_with_the_owner_token_and_cannot_impersonate(
    capsys: pytest.CaptureFixture[str], server: AdminServer, tmp_path: Path
) -> None:
    first, second = (i.code for i in server.arena.storage.create_invites("cs101", 2))
    owner_file = tmp_path / "b.owner"
    code, out, err = register(
        capsys, server, "b-v1", "--invite", first, "--owner", "student-b",
        "--owner-token-file", str(owner_file),
    )  # fmt: skip
    assert code == 0, err
    (token,) = out.split()
    code, out, err = register(capsys, server, "b-v2", "--owner-token-file", str(owner_file))
    assert code == 0, err
    assert "registered bot 'b-v2' in course 'cs101'" in err and "owner token" not in err
    assert server.arena.storage.bot("b-v2").owner == "student-b"  # type: ignore[union-attr]
    # Another invite naming the same owner: refused in one line, the code not used.
    code, out, err = register(capsys, server, "b-v3", "--invite", second, "--owner", "student-b")
    assert (code, out) == (2, "")
    assert len(err.strip().splitlines()) == 1
    assert "'student-b' is already an owner of course 'cs101'" in err
    # The used invite again: refused in one line.
    code, out, err = register(capsys, server, "c-v1", "--invite", first, "--owner", "carol")
    assert (code, out, len(err.strip().splitlines())) == (2, "", 1)
    assert "invite code not accepted: it is wrong, expired, revoked or used up" in err
    # Neither an invite nor an owner token; an owner token with --owner.
    code, _, err = register(capsys, server, "x")
    assert code == 2 and "give --invite CODE (your first bot) or --owner-token-file" in err
    code, _, err = register(
        capsys, server, "x", "--owner-token-file", str(owner_file), "--owner", "student-c"
    )
    assert code == 2 and "--owner: your owner token names you" in err
    assert server.arena.storage.check_bot("b-v1", token) is BotCheck.OK


def test_the_organizer_lists_disables_enables_and_issues_and_the_owner_rotates(
    capsys: pytest.CaptureFixture[str], server: AdminServer, tmp_path: Path
) -> None:
    storage = server.arena.storage
    (invite,) = storage.create_invites("cs101", 1)
    made = storage.register_bot(invite.code, "a-v1", "ann")
    storage.create_bot("c-v1", course="cs101", owner="carol")
    rows = table_rows(admin(capsys, server, "owner", "list"))
    assert rows[0] == ["owner", "state", "token issued", "invite", "bots"]
    assert [(r[0], r[1], r[3], r[4]) for r in rows[1:]] == [
        ("ann", "enabled", invite.invite.id, "a-v1"),
        ("carol", "enabled", "-", "c-v1"),
    ]
    assert rows[2][2] == "none"
    listed = json.loads(admin(capsys, server, "owner", "list", "--json"))
    assert [(o["name"], o["bots"], o.get("invite_id", "")) for o in listed["owners"]] == [
        ("ann", ["a-v1"], invite.invite.id),
        ("carol", ["c-v1"], ""),
    ]
    assert "is disabled: its bots (a-v1)" in admin(capsys, server, "owner", "disable", "ann")
    assert storage.check_bot("a-v1", made.token) is BotCheck.OWNER_DISABLED
    assert "is enabled" in admin(capsys, server, "owner", "enable", "ann")
    assert storage.check_bot("a-v1", made.token) is BotCheck.OK
    issued = tmp_path / "carol.owner"
    code, out, err = run(
        capsys, "owner", "issue-token", "carol", "--owner-token-file", str(issued),
        "--server", server.address,
    )  # fmt: skip
    assert (code, out) == (0, ""), err
    old = issued.read_text().strip()
    code, out, err = run(
        capsys, "owner", "rotate-token", "--owner-token-file", str(issued),
        "--server", server.address,
    )  # fmt: skip
    assert (code, out) == (0, ""), err
    assert issued.read_text().strip() != old and storage.owner_of_token(old) is None
    assert storage.register_with_owner_token(issued.read_text().strip(), "c-v2").bot.owner == (
        "carol"
    )
    code, _, err = run(capsys, "owner", "disable", "nobody", "--server", server.address)
    assert code == 2 and "course 'cs101' has no owner named 'nobody'" in err

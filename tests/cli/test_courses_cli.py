"""``course``, ``invite``, ``bot register`` and ``bot rotate-own`` against the admin and
registration services on port 0 (real servicers and SQLite storage, the fake arena of
tests/fakes/admin_server.py). A command that makes a secret prints only the secrets on stdout.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shlex
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from domino_arena.server.cli.arguments import CliError
from domino_arena.server.cli.courses import expiry_of
from domino_arena.server.store.bots import BotCheck
from tests.fakes.admin_server import AdminServer

from .harness import admin, admin_server, cli, run, table_rows

NOW = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)


def secret(capsys: pytest.CaptureFixture[str], server: AdminServer, *args: str) -> str:
    """Run a command that prints secrets (what it did goes to stderr); return stdout."""
    code, out, err = run(capsys, *args, "--server", server.address)
    assert code == 0, err
    return out


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AdminServer]:
    with admin_server(tmp_path, monkeypatch) as server:
        yield server


def test_course_create_prints_the_organizer_token_once_and_list_shows_it(
    capsys: pytest.CaptureFixture[str], server: AdminServer
) -> None:
    code, out, err = cli(
        capsys,
        "course create cs101 --title Intro --anonymous --baseline greedy=1500",
        "--baseline",
        "random=1000",
        "--server",
        server.address,
    )
    assert code == 0, err
    token = out.removesuffix("\n")
    assert re.fullmatch(r"cs101:[0-9a-f]{64}", token), out
    assert "organizer token, shown only this once" in err
    assert server.arena.storage.organizer_course(token) == "cs101"
    rows = table_rows(admin(capsys, server, "course", "list"))
    assert rows[0][:5] == ["course", "title", "bots", "owners", "baselines"]
    assert [row[0] for row in rows[1:]] == ["cs101", "default"]
    assert rows[1][4] == "greedy=1500, random=1000" and rows[1][5] == "yes"
    shown = json.loads(admin(capsys, server, "course", "show", "cs101", "--json"))
    assert shown["title"] == "Intro" and shown["anonymous"] is True


def test_course_update_and_rotate_token(
    capsys: pytest.CaptureFixture[str], server: AdminServer
) -> None:
    old = secret(capsys, server, "course", "create", "cs101").strip()
    flags = "--no-anonymous --allow-same-owner-tables --baseline search=1700 --json"
    out = admin(capsys, server, "course", "update", "cs101", *flags.split(" "))
    changed = json.loads(out)
    assert changed["allow_same_owner_tables"] is True
    assert changed["baselines"] == [{"bot": "search", "rating": 1700.0}]
    cleared = json.loads(
        admin(capsys, server, "course", "update", "cs101", "--no-baselines", "--json")
    )
    assert cleared["baselines"] == []
    new = secret(capsys, server, "course", "rotate-token", "cs101").strip()
    assert new != old and server.arena.storage.organizer_course(old) is None
    code, _, err = run(
        capsys, "course", "update", "cs101", "--baseline", "nobody=1", "--server", server.address
    )
    assert code == 2 and "baselines[0].bot: unknown house bot 'nobody'" in err


def test_invites_create_list_revoke_and_a_student_registers(
    capsys: pytest.CaptureFixture[str],
    server: AdminServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    organizer = secret(capsys, server, "course", "create", "cs101").strip()
    monkeypatch.setenv("DOMINO_ARENA_ADMIN_TOKEN", organizer)  # the organizer from now on
    codes = secret(capsys, server, "invite", "create", "--count", "2", "--valid-for", "14d")
    first, second = codes.split()
    assert first.startswith("cs101:") and second.startswith("cs101:")
    listed = table_rows(admin(capsys, server, "invite", "list"))
    assert listed[0] == ["id", "course", "used", "expires", "state", "created"]
    assert {row[2] for row in listed[1:]} == {"0/1"} and {row[4] for row in listed[1:]} == {"open"}
    token_file, owner_file = tmp_path / "annbot.token", tmp_path / "ann.owner"
    code, out, err = run(
        capsys,
        *f"bot register annbot --invite {first} --owner ann".split(),
        "--token-file",
        str(token_file),
        "--owner-token-file",
        str(owner_file),
        "--server",
        server.address,
    )
    assert (code, out) == (0, ""), err
    assert "registered bot 'annbot' in course 'cs101'" in err
    assert "you are owner 'ann' of course 'cs101'" in err
    assert owner_file.read_text().startswith("cs101:ann:")
    assert stat.S_IMODE(os.stat(owner_file).st_mode) == 0o600
    token = token_file.read_text().strip()
    assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600
    assert server.arena.storage.check_bot("annbot", token) is BotCheck.OK
    # Rotating one's own token rewrites the file.
    code, out, err = cli(
        capsys,
        "bot rotate-own annbot --token-file",
        str(token_file),
        "--server",
        server.address,
    )
    assert (code, out) == (0, ""), err
    new = token_file.read_text().strip()
    assert new != token and server.arena.storage.check_bot("annbot", new) is BotCheck.OK
    # The organizer's bot list is its course's alone.
    rows = table_rows(admin(capsys, server, "bot", "list"))
    assert [row[:3] for row in rows[1:]] == [["annbot", "cs101", "ann"]]
    invite_id = second.split(":")[1]
    assert "is revoked" in admin(capsys, server, "invite", "revoke", invite_id)
    code, out, err = run(
        capsys, *f"bot register other --invite {second}".split(), "--server", server.address
    )
    assert code == 2 and out == ""
    assert "invite code not accepted: it is wrong, expired, revoked or used up" in err


def test_an_organizer_cannot_create_a_course(
    capsys: pytest.CaptureFixture[str], server: AdminServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    organizer = secret(capsys, server, "course", "create", "cs101").strip()
    monkeypatch.setenv("DOMINO_ARENA_ADMIN_TOKEN", organizer)
    code, _, err = run(capsys, "course", "create", "cs102", "--server", server.address)
    assert code == 2 and "CreateCourse needs the admin token" in err
    code, _, err = run(capsys, "bot", "list", "--course", "default", "--server", server.address)
    assert code == 2 and "cannot act in course 'default'" in err


def test_register_prints_the_token_without_a_file(
    capsys: pytest.CaptureFixture[str], server: AdminServer
) -> None:
    secret(capsys, server, "course", "create", "cs101")
    (invite,) = secret(
        capsys, server, "invite", "create", "--course", "cs101", "--count", "1"
    ).split()
    code, out, err = run(
        capsys, *f"bot register annbot --invite {invite}".split(), "--server", server.address
    )
    assert code == 0, err
    assert re.fullmatch(r"cs101:annbot:[0-9a-f]{64}\n[0-9a-f]{64}\n", out)  # owner, then bot


@pytest.mark.parametrize(
    ("expires", "valid_for", "expected"),
    [
        (None, None, None),
        (None, "14d", NOW + dt.timedelta(days=14)),
        (None, "30m", NOW + dt.timedelta(minutes=30)),
        (None, "2w", NOW + dt.timedelta(weeks=2)),
        ("2026-12-31T23:59Z", None, dt.datetime(2026, 12, 31, 23, 59, tzinfo=dt.UTC)),
    ],
)
def test_expiry_of(
    expires: str | None, valid_for: str | None, expected: dt.datetime | None
) -> None:
    assert expiry_of(expires, valid_for, NOW) == expected


@pytest.mark.parametrize(
    ("expires", "valid_for", "words"),
    [
        (None, "14", "--valid-for: expected a length of time"),
        (None, "0d", "--valid-for: expected a length of time"),
        ("tomorrow", None, "--expires: expected a time such as"),
        ("2026-12-31T23:59", None, "--expires: '2026-12-31T23:59' has no time zone"),
    ],
)
def test_expiry_of_refuses(expires: str | None, valid_for: str | None, words: str) -> None:
    with pytest.raises(CliError, match=re.escape(words)):
        expiry_of(expires, valid_for, NOW)


def test_course_flags_on_bots_ladders_matches_and_standings(
    capsys: pytest.CaptureFixture[str], server: AdminServer
) -> None:
    secret(capsys, server, "course", "create", "cs101")
    token = secret(capsys, server, *shlex.split("bot create zed --course cs101 --owner zoe"))
    assert token.strip()
    rows = table_rows(admin(capsys, server, "bot", "list", "--course", "cs101"))
    assert [row[:3] for row in rows[1:]] == [["zed", "cs101", "zoe"]]
    assert "ladder started" in admin(
        capsys, server, *shlex.split("ladder start passing --course cs101")
    )
    ladders = json.loads(admin(capsys, server, *shlex.split("ladder list --course cs101 --json")))
    assert [ladder["course"] for ladder in ladders["ladders"]] == ["cs101"]
    assert (
        json.loads(admin(capsys, server, *shlex.split("ladder list --course default --json")))[
            "ladders"
        ]
        == []
    )
    admin(capsys, server, *shlex.split("ladder stop passing --course cs101"))
    assert admin(capsys, server, *shlex.split("matches --course cs101")) == "no matches\n"
    code, _, err = run(
        capsys,
        *shlex.split("standings passing --elo-only --course cs101"),
        "--server",
        server.address,
    )
    assert code == 0, err

"""``bot submit``, ``bot versions``, ``logs`` and the hosted flags of ``tournament create`` and
``course update``, end to end against a real referee (tests/fakes/referee_server.py: the whole
App over gRPC, on SQLite), as a student and an organizer type them (docs/hosting.md)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from domino_arena.server.cli import hosted as hosted_cli
from domino_arena.server.hosting.spec import submissions
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.store import hosted
from domino_arena.server.store.tables import now
from tests.fakes.referee_server import ADMIN_TOKEN, Referee

from .harness import run, table_rows

BOT: Final = "from domino_arena.sdk import Bot\n\n\nclass MyBot(Bot):\n    '''Plays first.'''\n"


class Class:
    """A referee with course cs101: ann and bob each registered a bot; token files on disk."""

    def __init__(self, referee: Referee, folder: Path) -> None:
        self.referee = referee
        storage = referee.app.storage
        self.engine = storage.engine
        organizer = storage.create_course("cs101").token
        self.organizer = folder / "organizer"
        self.organizer.write_text(organizer + "\n")
        for student in ("ann", "bob"):
            (code,) = (i.code for i in storage.create_invites("cs101", 1))
            issued = storage.register_bot(code, f"{student}-v1", student)
            (folder / f"{student}.owner").write_text(issued.owner_token + "\n")
            (folder / f"{student}.token").write_text(issued.token + "\n")
        self.folder = folder
        (folder / "mybot.py").write_text(BOT)

    def file(self, name: str) -> str:
        return str(self.folder / name)


@pytest.fixture
def course(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Class]:
    for name in ("DOMINO_ARENA_SERVER", "DOMINO_ARENA_TOKEN", "DOMINO_ARENA_ADMIN_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    storage = RatedStorage(f"sqlite:///{tmp_path / 'cli.db'}")
    storage.open()
    referee = Referee(storage)
    yield Class(referee, tmp_path)
    referee.close()
    storage.close()


def cli(capsys: pytest.CaptureFixture[str], course: Class, *args: str) -> tuple[int, str, str]:
    return run(capsys, *args, "--server", course.referee.address)


def test_a_student_submits_waits_for_the_verdict_and_lists_the_versions(
    capsys: pytest.CaptureFixture[str], course: Class, monkeypatch: pytest.MonkeyPatch
) -> None:
    bot = course.file("mybot.py")
    code, out, err = cli(
        capsys, course, "bot", "submit", "ann-v1", bot, "--owner-token-file",
        course.file("ann.owner"), "--games", "moon,passing",
    )  # fmt: skip
    assert (code, err) == (0, "")
    assert out.startswith("ann-v1 v1 sha256:") and out.endswith(" B, checking\n"), out

    def validator(seconds: float) -> None:  # the arena's validator, while the CLI waits
        for version in hosted.checking_versions(course.engine):
            report = "passed: 4 games\nmoon: 1 match" if version.number == 2 else "no"
            hosted.set_verdict(
                course.engine, version.bot, version.number, accepted=version.number == 2,
                report=report,
            )  # fmt: skip

    monkeypatch.setattr(hosted_cli, "_pause", validator)
    code, out, err = cli(
        capsys, course, "bot", "submit", "ann-v1", bot, "--token-file",
        course.file("ann.token"), "--wait",
    )  # fmt: skip
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("ann-v1 v2 sha256:") and lines[0].endswith(", checking")
    assert lines[1:] == ["ann-v1 v2: accepted", "passed: 4 games", "moon: 1 match"]
    code, out, err = cli(
        capsys, course, "bot", "versions", "ann-v1", "--owner-token-file", course.file("ann.owner")
    )
    assert (code, err) == (0, "")
    rows = table_rows(out)
    assert rows[0] == ["version", "status", "size", "sha256", "submitted", "submitter", "report"]
    assert [row[:2] for row in rows[1:]] == [["v2", "accepted"], ["v1", "rejected"]]
    assert rows[1][5:] == ["bot ann-v1", "passed: 4 games"]
    assert rows[2][5] == "owner ann"
    code, out, err = cli(
        capsys, course, "bot", "versions", "ann-v1", "--json", "--admin-token-file",
        course.file("organizer"),
    )  # fmt: skip
    assert (code, err) == (0, "")
    document = json.loads(out)
    assert [v["number"] for v in document["versions"]] == [2, 1]
    assert document["versions"][1]["games"] == ["moon", "passing"]
    assert document["versions"][0]["status"] == "BOT_VERSION_STATUS_ACCEPTED"


def test_a_rejected_wait_exits_1_and_bad_submissions_say_why(
    capsys: pytest.CaptureFixture[str], course: Class, monkeypatch: pytest.MonkeyPatch
) -> None:
    def reject(seconds: float) -> None:
        for version in hosted.checking_versions(course.engine):
            hosted.set_verdict(
                course.engine, version.bot, version.number, accepted=False,
                report="rejected: MyBot.choose raised ValueError\x1b[2J",
            )  # fmt: skip

    monkeypatch.setattr(hosted_cli, "_pause", reject)
    owner = ("--owner-token-file", course.file("ann.owner"))
    code, out, err = cli(
        capsys, course, "bot", "submit", "ann-v1", course.file("mybot.py"), "--wait", *owner
    )
    assert (code, err) == (1, "")
    assert out.splitlines()[1:] == [
        "ann-v1 v1: rejected",
        "rejected: MyBot.choose raised ValueError\\u001b[2J",
    ]
    code, out, err = cli(capsys, course, "bot", "submit", "ann-v1", course.file("nope.py"), *owner)
    assert (code, out) == (2, "") and "bot submit:" in err and "no such file" in err
    code, out, err = cli(capsys, course, "bot", "submit", "bob-v1", course.file("mybot.py"), *owner)
    assert (code, out) == (2, "")
    assert "bot 'bob-v1' is not a bot of owner ann" in err
    code, out, err = cli(capsys, course, "bot", "submit", "ann-v1", course.file("mybot.py"))
    assert code == 2 and "no token: pass --owner-token-file" in err
    folder = course.folder / "folder"
    folder.mkdir()
    code, out, err = cli(capsys, course, "bot", "submit", "ann-v1", str(folder), *owner)
    assert code == 2 and "needs a command (--command ./run.sh)" in err


def test_logs_reach_the_owner_and_the_organizer_escaped_and_never_another_student(
    capsys: pytest.CaptureFixture[str], course: Class
) -> None:
    for bot in ("ann-v1", "bob-v1"):
        version = hosted.add_version(
            course.engine,
            bot,
            submissions.pack(course.folder / "mybot.py"),
            submitter="x",
            games=(),
            now=now(),
        )
        hosted.set_verdict(course.engine, bot, version.number, accepted=True, report="")
        text = f"{bot} thinks\n\x1b[2Jclear\n"
        hosted.record_match_log(course.engine, "m-1", bot, 1, text, crashed=False, now=now())
    code, out, err = cli(
        capsys, course, "logs", "m-1", "--owner-token-file", course.file("ann.owner")
    )
    assert (code, err) == (0, "")
    assert out.splitlines() == ["== ann-v1 v1 ==", "ann-v1 thinks", "\\u001b[2Jclear"]
    code, out, err = cli(
        capsys, course, "logs", "m-1", "--bot", "ann-v1", "--token-file", course.file("bob.token")
    )
    assert (code, out) == (2, "") and "token not accepted" in err
    code, out, err = cli(
        capsys, course, "logs", "m-1", "--admin-token-file", course.file("organizer")
    )
    assert (code, err) == (0, "")
    assert [line for line in out.splitlines() if line.startswith("==")] == [
        "== ann-v1 v1 ==",
        "== bob-v1 v1 ==",
    ]
    code, out, err = cli(capsys, course, "logs", "m-1", "--admin-token", ADMIN_TOKEN, "--json")
    assert [log["bot"] for log in json.loads(out)["logs"]] == ["ann-v1", "bob-v1"]


def test_an_organizer_pins_versions_and_sets_limits(
    capsys: pytest.CaptureFixture[str], course: Class
) -> None:
    version = hosted.add_version(
        course.engine,
        "ann-v1",
        submissions.pack(course.folder / "mybot.py"),
        submitter="x",
        games=(),
        now=now(),
    )
    hosted.set_verdict(course.engine, "ann-v1", version.number, accepted=True, report="")
    organizer = ("--admin-token-file", course.file("organizer"))
    code, out, err = cli(
        capsys, course, "tournament", "create", "passing", "--bots", "ann-v1,bob-v1",
        "--pin", "ann-v1=1", "--bot-memory-mb", "256", *organizer,
    )  # fmt: skip
    assert code == 0, err
    assert "  hosted versions: ann-v1 v1" in out.splitlines()
    assert "  sandbox limits: memory_mb 256" in out.splitlines()
    code, out, err = cli(
        capsys, course, "tournament", "create", "passing", "--bots", "ann-v1,bob-v1",
        "--pin", "ann-v1=2", *organizer,
    )  # fmt: skip
    assert code == 2 and "version_pins: bot ann-v1 has no version 2 (its versions are 1)" in err
    code, out, err = cli(
        capsys, course, "tournament", "create", "passing", "--bots", "ann-v1,bob-v1",
        "--pin", "ann-v1", *organizer,
    )  # fmt: skip
    assert code == 2 and "expected BOT=VERSION such as ann-v1=3" in err
    for flags in (("--bot-memory-mb", "256"), ("--bot-cpu-seconds", "60")):
        code, out, err = cli(capsys, course, "course", "update", "cs101", *flags, *organizer)
        assert code == 0, err
    assert "hosted bots' limits: memory_mb 256, cpu_seconds 60" in out
    code, out, err = cli(
        capsys, course, "course", "update", "cs101", "--bot-processes", "1", *organizer
    )
    assert code == 2 and "hosting_limits: sandbox limit processes: must be between 2" in err

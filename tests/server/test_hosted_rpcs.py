"""Hosted bots over real gRPC (server/net/hosted_bots.py; tests/fakes/admin_server.py on SQLite):
an owner submits with the owner token or the bot's own token, the archive is checked again at
the server, the versions are listed for the owner, the organizer and the admin, and a match's
logs reach only their bot's owner and the course's organizer, never another student."""

from __future__ import annotations

import datetime as dt
import functools
import io
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import grpc
import pytest

from domino_arena.server.hosting.spec import submissions
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.store import hosted
from domino_arena.server.store.tables import now
from domino_arena.v1 import admin_pb2 as admin_pb
from tests.fakes.admin_server import TOKEN, AdminServer, FakeArena, refused
from tests.fakes.referee_server import WAIT

COURSE: Final = "cs101"
BOT_SOURCE: Final = (
    "from domino_arena.sdk import Bot\n\n\nclass MyBot(Bot):\n    '''Plays first.'''\n"
)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[AdminServer]:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'hosted.db'}")
    storage.open()
    server = AdminServer(FakeArena(storage))
    yield server
    server.close()
    storage.close()


class Class:
    """A course with an organizer and two students, each with a bot."""

    def __init__(self, server: AdminServer) -> None:
        storage = server.arena.storage
        self.organizer = storage.create_course(COURSE).token
        ann_code, bob_code = (i.code for i in storage.create_invites(COURSE, 2))
        ann = storage.register_bot(ann_code, "ann-v1", "ann")
        bob = storage.register_bot(bob_code, "bob-v1", "bob")
        self.ann_owner, self.ann_bot = ann.owner_token, ann.token
        self.bob_owner, self.bob_bot = bob.owner_token, bob.token


@pytest.fixture
def course(server: AdminServer) -> Class:
    return Class(server)


def meta(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def packed(tmp_path: Path, source: str = BOT_SOURCE) -> submissions.Submission:
    (tmp_path / "mybot.py").write_text(source)
    return submissions.pack(tmp_path / "mybot.py")


def submit(server: AdminServer, token: str, name: str, archive: bytes, **fields: Any) -> Any:
    fields = {"kind": "python", "entry": "mybot.py:MyBot", **fields}
    request = admin_pb.SubmitBotRequest(name=name, archive=archive, **fields)
    return server.registration.SubmitBot(request, metadata=meta(token), timeout=WAIT)


def refused_submit(
    server: AdminServer, token: str, name: str, archive: bytes, **fields: Any
) -> tuple[grpc.StatusCode, str]:
    return refused(functools.partial(submit, server, token, name, archive, **fields))


def list_versions(server: AdminServer, token: str, name: str) -> Any:
    request = admin_pb.ListBotVersionsRequest(name=name)
    return server.registration.ListBotVersions(request, metadata=meta(token), timeout=WAIT)


def test_an_owner_submits_with_the_owner_token_or_the_bots_and_lists_the_versions(
    server: AdminServer, course: Class, tmp_path: Path
) -> None:
    bot = packed(tmp_path)
    first = submit(server, course.ann_owner, "ann-v1", bot.archive, games=["moon", "moon"])
    assert (first.bot, first.number, first.status, first.submitter) == (
        "ann-v1",
        1,
        admin_pb.BOT_VERSION_STATUS_CHECKING,
        "owner ann",
    )
    assert (first.sha256, first.kind, first.entry, list(first.games)) == (
        bot.sha256,
        "python",
        "mybot.py:MyBot",
        ["moon"],
    )
    second = submit(server, course.ann_bot, "ann-v1", bot.archive)
    assert (second.number, second.submitter, list(second.games)) == (2, "bot ann-v1", [])
    stored = hosted.version_archive(server.arena.storage.engine, "ann-v1", 2)
    assert stored == bot
    request = admin_pb.ListBotVersionsRequest(name="ann-v1")
    for token in (course.ann_owner, course.ann_bot):
        listed = server.registration.ListBotVersions(request, metadata=meta(token), timeout=WAIT)
        assert [v.number for v in listed.versions] == [2, 1]
    for token in (course.organizer, TOKEN):
        listed = server.admin.ListBotVersions(request, metadata=meta(token), timeout=WAIT)
        assert [v.number for v in listed.versions] == [2, 1]


def test_another_student_a_stranger_and_the_runners_token_are_refused(
    server: AdminServer, course: Class, tmp_path: Path
) -> None:
    archive = packed(tmp_path).archive
    hosted.set_runner_token(server.arena.storage.engine, "ann-v1", "runner-token")
    for token, status, start in (
        (course.bob_owner, grpc.StatusCode.PERMISSION_DENIED, "name: bot 'ann-v1' is not a bot"),
        (course.bob_bot, grpc.StatusCode.UNAUTHENTICATED, "token not accepted"),
        ("runner-token", grpc.StatusCode.UNAUTHENTICATED, "token not accepted"),
        (course.organizer, grpc.StatusCode.UNAUTHENTICATED, "token not accepted"),
    ):
        got, details = refused_submit(server, token, "ann-v1", archive)
        assert (got, details[: len(start)]) == (status, start)
        got, _ = refused(functools.partial(list_versions, server, token, "ann-v1"))
        assert got is status
    other = server.arena.storage.create_course("other").token
    got, details = refused(
        lambda: server.admin.ListBotVersions(
            admin_pb.ListBotVersionsRequest(name="ann-v1"), metadata=meta(other), timeout=WAIT
        )
    )
    assert (got, details) == (grpc.StatusCode.NOT_FOUND, "name: no bot is named 'ann-v1'")
    assert hosted.versions(server.arena.storage.engine, "ann-v1") == []


def tar_with(name: str, data: bytes) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        member = tarfile.TarInfo(name)
        member.size = len(data)
        archive.addfile(member, io.BytesIO(data))
    return buffer.getvalue()


def test_a_bad_submission_is_refused_naming_the_field_and_the_rule(
    server: AdminServer, course: Class, tmp_path: Path
) -> None:
    good = packed(tmp_path).archive
    for name, archive, fields, start in (
        ("ann-v1", good, {"kind": "java"}, "kind: expected one of python, command, got 'java'"),
        ("ann-v1", good, {"games": ["chess"]}, "games: unknown game 'chess'; expected some of "),
        ("ann-v1", b"not a tar", {}, "archive: "),
        ("ann-v1", tar_with("../evil.py", b"x"), {}, "archive: "),
        ("ann-v1", b"x" * (submissions.MAX_ARCHIVE_BYTES + 1), {}, "archive: 3,145,729 bytes;"),
        ("bad name!", good, {}, "name: bad bot name 'bad name!'"),
    ):
        got, details = refused_submit(server, course.ann_owner, name, archive, **fields)
        assert got is grpc.StatusCode.INVALID_ARGUMENT, details
        assert details.startswith(start), details
    traversal = tar_with("../evil.py", b"x")
    assert "../evil.py" in refused_submit(server, course.ann_owner, "ann-v1", traversal)[1]
    assert hosted.versions(server.arena.storage.engine, "ann-v1") == []


def test_past_the_days_versions_a_submission_is_resource_exhausted(
    server: AdminServer, course: Class, tmp_path: Path
) -> None:
    bot = packed(tmp_path)
    engine = server.arena.storage.engine
    for _ in range(hosted.MAX_VERSIONS_PER_DAY):
        hosted.add_version(engine, "ann-v1", bot, submitter="x", games=(), now=now())
    got, details = refused_submit(server, course.ann_owner, "ann-v1", bot.archive)
    assert got is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert details.startswith("bot ann-v1: at most 20 versions in 24 hours; the next may be")


def test_a_matchs_logs_reach_their_owner_and_the_organizer_only(
    server: AdminServer, course: Class, tmp_path: Path
) -> None:
    bot = packed(tmp_path)
    engine = server.arena.storage.engine
    moment = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
    for name in ("ann-v1", "bob-v1"):
        hosted.add_version(engine, name, bot, submitter="x", games=(), now=moment)
        hosted.set_verdict(engine, name, 1, accepted=True, report="")
        hosted.record_match_log(
            engine, "m-1", name, 1, f"{name} thinks\n", crashed=name == "bob-v1", now=moment
        )

    def student(token: str, bot: str = "") -> list[tuple[str, str, bool]]:
        request = admin_pb.GetMatchLogRequest(match_id="m-1", bot=bot)
        answer = server.registration.GetMatchLog(request, metadata=meta(token), timeout=WAIT)
        return [(log.bot, log.text, log.crashed) for log in answer.logs]

    assert student(course.ann_owner) == [("ann-v1", "ann-v1 thinks\n", False)]
    assert student(course.ann_bot, "ann-v1") == [("ann-v1", "ann-v1 thinks\n", False)]
    assert student(course.bob_owner) == [("bob-v1", "bob-v1 thinks\n", True)]
    got, details = refused(lambda: student(course.bob_owner, "ann-v1"))
    assert got is grpc.StatusCode.PERMISSION_DENIED
    got, _ = refused(lambda: student(course.bob_bot, "ann-v1"))
    assert got is grpc.StatusCode.UNAUTHENTICATED
    got, _ = refused(lambda: student(course.ann_bot))  # a bot token names its bot
    assert got is grpc.StatusCode.UNAUTHENTICATED
    request = admin_pb.GetMatchLogRequest(match_id="m-2")
    got, details = refused(
        lambda: server.registration.GetMatchLog(
            request, metadata=meta(course.ann_owner), timeout=WAIT
        )
    )
    assert (got, details) == (
        grpc.StatusCode.NOT_FOUND,
        "match_id: no log of a hosted bot you may read is kept for match m-2",
    )
    for token in (course.organizer, TOKEN):
        answer = server.admin.GetMatchLog(
            admin_pb.GetMatchLogRequest(match_id="m-1"), metadata=meta(token), timeout=WAIT
        )
        assert [log.bot for log in answer.logs] == ["ann-v1", "bob-v1"]
    other = server.arena.storage.create_course("other").token
    got, _ = refused(
        lambda: server.admin.GetMatchLog(
            admin_pb.GetMatchLogRequest(match_id="m-1"), metadata=meta(other), timeout=WAIT
        )
    )
    assert got is grpc.StatusCode.NOT_FOUND

"""The hosted versions a tournament plays and the sandbox limits it sets, through a real referee
(tests/fakes/referee_server.py: the whole App over gRPC, on SQLite): the organizer's pins are
checked against accepted versions, every other hosted entrant's current version is frozen when
the tournament starts (a later version does not change it), and limits are set per course and
per tournament, each refused out of its range with the limit named."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import grpc
import pytest

from domino_arena.sdk.rules import make_game
from domino_arena.sdk.wire import game_to_proto
from domino_arena.server.hosting.spec.limits import SandboxLimits
from domino_arena.server.hosting.spec.submissions import Submission
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.store import hosted
from domino_arena.v1 import admin_pb2 as admin_pb
from tests.fakes.referee_server import WAIT, Referee

MOMENT: Final = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)


@pytest.fixture
def referee(tmp_path: Path) -> Iterator[Referee]:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'pins.db'}")
    storage.open()
    for name in ("ann", "bob", "cid"):
        storage.create_bot(name)
    referee = Referee(storage)
    yield referee
    referee.close()
    storage.close()


def version(storage: RatedStorage, bot: str, *, accepted: bool = True) -> int:
    """A new version of ``bot`` with its verdict; its number."""
    data = f"{bot} {len(hosted.versions(storage.engine, bot))}".encode()
    added = hosted.add_version(
        storage.engine,
        bot,
        Submission("python", "mybot.py:MyBot", data, hashlib.sha256(data).hexdigest(), 1, 1),
        submitter=f"bot {bot}",
        games=(),
        now=MOMENT,
    )
    hosted.set_verdict(storage.engine, bot, added.number, accepted=accepted, report="")
    return added.number


def create(referee: Referee, **fields: Any) -> Any:
    request = admin_pb.CreateTournamentRequest(
        name="cup",
        game=game_to_proto(make_game("passing", players=2)),
        entrants=["ann", "bob", "cid"],
        wait_ms=86_400_000,  # no game is played without its bots while the test looks
        **fields,
    )
    return referee.admin.CreateTournament(request, timeout=WAIT)


def refusal(call: Any) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as info:
        call()
    error: Any = info.value
    return error.code(), error.details()


def test_pins_are_kept_and_the_other_hosted_entrants_are_frozen_at_the_start(
    referee: Referee,
) -> None:
    storage = referee.app.storage
    version(storage, "ann")
    version(storage, "ann")
    version(storage, "bob")
    made = create(referee, version_pins={"ann": 1})
    assert dict(made.version_pins) == {"ann": 1}
    version(storage, "bob")  # before the start: the start freezes this one
    referee.admin.StartTournament(
        admin_pb.StartTournamentRequest(tournament_id=made.id), timeout=WAIT
    )
    started = referee.admin.GetTournament(
        admin_pb.GetTournamentRequest(tournament_id=made.id), timeout=WAIT
    )
    assert dict(started.version_pins) == {"ann": 1, "bob": 2}
    version(storage, "bob")
    version(storage, "cid")
    played = hosted.version_for_match(storage.engine, "bob", f"{made.id}-00001")
    assert played is not None and played.number == 2
    assert hosted.version_for_match(storage.engine, "cid", f"{made.id}-00001") is None
    current = hosted.version_for_match(storage.engine, "bob", "ladder-match")
    assert current is not None and current.number == 3


def test_a_pin_to_a_version_that_is_not_accepted_or_a_bot_not_entered_is_refused(
    referee: Referee,
) -> None:
    storage = referee.app.storage
    version(storage, "ann")
    version(storage, "ann", accepted=False)
    for pins, expected in (
        ({"ann": 2}, "version_pins: bot ann v2 is rejected; only an accepted version may be"),
        ({"ann": 7}, "version_pins: bot ann has no version 7 (its versions are 2, 1)"),
        ({"bob": 1}, "version_pins: bot bob has no version 1 (it has none)"),
        ({"zed": 1}, "version_pins: 'zed' is not a bot of course 'default'"),
    ):
        status, details = refusal(lambda p=pins: create(referee, version_pins=p))
        assert status is grpc.StatusCode.INVALID_ARGUMENT
        assert details.startswith(expected), details
    storage.create_bot("dan")
    version(storage, "dan")
    status, details = refusal(lambda: create(referee, version_pins={"dan": 1}))
    assert (status, details) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "version_pins: 'dan' is not an entrant of the tournament",
    )


def test_limits_are_set_per_course_and_per_tournament_and_checked(referee: Referee) -> None:
    storage = referee.app.storage
    course = referee.admin.UpdateCourse(
        admin_pb.UpdateCourseRequest(
            course="default", hosting_limits=admin_pb.HostingLimits(memory_mb=256, log_kb=32)
        ),
        timeout=WAIT,
    )
    assert (course.hosting_limits.memory_mb, course.hosting_limits.cpu_seconds) == (256, 0)
    made = create(referee, hosting_limits=admin_pb.HostingLimits(cpu_seconds=60))
    assert made.hosting_limits == admin_pb.HostingLimits(cpu_seconds=60)
    assert hosted.hosting_limits_for(
        storage.engine, course="default", tournament_id=made.id
    ) == SandboxLimits(memory_mb=256, log_kb=32, cpu_seconds=60)
    status, details = refusal(
        lambda: create(referee, hosting_limits=admin_pb.HostingLimits(memory_mb=10))
    )
    assert (status, details) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "hosting_limits: sandbox limit memory_mb: must be between 64 and 65536, got 10",
    )
    status, _ = refusal(
        lambda: referee.admin.UpdateCourse(
            admin_pb.UpdateCourseRequest(
                course="default", title="x", hosting_limits=admin_pb.HostingLimits(processes=1)
            ),
            timeout=WAIT,
        )
    )
    assert status is grpc.StatusCode.INVALID_ARGUMENT
    status, _ = refusal(  # a bad title: the good limits beside it are not set either
        lambda: referee.admin.UpdateCourse(
            admin_pb.UpdateCourseRequest(
                course="default", title="x" * 300, hosting_limits=admin_pb.HostingLimits()
            ),
            timeout=WAIT,
        )
    )
    assert status is grpc.StatusCode.INVALID_ARGUMENT
    unchanged = storage.course("default")
    assert unchanged is not None and unchanged.title != "x"
    assert unchanged.hosting_limits == {"memory_mb": 256, "log_kb": 32}
    cleared = referee.admin.UpdateCourse(
        admin_pb.UpdateCourseRequest(course="default", hosting_limits=admin_pb.HostingLimits()),
        timeout=WAIT,
    )
    assert cleared.hosting_limits == admin_pb.HostingLimits()

"""Hosted bots as stored (server/store/hosted.py, hosted_logs.py, hosted_settings.py), on SQLite
and PostgreSQL: versions numbered per bot and limited per day, verdicts, the current version,
logs cut to 64 KiB and the crash streak that suspends, the runner's token, and the versions and
sandbox limits a tournament plays with."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
from typing import Final

import pytest

from domino_arena.server.hosting.spec.limits import SandboxLimits
from domino_arena.server.hosting.spec.submissions import Submission
from domino_arena.server.store import hosted, hosted_settings
from domino_arena.server.store.bots import BotCheck, UnknownBotError
from domino_arena.server.store.courses import UnknownCourseError
from domino_arena.server.store.hosted import (
    MAX_VERSIONS_PER_DAY,
    SUSPEND_AFTER_CRASHES,
    UnknownVersionError,
    VersionLimitError,
)
from domino_arena.server.store.storage import Storage
from domino_arena.server.store.tournaments import TournamentState
from tests.fakes.store import running_tournament

MOMENT: Final = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)


def submission(content: bytes = b"bot", *, kind: str = "python") -> Submission:
    entry = "mybot.py:MyBot" if kind == "python" else "./run.sh"
    return Submission(kind, entry, content, hashlib.sha256(content).hexdigest(), 100, 1)


def submit(
    storage: Storage, bot: str, *, accepted: bool | None = True, minutes: int = 0
) -> hosted.BotVersion:
    """Add a version of ``bot`` (and give it its verdict unless ``accepted`` is None)."""
    added = hosted.add_version(
        storage.engine,
        bot,
        submission(f"{bot} {minutes}".encode()),
        submitter="owner ann",
        games=("moon", "passing"),
        now=MOMENT + dt.timedelta(minutes=minutes),
    )
    if accepted is not None:
        hosted.set_verdict(storage.engine, bot, added.number, accepted=accepted, report="checked")
    return added


def test_versions_are_numbered_per_bot_kept_whole_and_listed_newest_first(
    storage: Storage,
) -> None:
    storage.create_bot("ann-v1")
    storage.create_bot("bob-v1")
    first = hosted.add_version(
        storage.engine,
        "ann-v1",
        submission(b"\x00\x01archive"),
        submitter="x" * 100 + "\n",
        games=(),
        now=MOMENT,
    )
    assert (first.number, first.status, first.games, first.crash_streak) == (1, "checking", (), 0)
    assert first.submitter == "x" * 64
    second = submit(storage, "ann-v1", accepted=None, minutes=1)
    assert submit(storage, "bob-v1", accepted=None).number == 1
    assert second.number == 2 and second.games == ("moon", "passing")
    listed = hosted.versions(storage.engine, "ann-v1")
    assert [v.number for v in listed] == [2, 1]
    assert listed[1] == first and listed[1].created == MOMENT
    assert hosted.version_archive(storage.engine, "ann-v1", 1) == submission(b"\x00\x01archive")
    assert hosted.version_archive(storage.engine, "ann-v1", 3) is None
    assert hosted.versions(storage.engine, "nobody") == []


def test_a_version_of_an_unknown_or_deleted_bot_or_with_a_bad_field_is_refused(
    storage: Storage,
) -> None:
    with pytest.raises(UnknownBotError, match="no bot is named 'ghost'"):
        submit(storage, "ghost")
    storage.create_bot("gone")
    storage.delete_bot("gone")
    with pytest.raises(UnknownBotError, match="a deleted bot takes no version: 'gone'"):
        submit(storage, "gone")
    storage.create_bot("ann-v1")
    add = hosted.add_version
    with pytest.raises(ValueError, match=r"^kind: expected one of python, command, got 'java'"):
        add(storage.engine, "ann-v1", submission(kind="java"), submitter="", games=(), now=MOMENT)
    with pytest.raises(ValueError, match=r"^games: 'a,b' is not a game name"):
        add(storage.engine, "ann-v1", submission(), submitter="", games=("a,b",), now=MOMENT)
    assert hosted.versions(storage.engine, "ann-v1") == []


def test_a_bot_submits_at_most_the_days_limit_in_any_24_hours(storage: Storage) -> None:
    storage.create_bot("ann-v1")
    for minute in range(MAX_VERSIONS_PER_DAY):
        submit(storage, "ann-v1", accepted=None, minutes=minute)
    with pytest.raises(
        VersionLimitError,
        match=r"^bot ann-v1: at most 20 versions in 24 hours; the next may be submitted at "
        r"2026-03-02T12:00:00Z$",
    ):
        submit(storage, "ann-v1", accepted=None, minutes=60)
    storage.create_bot("bob-v1")
    assert submit(storage, "bob-v1", accepted=None, minutes=60).number == 1
    later = submit(storage, "ann-v1", accepted=None, minutes=24 * 60)
    assert later.number == MAX_VERSIONS_PER_DAY + 1


def test_the_validator_takes_checking_versions_oldest_first_and_gives_each_one_verdict(
    storage: Storage,
) -> None:
    storage.create_bot("ann-v1")
    storage.create_bot("bob-v1")
    submit(storage, "bob-v1", accepted=None, minutes=2)
    submit(storage, "ann-v1", accepted=None, minutes=1)
    submit(storage, "ann-v1", accepted=None, minutes=3)
    queue = hosted.checking_versions(storage.engine)
    assert [(v.bot, v.number) for v in queue] == [("ann-v1", 1), ("bob-v1", 1), ("ann-v1", 2)]
    hosted.set_verdict(storage.engine, "ann-v1", 1, accepted=False, report="no Bot class\nline")
    hosted.set_verdict(storage.engine, "bob-v1", 1, accepted=True, report="passed 4 games")
    assert [(v.bot, v.number) for v in hosted.checking_versions(storage.engine)] == [("ann-v1", 2)]
    rejected = hosted.version(storage.engine, "ann-v1", 1)
    assert rejected is not None and (rejected.status, rejected.report) == (
        "rejected",
        "no Bot class\nline",
    )
    with pytest.raises(ValueError, match=r"^bot ann-v1 v1 is rejected already; only a checking"):
        hosted.set_verdict(storage.engine, "ann-v1", 1, accepted=True, report="")
    with pytest.raises(UnknownVersionError, match=r"^bot ann-v1 has no version 9$"):
        hosted.set_verdict(storage.engine, "ann-v1", 9, accepted=True, report="")


def test_the_current_version_is_the_newest_accepted_and_only_enabled_bots_are_hosted(
    storage: Storage,
) -> None:
    storage.create_course("cs101")
    storage.create_bot("ann-v1", course="cs101", owner="ann")
    storage.create_bot("bob-v1", course="cs101", owner="bob")
    storage.create_bot("cid-v1")
    submit(storage, "ann-v1", accepted=True)
    submit(storage, "ann-v1", accepted=False, minutes=1)
    submit(storage, "ann-v1", accepted=None, minutes=2)
    submit(storage, "bob-v1", accepted=True)
    submit(storage, "cid-v1", accepted=False)
    current = hosted.latest_accepted(storage.engine, "ann-v1")
    assert current is not None and current.number == 1
    assert hosted.latest_accepted(storage.engine, "cid-v1") is None
    assert hosted.hosted_bot_names(storage.engine) == ["ann-v1", "bob-v1"]
    hosted.set_verdict(storage.engine, "ann-v1", 3, accepted=True, report="")
    current = hosted.latest_accepted(storage.engine, "ann-v1")
    assert current is not None and current.number == 3
    storage.set_bot_enabled("ann-v1", False)
    storage.set_owner_enabled("cs101", "bob", False)
    assert hosted.hosted_bot_names(storage.engine) == []
    storage.set_bot_enabled("ann-v1", True)
    assert hosted.hosted_bot_names(storage.engine) == ["ann-v1"]


def test_a_log_keeps_its_head_within_64_kib_and_says_how_much_was_cut(storage: Storage) -> None:
    storage.create_bot("ann-v1")
    submit(storage, "ann-v1")
    text = "é" * 40_000 + "\x00end"  # 80,005 bytes of UTF-8
    assert not hosted.record_match_log(
        storage.engine, "m2", "ann-v1", 1, text, crashed=False, now=MOMENT
    )
    storage.create_bot("bob-v1")
    submit(storage, "bob-v1")
    hosted.record_match_log(storage.engine, "m2", "bob-v1", 1, "ok\x00", crashed=False, now=MOMENT)
    ann, bob = hosted.match_logs(storage.engine, "m2")
    assert (bob.bot, bob.version, bob.text, bob.crashed) == ("bob-v1", 1, "ok\ufffd", False)
    kept = ann.text.encode()
    assert len(kept) <= hosted.MAX_LOG_BYTES
    head, marker = ann.text.rsplit("\n", 1)
    assert set(head) == {"é"}
    assert marker == f"[... {len(text.encode()) - len(head.encode()) + 2} bytes cut]"
    assert hosted.match_logs(storage.engine, "other") == []
    with pytest.raises(UnknownVersionError):
        hosted.record_match_log(storage.engine, "m3", "ann-v1", 7, "", crashed=True, now=MOMENT)


def test_three_crashing_matches_in_a_row_suspend_the_version_and_a_clean_one_resets(
    storage: Storage,
) -> None:
    storage.create_bot("ann-v1")
    submit(storage, "ann-v1")
    log = hosted.record_match_log
    assert not log(storage.engine, "m1", "ann-v1", 1, "boom", crashed=True, now=MOMENT)
    assert not log(storage.engine, "m1", "ann-v1", 1, "boom again", crashed=True, now=MOMENT)
    assert not log(storage.engine, "m2", "ann-v1", 1, "boom", crashed=True, now=MOMENT)
    assert not log(storage.engine, "m3", "ann-v1", 1, "fine", crashed=False, now=MOMENT)
    counted = hosted.version(storage.engine, "ann-v1", 1)
    assert counted is not None and (counted.crash_streak, counted.status) == (0, "accepted")
    for number in range(1, SUSPEND_AFTER_CRASHES):
        assert not log(storage.engine, f"c{number}", "ann-v1", 1, "x", crashed=True, now=MOMENT)
    assert log(storage.engine, "c3", "ann-v1", 1, "Traceback", crashed=True, now=MOMENT)
    suspended = hosted.version(storage.engine, "ann-v1", 1)
    assert suspended is not None and suspended.status == "suspended"
    assert suspended.report.splitlines()[0] == (
        "suspended: it crashed in 3 matches in a row (the last c3, 2026-03-01T12:00:00Z); its "
        "logs say why (domino-arena logs c3 --bot ann-v1). Submit a new version to play again."
    )
    assert suspended.report.endswith("\n\nchecked")
    assert not log(storage.engine, "c4", "ann-v1", 1, "x", crashed=True, now=MOMENT)
    assert hosted.latest_accepted(storage.engine, "ann-v1") is None
    assert hosted.hosted_bot_names(storage.engine) == []
    submit(storage, "ann-v1", minutes=5)
    assert hosted.hosted_bot_names(storage.engine) == ["ann-v1"]


def test_the_runners_token_connects_the_bot_as_its_own_does_until_it_is_deleted(
    storage: Storage,
) -> None:
    token = storage.create_bot("ann-v1").token
    hosted.set_runner_token(storage.engine, "ann-v1", "runner-secret")
    assert storage.check_bot("ann-v1", "runner-secret") is BotCheck.OK
    assert storage.check_bot("ann-v1", token) is BotCheck.OK
    assert storage.check_bot("ann-v1", "guess") is BotCheck.WRONG_TOKEN
    storage.rotate_token("ann-v1")
    assert storage.check_bot("ann-v1", "runner-secret") is BotCheck.OK
    hosted.set_runner_token(storage.engine, "ann-v1", "")
    assert storage.check_bot("ann-v1", "runner-secret") is BotCheck.WRONG_TOKEN
    hosted.set_runner_token(storage.engine, "ann-v1", "runner-secret")
    storage.delete_bot("ann-v1")
    assert storage.check_bot("ann-v1", "runner-secret") is BotCheck.DELETED
    with pytest.raises(UnknownBotError, match="unknown or deleted"):
        hosted.set_runner_token(storage.engine, "ann-v1", "again")


def test_a_tournament_plays_its_pinned_versions_and_freezes_the_others_at_its_start(
    storage: Storage,
) -> None:
    for bot in ("ann-v1", "bob-v1", "cid-v1"):
        storage.create_bot(bot)
    submit(storage, "ann-v1")
    submit(storage, "ann-v1", minutes=1)
    submit(storage, "bob-v1")
    cup = dataclasses.replace(
        running_tournament("cup", ("ann-v1", "bob-v1", "cid-v1", "house:greedy")),
        id="cup-2026",
        state=TournamentState.CREATED,
        version_pins={"ann-v1": 1},
    )
    storage.add_tournament(cup)
    stored = storage.tournament("cup-2026")
    assert stored is not None and stored.version_pins == {"ann-v1": 1}

    def played(bot: str, match_id: str) -> int | None:
        found = hosted.version_for_match(storage.engine, bot, match_id)
        return None if found is None else found.number

    assert played("ann-v1", "cup-2026-00003") == 1
    assert played("bob-v1", "cup-2026-00003") == 1
    assert played("ann-v1", "ladder-7") == 2
    assert hosted_settings.freeze_versions(storage.engine, "cup-2026") == {
        "ann-v1": 1,
        "bob-v1": 1,
    }
    submit(storage, "bob-v1", minutes=2)
    assert played("bob-v1", "cup-2026-00004") == 1
    assert played("bob-v1", "cup-2026-x0004") == 2
    assert played("cid-v1", "cup-2026-00004") is None
    for number in range(1, SUSPEND_AFTER_CRASHES + 1):
        hosted.record_match_log(
            storage.engine, f"cup-2026-{number:05d}", "ann-v1", 1, "", crashed=True, now=MOMENT
        )
    assert played("ann-v1", "cup-2026-00009") is None
    assert hosted.tournament_of_match("cup-2026-00009") == "cup-2026"
    assert hosted.tournament_of_match("cup-0009") is None
    assert hosted.tournament_of_match("-00009") is None


def test_only_an_accepted_version_may_be_pinned(storage: Storage) -> None:
    storage.create_bot("ann-v1")
    submit(storage, "ann-v1")
    submit(storage, "ann-v1", accepted=False, minutes=1)
    hosted_settings.check_pins(storage.engine, {"ann-v1": 1})
    with pytest.raises(ValueError, match=r"^version_pins: bot ann-v1 v2 is rejected; only an"):
        hosted_settings.check_pins(storage.engine, {"ann-v1": 2})
    with pytest.raises(
        ValueError, match=r"^version_pins: bot ann-v1 has no version 3 \(its versions are 2, 1\)$"
    ):
        hosted_settings.check_pins(storage.engine, {"ann-v1": 3})
    with pytest.raises(ValueError, match=r"^version_pins: bot bob has no version 1 \(it has none"):
        hosted_settings.check_pins(storage.engine, {"bob": 1})


def test_sandbox_limits_are_the_tournaments_else_the_courses_else_the_defaults(
    storage: Storage,
) -> None:
    storage.create_course("cs101")
    limits = hosted.hosting_limits_for
    assert limits(storage.engine, course="cs101", tournament_id=None) == SandboxLimits()
    hosted_settings.set_course_limits(storage.engine, "cs101", {"memory_mb": 256, "log_kb": 0})
    assert hosted_settings.course_limits(storage.engine, "cs101") == {"memory_mb": 256}
    cup = dataclasses.replace(
        running_tournament("cup", ("a", "b")),
        course="cs101",
        hosting_limits={"cpu_seconds": 60, "memory_mb": 1024},
    )
    storage.add_tournament(cup)
    assert limits(storage.engine, course="cs101", tournament_id=None) == SandboxLimits(
        memory_mb=256
    )
    assert limits(storage.engine, course="cs101", tournament_id="t1") == SandboxLimits(
        memory_mb=1024, cpu_seconds=60
    )
    assert limits(storage.engine, course=None, tournament_id="nope") == SandboxLimits()
    with pytest.raises(ValueError, match=r"^sandbox limits: unknown limit 'swap_mb'"):
        hosted_settings.set_course_limits(storage.engine, "cs101", {"swap_mb": 1})
    with pytest.raises(UnknownCourseError):
        hosted_settings.set_course_limits(storage.engine, "nope", {"memory_mb": 100})
    hosted_settings.set_course_limits(storage.engine, "cs101", None)
    assert hosted_settings.course_limits(storage.engine, "cs101") == {}

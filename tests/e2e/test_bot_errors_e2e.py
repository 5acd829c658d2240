"""A bot whose ``choose`` raises, over real gRPC: the SDK's client sends the exception as
``ActionReply.error`` and the referee charges a ``bot_error`` fault with its text in the fault
message, the result, the record and the stored match (docs/referee.md, "Faults").

The referee is the whole app on port 0 (tests/fakes/referee_server.py); the crashing bot is the
SDK's own ``run_async`` in a thread of its own, its opponent a raw bot. A raw bot also sends a
hostile error by hand, which the referee escapes and bounds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from domino_arena.sdk import run_async
from domino_arena.sdk.match.records import parse_record, replay
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.bots import CRASH_MESSAGE, Crashing
from tests.fakes.referee_server import WAIT, RawBot, Referee, first_legal, passing_match

REASON: Final = f"ValueError: {CRASH_MESSAGE}"


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[RatedStorage]:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'errors.db'}")
    storage.open()
    yield storage
    storage.close()


class SdkBot:
    """The SDK's ``run_async`` playing ``bot`` in a thread with its own loop until closed."""

    def __init__(self, referee: Referee, name: str, token: str, bot: Crashing) -> None:
        self._loop = asyncio.new_event_loop()
        self._task: asyncio.Future[None] | None = None
        started = threading.Event()
        welcomed = threading.Event()

        class Welcomed(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                if record.getMessage().startswith("welcomed by"):
                    welcomed.set()

        self._handler = Welcomed()
        self._log = logging.getLogger("domino_arena.sdk.client")
        self._log.addHandler(self._handler)
        self._level = self._log.level
        self._log.setLevel(logging.INFO)

        def main() -> None:
            asyncio.set_event_loop(self._loop)
            self._task = asyncio.ensure_future(
                run_async(bot, server=referee.address, name=name, token=token)
            )
            self._loop.call_soon(started.set)
            with contextlib.suppress(asyncio.CancelledError):  # closed by the test
                self._loop.run_until_complete(self._task)

        self._thread = threading.Thread(target=main, daemon=True)
        self._thread.start()
        assert started.wait(WAIT) and welcomed.wait(WAIT), "the SDK bot was not welcomed"

    def close(self) -> None:
        task = self._task
        if task is not None:
            self._loop.call_soon_threadsafe(task.cancel)
        self._thread.join(WAIT)
        self._loop.close()
        self._log.removeHandler(self._handler)
        self._log.setLevel(self._level)


def test_a_crash_in_choose_is_a_bot_error_everywhere(
    storage: RatedStorage, caplog: pytest.LogCaptureFixture
) -> None:
    """Under ``forfeit`` the first crash ends the match: the bot's fault message, the result
    and its detail, the record, the stored match and the referee's log all name the
    exception."""
    caplog.set_level(logging.INFO, logger="domino_arena.server")
    referee = Referee(storage)
    tokens = {name: storage.add_bot(name) for name in ("student", "house")}
    student = SdkBot(referee, "student", tokens["student"], Crashing())
    try:
        referee.connect("house", tokens["house"])
        response = referee.admin.RunMatch(
            passing_match("student", "house", policy=pb.FAULT_POLICY_FORFEIT), timeout=WAIT
        )
    finally:
        student.close()
        referee.close()
    result = response.result
    assert (result.termination, result.fault, result.faulted_seat) == (
        pb.TERMINATION_FORFEIT,
        pb.FAULT_KIND_BOT_ERROR,
        0,
    )
    assert result.detail == f"seat 0 (student) forfeits: bot error at turn 1: {REASON}"
    record = parse_record(response.record)
    assert [(f.seat, f.kind, f.reason) for f in record.faults] == [(0, "bot_error", REASON)]
    assert replay(record).ok
    (stored,) = storage.matches(10)
    assert (stored.fault, stored.detail) == ("bot_error", result.detail)
    logged = f"seat 0 (student) bot error at turn 1 (strike 1, forfeited): {REASON}"
    assert logged in caplog.text


def test_a_bot_plays_on_after_its_errors_under_substitute(storage: RatedStorage) -> None:
    """Every other ``choose`` raises: each is a strike with the exception's text, the referee
    plays a substitute, and the third forfeits."""
    referee = Referee(storage)
    tokens = {name: storage.add_bot(name) for name in ("student", "house")}
    student = SdkBot(referee, "student", tokens["student"], Crashing(every=2))
    try:
        referee.connect("house", tokens["house"])
        response = referee.admin.RunMatch(
            passing_match("student", "house", policy=pb.FAULT_POLICY_SUBSTITUTE), timeout=WAIT
        )
    finally:
        student.close()
        referee.close()
    record = parse_record(response.record)
    assert [(f.kind, f.reason, f.strikes) for f in record.faults] == [
        ("bot_error", REASON, strike) for strike in (1, 2, 3)
    ]
    assert response.result.fault == pb.FAULT_KIND_BOT_ERROR
    assert sum(step.substituted for step in record.steps) == 2
    assert replay(record).ok


def test_a_hostile_error_is_escaped_and_bounded_and_both_fields_are_malformed(
    storage: RatedStorage,
) -> None:
    """A raw bot's error with line breaks and 100,000 characters reaches the fault as one
    bounded line; a reply with an action and an error is malformed."""
    flood = "line one\nline two " + "z" * 100_000
    answers: list[str] = []

    def hostile(bot: RawBot, request: pb.ActionRequest) -> None:
        reply = pb.ActionReply(match_id=request.match_id, turn=request.turn)
        if not answers:
            reply.error.CopyFrom(pb.BotError(type="Boom\r\n", message=flood))
        elif len(answers) == 1:
            reply.error.CopyFrom(pb.BotError(type="Boom", message="both"))
            reply.action.CopyFrom(request.observation.legal_actions[0])
        else:
            first_legal(bot, request)
            return
        answers.append(request.match_id)
        bot.send(pb.BotMessage(reply=reply))

    referee = Referee(storage)
    tokens = {name: storage.add_bot(name) for name in ("raw", "house")}
    try:
        raw = referee.connect("raw", tokens["raw"], policy=hostile)
        referee.connect("house", tokens["house"])
        response = referee.admin.RunMatch(
            passing_match("raw", "house", policy=pb.FAULT_POLICY_SUBSTITUTE), timeout=WAIT
        )
        faults = [m.fault for m in raw.messages("fault")]
    finally:
        referee.close()
    assert [f.kind for f in faults] == [pb.FAULT_KIND_BOT_ERROR, pb.FAULT_KIND_MALFORMED]
    reason = faults[0].reason
    assert reason.startswith("Boom: line one\\nline two zzz"), "stripped, then escaped"
    assert "\n" not in reason and len(reason) < 500
    assert reason.endswith("more characters)")
    assert faults[1].reason == "ActionReply sets both action and error; expected one of them"
    record = parse_record(response.record)
    assert [f.reason for f in record.faults] == [reason, faults[1].reason]

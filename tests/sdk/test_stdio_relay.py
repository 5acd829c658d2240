"""The stdio relay against a real referee (the whole app on port 0): a program reading JSON
lines plays through it, a crashed child is restarted and its match replayed, a child that breaks
the protocol is stopped with the reason and its seat faulted, the referee unharmed, and an idle
child is stopped and started again at the next match (docs/writing-a-bot.md, "Any language")."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from domino_arena.sdk.match.records import parse_record, replay
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.referee_server import WAIT, Referee, passing_match
from tests.fakes.stdio_bots import RelayThread, script_command, write_script


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[RatedStorage]:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'relay.db'}")
    storage.open()
    yield storage
    storage.close()


@pytest.fixture
def referee(storage: RatedStorage) -> Iterator[Referee]:
    referee = Referee(storage)
    yield referee
    referee.close()


def _seat(referee: Referee, storage: RatedStorage) -> str:
    """Connect the raw opponent "house"; return the student's token."""
    referee.connect("house", storage.add_bot("house"))
    return storage.add_bot("student")


def test_a_stdio_program_plays_a_match_through_the_relay(
    referee: Referee, storage: RatedStorage, tmp_path: Path
) -> None:
    token = _seat(referee, storage)
    relay = RelayThread(
        referee.address, "student", token, script_command(write_script(tmp_path), "play")
    )
    try:
        response = referee.admin.RunMatch(
            passing_match("student", "house", policy=pb.FAULT_POLICY_FORFEIT), timeout=WAIT
        )
    finally:
        relay.close()
    assert response.result.termination == pb.TERMINATION_NORMAL, response.result.detail
    record = parse_record(response.record)
    assert record.faults == () and replay(record).ok
    assert relay.exits == [] and relay.ended == [response.match_id]
    assert relay.text().startswith("started")


def test_a_child_that_crashes_mid_match_is_restarted_and_the_match_completes(
    referee: Referee, storage: RatedStorage, tmp_path: Path
) -> None:
    token = _seat(referee, storage)
    marker = tmp_path / "crashed"
    command = script_command(write_script(tmp_path), "crash-once", str(marker))
    relay = RelayThread(referee.address, "student", token, command)
    try:
        response = referee.admin.RunMatch(
            passing_match("student", "house", policy=pb.FAULT_POLICY_FORFEIT), timeout=WAIT
        )
    finally:
        relay.close()
    assert marker.exists()
    assert response.result.termination == pb.TERMINATION_NORMAL, response.result.detail
    assert parse_record(response.record).faults == ()
    assert relay.exits == [(3, (response.match_id,))]
    text = relay.text()
    assert "crashing on purpose" in text and "the bot was stopped: exit status 3" in text
    assert text.count("started") == 2


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("garbage", "stdout line 1: not JSON: Expecting value at column 1"),
        ("huge", "stdout line 1: line longer than 1048576 bytes"),
        ("not-a-message", "stdout line 1: not a BotMessage: "),
    ],
)
def test_a_child_that_breaks_the_protocol_is_stopped_and_its_seat_faulted(
    referee: Referee, storage: RatedStorage, tmp_path: Path, mode: str, reason: str
) -> None:
    token = _seat(referee, storage)
    relay = RelayThread(
        referee.address, "student", token, script_command(write_script(tmp_path), mode)
    )
    try:
        response = referee.admin.RunMatch(
            passing_match("student", "house", policy=pb.FAULT_POLICY_FORFEIT), timeout=WAIT
        )
        relay.wait_until(lambda: relay.exits != [])
    finally:
        relay.close()
    result = response.result
    assert (result.termination, result.fault, result.faulted_seat) == (
        pb.TERMINATION_FORFEIT,
        pb.FAULT_KIND_MALFORMED,
        0,
    )
    assert f"the bot was stopped: {reason}" in relay.text()
    # the referee is unharmed: two other bots play a whole match on it
    other = storage.add_bot("other")
    referee.connect("other", other)
    after = referee.admin.RunMatch(
        passing_match("other", "house", policy=pb.FAULT_POLICY_FORFEIT), timeout=WAIT
    )
    assert after.result.termination == pb.TERMINATION_NORMAL


def test_an_idle_child_is_stopped_and_started_again_at_the_next_match(
    referee: Referee, storage: RatedStorage, tmp_path: Path
) -> None:
    token = _seat(referee, storage)
    started: list[str] = []
    script = write_script(tmp_path)

    def command(match_id: str) -> object:
        started.append(match_id)
        return script_command(script, "play")

    relay = RelayThread(referee.address, "student", token, command, idle_stop_seconds=0.0)  # type: ignore[arg-type]
    try:
        first = referee.admin.RunMatch(
            passing_match("student", "house", policy=pb.FAULT_POLICY_FORFEIT), timeout=WAIT
        )
        relay.wait_until(lambda: b"bye" in relay.stderr)
        second = referee.admin.RunMatch(
            passing_match("student", "house", policy=pb.FAULT_POLICY_FORFEIT), timeout=WAIT
        )
        relay.wait_until(lambda: relay.stderr.count(b"bye") == 2)
    finally:
        relay.close()
    assert first.result.termination == second.result.termination == pb.TERMINATION_NORMAL
    assert started == [first.match_id, second.match_id]
    assert relay.exits == []

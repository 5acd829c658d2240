"""Rotation and revocation end to end: the whole referee on port 0 over real gRPC.

Raw bots (tests/fakes/referee_server.py) see exactly what the referee sends when an admin
withdraws their token: the in-band Error, then the status; the SDK's ``run_async`` shows what a
bot author sees (an AuthenticationError naming the reason, and no reconnection loop). A seat
of a rotated bot in a running match is handled by the match's fault policy, as after any drop.
Every wait is on a message or a future, with a timeout that only matters if a test fails.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from domino_arena.sdk import AuthenticationError, run_async
from domino_arena.sdk.match.records import parse_record
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.bots import FirstLegal
from tests.fakes.referee_server import WAIT, Ended, RawBot, Referee, first_legal, passing_match


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[RatedStorage]:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'tokens.db'}")
    storage.open()
    yield storage
    storage.close()


def revoked(bot: RawBot, words: str) -> None:
    """Assert that ``bot``'s stream got the UNAUTHENTICATED Error beginning with ``words``,
    then ended UNAUTHENTICATED with the same reason."""
    end = bot.wait_end()
    errors = [m.error for m in bot.messages("error")]
    assert [e.code for e in errors] == [pb.ERROR_CODE_UNAUTHENTICATED]
    assert errors[0].message.startswith(words)
    assert end == Ended(grpc.StatusCode.UNAUTHENTICATED, errors[0].message)


def refused(referee: Referee, name: str, token: str) -> pb.Error:
    """Say Hello as ``name`` with ``token``; return the Error of the refusal."""
    bot = referee.bot()
    bot.hello(name, token)
    assert bot.wait_end().code is grpc.StatusCode.UNAUTHENTICATED
    (error,) = [m.error for m in bot.messages("error")]
    assert error.code == pb.ERROR_CODE_UNAUTHENTICATED
    return error


def test_rotation_closes_the_stream_refuses_the_old_token_and_admits_the_new(
    storage: RatedStorage,
) -> None:
    referee = Referee(storage)
    try:
        old = referee.admin.CreateBot(admin_pb.CreateBotRequest(name="alice"), timeout=WAIT).token
        bob = storage.add_bot("bob")
        alice = referee.connect("alice", old)
        rotated = referee.admin.RotateBotToken(
            admin_pb.RotateBotTokenRequest(name="alice"), timeout=WAIT
        )
        revoked(alice, "token rotated: an admin gave bot 'alice' a new token")
        assert refused(referee, "alice", old).message == "wrong token for bot 'alice'"
        referee.connect("alice", rotated.token)
        referee.connect("bob", bob)
        response = referee.admin.RunMatch(
            passing_match("alice", "bob", policy=pb.FAULT_POLICY_FORFEIT), timeout=WAIT
        )
        assert response.result.termination == pb.TERMINATION_NORMAL
        listed = referee.admin.ListBots(admin_pb.ListBotsRequest(), timeout=WAIT)
        assert [(b.name, b.connected) for b in listed.bots] == [("alice", True), ("bob", True)]
    finally:
        referee.close()


def test_disable_refuses_until_enabled_and_delete_for_good_keeping_the_matches(
    storage: RatedStorage,
) -> None:
    referee = Referee(storage)
    try:
        tokens = {name: storage.add_bot(name) for name in ("alice", "bob")}
        alice = referee.connect("alice", tokens["alice"])
        referee.connect("bob", tokens["bob"])
        played = referee.admin.RunMatch(
            passing_match("alice", "bob", policy=pb.FAULT_POLICY_FORFEIT), timeout=WAIT
        )
        referee.admin.DisableBot(admin_pb.DisableBotRequest(name="alice"), timeout=WAIT)
        revoked(alice, "bot disabled: an admin disabled bot 'alice'")
        error = refused(referee, "alice", tokens["alice"])
        assert error.message.startswith("bot 'alice' is disabled (an admin enables it with")
        assert refused(referee, "alice", "guess").message == "wrong token for bot 'alice'"
        referee.admin.EnableBot(admin_pb.EnableBotRequest(name="alice"), timeout=WAIT)
        alice = referee.connect("alice", tokens["alice"])
        referee.admin.DeleteBot(admin_pb.DeleteBotRequest(name="alice"), timeout=WAIT)
        revoked(alice, "bot deleted: an admin deleted bot 'alice' for good")
        error = refused(referee, "alice", tokens["alice"])
        assert error.message == "bot 'alice' was deleted: its name cannot connect again"
        matches = referee.admin.ListMatches(admin_pb.ListMatchesRequest(bot="alice"), timeout=WAIT)
        assert [m.match_id for m in matches.matches] == [played.match_id]
    finally:
        referee.close()


def test_a_disabled_owners_bots_are_closed_and_refused_until_it_is_enabled(
    storage: RatedStorage,
) -> None:
    """docs/courses.md: owners: disabling an owner stops each of its bots at once."""
    referee = Referee(storage)
    try:
        storage.create_course("cs101")
        (invite,) = storage.create_invites("cs101", 1)
        made = storage.register_bot(invite.code, "ann-v1", "ann")
        later = storage.register_with_owner_token(made.owner_token, "ann-v2")
        bots = [referee.connect("ann-v1", made.token), referee.connect("ann-v2", later.token)]
        request = admin_pb.OwnerRequest(course="cs101", name="ann")
        referee.admin.DisableOwner(request, timeout=WAIT)
        for bot in bots:
            revoked(bot, "owner disabled: the organizer disabled owner 'ann'")
        error = refused(referee, "ann-v1", made.token)
        assert error.message.startswith("the owner of bot 'ann-v1' is disabled by the course's")
        referee.admin.EnableOwner(request, timeout=WAIT)
        referee.connect("ann-v1", made.token)
    finally:
        referee.close()


def test_a_rotated_bots_seat_in_a_running_match_is_forfeited_by_the_policy(
    storage: RatedStorage,
) -> None:
    referee = Referee(storage, reconnect_grace=0.0)
    try:
        tokens = {name: storage.add_bot(name) for name in ("alice", "bob")}
        asked = threading.Event()

        def hold(bot: RawBot, request: pb.ActionRequest) -> None:
            asked.set()  # alice keeps the match waiting on her move

        alice = referee.connect("alice", tokens["alice"], policy=hold)
        referee.connect("bob", tokens["bob"], policy=first_legal)
        future = referee.admin.RunMatch.future(
            passing_match("alice", "bob", policy=pb.FAULT_POLICY_FORFEIT), timeout=WAIT
        )
        assert asked.wait(WAIT)
        referee.admin.RotateBotToken(admin_pb.RotateBotTokenRequest(name="alice"), timeout=WAIT)
        revoked(alice, "token rotated")
        result = future.result(timeout=WAIT).result
        assert result.termination == pb.TERMINATION_FORFEIT
        assert (result.faulted_seat, result.fault) == (0, pb.FAULT_KIND_DISCONNECTED)
        assert result.winner == 1
    finally:
        referee.close()


def test_a_rotated_bot_back_with_its_new_token_within_the_grace_resumes_its_seat(
    storage: RatedStorage,
) -> None:
    referee = Referee(storage, reconnect_grace=WAIT)
    try:
        tokens = {name: storage.add_bot(name) for name in ("alice", "bob")}
        asked = threading.Event()

        def hold(bot: RawBot, request: pb.ActionRequest) -> None:
            asked.set()

        alice = referee.connect("alice", tokens["alice"], policy=hold)
        referee.connect("bob", tokens["bob"], policy=first_legal)
        future = referee.admin.RunMatch.future(
            passing_match("alice", "bob", policy=pb.FAULT_POLICY_FORFEIT), timeout=WAIT
        )
        assert asked.wait(WAIT)
        rotated = referee.admin.RotateBotToken(
            admin_pb.RotateBotTokenRequest(name="alice"), timeout=WAIT
        )
        revoked(alice, "token rotated")
        back = referee.connect("alice", rotated.token, policy=first_legal)
        response = future.result(timeout=WAIT)
        assert response.result.termination == pb.TERMINATION_NORMAL
        assert back.messages("match_start")[0].match_start.resumed
        assert parse_record(response.record).faults == ()
    finally:
        referee.close()


def test_the_sdk_stops_with_the_reason_when_its_token_is_rotated(storage: RatedStorage) -> None:
    """``run_async`` raises AuthenticationError("token rotated: ...") and never reconnects."""
    referee = Referee(storage)
    try:
        token = storage.add_bot("alice")
        sleeps: list[float] = []

        async def sleep(delay: float) -> None:
            sleeps.append(delay)

        async def main() -> AuthenticationError:
            welcomed = asyncio.Event()

            class Welcomed(logging.Handler):
                def emit(self, record: logging.LogRecord) -> None:
                    if record.getMessage().startswith("welcomed by"):
                        welcomed.set()

            handler = Welcomed()
            client_log = logging.getLogger("domino_arena.sdk.client")
            client_log.addHandler(handler)
            client_log.setLevel(logging.INFO)
            try:
                task = asyncio.ensure_future(
                    run_async(
                        FirstLegal(), server=referee.address, name="alice", token=token, sleep=sleep
                    )
                )
                await asyncio.wait_for(welcomed.wait(), WAIT)
                await asyncio.to_thread(
                    referee.admin.RotateBotToken,
                    admin_pb.RotateBotTokenRequest(name="alice"),
                    timeout=WAIT,
                )
                with pytest.raises(AuthenticationError) as info:
                    await asyncio.wait_for(task, WAIT)
            finally:
                client_log.removeHandler(handler)
                client_log.setLevel(logging.NOTSET)
            return info.value

        error = asyncio.run(main())
        assert error.code == "UNAUTHENTICATED" and not error.retryable
        assert error.message.startswith("token rotated: an admin gave bot 'alice' a new token")
        assert sleeps == []
    finally:
        referee.close()

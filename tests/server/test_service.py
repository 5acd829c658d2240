"""The referee service over real gRPC: the whole app on port 0 in a background thread.

The bots here are raw gRPC clients (no SDK; tests/fakes/referee_server.py): each sends exactly
the messages a test wants, so refusals, malformed and late replies, unknown matches and
reconnections are exercised at the wire. Every wait is on a queue or condition with a timeout
that only matters if the test fails: nothing sleeps.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2

from domino_arena.sdk.match.records import parse_record, read_record, replay
from domino_arena.sdk.match.seeds import bot_seed
from domino_arena.sdk.rules import LogEntry, make_game
from domino_arena.sdk.wire import game_to_proto, step_from_proto
from domino_arena.server.cli.main import main
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.store.bots import BotCheck
from domino_arena.server.store.engine import StorageError
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import games_pb2
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.referee_server import (
    ADMIN_TOKEN,
    ALL_GAMES,
    WAIT,
    Ended,
    RawBot,
    Referee,
    first_legal,
)

BOTS: Final = ("alice", "bob", "carol")


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str]]:
    """One SQLite file with the test bots, shared by the module (token hashing is slow)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('referee') / 'referee.db'}"
    storage = RatedStorage(url)
    storage.open()
    tokens = {name: storage.add_bot(name) for name in BOTS}
    storage.close()
    return url, tokens


@pytest.fixture
def storage(database: tuple[str, dict[str, str]]) -> Iterator[RatedStorage]:
    storage = RatedStorage(database[0])
    storage.open()
    yield storage
    storage.close()


@pytest.fixture
def tokens(database: tuple[str, dict[str, str]]) -> dict[str, str]:
    return database[1]


@pytest.fixture
def referee(storage: RatedStorage) -> Iterator[Referee]:
    referee = Referee(storage)
    yield referee
    referee.close()


def passing_request(*bots: str, seed: int = 7) -> admin_pb.RunMatchRequest:
    return admin_pb.RunMatchRequest(
        game=game_to_proto(make_game("passing", players=len(bots))),
        bots=bots,
        has_seed=True,
        seed=seed,
    )


# -- health and reflection ----------------------------------------------------------------------


def test_health_check_says_serving(referee: Referee) -> None:
    check = referee.channel.unary_unary(
        "/grpc.health.v1.Health/Check",
        request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
        response_deserializer=health_pb2.HealthCheckResponse.FromString,
    )
    for service in ("", "domino_arena.v1.BotService", "domino_arena.v1.AdminService"):
        response = check(health_pb2.HealthCheckRequest(service=service), timeout=WAIT)
        assert response.status == health_pb2.HealthCheckResponse.SERVING, service


@pytest.mark.parametrize("version", ["v1alpha", "v1"])
def test_reflection_lists_the_services_and_describes_them(referee: Referee, version: str) -> None:
    """Reflection answers as v1alpha and as v1 (the messages are the same field for field)."""
    info = referee.channel.stream_stream(
        f"/grpc.reflection.{version}.ServerReflection/ServerReflectionInfo",
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )
    requests = [
        reflection_pb2.ServerReflectionRequest(list_services=""),
        reflection_pb2.ServerReflectionRequest(file_containing_symbol="domino_arena.v1.BotService"),
    ]
    listed, described = list(info(iter(requests), timeout=WAIT))
    names = {s.name for s in listed.list_services_response.service}
    assert {
        "domino_arena.v1.BotService",
        "domino_arena.v1.AdminService",
        "grpc.health.v1.Health",
        "grpc.reflection.v1alpha.ServerReflection",
        "grpc.reflection.v1.ServerReflection",
    } <= names
    files = described.file_descriptor_response.file_descriptor_proto
    protos = [descriptor_pb2.FileDescriptorProto.FromString(f) for f in files]
    assert "domino_arena/v1/referee.proto" in {p.name for p in protos}
    referee_file = next(p for p in protos if p.name == "domino_arena/v1/referee.proto")
    assert "BotService" in {service.name for service in referee_file.service}


# -- the hello ------------------------------------------------------------------------------------


def refusal(bot: RawBot) -> tuple[pb.Error, Ended]:
    """The in-band error and the final status of a refused stream (and nothing else)."""
    end = bot.wait_end()
    messages = [m for m in bot.received if isinstance(m, pb.RefereeMessage)]
    assert [m.WhichOneof("message") for m in messages] == ["error"], bot.received
    return messages[0].error, end


def test_a_wrong_token_is_refused_and_changes_nothing(
    referee: Referee, tokens: dict[str, str]
) -> None:
    alice = referee.connect("alice", tokens["alice"], policy=None)
    intruder = referee.bot()
    intruder.hello("alice", tokens["bob"])
    error, end = refusal(intruder)
    assert error.code == pb.ERROR_CODE_UNAUTHENTICATED
    assert error.field == "hello.token"
    assert "wrong token for bot 'alice'" in error.message
    assert end.code == grpc.StatusCode.UNAUTHENTICATED
    # The real alice keeps her stream and plays on it.
    assert not alice.ended()
    assert referee.connected() == {"alice": (ALL_GAMES, 0)}
    alice.policy = first_legal
    referee.connect("bob", tokens["bob"])
    response = referee.admin.RunMatch(passing_request("alice", "bob"), timeout=WAIT)
    assert response.result.termination == pb.TERMINATION_NORMAL
    assert alice.messages("match_start")


def test_an_unknown_name_is_refused(referee: Referee) -> None:
    bot = referee.bot()
    bot.hello("mallory", "anything")
    error, end = refusal(bot)
    assert error.code == pb.ERROR_CODE_UNAUTHENTICATED
    assert error.field == "hello.name"
    assert "unknown bot 'mallory'" in error.message
    assert end.code == grpc.StatusCode.UNAUTHENTICATED
    assert referee.connected() == {}


@pytest.mark.parametrize(
    ("first", "code", "field"),
    [
        (
            pb.BotMessage(reply=pb.ActionReply(match_id="m", turn=1)),
            pb.ERROR_CODE_BAD_HELLO,
            "hello",
        ),
        (pb.BotMessage(), pb.ERROR_CODE_BAD_HELLO, "hello"),
        (
            pb.BotMessage(hello=pb.Hello(name="alice", token="t", games=["moon"])),
            pb.ERROR_CODE_BAD_HELLO,
            "hello.protocol_version",
        ),
        (
            pb.BotMessage(hello=pb.Hello(token="t", games=["moon"], protocol_version=2)),
            pb.ERROR_CODE_BAD_HELLO,
            "hello.name",
        ),
        (
            pb.BotMessage(hello=pb.Hello(name="alice", games=["moon"], protocol_version=2)),
            pb.ERROR_CODE_BAD_HELLO,
            "hello.token",
        ),
    ],
    ids=["reply-first", "empty", "no-version", "no-name", "no-token"],
)
def test_a_bad_first_message_is_refused(
    referee: Referee, first: pb.BotMessage, code: int, field: str
) -> None:
    bot = referee.bot()
    bot.send(first)
    error, end = refusal(bot)
    assert (error.code, error.field) == (code, field), error
    assert end.code == grpc.StatusCode.INVALID_ARGUMENT
    assert referee.connected() == {}


def test_an_unknown_game_is_refused_after_the_token(
    referee: Referee, tokens: dict[str, str]
) -> None:
    bot = referee.bot()
    bot.hello("alice", tokens["alice"], games=("moon", "chess"))
    error, end = refusal(bot)
    assert error.code == pb.ERROR_CODE_UNKNOWN_GAME
    assert "unknown game 'chess'" in error.message
    assert end.code == grpc.StatusCode.INVALID_ARGUMENT
    assert referee.connected() == {}


def test_a_database_failure_during_the_hello_is_unavailable_not_a_refusal(
    referee: Referee, storage: RatedStorage, tokens: dict[str, str]
) -> None:
    storage.close()  # the referee's storage: every query now fails
    bot = referee.bot()
    bot.hello("alice", tokens["alice"])
    error, end = refusal(bot)
    assert "cannot check tokens now" in error.message
    assert end.code == grpc.StatusCode.UNAVAILABLE  # a client retries this one


def test_welcome_and_list_connected(referee: Referee, tokens: dict[str, str]) -> None:
    alice = referee.connect("alice", tokens["alice"], games=("passing", "moon", "passing"))
    referee.connect("bob", tokens["bob"])
    welcome = alice.messages("welcome")[0].welcome
    assert (welcome.name, welcome.protocol_version) == ("alice", 2)
    assert list(welcome.games) == ["moon", "passing"]
    assert referee.connected() == {"alice": (("moon", "passing"), 0), "bob": (ALL_GAMES, 0)}


def test_a_new_stream_of_a_connected_bot_takes_over(
    referee: Referee, tokens: dict[str, str]
) -> None:
    first = referee.connect("alice", tokens["alice"])
    second = referee.connect("alice", tokens["alice"], games=("moon",))
    end = first.wait_end()
    assert end.code == grpc.StatusCode.ABORTED
    errors = first.messages("error")
    assert [e.error.code for e in errors] == [pb.ERROR_CODE_ALREADY_CONNECTED]
    assert not second.ended()
    assert referee.connected() == {"alice": (("moon",), 0)}


# -- matches --------------------------------------------------------------------------------------


def test_run_match_plays_stores_and_returns_the_record(
    referee: Referee, tokens: dict[str, str], storage: RatedStorage
) -> None:
    alice = referee.connect("alice", tokens["alice"])
    bob = referee.connect("bob", tokens["bob"])
    response = referee.admin.RunMatch(passing_request("alice", "bob", seed=11), timeout=WAIT)
    result = response.result
    assert result.termination == pb.TERMINATION_NORMAL
    assert result.winner in (0, 1)
    assert list(result.side_of_seat) == [0, 1]
    assert result.faulted_seat == -1
    record = parse_record(response.record)
    assert record.seats == ("alice", "bob")
    assert record.seed == 11
    assert replay(record).ok, replay(record)
    stored = storage.match(response.match_id)
    assert stored is not None
    assert stored.record == response.record
    assert (stored.termination, stored.winner, stored.seats) == (
        "normal",
        result.winner,
        ("alice", "bob"),
    )
    for bot, seat in ((alice, 0), (bob, 1)):
        start = bot.messages("match_start")[0].match_start
        assert (start.match_id, start.seat, list(start.players)) == (
            response.match_id,
            seat,
            ["alice", "bob"],
        )
        assert not start.resumed
        assert start.HasField("bot_seed") and start.bot_seed == bot_seed(11, seat)
        end = bot.wait_kind("match_end").match_end
        assert end.result == result
        assert bot.messages("event") == [], "events travel inside the other messages"
        steps = [step_from_proto(event.step) for event in bot.events()]
        assert steps == [LogEntry(step.seat, step.action) for step in record.steps]
        assert all(not r.request.observation.history for r in bot.messages("request"))
    assert referee.connected() == {"alice": (ALL_GAMES, 0), "bob": (ALL_GAMES, 0)}


def test_run_match_adjudicates_a_game_at_its_cap_on_deals_and_rates_it(
    referee: Referee, tokens: dict[str, str], storage: RatedStorage
) -> None:
    alice = referee.connect("alice", tokens["alice"])
    referee.connect("bob", tokens["bob"])
    request = passing_request("alice", "bob", seed=11)
    request.max_deals = 1
    before = storage.ratings("passing")
    response = referee.admin.RunMatch(request, timeout=WAIT)
    result = response.result
    assert result.termination == pb.TERMINATION_ADJUDICATED
    assert "adjudicated: no winner by the rules after 1 deal" in result.detail
    record = parse_record(response.record)
    assert record.result.termination == "adjudicated" and len(record.result.hands) == 1
    assert replay(record).ok, replay(record)
    assert alice.wait_kind("match_end").match_end.result == result
    stored = storage.match(response.match_id)
    assert stored is not None and stored.termination == "adjudicated" and stored.moves_ratings
    assert stored.rating_model == "elo-pairwise-k24/1"
    after = storage.ratings("passing")
    for bot in ("alice", "bob"):
        games_before = before[bot].games if bot in before else 0
        assert after[bot].games == games_before + 1, bot


def test_a_moon_game_with_the_retired_deal_limit_is_refused_in_band(
    referee: Referee, tokens: dict[str, str]
) -> None:
    for name in ("alice", "bob", "carol"):
        referee.connect(name, tokens[name])
    request = admin_pb.RunMatchRequest(bots=["alice", "bob", "carol"])
    request.game.moon.deal_limit = 50
    with pytest.raises(grpc.RpcError) as caught:
        referee.admin.RunMatch(request, timeout=WAIT)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert caught.value.details() == (
        "game.moon.deal_limit: 50 (a retired option); expected 0: Moon plays on by the rules; "
        "cap deals with the referee's max_deals"
    )


@pytest.mark.parametrize(
    ("request_", "status", "words"),
    [
        (
            admin_pb.RunMatchRequest(game=game_to_proto(make_game("passing")), bots=["alice"]),
            grpc.StatusCode.INVALID_ARGUMENT,
            "needs 2 bots, one per seat, got 1",
        ),
        (
            admin_pb.RunMatchRequest(
                game=game_to_proto(make_game("passing")), bots=["alice", "carol"]
            ),
            grpc.StatusCode.FAILED_PRECONDITION,
            "bot 'carol' is not connected",
        ),
        (
            admin_pb.RunMatchRequest(
                game=game_to_proto(make_game("moon")), bots=["alice", "bob", "bob"]
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "bob listed twice",
        ),
        (
            admin_pb.RunMatchRequest(
                game=game_to_proto(make_game("doubles")), bots=["alice", "bob"]
            ),
            grpc.StatusCode.FAILED_PRECONDITION,
            "bot 'bob' does not play doubles",
        ),
        (
            admin_pb.RunMatchRequest(bots=["alice", "bob"]),
            grpc.StatusCode.INVALID_ARGUMENT,
            "game",
        ),
    ],
    ids=["seat-count", "not-connected", "twice", "game-not-played", "no-game"],
)
def test_run_match_refuses_what_cannot_be_played(
    referee: Referee,
    tokens: dict[str, str],
    request_: admin_pb.RunMatchRequest,
    status: grpc.StatusCode,
    words: str,
) -> None:
    referee.connect("alice", tokens["alice"])
    referee.connect("bob", tokens["bob"], games=("passing", "moon"))
    with pytest.raises(grpc.RpcError) as caught:
        referee.admin.RunMatch(request_, timeout=WAIT)
    assert caught.value.code() == status
    assert words in (caught.value.details() or "")


def test_a_malformed_action_is_a_fault_and_play_goes_on(
    referee: Referee, tokens: dict[str, str]
) -> None:
    faulted: list[int] = []

    def once_malformed(bot: RawBot, request: pb.ActionRequest) -> None:
        if not faulted:
            faulted.append(request.turn)
            # A play with no tile: the action cannot be converted.
            bot.reply(request, games_pb2.Action(play=games_pb2.PlayAction()))
        else:
            first_legal(bot, request)

    alice = referee.connect("alice", tokens["alice"], policy=once_malformed)
    referee.connect("bob", tokens["bob"])
    response = referee.admin.RunMatch(passing_request("alice", "bob"), timeout=WAIT)
    assert response.result.termination == pb.TERMINATION_NORMAL
    (fault,) = [m.fault for m in alice.messages("fault")]
    assert (fault.turn, fault.kind, fault.strikes, fault.forfeited) == (
        faulted[0],
        pb.FAULT_KIND_MALFORMED,
        1,
        False,
    )
    assert "play" in fault.reason
    record = parse_record(response.record)
    assert [(f.seat, f.kind) for f in record.faults] == [(0, "malformed")]
    assert replay(record).ok


def test_a_reply_for_an_old_turn_is_dropped(referee: Referee, tokens: dict[str, str]) -> None:
    def late_then_right(bot: RawBot, request: pb.ActionRequest) -> None:
        # First a stale answer (an empty action, which would be a fault if it were used).
        bot.reply(request, games_pb2.Action(), turn=request.turn - 1)
        first_legal(bot, request)

    alice = referee.connect("alice", tokens["alice"], policy=late_then_right)
    bob = referee.connect("bob", tokens["bob"])
    response = referee.admin.RunMatch(passing_request("alice", "bob"), timeout=WAIT)
    assert response.result.termination == pb.TERMINATION_NORMAL
    assert alice.messages("request")
    assert alice.messages("fault") == bob.messages("fault") == []
    assert alice.messages("error") == []
    assert parse_record(response.record).faults == ()


def test_a_reply_for_an_unknown_match_gets_an_error(
    referee: Referee, tokens: dict[str, str]
) -> None:
    alice = referee.connect("alice", tokens["alice"])
    alice.send(pb.BotMessage(reply=pb.ActionReply(match_id="no-such-match", turn=1)))
    error = alice.wait_kind("error").error
    assert (error.code, error.match_id, error.field) == (
        pb.ERROR_CODE_UNKNOWN_MATCH,
        "no-such-match",
        "reply.match_id",
    )
    assert not alice.ended()
    assert "alice" in referee.connected()


def test_replies_in_a_batch_are_each_routed_and_a_stray_one_is_named_by_its_place(
    referee: Referee, tokens: dict[str, str]
) -> None:
    def batched(bot: RawBot, request: pb.ActionRequest) -> None:
        stray = pb.ActionReply(match_id="no-such-match", turn=1)
        reply = pb.ActionReply(
            match_id=request.match_id,
            turn=request.turn,
            action=request.observation.legal_actions[0],
        )
        bot.send(pb.BotMessage(replies=pb.ReplyBatch(replies=[stray, reply])))

    alice = referee.connect("alice", tokens["alice"], policy=batched)
    referee.connect("bob", tokens["bob"])
    response = referee.admin.RunMatch(passing_request("alice", "bob"), timeout=WAIT)
    assert response.result.termination == pb.TERMINATION_NORMAL
    assert parse_record(response.record).faults == ()
    errors = alice.messages("error")
    assert len(errors) == len(alice.messages("request")) > 0
    assert {(e.error.code, e.error.field) for e in errors} == {
        (pb.ERROR_CODE_UNKNOWN_MATCH, "replies.replies[0].match_id")
    }


def test_a_bot_that_reconnects_gets_its_seat_back(referee: Referee, tokens: dict[str, str]) -> None:
    dropped = threading.Event()

    def drop_on_third_request(bot: RawBot, request: pb.ActionRequest) -> None:
        if request.turn >= 3 and not dropped.is_set():
            dropped.set()
            bot.call.cancel()
        else:
            first_legal(bot, request)

    first = referee.connect("alice", tokens["alice"], policy=drop_on_third_request)
    bob = referee.connect("bob", tokens["bob"])
    future = referee.admin.RunMatch.future(passing_request("alice", "bob"), timeout=WAIT)
    first.wait_end()
    assert dropped.is_set()
    second = referee.connect("alice", tokens["alice"])
    response = future.result(timeout=WAIT)
    assert response.result.termination == pb.TERMINATION_NORMAL
    start = second.messages("match_start")[0].match_start
    assert start.resumed
    assert start.match_id == response.match_id
    assert start.snapshot.seat == 0
    assert len(start.snapshot.hand) > 0
    assert second.messages("request")
    assert parse_record(response.record).faults == ()
    assert bob.messages("fault") == []


def test_shutdown_gives_up_a_save_the_database_keeps_refusing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A finished match whose save retries an unreachable database does not hold shutdown past
    its grace: the save is abandoned (nothing half-written) and the caller is told.

    The database stays locked until the referee has stopped, so the save can never succeed:
    the referee's thread ending at all shows shutdown did not wait for it, and the warning
    shows it went by the grace's end and gave the save up.
    """
    caplog.set_level(logging.WARNING, logger="domino_arena.server")
    path = tmp_path / "locked.db"
    storage = RatedStorage(f"sqlite:///{path}?timeout=0.01")
    storage.open()
    tokens = {name: storage.add_bot(name) for name in ("alice", "bob")}
    referee = Referee(storage)
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        alice = referee.connect("alice", tokens["alice"])
        referee.connect("bob", tokens["bob"])
        holder.execute("BEGIN EXCLUSIVE")  # from now on every write times out
        future = referee.admin.RunMatch.future(passing_request("alice", "bob"), timeout=WAIT)
        end = alice.wait_kind("match_end").match_end  # played; its save now retries
        assert end.result.termination == pb.TERMINATION_NORMAL
        referee.stop()  # joins the referee's thread (or fails) while the lock is still held
        assert holder.in_transaction
        abandoned = [m for m in caplog.messages if "finished matches not stored" in m]
        assert abandoned == [
            "shutting down: 1 finished matches not stored (the database is unreachable); "
            "tournament games among them are played again at the next start"
        ]
        with pytest.raises(grpc.RpcError) as caught:
            future.result(timeout=WAIT)
        assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        if holder.in_transaction:
            holder.execute("ROLLBACK")
        holder.close()
        referee.close()
    assert storage.match(end.match_id) is None
    storage.close()


def test_shutdown_aborts_running_matches(referee: Referee, tokens: dict[str, str]) -> None:
    asked = threading.Event()

    def never_answer(bot: RawBot, request: pb.ActionRequest) -> None:
        asked.set()

    alice = referee.connect("alice", tokens["alice"], policy=never_answer)
    bob = referee.connect("bob", tokens["bob"], policy=never_answer)
    future = referee.admin.RunMatch.future(passing_request("alice", "bob"), timeout=WAIT)
    assert asked.wait(WAIT)
    assert referee.connected() == {"alice": (ALL_GAMES, 1), "bob": (ALL_GAMES, 1)}
    referee.stop()
    with pytest.raises(grpc.RpcError) as caught:
        future.result(timeout=WAIT)
    assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
    assert "aborted" in (caught.value.details() or "")
    for bot in (alice, bob):
        end = bot.wait_kind("match_end").match_end
        assert end.result.termination == pb.TERMINATION_ABORTED
        stream_end = bot.wait_end()
        assert stream_end.code == grpc.StatusCode.UNAVAILABLE
        assert [e.error.code for e in bot.messages("error")] == [pb.ERROR_CODE_SHUTTING_DOWN]


def test_the_record_json_is_one_object_per_line(referee: Referee, tokens: dict[str, str]) -> None:
    referee.connect("alice", tokens["alice"])
    referee.connect("bob", tokens["bob"])
    response = referee.admin.RunMatch(passing_request("alice", "bob"), timeout=WAIT)
    lines = response.record.splitlines()
    assert response.record.endswith("\n")
    assert json.loads(lines[0])["type"] == "header"
    assert json.loads(lines[-1])["type"] == "result"


def test_a_database_path_that_cannot_be_opened_is_named(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'missing' / 'x.db'}"
    with pytest.raises(StorageError, match="cannot open the database sqlite:///"):
        RatedStorage(url).open()


# -- the command line ------------------------------------------------------------------------------


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_bot_add_prints_the_token_once_and_refuses_a_duplicate(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    code, out, err = cli(capsys, "bot", "add", "dora", "--db", url)
    assert code == 0, err
    token = out.strip()
    assert "\n" not in token and len(token) >= 40
    assert "shown only this once" in err
    code, out, err = cli(capsys, "bot", "add", "dora", "--db", url)
    assert (code, out) == (2, "")
    assert err == "domino-arena: error: a bot named 'dora' exists already; pick another name\n"
    storage = RatedStorage(url)
    storage.open()
    try:
        assert storage.check_bot("dora", token) is BotCheck.OK
    finally:
        storage.close()


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (["bot", "add", "no way"], 2, "bad bot name 'no way'"),
        (
            ["bot", "add", "x", "--db", "sqlite:////no/such/folder/x.db"],
            1,
            "cannot open the database sqlite:////no/such/folder/x.db: unable to open",
        ),
        (
            ["serve", "--db", "sqlite:////no/such/folder/x.db"],
            1,
            "cannot open the database sqlite:////no/such/folder/x.db: unable to open",
        ),
        (
            ["serve", "--db", "postgresql://postgres@127.0.0.1:1/test"],
            1,
            "cannot open the database postgresql://postgres@127.0.0.1:1/test: connection failed",
        ),
        (["serve", "--port", "70000"], 2, "--port: must be 0-65535"),
        (["bot", "run", "x", "--bot", "nobody", "--token", "t"], 2, "--bot: unknown bot"),
        (["bot", "run", "x", "--games", "chess", "--token", "t"], 2, "--games: expected some"),
        (["match", "run", "moon", "--bots", "a,b"], 2, "--bots: 3 bots are needed"),
        (
            ["match", "run", "passing", "--bots", "a,b", "--time-control", "fast"],
            2,
            "--time-control: bad time control 'fast'",
        ),
        (
            [
                *("match", "run", "passing", "--bots", "a,b"),
                *("--server", "127.0.0.1:1", "--admin-token", "t"),
            ],
            1,
            "cannot reach the referee at 127.0.0.1:1",
        ),
    ],
    ids=[
        "bad-name",
        "add-bad-db",
        "serve-bad-db",
        "serve-postgresql-unreachable",
        "bad-port",
        "unknown-house-bot",
        "unknown-game",
        "seat-count",
        "bad-time-control",
        "no-referee",
    ],
)
def test_service_commands_report_mistakes_in_one_line(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    code: int,
    words: str,
) -> None:
    monkeypatch.delenv("DOMINO_ARENA_TOKEN", raising=False)
    got, out, err = cli(capsys, *args)
    assert got == code, err
    assert out == ""
    assert err.startswith("domino-arena: error: ")
    assert err.count("\n") == 1
    assert words in err


def test_match_run_prints_the_result_and_writes_the_record(
    capsys: pytest.CaptureFixture[str], referee: Referee, tokens: dict[str, str], tmp_path: Path
) -> None:
    referee.connect("alice", tokens["alice"])
    referee.connect("bob", tokens["bob"])
    record = tmp_path / "match.jsonl"
    code, out, err = cli(
        capsys,
        "match",
        "run",
        "passing",
        "--bots",
        "alice,bob",
        "--seed",
        "5",
        "--server",
        f"127.0.0.1:{referee.port}",
        "--admin-token",
        ADMIN_TOKEN,
        "--time-control",
        "2s+5s/100ms",
        "--fault-policy",
        "forfeit",
        "--record",
        str(record),
    )
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("match ")
    assert lines[0].endswith(": Passing Game, 2 players, to 101")
    assert lines[1].startswith("result: normal; side ")
    assert lines[-1] == f"record written to {record}"
    parsed = read_record(record)
    assert parsed.seed == 5
    assert parsed.time_control == {"move_ms": 2000, "bank_ms": 5000, "grace_ms": 100}
    assert parsed.fault_policy == {"policy": "forfeit", "max_strikes": 3}
    assert replay(parsed).ok

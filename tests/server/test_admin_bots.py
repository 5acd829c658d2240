"""The admin API's bots and tokens over real gRPC (server/net/admin_bots.py), a fake arena.

The servicer is real, so are the storage (SQLite) and the lobby (tests/fakes/admin_server.py);
a connected bot is a lobby :class:`Connection`, so what a withdrawn token does to its stream is
read from its outbox: the in-band Error, then the status that ends the stream.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import grpc
import pytest

from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.net.lobby import Close, Connection
from domino_arena.server.store.bots import BotCheck
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.admin_server import TOKEN, AdminServer, FakeArena, refused, stored_match
from tests.fakes.referee_server import WAIT

AUTH: Final = (("authorization", f"Bearer {TOKEN}"),)


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[RatedStorage]:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'bots.db'}")
    storage.open()
    yield storage
    storage.close()


@pytest.fixture
def arena(storage: RatedStorage) -> FakeArena:
    return FakeArena(storage)


@pytest.fixture
def server(arena: FakeArena) -> Iterator[AdminServer]:
    server = AdminServer(arena)
    yield server
    server.close()


def connect(server: AdminServer, arena: FakeArena, name: str) -> Connection:
    connection = Connection(name, ["passing"])
    server.call(lambda: arena.lobby.connect(connection))
    return connection


def outbox(server: AdminServer, connection: Connection) -> list[pb.RefereeMessage | Close]:
    """Everything queued for the stream so far (taken out of its outbox)."""

    def drain() -> list[pb.RefereeMessage | Close]:
        items: list[pb.RefereeMessage | Close] = []
        while not connection.outbox.empty():
            items.append(connection.outbox.get_nowait())
        return items

    return server.call(drain)


def test_create_shows_the_token_once_and_list_shows_the_bots(
    server: AdminServer, arena: FakeArena
) -> None:
    before = dt.datetime.now(dt.UTC)
    created = server.admin.CreateBot(
        admin_pb.CreateBotRequest(name="alice"), metadata=AUTH, timeout=WAIT
    )
    assert arena.storage.check_bot("alice", created.token) is BotCheck.OK
    assert (created.bot.name, created.bot.state) == ("alice", admin_pb.BOT_STATE_ENABLED)
    assert created.bot.created.ToDatetime(dt.UTC) >= before - dt.timedelta(seconds=1)
    assert created.bot.token_issued == created.bot.created
    assert not created.bot.connected
    server.admin.CreateBot(admin_pb.CreateBotRequest(name="bob"), metadata=AUTH, timeout=WAIT)
    connect(server, arena, "bob")
    listed = server.admin.ListBots(admin_pb.ListBotsRequest(), metadata=AUTH, timeout=WAIT)
    assert [(b.name, b.state, b.connected) for b in listed.bots] == [
        ("alice", admin_pb.BOT_STATE_ENABLED, False),
        ("bob", admin_pb.BOT_STATE_ENABLED, True),
    ]


def test_rotate_closes_the_stream_and_only_the_new_token_works(
    server: AdminServer, arena: FakeArena
) -> None:
    old = arena.storage.add_bot("alice")
    connection = connect(server, arena, "alice")
    rotated = server.admin.RotateBotToken(
        admin_pb.RotateBotTokenRequest(name="alice"), metadata=AUTH, timeout=WAIT
    )
    assert rotated.token and rotated.token != old
    assert not rotated.bot.connected  # its stream was closed before the answer
    assert rotated.bot.token_issued.ToDatetime() >= rotated.bot.created.ToDatetime()
    error, end = outbox(server, connection)
    assert isinstance(error, pb.RefereeMessage) and isinstance(end, Close)
    assert error.error.code == pb.ERROR_CODE_UNAUTHENTICATED
    assert error.error.message.startswith("token rotated: an admin gave bot 'alice' a new token")
    assert end == Close(grpc.StatusCode.UNAUTHENTICATED, error.error.message)
    assert connection.closed and server.call(lambda: arena.lobby.get("alice")) is None
    assert arena.storage.check_bot("alice", old) is BotCheck.WRONG_TOKEN
    assert arena.storage.check_bot("alice", rotated.token) is BotCheck.OK


def test_disable_closes_the_stream_until_enabled_and_keeps_the_token(
    server: AdminServer, arena: FakeArena
) -> None:
    token = arena.storage.add_bot("alice")
    connection = connect(server, arena, "alice")
    info = server.admin.DisableBot(
        admin_pb.DisableBotRequest(name="alice"), metadata=AUTH, timeout=WAIT
    )
    assert (info.state, info.connected) == (admin_pb.BOT_STATE_DISABLED, False)
    error, end = outbox(server, connection)
    assert isinstance(error, pb.RefereeMessage) and isinstance(end, Close)
    assert error.error.message.startswith("bot disabled: an admin disabled bot 'alice'")
    assert end.status is grpc.StatusCode.UNAUTHENTICATED
    assert arena.storage.check_bot("alice", token) is BotCheck.DISABLED
    info = server.admin.EnableBot(admin_pb.EnableBotRequest(name="alice"), metadata=AUTH)
    assert info.state == admin_pb.BOT_STATE_ENABLED
    assert arena.storage.check_bot("alice", token) is BotCheck.OK


def test_delete_closes_the_stream_and_keeps_the_name_and_the_matches(
    server: AdminServer, arena: FakeArena
) -> None:
    arena.storage.add_bot("alice")
    arena.storage.add_bot("bob")
    arena.storage.save_match(stored_match("m1", ("alice", "bob"), 0, rated=False))
    connection = connect(server, arena, "alice")
    info = server.admin.DeleteBot(admin_pb.DeleteBotRequest(name="alice"), metadata=AUTH)
    assert (info.name, info.state, info.HasField("token_issued")) == (
        "alice",
        admin_pb.BOT_STATE_DELETED,
        False,
    )
    error, end = outbox(server, connection)
    assert isinstance(error, pb.RefereeMessage) and isinstance(end, Close)
    assert error.error.message == "bot deleted: an admin deleted bot 'alice' for good"
    assert end.status is grpc.StatusCode.UNAUTHENTICATED
    listed = server.admin.ListBots(admin_pb.ListBotsRequest(), metadata=AUTH)
    assert [b.name for b in listed.bots] == ["bob"]
    listed = server.admin.ListBots(admin_pb.ListBotsRequest(include_deleted=True), metadata=AUTH)
    assert [(b.name, b.state) for b in listed.bots] == [
        ("alice", admin_pb.BOT_STATE_DELETED),
        ("bob", admin_pb.BOT_STATE_ENABLED),
    ]
    matches = server.admin.ListMatches(admin_pb.ListMatchesRequest(bot="alice"), metadata=AUTH)
    assert [m.match_id for m in matches.matches] == ["m1"]


def test_a_withdrawn_token_of_a_bot_not_connected_closes_nothing(
    server: AdminServer, arena: FakeArena
) -> None:
    arena.storage.add_bot("alice")
    bob = (arena.storage.add_bot("bob"), connect(server, arena, "bob"))[1]
    server.admin.RotateBotToken(admin_pb.RotateBotTokenRequest(name="alice"), metadata=AUTH)
    server.admin.DisableBot(admin_pb.DisableBotRequest(name="alice"), metadata=AUTH)
    assert not bob.closed and outbox(server, bob) == []


LONG: Final = "x" * 5000


@pytest.mark.parametrize(
    ("method", "request_", "status", "details"),
    [
        (
            "CreateBot",
            admin_pb.CreateBotRequest(),
            grpc.StatusCode.INVALID_ARGUMENT,
            "name: missing; expected a bot name (use 1-64 letters, digits,",
        ),
        (
            "CreateBot",
            admin_pb.CreateBotRequest(name="-alice"),
            grpc.StatusCode.INVALID_ARGUMENT,
            "name: bad bot name '-alice' (6 characters): use 1-64 letters",
        ),
        (
            "RotateBotToken",
            admin_pb.RotateBotTokenRequest(name=LONG),
            grpc.StatusCode.INVALID_ARGUMENT,
            f"name: bad bot name '{'x' * 64}'... (4936 more characters) (5,000 characters)",
        ),
        (
            "CreateBot",
            admin_pb.CreateBotRequest(name="alice"),
            grpc.StatusCode.ALREADY_EXISTS,
            "name: a bot named 'alice' exists already (a deleted bot's name stays taken)",
        ),
        (
            "CreateBot",
            admin_pb.CreateBotRequest(name="gone"),
            grpc.StatusCode.ALREADY_EXISTS,
            "name: a bot named 'gone' exists already",
        ),
        (
            "RotateBotToken",
            admin_pb.RotateBotTokenRequest(name="zed"),
            grpc.StatusCode.NOT_FOUND,
            "name: no bot is named 'zed'",
        ),
        (
            "DisableBot",
            admin_pb.DisableBotRequest(name="zed"),
            grpc.StatusCode.NOT_FOUND,
            "name: no bot is named 'zed'",
        ),
        (
            "EnableBot",
            admin_pb.EnableBotRequest(name="zed"),
            grpc.StatusCode.NOT_FOUND,
            "name: no bot is named 'zed'",
        ),
        (
            "DeleteBot",
            admin_pb.DeleteBotRequest(name="zed"),
            grpc.StatusCode.NOT_FOUND,
            "name: no bot is named 'zed'",
        ),
        (
            "RotateBotToken",
            admin_pb.RotateBotTokenRequest(name="gone"),
            grpc.StatusCode.FAILED_PRECONDITION,
            "bot 'gone' is deleted: a deleted bot gets no new token",
        ),
        (
            "EnableBot",
            admin_pb.EnableBotRequest(name="gone"),
            grpc.StatusCode.FAILED_PRECONDITION,
            "bot 'gone' is deleted: a deleted bot cannot be enabled",
        ),
        (
            "DisableBot",
            admin_pb.DisableBotRequest(name="gone"),
            grpc.StatusCode.FAILED_PRECONDITION,
            "bot 'gone' is deleted: a deleted bot cannot be disabled",
        ),
        (
            "DeleteBot",
            admin_pb.DeleteBotRequest(name="gone"),
            grpc.StatusCode.FAILED_PRECONDITION,
            "bot 'gone' is deleted: it was deleted already",
        ),
    ],
    ids=[
        "empty",
        "bad",
        "long",
        "taken",
        "taken-by-deleted",
        "rotate-unknown",
        "disable-unknown",
        "enable-unknown",
        "delete-unknown",
        "rotate-deleted",
        "enable-deleted",
        "disable-deleted",
        "delete-deleted",
    ],
)
def test_every_refusal_has_its_status_and_names_the_rule(
    server: AdminServer,
    arena: FakeArena,
    *,
    method: str,
    request_: Any,
    status: grpc.StatusCode,
    details: str,
) -> None:
    token = arena.storage.add_bot("alice")
    arena.storage.add_bot("gone")
    arena.storage.delete_bot("gone")
    connection = connect(server, arena, "alice")
    stub = getattr(server.admin, method)
    code, message = refused(lambda: stub(request_, metadata=AUTH, timeout=WAIT))
    assert (code, message[: len(details)]) == (status, details)
    assert len(message) < 400
    assert arena.storage.check_bot("alice", token) is BotCheck.OK  # nothing changed
    assert not connection.closed
    assert [b.name for b in arena.storage.bots(include_deleted=True)] == ["alice", "gone"]

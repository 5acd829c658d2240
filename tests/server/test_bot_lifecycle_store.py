"""The bot lifecycle in the storage (server/store/bots.py), on SQLite and on PostgreSQL.

Create (the token shown once), list, rotate, disable and enable, delete; and what the token
check tells each caller (tests/fakes/store.py's fixtures run every test on both databases).
"""

from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa

from domino_arena.server.store.bots import (
    BotCheck,
    BotState,
    DeletedBotError,
    DuplicateBotError,
    UnknownBotError,
)
from domino_arena.server.store.storage import Storage
from domino_arena.server.store.tables import BOTS
from tests.fakes.store import a_match


def test_a_created_bot_is_enabled_and_its_token_dated(storage: Storage) -> None:
    before = dt.datetime.now(dt.UTC)
    issued = storage.create_bot("alice")
    assert storage.check_bot("alice", issued.token) is BotCheck.OK
    assert issued.bot.name == "alice" and issued.bot.state is BotState.ENABLED
    assert issued.bot.token_issued == issued.bot.created and issued.bot.created >= before
    stored = storage.bot("alice")
    assert stored is not None
    assert (stored.name, stored.state) == ("alice", BotState.ENABLED)
    assert abs(stored.created - issued.bot.created) < dt.timedelta(milliseconds=1)
    assert stored.created.tzinfo is not None and stored.token_issued is not None
    assert storage.bot("nobody") is None


def test_rotation_stops_the_old_token_at_once_and_keeps_the_state(storage: Storage) -> None:
    old = storage.create_bot("alice").token
    storage.set_bot_enabled("alice", False)
    rotated = storage.rotate_token("alice")
    assert rotated.token != old
    assert rotated.bot.state is BotState.DISABLED
    assert rotated.bot.token_issued is not None
    assert rotated.bot.token_issued >= rotated.bot.created
    assert storage.check_bot("alice", old) is BotCheck.WRONG_TOKEN
    assert storage.check_bot("alice", rotated.token) is BotCheck.DISABLED
    storage.set_bot_enabled("alice", True)
    assert storage.check_bot("alice", rotated.token) is BotCheck.OK
    assert storage.check_bot("alice", old) is BotCheck.WRONG_TOKEN


def test_a_disabled_bot_is_told_so_only_with_its_right_token(storage: Storage) -> None:
    token = storage.add_bot("alice")
    assert storage.set_bot_enabled("alice", False).state is BotState.DISABLED
    assert storage.set_bot_enabled("alice", False).state is BotState.DISABLED  # twice: no error
    assert storage.check_bot("alice", token) is BotCheck.DISABLED
    assert storage.check_bot("alice", token + "x") is BotCheck.WRONG_TOKEN
    assert storage.set_bot_enabled("alice", True).state is BotState.ENABLED
    assert storage.check_bot("alice", token) is BotCheck.OK  # the token was kept


def test_a_deleted_bot_keeps_its_name_and_history_but_no_token(storage: Storage) -> None:
    token = storage.add_bot("alice")
    storage.add_bot("bob")
    assert storage.save_match(a_match("m1"))  # alice against bob
    deleted = storage.delete_bot("alice")
    assert (deleted.state, deleted.token_issued) == (BotState.DELETED, None)
    for guess in (token, "", "x"):
        assert storage.check_bot("alice", guess) is BotCheck.DELETED
    with storage.engine.connect() as connection:
        stored = connection.execute(
            sa.select(BOTS.c.token_hash).where(BOTS.c.name == "alice")
        ).scalar_one()
    assert stored == ""
    with pytest.raises(DuplicateBotError, match="a bot named 'alice' exists already"):
        storage.create_bot("alice")
    assert [m.id for m in storage.matches(bot="alice")] == ["m1"]
    assert storage.bot_names() == ["bob"]
    assert [b.name for b in storage.bots()] == ["bob"]
    assert [(b.name, b.state) for b in storage.bots(include_deleted=True)] == [
        ("alice", BotState.DELETED),
        ("bob", BotState.ENABLED),
    ]


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda s: s.rotate_token("alice"), "bot 'alice' is deleted: a deleted bot gets no new"),
        (lambda s: s.set_bot_enabled("alice", True), "a deleted bot cannot be enabled"),
        (lambda s: s.set_bot_enabled("alice", False), "a deleted bot cannot be disabled"),
        (lambda s: s.delete_bot("alice"), "bot 'alice' is deleted: it was deleted already"),
    ],
    ids=["rotate", "enable", "disable", "delete"],
)
def test_a_deleted_bot_cannot_change_again(storage: Storage, change: object, words: str) -> None:
    storage.add_bot("alice")
    storage.delete_bot("alice")
    assert callable(change)
    with pytest.raises(DeletedBotError, match=words):
        change(storage)
    assert storage.check_bot("alice", "") is BotCheck.DELETED
    stored = storage.bot("alice")
    assert stored is not None and stored.state is BotState.DELETED


@pytest.mark.parametrize(
    "change",
    [
        lambda s: s.rotate_token("zed"),
        lambda s: s.set_bot_enabled("zed", True),
        lambda s: s.delete_bot("zed"),
    ],
    ids=["rotate", "enable", "delete"],
)
def test_an_unknown_bot_cannot_change(storage: Storage, change: object) -> None:
    assert callable(change)
    with pytest.raises(UnknownBotError) as info:
        change(storage)
    assert str(info.value) == "no bot is named 'zed'"
    assert storage.bots(include_deleted=True) == []

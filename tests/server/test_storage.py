"""The referee's storage, the same tests on SQLite (a temporary file) and on PostgreSQL.

PostgreSQL is the machine's local server (postgresql://postgres@127.0.0.1:5432/test, trust
auth). Each test gets its own schema there, dropped afterwards, so parallel workers and
repeated runs never see each other's rows.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from domino_arena.server.storage import (
    BOTS,
    MAX_SEED,
    BadBotNameError,
    BotCheck,
    DuplicateBotError,
    Storage,
    StorageError,
    StoredMatch,
    display_url,
    hash_token,
    token_matches,
)

POSTGRES_URL: Final = "postgresql://postgres@127.0.0.1:5432/test"


@pytest.fixture(params=["sqlite", "postgresql"])
def url_and_schema(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str | None]:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'arena.db'}", None
    return POSTGRES_URL, f"test_storage_{uuid.uuid4().hex[:12]}"


@pytest.fixture
def storage(url_and_schema: tuple[str, str | None]) -> Iterator[Storage]:
    url, schema = url_and_schema
    storage = Storage(url, schema=schema)
    storage.open()
    yield storage
    if schema is not None:
        storage.drop()
    storage.close()


def a_match(match_id: str, *, seed: int = 42, minute: int = 0) -> StoredMatch:
    return StoredMatch(
        id=match_id,
        game="passing",
        options={"players": 2, "partnerships": False, "target_rule": "gamerules"},
        seats=("alice", "bob"),
        seed=seed,
        termination="normal",
        winner=1,
        scores=(30, 117),
        faulted_seat=None,
        fault=None,
        detail="side 1 reached 117",
        record='{"type": "header"}\n{"type": "result"}\n',
        created=dt.datetime(2026, 1, 2, 3, minute, 5, tzinfo=dt.UTC),
    )


# -- bots -----------------------------------------------------------------------------------------


def test_a_new_bot_is_known_by_its_token_only(storage: Storage) -> None:
    token = storage.add_bot("alice")
    assert len(token) >= 40
    assert storage.check_bot("alice", token) is BotCheck.OK
    assert storage.check_bot("alice", token + "x") is BotCheck.WRONG_TOKEN
    assert storage.check_bot("alice", "") is BotCheck.WRONG_TOKEN
    assert storage.check_bot("bob", token) is BotCheck.UNKNOWN


def test_the_token_is_stored_hashed_and_salted(storage: Storage) -> None:
    first = storage.add_bot("alice")
    second = storage.add_bot("bob")
    with storage.engine.connect() as connection:
        hashes = dict(connection.execute(sa.select(BOTS.c.name, BOTS.c.token_hash)).all())
    assert set(hashes) == {"alice", "bob"}
    for name, token in (("alice", first), ("bob", second)):
        assert re.fullmatch(r"sha256\$[0-9a-f]{32}\$[0-9a-f]{64}", hashes[name])
        assert token not in hashes[name]
    assert hash_token(first) != hash_token(first)  # a fresh salt every time


def test_a_duplicate_name_is_refused_and_the_first_bot_keeps_its_token(storage: Storage) -> None:
    token = storage.add_bot("alice")
    with pytest.raises(DuplicateBotError, match="a bot named 'alice' exists already"):
        storage.add_bot("alice")
    assert storage.check_bot("alice", token) is BotCheck.OK
    assert storage.bot_names() == ["alice"]


@pytest.mark.parametrize("name", ["", "-alice", "al ice", "a" * 65, "alice/bob", "élodie"])
def test_a_bad_name_is_refused(storage: Storage, name: str) -> None:
    with pytest.raises(BadBotNameError, match="bad bot name"):
        storage.add_bot(name)
    assert storage.bot_names() == []


def test_bot_names_are_sorted(storage: Storage) -> None:
    for name in ("carol", "Alice", "bob.v2", "a_1"):
        storage.add_bot(name)
    assert storage.bot_names() == sorted(["carol", "Alice", "bob.v2", "a_1"])


def test_opening_again_keeps_the_data(
    storage: Storage, url_and_schema: tuple[str, str | None]
) -> None:
    token = storage.add_bot("alice")
    storage.save_match(a_match("m1"))
    url, schema = url_and_schema
    again = Storage(url, schema=schema)
    again.open()
    try:
        assert again.check_bot("alice", token) is BotCheck.OK
        assert again.match("m1") == a_match("m1")
    finally:
        again.close()


# -- matches --------------------------------------------------------------------------------------


def test_a_match_reads_back_as_it_was_saved(storage: Storage) -> None:
    match = a_match("m1", seed=MAX_SEED)
    storage.save_match(match)
    assert storage.match("m1") == match
    assert storage.match("nope") is None


def test_a_forfeit_keeps_its_fault(storage: Storage) -> None:
    match = StoredMatch(
        id="m2",
        game="moon",
        options={"deal_limit": 0},
        seats=("a", "b", "c"),
        seed=0,
        termination="forfeit",
        winner=2,
        scores=(3, -2, 7),
        faulted_seat=1,
        fault="timeout",
        detail="seat 1 (b) forfeits",
        record=None,
        created=dt.datetime(2026, 5, 6, 7, 8, 9, tzinfo=dt.UTC),
    )
    storage.save_match(match)
    assert storage.match("m2") == match


def test_matches_are_listed_newest_first(storage: Storage) -> None:
    for minute, match_id in enumerate(("old", "mid", "new")):
        storage.save_match(a_match(match_id, minute=minute))
    assert [m.id for m in storage.matches()] == ["new", "mid", "old"]
    assert [m.id for m in storage.matches(limit=1)] == ["new"]


def test_a_match_is_written_whole_or_not_at_all(storage: Storage) -> None:
    storage.save_match(a_match("m1"))
    with pytest.raises(IntegrityError):
        storage.save_match(a_match("m1", seed=7))
    assert storage.match("m1") == a_match("m1")
    with pytest.raises(ValueError, match="does not fit"):
        storage.save_match(a_match("m3", seed=MAX_SEED + 1))
    assert storage.match("m3") is None


# -- opening --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("sqlite:////no/such/folder/arena.db", "unable to open database file"),
        ("postgresql://postgres@127.0.0.1:1/test", "connection"),
        ("not a url", "Could not parse"),
        ("nosuchdb://x/y", "nosuchdb"),
    ],
    ids=["sqlite-folder", "postgres-port", "not-a-url", "unknown-dialect"],
)
def test_a_database_that_cannot_be_opened_is_named_in_one_line(url: str, reason: str) -> None:
    with pytest.raises(StorageError) as caught:
        Storage(url).open()
    message = str(caught.value)
    assert message.startswith(f"cannot open the database {url}: ")
    assert reason in message
    assert "\n" not in message


def test_a_printed_url_hides_the_password() -> None:
    assert display_url("postgresql://ann:secret@db/arena") == "postgresql://ann:***@db/arena"
    assert display_url("sqlite:///arena.db") == "sqlite:///arena.db"


def test_a_stored_hash_that_is_not_ours_matches_nothing() -> None:
    assert not token_matches("token", "plain-text-token")
    assert token_matches("token", hash_token("token"))

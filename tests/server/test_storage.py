"""The referee's storage (server/store/), the same tests on SQLite and on PostgreSQL.

The databases are ``tests/fakes/store.py``'s fixtures; the ratings moved with a saved match are
the ladder's and are tested in ``tests/server/ladder/test_ratings_store.py``.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import math
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from domino_arena.sdk.match.seeds import MAX_SEED
from domino_arena.server.ladder import elo
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.store import matches, migrations
from domino_arena.server.store.bots import (
    BadBotNameError,
    BotCheck,
    DuplicateBotError,
    hash_token,
    new_token,
    token_matches,
)
from domino_arena.server.store.engine import StorageError, display_url, writing
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.storage import Storage
from domino_arena.server.store.tables import BOTS, MATCHES
from domino_arena.server.store.tournaments import (
    DuplicateTournamentError,
    StoredTournament,
    TournamentState,
    UnknownTournamentError,
)
from tests.fakes.store import POSTGRES_URL, a_match

# -- bots -----------------------------------------------------------------------------------------


def test_a_new_bot_is_known_by_its_token_only(storage: Storage) -> None:
    token = storage.add_bot("alice")
    assert len(token) >= 40
    assert storage.check_bot("alice", token) is BotCheck.OK
    assert storage.check_bot("alice", token + "x") is BotCheck.WRONG_TOKEN
    assert storage.check_bot("alice", "") is BotCheck.WRONG_TOKEN
    assert storage.check_bot("bob", token) is BotCheck.UNKNOWN


def test_tokens_are_256_bits_that_never_read_as_a_command_line_option() -> None:
    """``--token -x...`` would be an argparse error: a token never begins with '-'."""
    tokens = [new_token() for _ in range(2000)]
    assert len(set(tokens)) == len(tokens)
    assert all(re.fullmatch(r"[0-9a-f]{64}", token) for token in tokens)
    parser = argparse.ArgumentParser()
    parser.add_argument("--token")
    for token in tokens[:200]:
        assert parser.parse_args(["--token", token]).token == token


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


def test_every_sqlite_connection_logs_ahead_and_syncs_at_checkpoints(tmp_path: Path) -> None:
    # The durability promise of docs/deploy.md: WAL with synchronous=NORMAL (1), on every
    # connection of the pool, the first and those opened later.
    storage = Storage(f"sqlite:///{tmp_path / 'arena.db'}")
    storage.open()
    try:
        with storage.engine.connect() as first, storage.engine.connect() as second:
            for connection in (first, second):
                assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
                assert connection.exec_driver_sql("PRAGMA synchronous").scalar() == 1
                assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    finally:
        storage.close()


def test_every_postgresql_connection_plans_each_statement_for_its_parameters() -> None:
    # A prepared "which of these ids are stored" planned once for any ids scanned every match
    # (bench/README.md: ladder_bench); a fresh connection and the pool's next one both say so.
    storage = Storage(POSTGRES_URL, schema=f"test_plans_{uuid.uuid4().hex[:12]}")
    storage.open()
    try:
        with storage.engine.connect() as first, storage.engine.connect() as second:
            for connection in (first, second):
                mode = connection.exec_driver_sql("SHOW plan_cache_mode").scalar()
                assert mode == "force_custom_plan"
                path = connection.exec_driver_sql("SHOW search_path").scalar()
                assert path == storage.schema
    finally:
        storage.drop()
        storage.close()


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
        options={},
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
    assert [m.id for m in storage.matches(limit=1, offset=1)] == ["mid"]
    assert [m.id for m in storage.matches(offset=2)] == ["old"]
    assert storage.matches(limit=1, records=False) == [
        dataclasses.replace(a_match("new", minute=2), record=None)
    ]


def test_a_match_is_written_whole_or_not_at_all(storage: Storage) -> None:
    assert storage.save_match(a_match("m1"))
    with pytest.raises(ValueError, match=f"match m3: seed: must be from 0 to {MAX_SEED}, got"):
        storage.save_match(a_match("m3", seed=MAX_SEED + 1))
    assert storage.match("m3") is None


def test_a_match_saved_twice_is_stored_once(storage: Storage) -> None:
    assert storage.save_match(a_match("m1"))
    assert not storage.save_match(a_match("m1", seed=7))
    assert storage.match("m1") == a_match("m1")
    assert [m.id for m in storage.matches()] == ["m1"]


def test_the_stores_insert_writes_in_the_callers_transaction_and_says_which_are_new(
    storage: Storage,
) -> None:
    """``insert_batch`` only writes, in a transaction its caller holds: a step the caller takes
    after it in that transaction commits or rolls back with the rows."""
    assert storage.save_match(a_match("m1"))
    batch = [
        a_match("m1"),
        a_match("m2", minute=1),
        a_match("m2", minute=2),
        a_match("m3", minute=3),
    ]
    failing = pytest.raises(RuntimeError, match="the caller's next step")
    with failing, writing(storage.engine) as connection:
        assert matches.insert_batch(connection, batch) == [False, True, False, True]
        raise RuntimeError("the caller's next step failed")
    assert [m.id for m in storage.matches()] == [m.id for m in storage.matches(bot="bob")] == ["m1"]
    with writing(storage.engine) as connection:
        assert matches.insert_batch(connection, batch) == [False, True, False, True]
    assert storage.match("m2") == a_match("m2", minute=1)
    assert [m.id for m in storage.matches(bot="bob")] == ["m3", "m2", "m1"]


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


def test_the_schema_is_at_the_newest_revision(storage: Storage) -> None:
    assert storage.schema_version() == migrations.head() == "0018"


def test_a_schema_that_is_no_identifier_is_refused() -> None:
    with pytest.raises(ValueError, match="schema: expected 1-63 lowercase letters"):
        Storage(POSTGRES_URL, schema="x; drop table bots")


# -- tournaments ----------------------------------------------------------------------------------


def a_tournament(
    tournament_id: str = "t1", *, day: int = 1, state: TournamentState = TournamentState.CREATED
) -> StoredTournament:
    moment = dt.datetime(2026, 3, day, 12, 0, tzinfo=dt.UTC)
    return StoredTournament(
        id=tournament_id,
        name=f"Spring cup {tournament_id}",
        game="moon",
        options={},
        entrants=("alice", "bob", "carol"),
        games_per_pairing=4,
        deals="duplicate",
        time_control_ms=(1000, 10000, 250),
        fault_policy="substitute",
        max_strikes=3,
        concurrency=2,
        wait_seconds=30.5,
        seed=MAX_SEED,
        rated=True,
        state=state,
        created=moment,
        updated=moment,
    )


def test_a_tournament_reads_back_as_it_was_added(storage: Storage) -> None:
    storage.add_tournament(a_tournament("t1"))
    assert storage.tournament("t1") == a_tournament("t1")
    assert storage.tournament("t2") is None


def test_a_tournament_id_is_taken_once(storage: Storage) -> None:
    storage.add_tournament(a_tournament("t1"))
    with pytest.raises(DuplicateTournamentError, match="a tournament with id 't1' exists already"):
        storage.add_tournament(a_tournament("t1", day=9))
    assert storage.tournament("t1") == a_tournament("t1")


def test_tournaments_are_listed_oldest_first_and_by_state(storage: Storage) -> None:
    storage.add_tournament(a_tournament("late", day=3))
    storage.add_tournament(a_tournament("early", day=1, state=TournamentState.RUNNING))
    storage.add_tournament(a_tournament("mid", day=2, state=TournamentState.PAUSED))
    assert [t.id for t in storage.tournaments()] == ["early", "mid", "late"]
    active = {TournamentState.RUNNING, TournamentState.PAUSED}
    assert [t.id for t in storage.tournaments(active)] == ["early", "mid"]
    assert storage.tournaments([TournamentState.FINISHED]) == []


def test_a_tournament_changes_state(storage: Storage) -> None:
    storage.add_tournament(a_tournament("t1"))
    storage.set_tournament_state("t1", TournamentState.RUNNING)
    stored = storage.tournament("t1")
    assert stored is not None
    assert stored.state is TournamentState.RUNNING
    assert stored.updated > a_tournament("t1").updated
    assert stored.created == a_tournament("t1").created
    with pytest.raises(UnknownTournamentError, match=r"^no tournament has id 'nope'$"):
        storage.set_tournament_state("nope", TournamentState.RUNNING)
    assert isinstance(UnknownTournamentError("x"), KeyError)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"id": ""}, "id: expected 1-64 characters"),
        ({"entrants": ("a", "b", "a")}, "entrants: 'a' is listed twice"),
        ({"games_per_pairing": 0}, "games_per_pairing: expected at least 1, got 0"),
        ({"concurrency": 0}, "concurrency: expected at least 1"),
        ({"max_strikes": 0}, "max_strikes: expected at least 1"),
        ({"time_control_ms": (1000, -1, 0)}, "time_control_ms: expected"),
        ({"fault_policy": "ignore"}, "fault_policy: expected one of"),
        ({"wait_seconds": -1.0}, "wait_seconds: expected at least 0"),
        ({"wait_seconds": math.nan}, "wait_seconds: expected at least 0"),
        ({"seed": -1}, f"seed: must be from 0 to {MAX_SEED}, got -1"),
    ],
)
def test_a_tournament_out_of_range_is_refused(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        dataclasses.replace(a_tournament(), **change)


def test_the_stored_game_indexes_of_a_tournament(storage: Storage) -> None:
    storage.add_tournament(a_tournament("t1"))
    storage.add_tournament(a_tournament("t2"))
    assert storage.tournament_game_indexes("t1") == set()
    for index in (0, 1, 5):
        storage.save_match(tournament_game("t1", index))
    storage.save_match(tournament_game("t2", 3))
    storage.save_match(a_match("loose"))
    assert storage.tournament_game_indexes("t1") == {0, 1, 5}
    assert storage.tournament_game_indexes("t2") == {3}
    assert storage.tournament_game_indexes("nope") == set()


def tournament_game(tournament_id: str, index: int, *, match_id: str | None = None) -> StoredMatch:
    return dataclasses.replace(
        a_match(match_id or f"{tournament_id}-{index}"),
        tournament_id=tournament_id,
        game_index=index,
        deal_id=index // 2,
        rotation=index % 2,
    )


def test_a_tournament_game_reads_back_with_its_fields(rated_storage: RatedStorage) -> None:
    rated_storage.add_tournament(a_tournament("t1"))
    match = dataclasses.replace(
        tournament_game("t1", 7), side_of_seat=(0, 1), faults=(2, 0), rated=True
    )
    assert rated_storage.save_match(match)
    assert rated_storage.match(match.id) == dataclasses.replace(match, rating_model=elo.MODEL)


def test_a_tournament_game_is_stored_once_whatever_its_match_id(storage: Storage) -> None:
    storage.add_tournament(a_tournament("t1"))
    assert storage.save_match(tournament_game("t1", 0, match_id="first"))
    assert not storage.save_match(tournament_game("t1", 0, match_id="retry"))
    assert storage.match("retry") is None
    assert storage.save_match(tournament_game("t1", 1, match_id="retry"))


def test_the_database_refuses_a_second_row_for_a_tournament_game(storage: Storage) -> None:
    storage.add_tournament(a_tournament("t1"))
    storage.save_match(tournament_game("t1", 0, match_id="first"))
    row = {
        "id": "second",
        "game": "passing",
        "options": {},
        "seats": ["a", "b"],
        "seed": 0,
        "termination": "normal",
        "scores": [0, 0],
        "detail": "",
        "created": dt.datetime.now(dt.UTC),
        "tournament_id": "t1",
        "game_index": 0,
    }
    with pytest.raises(IntegrityError), storage.engine.begin() as connection:
        connection.execute(MATCHES.insert().values(row))


def test_a_game_of_an_unknown_tournament_is_refused(storage: Storage) -> None:
    with pytest.raises(IntegrityError):
        storage.save_match(tournament_game("nope", 0))
    assert storage.match("nope-0") is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"side_of_seat": (0, 1, 1)}, "side_of_seat: expected one entry per seat (2) or none"),
        ({"faults": (1,)}, "faults: expected one entry per seat (2) or none"),
        ({"tournament_id": "t1"}, "tournament_id and game_index go together"),
        ({"game_index": 3}, "tournament_id and game_index go together"),
        ({"termination": "resigned"}, "termination: expected one of ['normal', 'forfeit'"),
        ({"fault": "slow"}, "fault: expected one of ['timeout', 'illegal'"),
    ],
)
def test_a_match_whose_fields_disagree_is_refused(
    storage: Storage, change: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        storage.save_match(dataclasses.replace(a_match("m1"), **change))
    assert storage.match("m1") is None


# -- matches: filters -----------------------------------------------------------------------------


def test_matches_are_filtered_by_tournament_bot_and_game(storage: Storage) -> None:
    storage.add_tournament(a_tournament("t1"))
    games = [
        dataclasses.replace(tournament_game("t1", 0), seats=("alice", "bob")),
        dataclasses.replace(a_match("m1", minute=1), seats=("bob", "carol"), game="moon"),
        dataclasses.replace(a_match("m2", minute=2), seats=("carol", "dave")),
        dataclasses.replace(tournament_game("t1", 1), seats=("alice", "carol")),
        dataclasses.replace(a_match("m3", minute=4), seats=("alicea", "bo")),
    ]
    for game in games:
        storage.save_match(game)
    assert {m.id for m in storage.matches(tournament_id="t1")} == {"t1-0", "t1-1"}
    assert [m.id for m in storage.matches(bot="carol")] == ["m2", "m1", "t1-1"]
    assert [m.id for m in storage.matches(bot="alice")] == ["t1-0", "t1-1"]  # same time: by id
    assert [m.id for m in storage.matches(bot="al")] == []
    assert [m.id for m in storage.matches(game="moon")] == ["m1"]
    assert [m.id for m in storage.matches(bot="carol", game="passing")] == ["m2", "t1-1"]
    assert [m.id for m in storage.matches(1, bot="carol")] == ["m2"]
    assert storage.matches(tournament_id="t1", bot="dave") == []


def test_pages_of_every_filter_cover_its_matches_once_newest_first(storage: Storage) -> None:
    """Each filter's pages, at every offset, are its list cut in order: nothing skipped or
    shown twice (ties in time go by id), a bot's from match_seats as from the seats."""
    storage.add_tournament(a_tournament("t1"))
    stored = []
    for n in range(23):
        seats = (("alice", "bob"), ("bob", "carol"), ("carol", "alice"))[n % 3]
        base = tournament_game("t1", n) if n % 4 == 0 else a_match(f"m{n:02d}")
        match = dataclasses.replace(
            base,
            seats=seats,
            game=("passing", "moon")[n % 2],
            created=base.created + dt.timedelta(minutes=n // 2),
        )
        assert storage.save_match(match)
        stored.append(match)
    newest = sorted(stored, key=lambda m: (-m.created.timestamp(), m.id))
    filter_sets: list[dict[str, str]] = [
        {},
        {"bot": "carol"},
        {"game": "moon"},
        {"tournament_id": "t1"},
        {"bot": "alice", "game": "passing"},
    ]
    for filters in filter_sets:
        bot, game, tid = filters.get("bot"), filters.get("game"), filters.get("tournament_id")
        want = [
            m.id
            for m in newest
            if ("bot" not in filters or filters["bot"] in m.seats)
            and m.game == filters.get("game", m.game)
            and m.tournament_id == filters.get("tournament_id", m.tournament_id)
        ]
        found = storage.matches(100, bot=bot, game=game, tournament_id=tid)
        assert [m.id for m in found] == want, filters
        for size in (1, 4, 7):
            pages = [
                [
                    m.id
                    for m in storage.matches(
                        size, offset=start, records=False, bot=bot, game=game, tournament_id=tid
                    )
                ]
                for start in range(0, len(want) + size, size)
            ]
            assert [i for page in pages for i in page] == want, (filters, size)
    assert storage.tournament_game_count("t1") == 6
    assert storage.tournament_game_count("nothing") == 0


@pytest.mark.parametrize("termination", ["normal", "forfeit"])
def test_a_match_that_counts_for_the_ladder_is_refused_without_it(
    storage: Storage, termination: str
) -> None:
    """Only the ladder's RatedStorage saves a rated match: never stored without its rating."""
    match = dataclasses.replace(
        a_match("m1"), rated=True, termination=termination, faulted_seat=0, fault="timeout"
    )
    with pytest.raises(ValueError, match="match m1: it counts for the ladder"):
        storage.save_match(match)
    assert storage.match("m1") is None
    unrated_void = dataclasses.replace(match, termination="void")
    assert storage.save_match(unrated_void)
    assert storage.match("m1") == unrated_void

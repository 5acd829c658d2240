"""The storage's migrations (server/store/migrations/) on SQLite and PostgreSQL.

The schema that queries use is ``tables.METADATA``; the migrations must build exactly that,
from nothing and from a database the first release made with ``create_all`` (no version
table), keeping its rows.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import multiprocessing
import threading
from collections.abc import Iterator
from typing import Any, Final

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from domino_arena.server.store import migrations
from domino_arena.server.store.bots import BotCheck, hash_token
from domino_arena.server.store.engine import StorageError
from domino_arena.server.store.storage import Storage
from domino_arena.server.store.tables import METADATA
from tests.fakes.store import a_match

FIRST_RELEASE: Final = sa.MetaData()
"""The tables as the first release created them, with ``create_all`` and no version table."""

sa.Table(
    "bots",
    FIRST_RELEASE,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(64), nullable=False, unique=True),
    sa.Column("token_hash", sa.String(255), nullable=False),
    sa.Column("created", sa.DateTime(timezone=True), nullable=False),
)
sa.Table(
    "matches",
    FIRST_RELEASE,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("game", sa.String(32), nullable=False),
    sa.Column("options", sa.JSON, nullable=False),
    sa.Column("seats", sa.JSON, nullable=False),
    sa.Column("seed", sa.BigInteger, nullable=False),
    sa.Column("termination", sa.String(16), nullable=False),
    sa.Column("winner", sa.Integer, nullable=True),
    sa.Column("scores", sa.JSON, nullable=False),
    sa.Column("faulted_seat", sa.Integer, nullable=True),
    sa.Column("fault", sa.String(16), nullable=True),
    sa.Column("detail", sa.Text, nullable=False),
    sa.Column("record", sa.Text, nullable=True),
    sa.Column("created", sa.DateTime(timezone=True), nullable=False),
)

TOKEN: Final = "a-token-of-the-first-release"


def differences(storage: Storage) -> list[Any]:
    """What autogenerate would change to make the database equal ``METADATA``."""
    with storage.engine.connect() as connection:
        return list(compare_metadata(MigrationContext.configure(connection), METADATA))


@pytest.fixture
def engine(url_and_schema: tuple[str, str | None]) -> Iterator[sa.Engine]:
    """A plain engine on the test's database (and schema), as the first release opened it."""
    url, schema = url_and_schema
    url = url.replace("postgresql://", "postgresql+psycopg://")
    args = {} if schema is None else {"options": f"-c search_path={schema}"}
    engine = sa.create_engine(url, connect_args=args)
    if schema is not None:
        with engine.begin() as connection:
            connection.execute(sa.schema.CreateSchema(schema))
    yield engine
    if schema is not None:
        with engine.begin() as connection:
            connection.execute(sa.schema.DropSchema(schema, cascade=True))
    engine.dispose()


def test_a_new_database_is_migrated_to_exactly_the_schema_queries_use(storage: Storage) -> None:
    assert storage.schema_version() == migrations.head()
    assert differences(storage) == []


def test_the_version_table_lives_with_the_tables(storage: Storage) -> None:
    with storage.engine.connect() as connection:
        tables = set(sa.inspect(connection).get_table_names())
        if storage.schema is not None:
            where = connection.execute(
                sa.text("SELECT table_schema FROM information_schema.tables WHERE table_name = :t"),
                {"t": migrations.VERSION_TABLE},
            ).scalars()
            assert storage.schema in set(where)
    assert migrations.VERSION_TABLE in tables
    assert set(METADATA.tables) <= tables


def test_a_first_release_database_is_upgraded_with_its_rows(
    engine: sa.Engine, url_and_schema: tuple[str, str | None]
) -> None:
    created = dt.datetime(2025, 12, 1, 9, 30, tzinfo=dt.UTC)
    old = a_match("old")
    with engine.begin() as connection:
        FIRST_RELEASE.create_all(connection)
        connection.execute(
            FIRST_RELEASE.tables["bots"].insert(),
            {"name": "alice", "token_hash": hash_token(TOKEN), "created": created},
        )
        connection.execute(
            FIRST_RELEASE.tables["matches"].insert(),
            {
                "id": old.id,
                "game": old.game,
                "options": old.options,
                "seats": list(old.seats),
                "seed": old.seed,
                "termination": old.termination,
                "winner": old.winner,
                "scores": list(old.scores),
                "faulted_seat": old.faulted_seat,
                "fault": old.fault,
                "detail": old.detail,
                "record": old.record,
                "created": old.created,
            },
        )
    url, schema = url_and_schema
    storage = Storage(url, schema=schema)
    storage.open()
    try:
        assert storage.schema_version() == migrations.head()
        assert differences(storage) == []
        assert storage.bot_names() == ["alice"]
        assert storage.check_bot("alice", TOKEN) is BotCheck.OK
        assert storage.match("old") == old
        assert storage.save_match(a_match("new", minute=9))
        assert [m.id for m in storage.matches()] == ["new", "old"]
    finally:
        storage.close()


def test_a_database_at_an_unknown_revision_is_named(storage: Storage) -> None:
    with storage.engine.begin() as connection:
        connection.execute(sa.text(f"UPDATE {migrations.VERSION_TABLE} SET version_num = '0999'"))
    again = Storage(storage.url, schema=storage.schema)
    with pytest.raises(StorageError, match="0999") as caught:
        again.open()
    assert str(caught.value).startswith(f"cannot open the database {storage.url}: ")
    assert "\n" not in str(caught.value)
    with storage.engine.begin() as connection:  # so the fixture can drop it
        connection.execute(sa.text(f"UPDATE {migrations.VERSION_TABLE} SET version_num = '0002'"))


def test_the_newest_revision_goes_down_to_the_first_release_and_up_again(
    storage: Storage,
) -> None:
    storage.save_match(a_match("m1"))
    with storage.engine.connect() as connection:
        command.downgrade(migrations.config(connection), migrations.BASELINE)
        assert migrations.current(connection) == migrations.BASELINE
        tables = set(sa.inspect(connection).get_table_names())
        assert tables - {migrations.VERSION_TABLE} == set(FIRST_RELEASE.tables)
        diff = compare_metadata(MigrationContext.configure(connection), FIRST_RELEASE)
        assert list(diff) == []
        migrations.upgrade(connection)
    assert differences(storage) == []
    assert storage.match("m1") == a_match("m1")


def open_at_the_signal(url: str, schema: str | None, signal: Any, errors: Any) -> None:
    """In a process of its own: wait for every opener to be ready, then open the database."""
    storage = Storage(url, schema=schema)
    signal.wait()
    try:
        storage.open()
    except StorageError as exc:
        errors.put(str(exc))
    finally:
        storage.close()


def test_processes_opening_a_new_database_at_once_all_succeed(
    url_and_schema: tuple[str, str | None],
) -> None:
    url, schema = url_and_schema
    spawn = multiprocessing.get_context("spawn")
    signal, errors = spawn.Barrier(4), spawn.Queue()
    processes = [
        spawn.Process(target=open_at_the_signal, args=(url, schema, signal, errors))
        for _ in range(4)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join()
    storage = Storage(url, schema=schema)
    storage.open()
    try:
        assert [process.exitcode for process in processes] == [0] * 4
        assert errors.empty(), errors.get()
        assert storage.schema_version() == migrations.head()
        assert differences(storage) == []
    finally:
        if schema is not None:
            storage.drop()
        storage.close()


def test_threads_opening_a_new_database_at_once_all_succeed(
    url_and_schema: tuple[str, str | None],
) -> None:
    url, schema = url_and_schema
    openers = [Storage(url, schema=schema) for _ in range(4)]
    signal = threading.Barrier(len(openers))
    errors: list[BaseException] = []

    def open_it(opener: Storage) -> None:
        signal.wait()
        try:
            opener.open()
        except StorageError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_it, args=(opener,)) for opener in openers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert errors == []
        token = openers[0].add_bot("alice")
        assert openers[-1].check_bot("alice", token) is BotCheck.OK
        assert differences(openers[-1]) == []
    finally:
        if schema is not None:
            openers[0].drop()
        for opener in openers:
            opener.close()


def test_revision_0004_keeps_bots_enabled_and_turns_the_duplicate_flag_into_a_deal_mode(
    storage: Storage,
) -> None:
    created = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)
    with storage.engine.connect() as connection:
        command.downgrade(migrations.config(connection), "0003")
        connection.commit()
    with storage.engine.begin() as connection:
        connection.execute(
            sa.text("INSERT INTO bots (name, token_hash, created) VALUES (:n, :h, :c)"),
            {"n": "alice", "h": hash_token(TOKEN), "c": created},
        )
        for tournament_id, duplicate in (("dup", True), ("fresh", False)):
            connection.execute(
                sa.text(
                    "INSERT INTO tournaments (id, name, game, options, entrants, "
                    "games_per_pairing, duplicate_deals, move_ms, bank_ms, grace_ms, "
                    "fault_policy, max_strikes, concurrency, wait_seconds, seed, rated, state, "
                    "created, updated) VALUES (:id, 'cup', 'straight', '{}', '[\"a\", \"b\"]', 1, "
                    ":duplicate, 1000, 10000, 50, 'forfeit', 3, 1, 0, 7, :rated, 'created', "
                    ":created, :created)"
                ),
                {"id": tournament_id, "duplicate": duplicate, "rated": True, "created": created},
            )
    with storage.engine.connect() as connection:
        migrations.upgrade(connection)
    assert differences(storage) == []
    with storage.engine.connect() as connection:
        rows = connection.execute(sa.text("SELECT id, deals FROM tournaments")).all()
        deals = {tournament_id: mode for tournament_id, mode in rows}
        state, issued = connection.execute(
            sa.text("SELECT state, token_issued FROM bots WHERE name = 'alice'")
        ).one()
    assert deals == {"dup": "duplicate", "fresh": "fresh"}
    assert state == "enabled"
    assert issued is not None
    assert storage.check_bot("alice", TOKEN) is BotCheck.OK


def test_revision_0005_lists_the_seats_of_every_stored_match(storage: Storage) -> None:
    """0005's match_seats is filled from the matches stored before it, so a bot's matches
    are found after the upgrade as before it."""
    three = dataclasses.replace(a_match("three", minute=2), seats=("carol", "alice"))
    for match in (a_match("one"), a_match("two", minute=1), three):
        assert storage.save_match(match)
    with storage.engine.connect() as connection:
        command.downgrade(migrations.config(connection), "0004")
        connection.commit()
    with storage.engine.connect() as connection:
        migrations.upgrade(connection)
    assert differences(storage) == []
    with storage.engine.connect() as connection:
        rows = connection.execute(
            sa.text("SELECT match_id, seat, bot FROM match_seats ORDER BY match_id, seat")
        ).all()
    assert [tuple(r) for r in rows] == [
        ("one", 0, "alice"),
        ("one", 1, "bob"),
        ("three", 0, "carol"),
        ("three", 1, "alice"),
        ("two", 0, "alice"),
        ("two", 1, "bob"),
    ]
    assert [m.id for m in storage.matches(bot="alice")] == ["three", "two", "one"]
    assert [m.id for m in storage.matches(bot="carol")] == ["three"]


def test_revision_0007_drops_the_retired_moon_deal_limit_and_keeps_it_as_the_cap(
    storage: Storage,
) -> None:
    """Moon rows stored under the engine's old deal limit load after 0007; a tournament's
    limit becomes its cap on deals unless it had one already."""
    created = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)
    old = dataclasses.replace(
        a_match("old-moon"), game="moon", seats=("a", "b", "c"), scores=(3, 2, 1), winner=0
    )
    assert storage.save_match(old)
    with storage.engine.connect() as connection:
        command.downgrade(migrations.config(connection), "0006")
        connection.commit()
    with storage.engine.begin() as connection:
        connection.execute(
            sa.text("UPDATE matches SET options = :o WHERE id = 'old-moon'").bindparams(
                sa.bindparam("o", type_=sa.JSON)
            ),
            {"o": {"deal_limit": 100}},
        )
        for tournament_id, game, options, cap in (
            ("limited", "moon", {"deal_limit": 40}, None),
            ("capped", "moon", {"deal_limit": 40}, 300),
            ("off", "moon", {"deal_limit": 0}, None),
            ("line", "straight", {"players": 2, "partnerships": False}, None),
        ):
            connection.execute(
                sa.text(
                    "INSERT INTO tournaments (id, name, game, options, entrants, "
                    "games_per_pairing, deals, move_ms, bank_ms, grace_ms, fault_policy, "
                    "max_strikes, concurrency, wait_seconds, seed, rated, state, created, "
                    "updated, max_deals) VALUES (:id, 'cup', :game, :options, "
                    "'[\"a\", \"b\", \"c\"]', 1, 'duplicate', 1000, 10000, 50, 'forfeit', 3, 1, "
                    "0, 7, :rated, 'created', :created, :created, :cap)"
                ).bindparams(sa.bindparam("options", type_=sa.JSON)),
                {
                    "id": tournament_id,
                    "game": game,
                    "options": options,
                    "created": created,
                    "cap": cap,
                    "rated": True,
                },
            )
    with storage.engine.connect() as connection:
        migrations.upgrade(connection)
    assert differences(storage) == []
    moved = storage.match("old-moon")
    assert moved is not None and moved.options == {}
    tournaments = {t.id: t for t in storage.tournaments()}
    assert {k: (t.options, t.max_deals) for k, t in tournaments.items()} == {
        "limited": ({}, 40),
        "capped": ({}, 300),
        "off": ({}, None),
        "line": ({"players": 2, "partnerships": False}, None),
    }


def test_revision_0011_makes_an_owner_without_a_token_of_each_bot_owner(storage: Storage) -> None:
    """The free-text owners of the bots stored before 0011 become owners without a token,
    one per course and name, until the organizer issues one (docs/courses.md: owners)."""
    storage.create_course("cs101")
    storage.create_bot("ann-v1", course="cs101", owner="ann")
    storage.create_bot("ann-v2", course="cs101", owner="ann")
    storage.create_bot("lone", course="cs101")
    storage.create_bot("ann-home", owner="ann")
    with storage.engine.connect() as connection:
        command.downgrade(migrations.config(connection), "0010")
        connection.commit()
    with storage.engine.connect() as connection:
        migrations.upgrade(connection)
    assert differences(storage) == []
    (ann,) = storage.owners("cs101")
    assert (ann.name, ann.bots, ann.token_issued, ann.invite_id) == (
        "ann",
        ("ann-v1", "ann-v2"),
        None,
        None,
    )
    assert [o.name for o in storage.owners("default")] == ["ann"]
    token = storage.issue_owner_token("cs101", "ann").token
    assert storage.register_with_owner_token(token, "ann-v3").bot.owner == "ann"


def test_revision_0012_keeps_every_course_public_and_every_tournament_its_courses(
    storage: Storage,
) -> None:
    """Courses stored before 0012 stay public, as every live match was, and their tournaments
    take the course's live view (docs/courses.md: live view); 0012 goes down and up again."""
    storage.create_course("cs101")
    with storage.engine.connect() as connection:
        command.downgrade(migrations.config(connection), "0011")
        connection.commit()
        columns = {c["name"] for c in sa.inspect(connection).get_columns("courses")}
        assert "live_view" not in columns
    created = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)
    with storage.engine.begin() as connection:
        connection.execute(
            sa.text(
                "INSERT INTO tournaments (id, name, game, options, entrants, games_per_pairing, "
                "deals, move_ms, bank_ms, grace_ms, fault_policy, max_strikes, concurrency, "
                "wait_seconds, seed, rated, state, created, updated, course) VALUES ('cup', "
                "'cup', 'passing', '{}', '[\"a\", \"b\"]', 1, 'duplicate', 1000, 10000, 50, "
                "'forfeit', 3, 1, 0, 7, :rated, 'created', :created, :created, 'cs101')"
            ),
            {"created": created, "rated": True},
        )
    with storage.engine.connect() as connection:
        migrations.upgrade(connection)
    assert differences(storage) == []
    assert {c.name: c.live_view for c in storage.courses()} == {
        "cs101": "public",
        "default": "public",
    }
    cup = storage.tournament("cup")
    assert cup is not None and cup.live_view is None
    storage.update_course("cs101", live_view="signed-in")
    assert storage.live_view("cs101", "cup") == "signed-in"


def test_revision_0013_hosts_no_bot_before_it_and_goes_down_and_up_again(
    storage: Storage,
) -> None:
    """Bots, courses and tournaments stored before 0013 have no versions, pins, limits nor a
    runner's token (docs/hosting.md); 0013 goes down and up again, keeping them."""
    token = storage.create_bot("ann-v1").token
    with storage.engine.connect() as connection:
        command.downgrade(migrations.config(connection), "0012")
        connection.commit()
        tables = set(sa.inspect(connection).get_table_names())
        assert not {"bot_versions", "match_logs"} & tables
    with storage.engine.connect() as connection:
        migrations.upgrade(connection)
    assert differences(storage) == []
    assert storage.check_bot("ann-v1", token) is BotCheck.OK
    assert storage.check_bot("ann-v1", "") is BotCheck.WRONG_TOKEN
    with storage.engine.connect() as connection:
        assert connection.execute(sa.text("SELECT hosting_limits FROM courses")).all() == [(None,)]


def test_revision_0014_keeps_every_tournament_a_round_robin_and_goes_down_and_up_again(
    storage: Storage,
) -> None:
    """Tournaments stored before 0014 are round robins without games per entrant, so their
    schedules stay the same (docs/tournaments.md: formats); 0014 goes down and up again."""
    with storage.engine.connect() as connection:
        command.downgrade(migrations.config(connection), "0013")
        connection.commit()
        columns = {c["name"] for c in sa.inspect(connection).get_columns("tournaments")}
        assert not {"format", "games_per_entrant"} & columns
    created = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)
    with storage.engine.begin() as connection:
        connection.execute(
            sa.text(
                "INSERT INTO tournaments (id, name, game, options, entrants, games_per_pairing, "
                "deals, move_ms, bank_ms, grace_ms, fault_policy, max_strikes, concurrency, "
                "wait_seconds, seed, rated, state, created, updated) VALUES ('cup', "
                "'cup', 'passing', '{}', '[\"a\", \"b\"]', 1, 'duplicate', 1000, 10000, 50, "
                "'forfeit', 3, 1, 0, 7, :rated, 'created', :created, :created)"
            ),
            {"created": created, "rated": True},
        )
    with storage.engine.connect() as connection:
        migrations.upgrade(connection)
    assert differences(storage) == []
    cup = storage.tournament("cup")
    assert cup is not None
    assert (cup.format, cup.games_per_entrant) == ("round-robin", None)

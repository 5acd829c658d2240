"""Group commit (issue 14): many finished matches in one transaction, each still whole and once.

``RatedStorage.save_matches`` stores a batch in one transaction and moves the ratings in memory
in the batch's order; the ladder writer (server/store/writer.py) gives it the matches queued
together, and :func:`store_batch` stores a batch that fails for good again one match at a time,
so that only the bad match fails. On SQLite and on PostgreSQL (``tests/fakes/store.py``).
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
import trio
from sqlalchemy.exc import IntegrityError

from domino_arena.server.ladder import elo
from domino_arena.server.ladder.ratings_store import RatedStorage, rated_game_of
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.storage import Storage
from domino_arena.server.store.writer import Writer, store_batch
from tests.fakes.store import a_match, rated, running_tournament

BOTS = tuple(f"bot{n}" for n in range(6))


def random_matches(rng: random.Random, count: int) -> list[StoredMatch]:
    """Rated, forfeited, void and unrated matches in three pools, 2 to 4 seats, some games of
    the tournament ``t1`` (a frozen baseline ``house:greedy`` seated in some), and a few ids
    given twice."""
    found: list[StoredMatch] = []
    for number in range(count):
        tournament = rng.random() < 0.3
        pool = "passing" if tournament else rng.choice(("passing", "moon", "doubles"))
        seats = tuple(rng.sample(BOTS, rng.choice((2, 3, 4))))
        if tournament and rng.random() < 0.5:
            seats = ("house:greedy", *seats[1:])
        partnerships = len(seats) == 4 and rng.random() < 0.5
        sides = (0, 1, 0, 1) if partnerships else tuple(range(len(seats)))
        scores = tuple(rng.randrange(0, 100) for _ in range(len(set(sides))))
        kind = rng.choice(("normal", "normal", "normal", "forfeit", "void", "unrated"))
        faulted = rng.randrange(len(seats)) if kind == "forfeit" else None
        winner = None if kind == "void" else rng.choice([None, *range(len(set(sides)))])
        if faulted is not None and winner == sides[faulted]:
            winner = None
        match = rated(
            f"g{number}",
            seats,
            scores,
            winner,
            game=pool,
            side_of_seat=sides,
            termination="void" if kind == "void" else kind if kind == "forfeit" else "normal",
            faulted_seat=faulted,
            faults=tuple(rng.randrange(3) for _ in seats),
            minute=number % 60,
        )
        if tournament:
            match = dataclasses.replace(match, tournament_id="t1", game_index=number)
        found.append(dataclasses.replace(match, rated=kind != "unrated"))
        if rng.random() < 0.1:  # a retry after a lost answer
            found.append(rng.choice(found))
    return found


def opened(storage: RatedStorage) -> RatedStorage:
    storage.open()
    storage.add_tournament(running_tournament("cup", BOTS, baselines=(("greedy", 1650.0),)))
    return storage


def contents(storage: RatedStorage) -> dict[str, Any]:
    """Everything the ladder keeps: ratings, rated games and history per pool, the matches."""
    pools = storage.pools()
    return {
        "pools": pools,
        "ratings": {pool: storage.ratings(pool) for pool in pools},
        "games": {pool: storage.rated_games(pool) for pool in pools},
        "history": {
            (pool, bot): [rating for _, rating in storage.rating_history(pool, bot)]
            for pool in pools
            for bot in BOTS
        },
        "matches": sorted(m.id for m in storage.matches(1000, records=False)),
    }


def test_a_batch_moves_the_ratings_exactly_as_saving_one_by_one_does(
    rated_storage: RatedStorage, tmp_path: Path
) -> None:
    rng = random.Random(14)
    matches = random_matches(rng, 90)
    one_by_one = opened(RatedStorage(f"sqlite:///{tmp_path / 'one.db'}"))
    rated_storage.add_tournament(running_tournament("cup", BOTS, baselines=(("greedy", 1650.0),)))
    singles = [one_by_one.save_match(match) for match in matches]
    batched: list[bool] = []
    start = 0
    while start < len(matches):
        size = rng.randrange(1, 14)
        batched.extend(rated_storage.save_matches(matches[start : start + size]))
        start += size
    assert batched == singles
    assert singles.count(False) == len(matches) - len({m.id for m in matches})
    expected = contents(one_by_one)
    assert contents(rated_storage) == expected
    assert expected["games"]["passing"]  # the test rated something, with a baseline seated
    assert any("house:greedy" in game.bots for game in expected["games"]["passing"])
    for pool in expected["pools"]:
        assert rated_storage.recompute_ratings(pool) == rated_storage.ratings(pool)
    one_by_one.close()


def test_a_batch_writes_what_is_stored_already_no_second_time(
    rated_storage: RatedStorage,
) -> None:
    rated_storage.add_tournament(running_tournament("cup", BOTS))
    first = rated("m1", ("bot0", "bot1"), (10, 20), 1)
    game = dataclasses.replace(
        rated("m2", ("bot1", "bot2"), (30, 20), 0), tournament_id="t1", game_index=4
    )
    assert rated_storage.save_matches([first, game]) == [True, True]
    again = [
        first,  # same id
        dataclasses.replace(game, id="m2-again"),  # same tournament game, another id
        rated("m3", ("bot0", "bot2"), (5, 9), 1),
        rated("m3", ("bot0", "bot2"), (5, 9), 1),  # twice in the batch
    ]
    before = rated_storage.ratings("passing")
    assert rated_storage.save_matches(again) == [False, False, True, False]
    assert len(rated_storage.rated_games("passing")) == 3
    assert rated_storage.ratings("passing") == elo.replay(
        [rated_game_of(m) for m in (first, game, again[2])]
    )
    assert rated_storage.ratings("passing")["bot1"] == before["bot1"]  # m3 did not seat it
    assert rated_storage.save_matches(again) == [False] * 4


def test_a_batch_that_fails_writes_none_of_its_matches(rated_storage: RatedStorage) -> None:
    good = rated("m1", ("bot0", "bot1"), (10, 20), 1)
    orphan = dataclasses.replace(
        rated("m2", ("bot1", "bot2"), (30, 20), 0), tournament_id="nobody", game_index=0
    )
    with pytest.raises(IntegrityError):
        rated_storage.save_matches([good, orphan])
    assert rated_storage.matches() == []
    assert rated_storage.pools() == []


def test_a_bad_match_fails_alone_and_the_rest_of_its_batch_is_stored(
    rated_storage: RatedStorage,
) -> None:
    goods = [rated(f"ok{n}", ("bot0", f"bot{n + 1}"), (10, 20 + n), 1) for n in range(3)]
    orphan = dataclasses.replace(
        rated("orphan", ("bot1", "bot2"), (30, 20), 0), tournament_id="nobody", game_index=0
    )
    damaged = dataclasses.replace(rated("damaged", ("bot1", "bot2"), (30, 20), 0), seed=-1)
    outcomes = store_batch(rated_storage, [goods[0], orphan, goods[1], damaged, goods[2]])
    assert outcomes[0::2] == [True, True, True]
    assert isinstance(outcomes[1], IntegrityError)
    assert isinstance(outcomes[3], ValueError)
    assert "seed" in str(outcomes[3])
    assert sorted(m.id for m in rated_storage.matches()) == ["ok0", "ok1", "ok2"]
    assert rated_storage.ratings("passing") == elo.replay([rated_game_of(m) for m in goods])


def test_the_writer_commits_the_matches_queued_together_at_once(
    rated_storage: RatedStorage,
) -> None:
    """Saves that wait while a transaction is written share the next one; each caller hears
    its own outcome (a bad match's error at its caller alone), once its transaction is
    committed."""
    writer = Writer(rated_storage)
    matches = [rated(f"m{n}", ("bot0", f"bot{1 + n % 5}"), (n, 50), 1) for n in range(40)]
    bad = dataclasses.replace(a_match("bad"), tournament_id="nobody", game_index=0)
    heard: dict[str, object] = {}

    async def save(match: StoredMatch) -> None:
        try:
            heard[match.id] = await writer.save_match(match)
            heard[match.id + " stored"] = rated_storage.match(match.id) is not None
        except IntegrityError as error:
            heard[match.id] = error

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            for match in [*matches[:20], bad, *matches[20:]]:
                nursery.start_soon(save, match)

    trio.run(main)
    assert writer.pending == 0
    assert isinstance(heard.pop("bad"), IntegrityError)
    assert heard == {
        **{m.id: True for m in matches},
        **{m.id + " stored": True for m in matches},
    }
    assert writer.batches < len(matches) // 2  # the queued saves shared transactions
    assert len(rated_storage.rated_games("passing")) == len(matches)
    assert rated_storage.recompute_ratings("passing") == rated_storage.ratings("passing")


def test_a_batch_of_unrated_matches_goes_through_the_plain_storage(storage: Storage) -> None:
    assert storage.save_matches([a_match("m1"), a_match("m2"), a_match("m1")]) == [
        True,
        True,
        False,
    ]
    with pytest.raises(ValueError, match="m3: it counts for the ladder"):
        storage.save_matches([a_match("m4"), dataclasses.replace(a_match("m3"), rated=True)])
    assert sorted(m.id for m in storage.matches()) == ["m1", "m2"]


def test_recomputing_reads_no_record(rated_storage: RatedStorage) -> None:
    rated_storage.save_matches([rated(f"m{n}", ("bot0", "bot1"), (n, 3), 1) for n in range(5)])
    statements: list[str] = []

    def note(_c: Any, _cursor: Any, statement: str, *_: Any) -> None:
        statements.append(statement)

    sa.event.listen(rated_storage.engine, "before_cursor_execute", note)
    try:
        assert rated_storage.recompute_ratings("passing") == rated_storage.ratings("passing")
    finally:
        sa.event.remove(rated_storage.engine, "before_cursor_execute", note)
    replay = [s for s in statements if "rated_games" in s]
    assert replay
    assert all("record" not in s and "options" not in s for s in replay)


def test_postgresql_compresses_records_with_lz4_where_it_can(rated_storage: RatedStorage) -> None:
    engine = rated_storage.engine
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite stores records as they are")
    with engine.connect() as connection:
        lz4 = (
            "lz4"
            in connection.execute(
                sa.text("SELECT enumvals FROM pg_settings WHERE name = 'default_toast_compression'")
            ).scalar_one()
        )
        method = connection.execute(
            sa.text(
                "SELECT attcompression FROM pg_attribute "
                "WHERE attrelid = 'matches'::regclass AND attname = 'record'"
            )
        ).scalar_one()
    assert method == ("l" if lz4 else "")

"""The rating transaction (server/ladder/ratings_store.py) on SQLite and on PostgreSQL.

A rated match, its bots' rating change and its place in ``rated_games`` are written in one
transaction, once per match id and once per tournament game; what is stored always equals the
replay of the rated games. The databases are ``tests/fakes/store.py``'s fixtures.
"""

from __future__ import annotations

import dataclasses
import random
import re
import threading
from collections.abc import Mapping

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import SQLAlchemyError

from domino_arena.server.ladder import elo
from domino_arena.server.ladder.ratings_store import RatedStorage, rated_game_of, store_and_rate
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tables import (
    MATCH_SEATS,
    MATCHES,
    RATED_GAMES,
    RATING_HISTORY,
    RATINGS,
)
from tests.fakes.store import rated, running_tournament

# -- the ratings a saved match moves ------------------------------------------------------------


def test_a_rated_match_moves_its_bots_ratings(rated_storage: RatedStorage) -> None:
    assert rated_storage.save_match(rated("m1", ("ann", "bob"), (7, 3), 0))
    ratings = rated_storage.ratings("passing")
    assert ratings == elo.rate_game({}, elo.RatedGame(("ann", "bob"), (0, 1), (0, 1), (0, 0)))
    assert ratings["ann"].rating > elo.INITIAL_RATING > ratings["bob"].rating
    assert rated_storage.pools() == ["passing"]
    assert rated_storage.ratings("moon") == {}


def test_a_rated_match_records_the_model_it_fed(rated_storage: RatedStorage) -> None:
    rated_storage.save_match(rated("m1", ("ann", "bob"), (7, 3), 0))
    rated_storage.save_match(
        dataclasses.replace(rated("m2", ("ann", "bob"), (7, 3), 0), rated=False)
    )
    stored, unrated = rated_storage.match("m1"), rated_storage.match("m2")
    assert stored is not None and stored.rating_model == elo.MODEL == "elo-pairwise-k24/1"
    assert unrated is not None and unrated.rating_model == ""


def test_a_match_stored_twice_is_rated_once(rated_storage: RatedStorage) -> None:
    rated_storage.save_match(rated("m1", ("ann", "bob"), (7, 3), 0))
    once = rated_storage.ratings("passing")
    assert not rated_storage.save_match(rated("m1", ("ann", "bob"), (7, 3), 0))
    assert rated_storage.ratings("passing") == once
    assert len(rated_storage.rated_games("passing")) == 1


@pytest.mark.parametrize(
    "match",
    [
        dataclasses.replace(rated("m1", ("ann", "bob"), (7, 3), 0), rated=False),
        rated("m1", ("ann", "bob"), (0, 0), None, termination="void"),
        rated("m1", ("ann", "bob"), (0, 0), None, termination="aborted"),
    ],
    ids=["unrated", "void", "aborted"],
)
def test_unrated_void_and_aborted_matches_move_no_rating(
    rated_storage: RatedStorage, match: StoredMatch
) -> None:
    assert rated_storage.save_match(match)
    assert rated_storage.match("m1") == match
    assert rated_storage.ratings("passing") == {}
    assert rated_storage.rated_games("passing") == []
    assert rated_storage.pools() == []


def test_a_forfeit_ranks_the_forfeiting_side_last() -> None:
    match = rated(
        "m1",
        ("a", "b", "c", "d"),
        (40, 10),
        1,
        side_of_seat=(0, 1, 0, 1),
        termination="forfeit",
        faulted_seat=2,
        faults=(0, 0, 3, 0),
    )
    assert rated_game_of(match) == elo.RatedGame(
        ("a", "b", "c", "d"), (0, 1, 0, 1), (1, 0), (0, 0, 3, 0)
    )
    free_for_all = rated(
        "m2", ("a", "b", "c"), (50, 90, 70), 0, termination="forfeit", faulted_seat=1
    )
    assert rated_game_of(free_for_all).standing == (0, 2, 1)


@pytest.mark.parametrize(
    ("match", "message"),
    [
        (rated("m1", ("ann", "ann"), (7, 3), 0), "'ann' sits in seats 0 and 1"),
        (rated("m1", ("a", "b", "c", "d"), (7, 3), 0), "side_of_seat is empty but there are 2"),
        (rated("m1", ("a", "b"), (7, 3), 0, termination="forfeit"), "a forfeit needs the seat"),
        (rated("m1", ("a", "b"), (0, 0), None, termination="void"), "'void' is never rated"),
    ],
    ids=["bot-twice", "no-sides", "forfeit-without-seat", "void"],
)
def test_a_match_the_ladder_cannot_rate_is_named(match: StoredMatch, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        rated_game_of(match)


def test_a_rated_match_the_ladder_refuses_is_not_stored(rated_storage: RatedStorage) -> None:
    with pytest.raises(ValueError, match="'ann' sits in seats 0 and 1"):
        rated_storage.save_match(rated("m1", ("ann", "ann"), (7, 3), 0))
    assert rated_storage.match("m1") is None
    assert rated_storage.ratings("passing") == {}


def test_a_match_whose_rating_fails_is_not_stored(rated_storage: RatedStorage) -> None:
    rated_storage.save_match(rated("m1", ("ann", "bob"), (7, 3), 0))
    before = rated_storage.ratings("passing")
    with rated_storage.engine.begin() as connection:  # the rating step will find no table
        connection.execute(sa.text("ALTER TABLE ratings RENAME TO ratings_gone"))
    try:
        with pytest.raises(SQLAlchemyError, match="ratings"):
            rated_storage.save_match(rated("m2", ("ann", "bob"), (3, 7), 1))
    finally:
        with rated_storage.engine.begin() as connection:
            connection.execute(sa.text("ALTER TABLE ratings_gone RENAME TO ratings"))
    assert rated_storage.match("m2") is None
    assert rated_storage.ratings("passing") == before
    assert rated_storage.save_match(rated("m2", ("ann", "bob"), (3, 7), 1))


def _ladder_rows(storage: RatedStorage) -> dict[str, list[tuple[object, ...]]]:
    """Every row of the tables a saved match writes (its own and the ladder's), by table."""
    tables = (MATCHES, MATCH_SEATS, RATINGS, RATED_GAMES, RATING_HISTORY)
    with storage.engine.connect() as connection:
        return {
            table.name: sorted(
                (tuple(row) for row in connection.execute(sa.select(table))), key=repr
            )
            for table in tables
        }


def test_a_batch_whose_rating_step_fails_leaves_neither_its_matches_nor_their_ratings(
    rated_storage: RatedStorage, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``store_and_rate`` is one transaction: the rating step failing after the store inserted
    the rows, the new bot's rating row was made and one game was rated leaves nothing of the
    batch (as a crash there would); the same batch sent again is stored and rated once."""
    first = rated("m0", ("ann", "bob"), (7, 3), 0)
    assert rated_storage.save_match(first)
    before = _ladder_rows(rated_storage)
    batch = [
        rated("m1", ("ann", "cid"), (7, 3), 0, minute=1),
        dataclasses.replace(rated("m2", ("bob", "cid"), (2, 9), 1, minute=2), rated=False),
        rated("m3", ("bob", "cid"), (2, 9), 1, minute=3),
    ]
    rate_game = elo.rate_game
    rated_now: list[elo.RatedGame] = []

    def fails_on_the_second(
        ratings: Mapping[str, elo.Rating], game: elo.RatedGame
    ) -> dict[str, elo.Rating]:
        rated_now.append(game)
        if len(rated_now) == 2:
            raise RuntimeError("the ladder failed mid-batch")
        return rate_game(ratings, game)

    monkeypatch.setattr(elo, "rate_game", fails_on_the_second)
    with pytest.raises(RuntimeError, match="mid-batch"):
        store_and_rate(rated_storage.engine, batch)
    assert rated_now == [rated_game_of(batch[0]), rated_game_of(batch[2])]
    assert _ladder_rows(rated_storage) == before
    monkeypatch.undo()
    assert store_and_rate(rated_storage.engine, [first, *batch]) == [False, True, True, True]
    games = [rated_game_of(match) for match in (first, batch[0], batch[2])]
    assert rated_storage.rated_games("passing") == games
    assert rated_storage.ratings("passing") == elo.replay(games)
    assert store_and_rate(rated_storage.engine, batch) == [False, False, False]
    assert rated_storage.ratings("passing") == elo.replay(games)


def test_stored_ratings_equal_the_replay_of_the_rated_games(rated_storage: RatedStorage) -> None:
    rng = random.Random(2026)
    bots = [f"bot{n}" for n in range(7)]
    expected: dict[str, list[elo.RatedGame]] = {"passing": [], "moon": [], "doubles": []}
    for number in range(60):
        pool = rng.choice(sorted(expected))
        seats = tuple(rng.sample(bots, rng.choice((2, 3, 4))))
        partnerships = len(seats) == 4 and rng.random() < 0.5
        sides = (0, 1, 0, 1) if partnerships else tuple(range(len(seats)))
        scores = tuple(rng.randrange(0, 100) for _ in range(len(set(sides))))
        kind = rng.choice(("normal", "normal", "forfeit", "void", "unrated"))
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
            side_of_seat=sides if partnerships or rng.random() < 0.5 else (),
            termination="void" if kind == "void" else kind if kind == "forfeit" else "normal",
            faulted_seat=faulted,
            faults=tuple(rng.randrange(3) for _ in seats) if rng.random() < 0.5 else (),
            minute=number % 60,
        )
        if kind == "unrated":
            match = dataclasses.replace(match, rated=False)
        assert rated_storage.save_match(match)
        if kind in ("normal", "forfeit"):
            expected[pool].append(rated_game_of(match))
    assert rated_storage.pools() == sorted(pool for pool, games in expected.items() if games)
    for pool, games in expected.items():
        assert rated_storage.rated_games(pool) == games
        numbered = rated_storage.rated_games_after(pool, 0)
        assert [game for _, game in numbered] == games
        seqs = [seq for seq, _ in numbered]
        assert seqs == sorted(set(seqs))
        for cut in range(len(numbered)):  # the games after each one are the rest, in order
            assert rated_storage.rated_games_after(pool, seqs[cut]) == numbered[cut + 1 :]
        assert (
            rated_storage.recompute_ratings(pool)
            == rated_storage.ratings(pool)
            == elo.replay(games)
        )


def test_rated_saves_from_many_threads_at_once_replay_exactly(rated_storage: RatedStorage) -> None:
    bots = ("ann", "bob", "cid", "dee", "eve")
    matches = [
        rated(f"g{n}", (bots[n % 5], bots[(n + 1) % 5], bots[(n + 3) % 5]), (n % 7, 3, 5), None)
        for n in range(40)
    ]
    errors: list[BaseException] = []

    def save(part: list[StoredMatch]) -> None:
        try:
            for match in part:
                assert rated_storage.save_match(match)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=save, args=(matches[n::4],)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    games = rated_storage.rated_games("passing")
    assert sorted(games, key=repr) == sorted((rated_game_of(m) for m in matches), key=repr)
    assert rated_storage.recompute_ratings("passing") == rated_storage.ratings("passing")
    assert sum(rating.games for rating in rated_storage.ratings("passing").values()) == 3 * 40


def test_a_rated_tournament_game_saved_again_under_another_id_is_rated_once(
    rated_storage: RatedStorage,
) -> None:
    rated_storage.add_tournament(running_tournament("cup", ("ann", "bob")))
    first = dataclasses.replace(
        rated("first", ("ann", "bob"), (7, 3), 0), tournament_id="t1", game_index=0
    )
    assert rated_storage.save_match(first)
    once = rated_storage.ratings("passing")
    assert not rated_storage.save_match(dataclasses.replace(first, id="retry", winner=1))
    assert rated_storage.match("retry") is None
    assert rated_storage.ratings("passing") == once
    assert rated_storage.rated_games("passing") == [rated_game_of(first)]


# -- the rating history (each bot's rating after each of its rated games) ----------------------


def _replayed_history(games: list[elo.RatedGame], bot: str) -> list[float]:
    """``bot``'s rating after each game of ``games`` it played, by replaying them."""
    ratings: dict[str, elo.Rating] = {}
    history = []
    for game in games:
        ratings.update(elo.rate_game(ratings, game))
        if bot in game.bots:
            history.append(ratings[bot].rating)
    return history


def _some_rated_matches(rated_storage: RatedStorage) -> list[elo.RatedGame]:
    rng = random.Random(7)
    bots = ["ann", "bob", "cat", "dan"]
    games = []
    for number in range(24):
        seats = tuple(rng.sample(bots, 2))
        match = rated(f"h{number}", seats, (rng.randrange(50), rng.randrange(50)), 0, minute=number)
        if number % 5 == 4:
            match = dataclasses.replace(match, termination="void", winner=None)
        assert rated_storage.save_match(match)
        if match.moves_ratings:
            games.append(rated_game_of(match))
    return games


def test_each_rated_game_writes_its_bots_rating_after_it(rated_storage: RatedStorage) -> None:
    games = _some_rated_matches(rated_storage)
    for bot in ("ann", "bob", "cat", "dan"):
        history = rated_storage.rating_history("passing", bot)
        assert [rating for _, rating in history] == _replayed_history(games, bot)
        seqs = [seq for seq, _ in history]
        assert seqs == sorted(set(seqs))
        assert history[-1][1] == rated_storage.ratings("passing")[bot].rating
    assert rated_storage.rating_history("moon", "ann") == []
    assert rated_storage.rating_history("passing", "nobody") == []


def test_a_database_without_history_gets_it_rebuilt_when_opened(
    rated_storage: RatedStorage,
) -> None:
    """A database migrated from 0004 has rated games and no history: opening rebuilds it."""
    _some_rated_matches(rated_storage)
    before = {b: rated_storage.rating_history("passing", b) for b in ("ann", "bob", "cat")}
    with rated_storage.engine.begin() as connection:
        connection.execute(sa.text("DELETE FROM rating_history WHERE bot <> 'ann'"))
    assert rated_storage.rating_history("passing", "bob") == []
    rated_storage.close()
    rated_storage.open()
    after = {b: rated_storage.rating_history("passing", b) for b in ("ann", "bob", "cat")}
    assert after == before


# -- frozen baselines ---------------------------------------------------------------------------


def test_a_frozen_baseline_gets_no_row_and_its_opponent_moves_against_its_fixed_rating(
    rated_storage: RatedStorage,
) -> None:
    rated_storage.add_tournament(
        running_tournament("term", ("ann", "house:greedy"), baselines=(("greedy", 1700.0),))
    )
    for index, winner in enumerate((0, 0, 1)):
        match = rated(f"g{index}", ("ann", "house:greedy"), (7, 3), winner, minute=index)
        assert rated_storage.save_match(
            dataclasses.replace(match, tournament_id="t1", game_index=index)
        )
    ratings = rated_storage.ratings("passing")
    assert list(ratings) == ["ann"]
    fixed = (("house:greedy", 1700.0),)
    games = [
        elo.RatedGame(("ann", "house:greedy"), (0, 1), standing, (0, 0), fixed)
        for standing in ((0, 1), (0, 1), (1, 0))
    ]
    assert ratings == elo.replay(games)
    assert rated_storage.rated_games("passing") == games
    assert rated_storage.recompute_ratings("passing") == ratings
    assert rated_storage.rating_history("passing", "house:greedy") == []
    rated_storage.rebuild_rating_history("passing")
    assert len(rated_storage.rating_history("passing", "ann")) == 3
    assert rated_storage.rating_history("passing", "house:greedy") == []


def test_a_house_bot_outside_a_tournament_is_not_rated(rated_storage: RatedStorage) -> None:
    assert rated_storage.save_match(rated("m1", ("ann", "house:random"), (7, 3), 0))
    ratings = rated_storage.ratings("passing")
    assert list(ratings) == ["ann"]
    assert ratings["ann"].rating == elo.INITIAL_RATING
    assert (ratings["ann"].games, ratings["ann"].wins) == (1, 1)

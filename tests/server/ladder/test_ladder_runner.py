"""The continuous ladder: it keeps every connected bot of its game busy, fairly, until stopped.

``play`` is a fake that "plays" for a fixed time under ``MockClock`` and records what it was
asked; the lobby is real, with fake connections.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

import pytest
import trio
import trio.testing

from domino_arena.sdk.rules import Game, make_game
from domino_arena.server.ladder.elo import Rating
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.net.lobby import Connection, Lobby
from domino_arena.server.play.ladder_runner import LadderRunner, Members, members_of
from tests.fakes.play import FakePlay

TWO: Game = make_game("passing", players=2)


def ratings_of(table: Mapping[str, float]) -> Callable[[], Awaitable[Mapping[str, Rating]]]:
    async def ratings() -> Mapping[str, Rating]:
        return {name: Rating(rating) for name, rating in table.items()}

    return ratings


def connect(lobby: Lobby, *names: str, games: tuple[str, ...] = ("passing",)) -> None:
    for name in names:
        lobby.connect(Connection(name, games))


def ladder(
    lobby: Lobby, play: FakePlay, ratings: Mapping[str, float] | None = None, **options: object
) -> LadderRunner:
    return LadderRunner(
        TWO,
        lobby=lobby,
        play=play,
        ratings=ratings_of(ratings or {}),
        **options,  # type: ignore[arg-type]
    )


def run_for(
    seconds: float, runner: LadderRunner, before: Callable[[], None] = lambda: None
) -> None:
    async def main() -> None:
        before()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(runner.run)
            await trio.sleep(seconds)
            runner.stop()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_every_connected_bot_gets_games_evenly_within_the_concurrency() -> None:
    lobby, play = Lobby(), FakePlay(duration=1.0)
    names = ("ann", "bob", "cid", "dan", "eve")
    runner = ladder(lobby, play, {"ann": 1900, "bob": 1000}, concurrency=2, seed=1)
    run_for(100.5, runner, lambda: connect(lobby, *names))
    games = Counter(name for spec in play.specs for name in spec.bots)
    assert set(games) == set(names)
    assert max(games.values()) - min(games.values()) <= 1
    assert sum(games.values()) == 2 * 2 * 101  # two tables a second, the last ones finish
    assert play.max_in_flight == 2
    assert len(play.finished) == len(play.specs) == runner.finished  # stop lets games end
    assert len({spec.match_id for spec in play.specs}) == len(play.specs)
    for spec in play.specs:
        assert spec.rated and spec.tournament_id is None and spec.game == TWO
        assert spec.match_id.startswith(f"ladder-passing-{runner.session}-")


def test_only_connected_bots_of_this_game_play() -> None:
    lobby, play = Lobby(), FakePlay()
    runner = ladder(lobby, play, concurrency=4, seed=2)

    def arrive() -> None:
        connect(lobby, "ann", "bob", "cid")
        connect(lobby, "moony", games=("moon",))
        connect(lobby, "gone")
        lobby.disconnect(lobby.get("gone"))  # type: ignore[arg-type]

    run_for(10.5, runner, arrive)
    seated = {name for spec in play.specs for name in spec.bots}
    assert seated == {"ann", "bob", "cid"}


def test_nearer_ratings_are_paired() -> None:
    lobby, play = Lobby(), FakePlay()
    table = {"ann": 1500, "bob": 1510, "cid": 2000, "dan": 2010}
    runner = ladder(lobby, play, table, concurrency=2, seed=3)
    run_for(20.5, runner, lambda: connect(lobby, *table))
    pairs = {frozenset(spec.bots) for spec in play.specs}
    assert pairs == {frozenset({"ann", "bob"}), frozenset({"cid", "dan"})}


def test_a_bot_that_connects_later_is_noticed_and_gets_games() -> None:
    lobby, play = Lobby(), FakePlay(duration=5.0)
    runner = ladder(lobby, play, concurrency=2, seed=4, recheck=1.0)

    async def main() -> None:
        connect(lobby, "ann", "bob", "cid")
        async with trio.open_nursery() as nursery:
            nursery.start_soon(runner.run)
            await trio.sleep(2.5)
            (idle,) = {"ann", "bob", "cid"} - set(play.specs[0].bots)
            connect(lobby, "dan")  # a slot is free; the next look (at 3 s) seats dan
            await trio.sleep(1.0)
            assert len(play.in_flight) == 2
            assert set(play.specs[-1].bots) == {idle, "dan"}
            runner.stop()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_the_same_seed_plays_the_same_games() -> None:
    def session(seed: int) -> list[tuple[tuple[str, ...], int]]:
        lobby, play = Lobby(), FakePlay(duration=1.5)  # no game ends as the ladder looks again
        runner = ladder(lobby, play, concurrency=3, seed=seed)
        run_for(30.5, runner, lambda: connect(lobby, "ann", "bob", "cid", "dan", "eve", "fay"))
        in_order = sorted(play.specs, key=lambda spec: spec.match_id)  # as started
        return [(spec.bots, spec.seed) for spec in in_order]

    assert session(9) == session(9)
    assert session(9) != session(10)


def test_a_failing_game_stops_the_ladder_with_its_error() -> None:
    lobby, play = Lobby(), FakePlay()
    play.fail[3] = RuntimeError("the storage is gone")
    runner = ladder(lobby, play, concurrency=2, seed=5)

    async def main() -> None:
        connect(lobby, "ann", "bob", "cid", "dan")
        with pytest.raises(RuntimeError, match="the storage is gone"):
            await runner.run()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert runner.playing == {}


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="concurrency must be at least 1, got 0"):
        ladder(Lobby(), FakePlay(), concurrency=0)
    with pytest.raises(ValueError, match="recheck must be a positive number"):
        ladder(Lobby(), FakePlay(), recheck=0.0)
    with pytest.raises(ValueError, match="max_strikes must be at least 1"):
        ladder(Lobby(), FakePlay(), max_strikes=0)


def test_a_course_ladder_pairs_only_its_course_bots_and_stores_there() -> None:
    lobby, play = Lobby(), FakePlay()
    course_bots = {"ann", "bob", "cid"}
    asked = []

    async def members() -> Members:
        asked.append(1)
        return Members(dict.fromkeys(course_bots, ""))

    runner = ladder(lobby, play, concurrency=4, seed=5, course="cs101", members=members)
    run_for(10.5, runner, lambda: connect(lobby, "ann", "bob", "cid", "other1", "other2"))
    seated = {name for spec in play.specs for name in spec.bots}
    assert seated == course_bots and asked
    assert {spec.course for spec in play.specs} == {"cs101"}


def test_a_course_ladder_never_seats_two_bots_of_an_owner_at_a_free_for_all_table() -> None:
    three = make_game("passing", players=3)
    lobby, play = Lobby(), FakePlay()
    owners = {"ann1": "ann", "ann2": "ann", "bob1": "bob", "cid1": "cid", "dan1": "dan"}

    async def members() -> Members:
        return Members(owners, same_owner_tables=False, same_owner_partners=False)

    runner = LadderRunner(
        three,
        lobby=lobby,
        play=play,
        ratings=ratings_of({}),
        concurrency=1,
        seed=6,
        members=members,
    )
    run_for(30.5, runner, lambda: connect(lobby, *owners))
    assert play.specs
    for spec in play.specs:
        seated = [owners[name] for name in spec.bots]
        assert len(set(seated)) == len(seated), spec.bots


def test_members_of_reads_a_course_bots_owners_and_rules(tmp_path: Path) -> None:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'members.db'}")
    storage.open()
    try:
        storage.create_course("cs101", allow_same_owner_partners=True)
        storage.create_bot("ann1", course="cs101", owner="ann")
        storage.create_bot("solo", course="cs101")
        storage.create_bot("elsewhere")
        members = trio.run(members_of(storage, "cs101"))
        assert members == Members(
            {"ann1": "ann", "solo": ""}, same_owner_tables=False, same_owner_partners=True
        )
    finally:
        storage.close()

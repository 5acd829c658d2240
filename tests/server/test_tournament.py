"""Tournaments: every game once, bounded concurrency, resume, pause, cancel, absent bots.

The runner drives a fake ``play`` (it stores a row like the arena does, after a while, and
records what it was asked) against a real SQLite storage and a real lobby with fake
connections. Time is trio's ``MockClock``: waits of minutes take no real time, and the tests
assert the exact moments games start.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
import trio
import trio.testing

from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import Game, make_game
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.net.lobby import Connection, Lobby
from domino_arena.server.play.match_spec import DEFAULT_MAX_DEALS, FinishedMatch
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store.tournaments import StoredTournament, TournamentState
from domino_arena.server.tournaments.lifecycle import (
    TournamentError,
    match_spec,
    new_tournament,
    schedule_of,
)
from domino_arena.server.tournaments.lifecycle.runner import TournamentRunner
from domino_arena.server.tournaments.scheduler import DealMode
from tests.fakes.play import FakePlay, finished_match

BOTS = ("ann", "bob", "cid", "dan", "eve", "fay")
TWO: Game = make_game("passing", players=2)


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[RatedStorage]:
    store = RatedStorage(f"sqlite:///{tmp_path / 'arena.db'}")
    store.open()
    for name in BOTS:
        store.add_bot(name)
    yield store
    store.close()


def tournament(
    storage: RatedStorage,
    entrants: tuple[str, ...] = BOTS[:4],
    *,
    game: Game = TWO,
    store: bool = True,
    **options: object,
) -> StoredTournament:
    settings: dict[str, object] = {
        "time_control": TimeControl(),
        "fault_policy": FaultPolicy.FORFEIT,
        "concurrency": 2,
        "wait_seconds": 30.0,
        "seed": 7,
    }
    settings.update(options)
    t = new_tournament(
        name="test cup",
        game=game,
        entrants=entrants,
        known_bots=BOTS,
        **settings,  # type: ignore[arg-type]
    )
    if store:
        storage.add_tournament(t)
    return t


def connect(lobby: Lobby, *names: str, game: str = "passing") -> None:
    for name in names:
        lobby.connect(Connection(name, [game]))


def run(main: Callable[[], Awaitable[None]]) -> None:
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def state_of(storage: RatedStorage, t: StoredTournament) -> TournamentState:
    row = storage.tournament(t.id)
    assert row is not None
    return row.state


# -- the schedule and the matches ---------------------------------------------------------------


def test_match_specs_are_deterministic_and_share_a_deal_across_rotations(
    storage: RatedStorage,
) -> None:
    t = tournament(storage, BOTS[:3], game=make_game("passing", players=3), store=False)
    schedule = schedule_of(t)
    assert schedule == schedule_of(t)
    specs = [match_spec(t, g) for g in schedule]
    assert [s.match_id for s in specs] == [f"{t.id}-{i:05d}" for i in range(len(schedule))]
    by_deal: dict[int, set[int]] = {}
    for spec in specs:
        assert spec.tournament_id == t.id and spec.rated and spec.absent == ()
        assert spec.deal_id is not None
        by_deal.setdefault(spec.deal_id, set()).add(spec.seed)
    assert all(len(seeds) == 1 for seeds in by_deal.values())
    assert len({next(iter(seeds)) for seeds in by_deal.values()}) == len(by_deal)
    assert specs == [match_spec(t, g) for g in schedule_of(t)]
    assert specs[0].fault_policy is FaultPolicy.FORFEIT
    assert specs[0].time_control == TimeControl()


def test_another_seed_deals_other_games(storage: RatedStorage) -> None:
    first = tournament(storage, store=False)
    other = tournament(storage, store=False, seed=8)
    g = schedule_of(first)[0]
    assert match_spec(first, g).seed != match_spec(other, g).seed


# -- running --------------------------------------------------------------------------------


def test_the_whole_schedule_is_played_once_within_the_concurrency(storage: RatedStorage) -> None:
    t = tournament(storage, BOTS, concurrency=3)
    lobby = Lobby()
    play = FakePlay(storage=storage)
    seen: list[FinishedMatch] = []

    async def main() -> None:
        connect(lobby, *BOTS)
        runner = TournamentRunner(t, storage=storage, play=play, lobby=lobby, on_game=seen.append)
        assert await runner.run() is TournamentState.FINISHED
        assert runner.progress.done == runner.progress.total == len(schedule_of(t))

    run(main)
    total = len(schedule_of(t))
    assert total == 30
    assert sorted(play.indexes()) == list(range(total))
    assert play.max_in_flight == 3
    assert len(seen) == total
    assert storage.tournament_game_indexes(t.id) == set(range(total))
    assert state_of(storage, t) is TournamentState.FINISHED
    # Earlier rounds first: the first games started are those of round 0.
    first_round = [g.index for g in schedule_of(t) if g.round == 0]
    assert sorted(play.indexes()[: len(first_round)]) == first_round


def test_a_resumed_tournament_skips_the_stored_games(storage: RatedStorage) -> None:
    t = tournament(storage)
    schedule = schedule_of(t)
    for index in (0, 3, 5):
        storage.save_match(finished_match(match_spec(t, schedule[index])).to_row())
    lobby = Lobby()
    play = FakePlay(storage=storage)

    async def main() -> None:
        connect(lobby, *BOTS[:4])
        runner = TournamentRunner(t, storage=storage, play=play, lobby=lobby)
        assert runner.progress.done == 0
        assert await runner.run() is TournamentState.FINISHED

    run(main)
    assert sorted(play.indexes()) == [i for i in range(len(schedule)) if i not in (0, 3, 5)]
    matches = storage.matches(limit=1000, tournament_id=t.id)
    assert sorted(m.game_index for m in matches if m.game_index is not None) == list(
        range(len(schedule))
    )


def test_pause_lets_running_games_end_and_a_new_runner_resumes(storage: RatedStorage) -> None:
    t = tournament(storage, concurrency=2)
    lobby = Lobby()
    play = FakePlay(10.0, storage=storage)
    total = len(schedule_of(t))

    async def main() -> None:
        connect(lobby, *BOTS[:4])
        runner = TournamentRunner(t, storage=storage, play=play, lobby=lobby)
        async with trio.open_nursery() as nursery:
            states: list[TournamentState] = []

            async def go() -> None:
                states.append(await runner.run())

            nursery.start_soon(go)
            await play.until(lambda: len(play.calls) == 4)  # the second pair is running
            assert state_of(storage, t) is TournamentState.RUNNING
            runner.pause()
        assert states == [TournamentState.PAUSED]
        assert len(play.calls) == 4 and len(play.finished) == 4  # none started after the pause
        assert state_of(storage, t) is TournamentState.PAUSED
        assert runner.progress.done == 4

        again = TournamentRunner(t, storage=storage, play=play, lobby=lobby)
        assert await again.run() is TournamentState.FINISHED

    run(main)
    assert sorted(play.indexes()) == list(range(total))
    assert storage.tournament_game_indexes(t.id) == set(range(total))


def test_cancel_aborts_the_running_games_unstored(storage: RatedStorage) -> None:
    t = tournament(storage, concurrency=2)
    lobby = Lobby()
    play = FakePlay(10.0, storage=storage)

    async def main() -> None:
        connect(lobby, *BOTS[:4])
        runner = TournamentRunner(t, storage=storage, play=play, lobby=lobby)
        async with trio.open_nursery() as nursery:
            states: list[TournamentState] = []

            async def go() -> None:
                states.append(await runner.run())

            nursery.start_soon(go)
            await play.until(lambda: len(play.calls) == 2)
            runner.cancel()
        assert states == [TournamentState.CANCELLED]
        # A cancelled tournament stays cancelled: a new runner plays nothing.
        later = TournamentRunner(t, storage=storage, play=play, lobby=lobby)
        assert await later.run() is TournamentState.CANCELLED

    run(main)
    assert len(play.calls) == 2 and play.finished == []
    assert storage.tournament_game_indexes(t.id) == set()
    assert state_of(storage, t) is TournamentState.CANCELLED


def test_a_failing_game_stops_the_runner_with_its_error_and_stays_running(
    storage: RatedStorage,
) -> None:
    t = tournament(storage, concurrency=1)
    lobby = Lobby()
    play = FakePlay(storage=storage)
    play.fail[3] = RuntimeError("database is on fire")

    async def main() -> None:
        connect(lobby, *BOTS[:4])
        runner = TournamentRunner(t, storage=storage, play=play, lobby=lobby)
        with pytest.raises(RuntimeError, match="database is on fire"):
            await runner.run()

    run(main)
    assert state_of(storage, t) is TournamentState.RUNNING
    assert storage.tournament_game_indexes(t.id) == {0, 1}


# -- absent bots ----------------------------------------------------------------------------


def test_an_absent_bot_is_waited_for_then_played_without_grace(storage: RatedStorage) -> None:
    t = tournament(storage, BOTS[:2], concurrency=1, wait_seconds=30.0)
    lobby = Lobby()
    play = FakePlay(1.0, storage=storage)

    async def main() -> None:
        connect(lobby, "ann")
        start = trio.current_time()
        runner = TournamentRunner(t, storage=storage, play=play, lobby=lobby)
        assert await runner.run() is TournamentState.FINISHED
        times = [when - start for when, _ in play.calls]
        # The first game waits the full 30 s; bob is then given up on, so the second game
        # starts as soon as the first ends, without a second wait.
        assert times == pytest.approx([30.0, 31.0])
        assert [spec.absent for _, spec in play.calls] == [("bob",), ("bob",)]
        assert all("bob" in spec.bots for _, spec in play.calls)

    run(main)


def test_a_bot_that_connects_during_the_wait_starts_its_game_at_once(storage: RatedStorage) -> None:
    t = tournament(storage, BOTS[:2], concurrency=1, wait_seconds=30.0)
    lobby = Lobby()
    play = FakePlay(1.0, storage=storage)

    async def main() -> None:
        connect(lobby, "ann")
        runner = TournamentRunner(t, storage=storage, play=play, lobby=lobby)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(runner.run)
            while runner.progress.waiting == 0:
                await trio.sleep(0.001)
            waited_from = trio.current_time()
            await trio.sleep(12.0)
            connect(lobby, "bob")
        assert [when - waited_from for when, _ in play.calls] == pytest.approx([12.0, 13.0])
        assert [spec.absent for _, spec in play.calls] == [(), ()]

    run(main)
    assert state_of(storage, t) is TournamentState.FINISHED


def test_games_of_present_bots_do_not_wait_behind_an_absent_one(storage: RatedStorage) -> None:
    t = tournament(storage, BOTS[:4], concurrency=2, wait_seconds=100.0)
    lobby = Lobby()
    play = FakePlay(1.0, storage=storage)
    total = len(schedule_of(t))

    async def main() -> None:
        connect(lobby, "ann", "bob", "cid")
        start = trio.current_time()
        runner = TournamentRunner(t, storage=storage, play=play, lobby=lobby)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(runner.run)
            await play.until(lambda: len(play.calls) == 1)
            assert runner.progress.waiting == 1  # a game of dan is due and waits
            assert runner.progress.running == 1
        # Every game without dan was played before his wait ran out (6 games, 1 s each).
        without_dan = [when - start for when, s in play.calls if "dan" not in s.bots]
        assert len(without_dan) == 6 and max(without_dan) < 100.0
        with_dan = [(when - start, s.absent) for when, s in play.calls if "dan" in s.bots]
        assert len(with_dan) == 6 and min(when for when, _ in with_dan) == pytest.approx(100.0)
        assert all(absent == ("dan",) for _, absent in with_dan)

    run(main)
    assert storage.tournament_game_indexes(t.id) == set(range(total))


def test_a_bot_gone_for_good_cannot_hang_the_tournament(storage: RatedStorage) -> None:
    t = tournament(storage, BOTS, concurrency=1, wait_seconds=60.0, games_per_pairing=2)
    lobby = Lobby()
    play = FakePlay(1.0, storage=storage)
    total = len(schedule_of(t))

    async def main() -> None:
        connect(lobby, *BOTS[:-1])
        runner = TournamentRunner(t, storage=storage, play=play, lobby=lobby)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(runner.run)
            await play.until(lambda: len(play.calls) == 1)
            start = trio.current_time()
            # One wait for the absent bot, then every game back to back. (The bound is set
            # once the runner runs: MockClock would jump to it while storage threads work.)
            with trio.fail_after(60.0 + total + 1.0):
                await play.until(lambda: len(play.finished) == total)
            assert trio.current_time() - start == pytest.approx(60.0 + total)

    run(main)
    assert storage.tournament_game_indexes(t.id) == set(range(total))
    assert state_of(storage, t) is TournamentState.FINISHED


def test_a_bot_back_after_being_given_up_on_is_waited_for_again(storage: RatedStorage) -> None:
    t = tournament(storage, BOTS[:2], concurrency=1, wait_seconds=30.0, games_per_pairing=2)
    lobby = Lobby()
    play = FakePlay(1.0, storage=storage)

    async def main() -> None:
        connect(lobby, "ann")
        start = trio.current_time()
        runner = TournamentRunner(t, storage=storage, play=play, lobby=lobby)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(runner.run)
            await play.until(lambda: len(play.calls) == 1)  # at 30 s, without bob
            connect(lobby, "bob")
            await play.until(lambda: len(play.calls) == 2)
            lobby.disconnect(lobby.get("bob"))  # type: ignore[arg-type]
        times = [when - start for when, _ in play.calls]
        assert times == pytest.approx([30.0, 31.0, 62.0, 63.0])
        absent = [spec.absent for _, spec in play.calls]
        assert absent == [("bob",), (), ("bob",), ("bob",)]

    run(main)


# -- refusals -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"entrants": ("ann", "zed", "yan")}, r"entrants: unknown bot\(s\) zed, yan"),
        ({"entrants": ("ann", "bob", "ann")}, "entrants: ann entered more than once"),
        (
            {"entrants": ("ann", "bob", "cid"), "game": make_game("passing", players=4)},
            "Passing Game, 4 players, to 61 needs at least 4 entrants, got 3",
        ),
        ({"games_per_pairing": 0}, "games_per_pairing: must be at least 1, got 0"),
        ({"concurrency": 0}, "concurrency: must be at least 1, got 0"),
        ({"wait_seconds": -1.0}, "wait_seconds: must be a finite number of seconds"),
        ({"wait_seconds": float("nan")}, "wait_seconds: must be a finite number of seconds"),
        ({"max_strikes": 0}, "max_strikes: must be at least 1, got 0"),
        ({"max_deals": 0}, "max_deals: must be at least 1, got 0"),
        ({"seed": -1}, "seed: must be from 0 to"),
        ({"name": "  "}, "name: must not be empty"),
        ({"name": "x" * 201}, "name: expected 1-200 characters"),
        ({"games_per_pairing": 10_000}, "more than the 50000 a round robin may have"),
    ],
)
def test_impossible_requests_are_refused_with_the_reason(
    options: dict[str, object], message: str
) -> None:
    settings: dict[str, object] = {
        "name": "cup",
        "game": TWO,
        "entrants": BOTS[:4],
        "known_bots": BOTS,
        "time_control": TimeControl(),
        "fault_policy": FaultPolicy.SUBSTITUTE,
        "seed": 1,
    }
    settings.update(options)
    with pytest.raises(TournamentError, match=message):
        new_tournament(**settings)  # type: ignore[arg-type]


def test_a_new_tournament_row_holds_the_request(storage: RatedStorage) -> None:
    t = new_tournament(
        name=" cup ",
        game=make_game("passing", players=4, partnerships=True),
        entrants=BOTS[:5],
        known_bots=BOTS,
        games_per_pairing=2,
        deals=DealMode.FRESH,
        time_control=TimeControl(move=2.0, bank=5.0, grace=0.1),
        fault_policy=FaultPolicy.SUBSTITUTE,
        max_strikes=5,
        max_deals=40,
        concurrency=3,
        wait_seconds=12,
        seed=None,
        rated=False,
        tournament_id="cup-1",
    )
    assert t.max_deals == 40
    assert {match_spec(t, g).max_deals for g in schedule_of(t)} == {40}
    assert match_spec(dataclasses.replace(t, max_deals=None), schedule_of(t)[0]).max_deals == (
        DEFAULT_MAX_DEALS
    ), "a row from before the cap was stored plays with the default"
    assert (t.id, t.name, t.game, t.entrants) == ("cup-1", "cup", "passing", BOTS[:5])
    assert t.options == {"players": 4, "partnerships": True, "target_rule": "gamerules"}
    assert t.time_control_ms == (2000, 5000, 100)
    assert (t.fault_policy, t.max_strikes, t.concurrency, t.wait_seconds) == (
        "substitute",
        5,
        3,
        12.0,
    )
    assert t.state is TournamentState.CREATED and not t.rated and 0 <= t.seed < 2**63
    storage.add_tournament(t)
    assert storage.tournament("cup-1") == t
    assert len(schedule_of(t)) == 5 * 3 * 4 * 2  # C(5,4) tables x 3 team pairings x 4 x 2

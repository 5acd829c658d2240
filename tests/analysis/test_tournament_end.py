"""The director tells the composition root when a tournament ends (its analysis is queued
then: server/app.py), and only when it finished: a real SQLite storage and lobby, the fake
``play`` of tests/fakes, on trio's MockClock."""

from __future__ import annotations

from pathlib import Path

import trio
from trio.testing import MockClock

from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import make_game
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.net.lobby import Connection, Lobby
from domino_arena.server.play.arena import Arena
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store.tournaments import TournamentState
from domino_arena.server.tournaments.lifecycle import new_tournament
from domino_arena.server.tournaments.lifecycle.director import Director
from tests.fakes.play import FakePlay, no_seats


def test_the_director_tells_each_tournament_that_finishes(tmp_path: Path) -> None:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'arena.db'}")
    storage.open()
    for name in ("ann1", "bob1"):
        storage.create_bot(name)
    t = new_tournament(
        name="cup",
        game=make_game("passing", players=2),
        entrants=("ann1", "bob1"),
        time_control=TimeControl(),
        fault_policy=FaultPolicy.FORFEIT,
        concurrency=2,
        wait_seconds=30.0,
        seed=11,
        known_bots={"ann1": "", "bob1": ""},
    )
    storage.add_tournament(t)
    storage.set_tournament_state(t.id, TournamentState.RUNNING)  # resumed as after a restart
    lobby = Lobby()
    for name in ("ann1", "bob1"):
        lobby.connect(Connection(name, ["passing"]))
    arena = Arena(storage, lobby=lobby, seats=no_seats)
    arena.play = FakePlay(duration=1.0, storage=storage)  # type: ignore[method-assign]
    ended: list[str] = []

    async def finished(tournament_id: str) -> None:
        ended.append(tournament_id)
        raise RuntimeError("logged, never raised into the director")

    director = Director(arena, on_finished=finished)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            arena.nursery = nursery
            await director.resume_tournaments()
            while director.tournaments:
                await trio.sleep(1)
            arena.nursery = None

    try:
        trio.run(main, clock=MockClock(autojump_threshold=0))
        row = storage.tournament(t.id)
        assert row is not None and row.state is TournamentState.FINISHED
        assert ended == [t.id]
    finally:
        storage.close()

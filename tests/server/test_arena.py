"""The director's tournaments when the database fails: they resume by themselves, none doubled."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
import trio
from trio.testing import MockClock

from domino_arena.sdk.match.results import FaultPolicy, MatchResult, Termination
from domino_arena.sdk.rules import make_game
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.net.lobby import Lobby
from domino_arena.server.play.arena import Arena
from domino_arena.server.play.match_spec import FinishedMatch, MatchSpec
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store.tournaments import TournamentState
from domino_arena.server.tournaments.lifecycle import new_tournament, schedule_of
from domino_arena.server.tournaments.lifecycle.director import Director
from tests.fakes.play import no_seats

BOTS = ("ann", "bob", "cid")


def test_a_tournament_whose_database_fails_resumes_by_itself(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    storage = RatedStorage(f"sqlite:///{path}")
    storage.open()
    reader = RatedStorage(f"sqlite:///{path}")  # the test's own view, unaffected by the outage
    reader.open()
    t = new_tournament(
        name="outage",
        game=make_game("passing"),
        entrants=BOTS,
        known_bots=BOTS,
        time_control=TimeControl(),
        fault_policy=FaultPolicy.SUBSTITUTE,
        concurrency=1,
        wait_seconds=0.0,
        seed=3,
    )
    storage.add_tournament(t)
    storage.set_tournament_state(t.id, TournamentState.RUNNING)
    total = len(schedule_of(t))
    database = storage.engine
    # The database goes away: every call fails to open it (an OperationalError, transient).
    away = sa.create_engine(f"sqlite:///{tmp_path / 'no-such-folder' / 'arena.db'}")
    arena = Arena(storage, lobby=Lobby(), seats=no_seats)
    director = Director(arena)
    played: list[str] = []

    async def play(spec: MatchSpec) -> FinishedMatch:
        """Store the game as the arena would; the last one takes the database down after it."""
        sides = len(spec.game.sides)
        result = MatchResult(Termination.NORMAL, 0, (101,) + (0,) * (sides - 1))
        finished = FinishedMatch(spec, result, None, (0,) * len(spec.bots))
        await trio.to_thread.run_sync(storage.save_match, finished.to_row())
        played.append(spec.match_id)
        if len(played) == total:
            storage._engine = away  # the runner's FINISHED cannot be written now
        return finished

    arena.play = play  # type: ignore[method-assign]

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(director.resume_tournaments)
            arena.nursery = nursery
            while len(played) < total:
                await trio.sleep(0.1)
            await trio.sleep(5.0)  # the database stays away for a while
            row = await trio.to_thread.run_sync(reader.tournament, t.id)
            assert row is not None and row.state is TournamentState.RUNNING
            assert t.id in director.tournaments  # retrying, not given up
            storage._engine = database
            # Not trio.fail_after: MockClock jumps to it while worker threads run.
            for _ in range(10_000):
                if t.id not in director.tournaments:
                    break
                await trio.sleep(0.5)

    try:
        trio.run(main, clock=MockClock(autojump_threshold=0))
        row = storage.tournament(t.id)
        assert row is not None and row.state is TournamentState.FINISHED
        assert len(played) == total  # the fresh runner found every game stored: none replayed
        assert storage.tournament_game_indexes(t.id) == set(range(total))
    finally:
        storage._engine = database
        storage.close()
        reader.close()
        away.dispose()

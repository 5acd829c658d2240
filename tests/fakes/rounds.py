"""Play a stored Swiss or knockout tournament to its end with the real runner, the strongest bot
(by the number its name ends with) winning every game, for the admin API and CLI tests of its
rounds and bracket (docs/tournaments.md: Swiss, knockout)."""

from __future__ import annotations

import trio
import trio.testing

from domino_arena.server.net.lobby import Connection, Lobby
from domino_arena.server.store.storage import Storage
from domino_arena.server.store.tournaments import StoredTournament, TournamentState
from domino_arena.server.tournaments.lifecycle.runner import TournamentRunner
from tests.fakes.play import FakePlay, strongest_wins


def strength(name: str) -> float:
    """``bot-07`` beats ``bot-03``: the number after the last dash."""
    return float(name.rsplit("-", 1)[1])


def run_tournament(
    storage: Storage,
    t: StoredTournament,
    play: FakePlay,
    lobby: Lobby,
    *,
    pause_after: int | None = None,
) -> TournamentState:
    """Run a new runner of ``t`` under a mock clock to its end, or pause it once
    ``pause_after`` games have started (its round then left half played); return its state.
    A game whose ``play`` raises ends the run with that error, as in the referee."""

    async def main() -> TournamentState:
        runner = TournamentRunner(t, storage=storage, play=play, lobby=lobby)
        if pause_after is None:
            return await runner.run()
        async with trio.open_nursery() as nursery:

            async def pause() -> None:
                await play.until(lambda: len(play.calls) >= pause_after)
                runner.pause()

            nursery.start_soon(pause)
            state = await runner.run()
            nursery.cancel_scope.cancel()
        return state

    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def play_to_end(storage: Storage, tournament_id: str, *, pause_after: int | None = None) -> None:
    """Run ``tournament_id`` (stored in ``storage``) with every entrant connected, to its end or
    until ``pause_after`` games have started (then paused: its round is left half played)."""
    t = storage.tournament(tournament_id)
    assert t is not None, tournament_id
    lobby = Lobby()
    for name in t.entrants:
        lobby.connect(Connection(name, [t.game]))
    play = FakePlay(storage=storage, winner=strongest_wins(strength))
    state = run_tournament(storage, t, play, lobby, pause_after=pause_after)
    expected = TournamentState.FINISHED if pause_after is None else TournamentState.PAUSED
    assert state is expected, state

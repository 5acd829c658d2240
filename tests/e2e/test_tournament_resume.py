"""Crash and resume: SIGKILL the referee mid-tournament, start it again, nothing lost or doubled.

``domino-arena serve`` runs as a subprocess on a SQLite file; four house bots run as their own
processes (they reconnect with backoff when the referee vanishes). A tournament is stored as
running before the referee starts, so the referee picks it up at start, exactly as it does after
a crash. Once some games are stored the referee is killed with SIGKILL (no shutdown code runs),
then started again on the same database and address. The tournament must end with every
scheduled game stored exactly once, and the stored ratings must equal a recomputation from the
stored results.

The bots keep the address they were given, so the second referee needs the first one's port:
the test reserves a port the kernel chooses and holds it for the whole test
(:func:`~tests.fakes.processes.reserved_port`), so no other process can take it while no
referee listens. Both referees report the port they bound, and the test checks it.

The test waits on the referee's output lines ("match ended", "tournament finished"), never on a
timer or a polling loop; the timeouts only bound a failure.
"""

from __future__ import annotations

import datetime as dt
import io
import signal
from pathlib import Path
from typing import Any, Final

import pytest

from domino_arena.sdk.match.records import read_record, replay
from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import make_game
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store.tournaments import TournamentState
from domino_arena.server.tournaments.lifecycle import new_tournament, schedule_of
from domino_arena.server.tournaments.lifecycle.adaptive import is_adaptive, schedule_of_rounds
from tests.fakes.processes import Process, command, reserved_port, served_port

WAIT: Final = 120.0
BOTS: Final = ("random-1", "random-2", "greedy-3", "greedy-4")
SIX: Final = (*BOTS, "random-5", "greedy-6")
CASES: Final[dict[str, dict[str, Any]]] = {
    "round-robin": {"game": make_game("passing", players=2), "games_per_pairing": 2},
    "balanced": {  # docs/tournaments.md: formats; 6 tables of 3, each entrant at 3
        "game": make_game("passing", players=3),
        "entrants": SIX,
        "format": "balanced",
        "games_per_entrant": 9,
    },
    "swiss": {  # 3 rounds of 3 tables of 2, each under its 2 rotations: 18 games
        "game": make_game("passing", players=2),
        "entrants": SIX,
        "format": "swiss",
        "rounds": 3,
    },
    "knockout": {  # 6 at 3 seats: 2 tables, then a table and a bye, then the final: 12 games
        "game": make_game("passing", players=3),
        "entrants": SIX,
        "format": "knockout",
    },
}
PLANNED: Final = {"round-robin": 24, "balanced": 18, "swiss": 18, "knockout": 12}
"""Each case's games (a Swiss or knockout seats them round by round, so the row alone does not
say)."""
BEFORE_KILL: Final = 3
"""Games stored before the referee is killed."""


@pytest.mark.parametrize("format", sorted(CASES))
def test_a_killed_referee_resumes_the_tournament_with_every_game_once(
    tmp_path: Path, format: str
) -> None:
    """Every format resumes alike. A fixed format's schedule follows from its row; a Swiss or
    knockout round is stored before its games start, so the referee that comes back plays the
    stored round's missing games and seats the next rounds from the results."""
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    storage = RatedStorage(url)
    storage.open()
    case = dict(CASES[format])
    entrants = case.setdefault("entrants", BOTS)
    tokens = {name: storage.add_bot(name) for name in entrants}
    game = case["game"]
    tournament = new_tournament(
        name="crash test",
        known_bots=entrants,
        **case,
        time_control=TimeControl(move=2.0, bank=10.0, grace=0.5),
        fault_policy=FaultPolicy.SUBSTITUTE,
        concurrency=2,
        wait_seconds=WAIT,  # a loaded machine may take long to restart: never play without them
        seed=7,
    )
    storage.add_tournament(tournament)
    storage.set_tournament_state(tournament.id, TournamentState.RUNNING)
    total = PLANNED[format]
    assert is_adaptive(tournament) or len(schedule_of(tournament)) == total

    with reserved_port() as port:
        serve_args = command("serve", "--port", str(port), "--db", url)
        referee = Process(serve_args, tmp_path, wait=WAIT)
        bots: list[Process] = []
        try:
            assert served_port(referee) == port
            for index, name in enumerate(entrants):
                kind = name.split("-")[0]
                args = ["bot", "run", name, "--bot", kind, "--server", f"127.0.0.1:{port}"]
                args += ["--token", tokens[name], "--seed", str(index)]
                bots.append(Process(command(*args), tmp_path, wait=WAIT))
            for _ in range(BEFORE_KILL):  # logged once the match is stored
                referee.wait_line("match ended: id=", context=bots)
            before_kill = storage.tournament_game_indexes(tournament.id)
            assert len(before_kill) >= BEFORE_KILL
            assert len(before_kill) < total, "the tournament ended before the kill: make it longer"
            referee.popen.send_signal(signal.SIGKILL)
            referee.popen.wait(timeout=WAIT)

            referee = Process(serve_args, tmp_path, wait=WAIT)
            assert served_port(referee) == port
            referee.wait_line(f"tournament finished: id={tournament.id}", context=bots)
        finally:
            for process in (*bots, referee):
                process.stop()

    row = storage.tournament(tournament.id)
    assert row is not None and row.state is TournamentState.FINISHED
    assert (row.format, schedule_of(row)) == (format, schedule_of(tournament))
    matches = storage.matches(limit=10_000, tournament_id=tournament.id)
    rounds = storage.tournament_rounds(tournament.id)
    if is_adaptive(row):
        assert [g.index for g in schedule_of_rounds(row, rounds)] == list(range(total))
        first_stored = {m.game_index: m.created for m in matches}
        for stored in rounds:  # stored before its games: the referee killed found it
            assert stored.created <= min(first_stored[i] for i in stored.indexes)
    else:
        assert rounds == []
    indexes = [m.game_index for m in matches]
    assert sorted(i for i in indexes if i is not None) == list(range(total))
    assert before_kill <= set(indexes)
    assert len({m.id for m in matches}) == total
    for match in matches:
        assert match.termination == "normal", (match.id, match.detail)
        assert match.record is not None
        report = replay(read_record(io.StringIO(match.record)))
        assert report.ok, (match.id, report)
    assert storage.recompute_ratings(game.name) == storage.ratings(game.name)
    assert row.updated >= row.created - dt.timedelta(seconds=1)
    storage.close()

"""Crash and resume: SIGKILL the referee mid-tournament, start it again, nothing lost or doubled.

``domino-arena serve`` runs as a subprocess on a SQLite file and a fixed free port; four house
bots run as their own processes (they reconnect with backoff when the referee vanishes). A
tournament is stored as running before the referee starts, so the referee picks it up at start,
exactly as it does after a crash. Once some games are stored the referee is killed with
SIGKILL (no shutdown code runs), then started again on the same database and port. The
tournament must end with every scheduled game stored exactly once, and the stored ratings must
equal a recomputation from the stored results.

The test waits on the database and on output lines, never on a fixed timer; the deadlines only
bound a failure.
"""

from __future__ import annotations

import datetime as dt
import io
import signal
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.records import read_record, replay
from domino_arena.sdk.rules import make_game
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.play.tournament import new_tournament, schedule_of
from domino_arena.server.store.tournaments import TournamentState
from tests.e2e.test_e2e import Process, command

WAIT: Final = 120.0
BOTS: Final = ("random-1", "random-2", "greedy-3", "greedy-4")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def wait_for(what: str, check: Callable[[], bool], *processes: Process) -> None:
    deadline = time.monotonic() + WAIT
    while not check():
        if time.monotonic() > deadline:
            tails = "\n".join(f"{p}: {p.lines[-30:]}" for p in processes)
            raise AssertionError(f"timed out waiting for {what}\n{tails}")
        time.sleep(0.05)


def test_a_killed_referee_resumes_the_tournament_with_every_game_once(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    storage = RatedStorage(url)
    storage.open()
    tokens = {name: storage.add_bot(name) for name in BOTS}
    game = make_game("passing", players=2)
    tournament = new_tournament(
        name="crash test",
        game=game,
        entrants=BOTS,
        known_bots=BOTS,
        games_per_pairing=2,
        time_control=TimeControl(move=2.0, bank=10.0, grace=0.5),
        fault_policy=FaultPolicy.SUBSTITUTE,
        concurrency=2,
        wait_seconds=WAIT,  # a loaded machine may take long to restart: never play without them
        seed=7,
    )
    storage.add_tournament(tournament)
    storage.set_tournament_state(tournament.id, TournamentState.RUNNING)
    total = len(schedule_of(tournament))
    port = free_port()
    serve_args = command("serve", "--port", str(port), "--db", url)

    def stored() -> set[int]:
        return storage.tournament_game_indexes(tournament.id)

    referee = Process(serve_args, tmp_path)
    bots = []
    try:
        referee.wait_line(f"serving on 127.0.0.1:{port}")
        for index, name in enumerate(BOTS):
            kind = name.split("-")[0]
            bots.append(
                Process(
                    command(
                        "bot",
                        "run",
                        name,
                        "--bot",
                        kind,
                        "--server",
                        f"127.0.0.1:{port}",
                        "--token",
                        tokens[name],
                        "--seed",
                        str(index),
                    ),
                    tmp_path,
                )
            )
        wait_for("a few stored games", lambda: len(stored()) >= 3, referee, *bots)
        before_kill = stored()
        assert len(before_kill) < total, "the tournament ended before the kill: make it longer"
        referee.popen.send_signal(signal.SIGKILL)
        referee.popen.wait(timeout=WAIT)

        referee = Process(serve_args, tmp_path)
        referee.wait_line(f"serving on 127.0.0.1:{port}")

        def finished() -> bool:
            row = storage.tournament(tournament.id)
            assert row is not None
            return row.state is TournamentState.FINISHED

        wait_for("the tournament to finish", finished, referee, *bots)
    finally:
        for process in (*bots, referee):
            process.stop()

    matches = storage.matches(limit=10_000, tournament_id=tournament.id)
    indexes = [m.game_index for m in matches]
    assert sorted(i for i in indexes if i is not None) == list(range(total))
    assert before_kill <= set(indexes)
    assert len({m.id for m in matches}) == total
    for match in matches:
        assert match.termination == "normal", (match.id, match.detail)
        assert match.record is not None
        replay(read_record(io.StringIO(match.record)))
    assert storage.recompute_ratings(game.name) == storage.ratings(game.name)
    row = storage.tournament(tournament.id)
    assert row is not None and row.updated >= row.created - dt.timedelta(seconds=1)
    storage.close()

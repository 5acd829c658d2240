"""Two SPRT comparisons through the real referee, killed with SIGKILL halfway and started again.

``domino-arena serve`` runs as a subprocess on a SQLite file, the house bots as their own
processes (the search bot at a fixed budget of sampled deals per move, so its strength does not
depend on the machine's load). Two comparisons of the Passing Game for two players are stored as
running before the referee starts, as after a crash:

* the search bot against greedy, SPRT(0, 100): the search bot wins about 90% of its games
  (bench/search_vs_greedy.py), so the test must accept H1;
* greedy against another greedy, the same SPRT, capped at 30 sets: H0 accepted, or the cap.

Once a few games are stored the referee is killed (no shutdown code runs) and started again on
the same database and port; both comparisons must then end with their verdict stored, every
game stored once, and the stored verdict equal to the one recomputed from the stored games.
The test waits on the referee's output lines, never on a timer.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Final

from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import make_game
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store.tournaments import StoredTournament, TournamentState
from domino_arena.server.tournaments.lifecycle import compare, schedule_of
from domino_arena.server.tournaments.lifecycle.compare import SprtPlan, new_comparison
from tests.fakes.processes import Process, command, reserved_port, served_port

WAIT: Final = 240.0
BOTS: Final = {
    "search-a": "search",
    "greedy-b": "greedy",
    "greedy-c": "greedy",
    "greedy-d": "greedy",
}
BEFORE_KILL: Final = 2
"""Games of the search bot's comparison stored before the referee is killed."""
SPRT: Final = SprtPlan(elo0=0, elo1=100)


def comparison(candidate: str, baseline: str, max_sets: int, seed: int) -> StoredTournament:
    return new_comparison(
        game=make_game("passing", players=2),
        candidate=candidate,
        baseline=baseline,
        known_bots=BOTS,
        max_sets=max_sets,
        sprt=SPRT,
        time_control=TimeControl(move=2.0, bank=20.0, grace=0.5),
        fault_policy=FaultPolicy.SUBSTITUTE,
        concurrency=2,
        wait_seconds=WAIT,  # a loaded machine may take long to restart: never play without them
        seed=seed,
    )


def test_sprts_reach_their_verdicts_across_a_killed_referee(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    storage = RatedStorage(url)
    storage.open()
    tokens = {name: storage.add_bot(name) for name in BOTS}
    stronger = comparison("search-a", "greedy-b", 200, seed=11)
    equal = comparison("greedy-c", "greedy-d", 30, seed=12)
    for t in (stronger, equal):
        storage.add_tournament(t)
        storage.set_tournament_state(t.id, TournamentState.RUNNING)

    with reserved_port() as port:
        serve_args = command("serve", "--port", str(port), "--db", url)
        referee = Process(serve_args, tmp_path, wait=WAIT)
        bots: list[Process] = []
        try:
            assert served_port(referee) == port
            for index, (name, kind) in enumerate(BOTS.items()):
                args = ["bot", "run", name, "--bot", kind, "--server", f"127.0.0.1:{port}"]
                args += ["--token", tokens[name], "--seed", str(index)]
                if kind == "search":
                    args += ["--samples", "12"]
                bots.append(Process(command(*args), tmp_path, wait=WAIT))
            for _ in range(BEFORE_KILL):  # logged once the match is stored
                referee.wait_line(f"match ended: id={stronger.id}-", context=bots)
            # The search bot's comparison is cut off undecided; the greedy one, whose games are
            # quicker, may have decided already: then its verdict must stand after the restart.
            row = storage.tournament(stronger.id)
            assert row is not None and row.state is TournamentState.RUNNING
            assert row.verdict is None or not compare.decided(row.verdict), row.verdict
            early = storage.tournament(equal.id)
            assert early is not None
            referee.popen.send_signal(signal.SIGKILL)
            referee.popen.wait(timeout=WAIT)

            referee = Process(serve_args, tmp_path, wait=WAIT)
            assert served_port(referee) == port
            finished: set[str] = set()
            while finished != {stronger.id, equal.id}:
                line = referee.wait_line("tournament finished: id=", context=bots)
                finished.add(line.split("id=")[1].split()[0])
        finally:
            for process in (*bots, referee):
                process.stop()

    verdicts = {}
    for t in (stronger, equal):
        row = storage.tournament(t.id)
        assert row is not None and row.state is TournamentState.FINISHED and row.verdict
        matches = storage.matches(limit=10_000, tournament_id=t.id, records=False)
        indexes = [m.game_index for m in matches]
        assert len(indexes) == len(set(indexes)), "a game stored twice"
        assert set(indexes) <= {g.index for g in schedule_of(t)}
        plan = compare.plan_of(row)
        sets = compare.tally(plan, 2, matches)
        again = compare.verdict_of(plan, 2, sets, over=True)
        stored = row.verdict
        assert stored["sets"] <= again["sets"]  # games running at the verdict finished after it
        if stored["sets"] == again["sets"]:
            assert stored["sprt"]["llr"] == again["sprt"]["llr"]
        verdicts[t.id] = stored["verdict"]
    assert verdicts[stronger.id] == "H1", storage.tournament(stronger.id)
    assert verdicts[equal.id] in ("H0", "inconclusive"), storage.tournament(equal.id)
    if early.verdict is not None and compare.decided(early.verdict):
        assert verdicts[equal.id] == early.verdict["verdict"]
    storage.close()

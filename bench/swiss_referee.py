"""A Swiss tournament of house bots of graded strength, run by the real referee (issue 31).

Usage::

    python -m bench.swiss_referee                     # 200 entrants, the default rounds
    python -m bench.swiss_referee --rounds 4
    python -m bench.swiss_referee --quick             # 40 entrants, 3 rounds (~1-2 min)

Issue 31 asks for "one real run through the referee: 200 house-bot entrants of graded strength
... in 4-seat Doubles, Swiss, ranked in the right order of strength classes". Nothing here is
simulated: ``domino-arena serve`` runs as a subprocess on a fresh SQLite file; every entrant is
a registered bot that dials in over gRPC with its own name and token, from a few bot processes
that each host many of them (:func:`host_bots`: one ``sdk.run_async`` loop per bot on one
asyncio loop; 200 OS processes would swamp 2 cores). The tournament (Doubles, 4 players each
for themselves, ``format="swiss"``, ``--rounds`` rounds, every table under its 4 rotations on
one duplicate deal) is stored as running before the referee starts, so the referee picks it up
at start, as after a crash (tests/e2e/test_tournament_resume.py), and seats each round from the
stored results of the rounds before (server/tournaments/lifecycle/adaptive.py).

Strength classes, strongest first (:data:`CLASSES`), equal in size (25 of each at 200: every
class fills whole bands of ranks, so its expected mean rank is plain and the classes weigh alike
in the rank correlation): the search bot at 32, 16 and 8 sampled deals per move (no clock: its
moves depend only on its seed and what it saw), greedy, epsilon-greedy at epsilon 0.1, 0.3 and
0.6 (greedy's move, or with probability epsilon a uniformly random legal one:
:class:`EpsilonGreedyBot`), random. Every bot's seed is fixed, and the house bots play each
match from the seed the referee sends for its seat, so a run is reproducible.

When the referee logs the tournament finished, the stored games are read back: per round the
tables, games and wall time (from the round's row being stored to its last game stored); the
official fit (``server/ladder/fit.py`` over ``fit_game_of`` of the tournament's matches); per
class the mean rank, the rank range and the mean rating; the Spearman correlation between the
class order and the fitted ratings over all entrants; the adjacent class pairs whose mean ranks
are in the wrong order; total games, games per entrant, moves and moves/s, the CPU of the
referee and of the bot processes, and the load average before and after. It asserts nothing;
it exits 1 only if the run itself failed (a process died, the tournament did not finish).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import functools
import itertools
import json
import logging
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from scipy import stats

from domino_arena.bots import make_bot
from domino_arena.bots.greedy import GreedyBot
from domino_arena.sdk.bot import Bot
from domino_arena.sdk.match.records import parse_record
from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import Action, Observation, make_game
from domino_arena.server.ladder.fit import FitResult, fit, fit_game_of
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tournament_rounds import StoredRound
from domino_arena.server.store.tournaments import TournamentState
from domino_arena.server.tournaments.lifecycle import new_tournament
from tests.fakes.processes import Process, command, served_port

GAME: Final = "doubles"
PLAYERS: Final = 4
TIME_CONTROL: Final = TimeControl(move=60.0, bank=600.0, grace=10.0)
"""Generous: a search move takes milliseconds, so a fault would mean a starved machine."""
WAIT_SECONDS: Final = 600.0
"""How long a game waits for a bot that has not connected yet (the hosts start with the
referee; none should ever be substituted for being late)."""
ROOT: Final = Path(__file__).resolve().parent.parent
"""The repository's root, where the bot hosts run ``-m bench.swiss_referee``."""
LINE_WAIT: Final = 15.0
"""Seconds between looks at whether every process still runs while waiting for the referee."""


class EpsilonGreedyBot(GreedyBot):
    """Greedy's move, or with probability ``epsilon`` a uniformly random legal action: a family
    of bots between greedy (epsilon 0) and random (epsilon 1), seeded like the house bots."""

    def __init__(self, seed: int, epsilon: float) -> None:
        super().__init__(seed)
        self.epsilon = epsilon

    def choose(self, observation: Observation) -> Action:
        if self.rng.random() < self.epsilon:
            return self.rng.choice(observation.legal_actions)
        return super().choose(observation)


@dataclass(frozen=True, slots=True)
class StrengthClass:
    """A class of entrants of one kind: its name (the prefix of its bots' names) and its bot."""

    name: str
    make: Callable[[int], Bot]
    """A new bot of the class from its seed."""


def _search(samples: int, seed: int) -> Bot:
    return make_bot("search", seed, samples=samples)


CLASSES: Final = (
    StrengthClass("search32", functools.partial(_search, 32)),
    StrengthClass("search16", functools.partial(_search, 16)),
    StrengthClass("search8", functools.partial(_search, 8)),
    StrengthClass("greedy", functools.partial(make_bot, "greedy")),
    StrengthClass("eps10", functools.partial(EpsilonGreedyBot, epsilon=0.1)),
    StrengthClass("eps30", functools.partial(EpsilonGreedyBot, epsilon=0.3)),
    StrengthClass("eps60", functools.partial(EpsilonGreedyBot, epsilon=0.6)),
    StrengthClass("random", functools.partial(make_bot, "random")),
)
"""The strength classes, strongest first (the order the run is checked against)."""
CLASS_OF: Final = {c.name: c for c in CLASSES}


class BenchError(Exception):
    """The run itself failed (not merely slow); the message says how."""


# -- the entrants ---------------------------------------------------------------------------------


def entrant_names(entrants: int) -> list[str]:
    """``entrants`` names, the classes as equal as can be (the first ones one more when they do
    not divide evenly), strongest class first: ``search32-001`` ..."""
    base, extra = divmod(entrants, len(CLASSES))
    names: list[str] = []
    for number, strength in enumerate(CLASSES):
        size = base + (1 if number < extra else 0)
        names += [f"{strength.name}-{i:03d}" for i in range(1, size + 1)]
    return names


def class_of(name: str) -> str:
    return name.rsplit("-", 1)[0]


# -- the bot hosts (role --host) ------------------------------------------------------------------


def new_bot(name: str, seed: int) -> Bot:
    return CLASS_OF[class_of(name)].make(seed)


async def host_bots(server: str, bots: dict[str, tuple[str, int]]) -> None:
    """Run every bot of ``bots`` (name -> (token, seed)) against the referee at ``server`` on
    one event loop, each with its own connection, until SIGTERM."""
    from domino_arena.sdk import run_async  # noqa: PLC0415
    from domino_arena.sdk.runner import until_signal  # noqa: PLC0415

    async def every_bot() -> None:
        await asyncio.gather(
            *(
                run_async(
                    functools.partial(new_bot, name, seed),
                    server=server,
                    name=name,
                    token=token,
                    games=[GAME],
                )
                for name, (token, seed) in bots.items()
            )
        )

    await until_signal(every_bot())


# -- the run --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Run:
    """What the run left: the stored rounds and games, and the processes' figures."""

    rounds: list[StoredRound]
    matches: list[StoredMatch]
    entrants: list[str]
    seconds: float
    referee_cpu: float
    hosts_cpu: float
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float]


def cpu_seconds(pid: int) -> float:
    """The CPU time (user + system) process ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_tournament(args: argparse.Namespace, folder: Path) -> Run:
    """Store the bots and the running tournament, start the referee and the bot hosts, wait
    for the tournament to finish; return what was stored."""
    url = f"sqlite:///{folder / 'arena.db'}"
    storage = RatedStorage(url)
    storage.open()
    try:
        names = entrant_names(args.entrants)
        tokens = {name: storage.add_bot(name) for name in names}
        game = make_game(GAME, players=PLAYERS)
        tournament = new_tournament(
            name="swiss bench",
            game=game,
            entrants=names,
            known_bots=names,
            time_control=TIME_CONTROL,
            fault_policy=FaultPolicy.SUBSTITUTE,
            concurrency=args.concurrency or max(1, args.entrants // PLAYERS),
            wait_seconds=WAIT_SECONDS,
            seed=args.seed,
            format="swiss",
            rounds=args.rounds,
        )
        storage.add_tournament(tournament)
        storage.set_tournament_state(tournament.id, TournamentState.RUNNING)
        print(
            f"{len(names)} entrants in {len(CLASSES)} classes, {args.rounds} rounds of "
            f"{game.describe()}, concurrency {tournament.concurrency}, "
            f"{args.hosts} bot processes, seed {args.seed}",
            flush=True,
        )
        load_before = os.getloadavg()
        started = time.monotonic()
        referee = Process(command("serve", "--port", "0", "--db", url), folder, wait=LINE_WAIT)
        hosts: list[Process] = []
        try:
            referee.wait = 120.0
            port = served_port(referee)
            referee.wait = LINE_WAIT
            for number in range(args.hosts):
                mine = {
                    name: (tokens[name], args.seed * 1000 + index)
                    for index, name in enumerate(names)
                    if index % args.hosts == number
                }
                file = folder / f"host-{number}.json"
                file.write_text(json.dumps(mine))
                host_args = [sys.executable, "-m", "bench.swiss_referee"]
                host_args += ["--host", str(file), "--server", f"127.0.0.1:{port}"]
                hosts.append(Process(host_args, ROOT))
            wait_finished(referee, hosts, tournament.id, started, args.limit * 60.0)
            seconds = time.monotonic() - started
            load_after = os.getloadavg()
            referee_cpu = cpu_seconds(referee.popen.pid)
            hosts_cpu = sum(cpu_seconds(h.popen.pid) for h in hosts)
        finally:
            for process in (*hosts, referee):
                if process.popen.poll() is None:
                    process.popen.terminate()
            for process in (*hosts, referee):
                process.wait = 30.0
                try:
                    process.finish()
                except Exception:  # a host that will not stop is killed
                    process.stop()
        row = storage.tournament(tournament.id)
        if row is None or row.state is not TournamentState.FINISHED:
            raise BenchError(f"tournament {tournament.id} ended {row and row.state}")
        return Run(
            rounds=storage.tournament_rounds(tournament.id),
            matches=storage.matches(limit=1_000_000, tournament_id=tournament.id),
            entrants=names,
            seconds=seconds,
            referee_cpu=referee_cpu,
            hosts_cpu=hosts_cpu,
            load_before=load_before,
            load_after=load_after,
        )
    finally:
        storage.close()


def wait_finished(
    referee: Process, hosts: Sequence[Process], tournament_id: str, started: float, limit: float
) -> None:
    """Follow the referee's tournament lines (printing each round as it is seated) until it
    logs the tournament finished.

    Raises:
        BenchError: a process died, the tournament ended otherwise, or ``limit`` seconds passed.
    """
    while True:
        try:
            line = referee.wait_line("tournament ")
        except AssertionError:  # no line for LINE_WAIT seconds, or the referee ended
            line = ""
        if tournament_id not in line:
            line = ""
        elapsed = time.monotonic() - started
        if "round" in line:
            print(f"  {elapsed:7.1f} s  {line.split(': ', 1)[-1]}", flush=True)
        if f"tournament finished: id={tournament_id}" in line:
            return
        if " done=" in line:
            raise BenchError(f"the tournament did not finish: {line}")
        dead = [p for p in (referee, *hosts) if p.popen.poll() is not None]
        if dead:
            raise BenchError("a process died:\n" + "\n".join(str(p) for p in dead))
        if elapsed > limit:
            raise BenchError(f"not finished after {limit:.0f} s; referee: {referee}")


# -- the figures ----------------------------------------------------------------------------------


def moves_of(match: StoredMatch) -> int:
    """The bots' moves in a stored game (steps with a seat >= 0; the deals are not counted)."""
    if match.record is None:
        return 0
    return sum(1 for step in parse_record(match.record).steps if step.seat >= 0)


def print_rounds(run: Run) -> None:
    by_round: dict[int, list[StoredMatch]] = {}
    for stored in run.rounds:
        by_round[stored.number] = [
            m for m in run.matches if m.game_index is not None and m.game_index in stored.indexes
        ]
    print("\nround  tables  byes  games   moves  seated at s  wall s  moves/s")
    first = run.rounds[0].created if run.rounds else dt.datetime.now(dt.UTC)
    for stored in run.rounds:
        games = by_round[stored.number]
        end = max((m.created for m in games), default=stored.created)
        wall = (end - stored.created).total_seconds()
        moves = sum(moves_of(m) for m in games)
        print(
            f"{stored.number + 1:5d}  {len(stored.tables):6d}  {len(stored.byes):4d}  "
            f"{len(games):5d}  {moves:6d}  {(stored.created - first).total_seconds():11.1f}  "
            f"{wall:6.1f}  {moves / wall if wall > 0 else 0.0:7.0f}"
        )


def print_standings(result: FitResult, columns: int = 4) -> None:
    rows = [
        f"{rank:4d} {name:<13} {rating:6.0f}"
        for rank, (name, rating) in enumerate(result.standings(), start=1)
    ]
    height = -(-len(rows) // columns)
    print(f"\nofficial fit ({result.model}, {result.units} units, seat terms {result.seat_terms}):")
    for line in range(height):
        print("   ".join(rows[line::height][:columns]).rstrip())


def print_classes(run: Run, result: FitResult) -> None:
    rank = {name: number for number, (name, _) in enumerate(result.standings(), start=1)}
    members: dict[str, list[str]] = {c.name: [] for c in CLASSES}
    for name in run.entrants:
        members[class_of(name)].append(name)
    present = [c.name for c in CLASSES if members[c.name]]
    mean_rank: dict[str, float] = {}
    print("\nclass      size  mean rank  ranks      mean rating  expected mean rank")
    placed = 0
    for name in present:
        ranks = [rank[m] for m in members[name]]
        ratings = [result.ratings[m] for m in members[name]]
        mean_rank[name] = sum(ranks) / len(ranks)
        expected = placed + (len(ranks) + 1) / 2
        placed += len(ranks)
        print(
            f"{name:<9} {len(ranks):5d}  {mean_rank[name]:9.1f}  "
            f"{min(ranks):3d}-{max(ranks):<3d}    {sum(ratings) / len(ratings):11.0f}  "
            f"{expected:18.1f}"
        )
    order = [-present.index(class_of(e)) for e in run.entrants]
    rho = float(stats.spearmanr(order, [result.ratings[e] for e in run.entrants]).statistic)
    wrong = [
        f"{a} below {b}" for a, b in itertools.pairwise(present) if mean_rank[a] > mean_rank[b]
    ]
    in_order = sorted(present, key=mean_rank.__getitem__) == present
    print(f"\nSpearman (class order, fitted rating) over {len(run.entrants)} entrants: {rho:.3f}")
    print(
        f"adjacent class pairs in the wrong order: {len(wrong)} of {len(present) - 1}"
        + (f" ({'; '.join(wrong)})" if wrong else "")
    )
    print(f"classes' mean ranks in the true order: {'yes' if in_order else 'no'}")


def report(run: Run) -> None:
    print_rounds(run)
    games = []
    for match in run.matches:
        try:
            games.append(fit_game_of(match))
        except ValueError:
            continue  # ended without a result
    result = fit(games)
    print_standings(result)
    print_classes(run, result)
    played = Counter(e for m in run.matches for e in m.seats)
    moves = sum(moves_of(m) for m in run.matches)
    terminations = Counter(m.termination for m in run.matches)
    faults = sum(sum(m.faults or ()) for m in run.matches)
    per_entrant = [played[e] for e in run.entrants]
    start = min(r.created for r in run.rounds)
    end = max(m.created for m in run.matches)
    wall = (end - start).total_seconds()
    print(
        f"\ngames {len(run.matches)} ({', '.join(f'{k} {v}' for k, v in terminations.items())}), "
        f"faults {faults}; games per entrant {sum(per_entrant) / len(per_entrant):.1f} "
        f"({min(per_entrant)}-{max(per_entrant)}); moves {moves:,}, {moves / wall:.0f} moves/s "
        f"over {wall:.0f} s (first round seated to last game stored)"
    )
    print(
        f"run {run.seconds:.0f} s (referee start to 'tournament finished'); CPU: referee "
        f"{run.referee_cpu:.0f} s, bot processes {run.hosts_cpu:.0f} s "
        f"({(run.referee_cpu + run.hosts_cpu) / run.seconds * 100:.0f}% of one core over the "
        f"run); {os.cpu_count()} CPUs, load average "
        f"{' '.join(f'{x:.2f}' for x in run.load_before)} before, "
        f"{' '.join(f'{x:.2f}' for x in run.load_after)} after"
    )


# -- the command line -----------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entrants", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--quick", action="store_true", help="40 entrants, 3 rounds: a smoke run (~1-2 min)"
    )
    parser.add_argument("--hosts", type=int, default=4, help="bot processes")
    parser.add_argument(
        "--concurrency", type=int, default=0, help="games at once (default: every table)"
    )
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument(
        "--limit", type=float, default=60.0, help="minutes before the run counts as failed"
    )
    parser.add_argument("--host", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--server", help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.host is not None:
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
        bots = {
            name: (token, seed) for name, (token, seed) in json.loads(args.host.read_text()).items()
        }
        asyncio.run(host_bots(args.server, bots))
        return 0
    if args.quick:
        args.entrants, args.rounds = 40, 3
    if args.entrants < PLAYERS:
        print(f"--entrants: expected at least {PLAYERS}, got {args.entrants}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="swiss-bench-") as folder:
        try:
            run = run_tournament(args, Path(folder))
        except BenchError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    report(run)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Tournament throughput: games and moves per second of an 8-bot round robin of each game.

Usage::

    python bench/tournament_bench.py [--games G1,G2] [--players N] [--games-per-pairing N]
                                     [--concurrency N] [--max-deals N] [--seed S]

It runs the README's main job (:mod:`domino_arena.server.cli.main_job`) once per game: an embedded
referee on a free loopback port with a fresh SQLite file, eight random house bots
(``random-1`` .. ``random-8``) started as separate processes that dial in over gRPC
(``python -m domino_arena.bots``), and one rated round robin (every table under every seat
rotation, ``--games-per-pairing`` deals each, ``--concurrency`` games at once). Nothing is
simulated: the figures include the network stack, the referee's clocks and the database writes.

One configuration per game: Passing, Straight and Doubles with ``--players`` seats (2 by
default: 56 games each), Three-Player Moon with 3 (168 games). Random players rarely make a
Moon contract, so a game can run for hundreds of deals by the rules (median 126 deals between
three random bots); the bench runs the referee with a cap of ``--max-deals`` 10 (a game past
it is adjudicated: about 240 moves a game, as many as a Passing game) so that the default run
takes under 2 minutes on 2 quiet cores, about 4 at a load average near 20 (half of it Moon).
Moves/s hardly depends on the cap; games/s does. The bots' choices depend on which games they
get first, so the move counts vary a little from run to run.

Columns: *games* and *seconds* are the main job's own (from starting the tournament to its last
stored game; the bot processes' start is not included); *moves* are counted from the stored
records (steps with a seat >= 0, so the ``deal`` chance steps are not counted; a move the
referee substituted for a faulting bot is); *faults* are the faults charged to bots (a random
bot answers in microseconds, so any fault means the machine was too busy). *CPU s* splits the
CPU time of the whole run of that game between the referee (this process: the gRPC server,
the referee and SQLite) and the eight bot processes, bot start included; per move it is the
figure that depends least on the machine's load, which is printed before and after each game.

It exits 1 on an error (a bot process that died, a game that did not end normally, fewer games
stored than the schedule holds), never because a figure is low.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from rich.console import Console

from domino_arena.sdk.match.records import parse_record
from domino_arena.sdk.rules import GAMES, Game, make_game
from domino_arena.server.cli.main_job import Settings, entrant_of, run
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.tournaments.scheduler import round_robin

ENTRANTS: Final = tuple(f"random-{n}" for n in range(1, 9))
MAX_DEALS: Final = 10
"""The referee's cap on deals in the bench: random Moon bidders seldom reach 21, and a game of
hundreds of deals would measure one long game rather than the tournament path."""


class BenchError(Exception):
    """The run went wrong (not merely slow); the message says how."""


@dataclass(frozen=True, slots=True)
class GameFigures:
    """What one game's round robin did."""

    game: Game
    games: int
    seconds: float
    moves: int
    faults: int
    referee_cpu: float
    bots_cpu: float
    load_before: float
    load_after: float


def configuration(name: str, players: int) -> Game:
    """Return the game ``name`` as the bench plays it."""
    if name == "moon":
        return make_game(name)
    return make_game(name, players=players)


def bench_game(game: Game, args: argparse.Namespace, folder: Path, console: Console) -> GameFigures:
    """Run one game's round robin through the main job and count what it stored."""
    url = f"sqlite:///{folder / f'{game.name}.db'}"
    settings = Settings(
        games=(game,),
        entrants=tuple(entrant_of(name) for name in ENTRANTS),
        games_per_pairing=args.games_per_pairing,
        seed=args.seed,
        concurrency=args.concurrency,
        max_deals=args.max_deals,
        db_url=url,
    )
    expected = len(
        round_robin(ENTRANTS, game.num_players, games_per_pairing=args.games_per_pairing)
    )
    load_before = os.getloadavg()[0]
    self_before = _cpu(resource.RUSAGE_SELF)
    children_before = _cpu(resource.RUSAGE_CHILDREN)
    (standings,) = run(settings, console)  # its bot processes are reaped when it returns
    referee_cpu = _cpu(resource.RUSAGE_SELF) - self_before
    bots_cpu = _cpu(resource.RUSAGE_CHILDREN) - children_before
    storage = RatedStorage(url)
    storage.open()
    try:
        matches = storage.matches(expected + 1, tournament_id=standings.tournament_id)
    finally:
        storage.close()
    if len(matches) != expected:
        raise BenchError(
            f"{game.describe()}: {len(matches)} games stored, the schedule has {expected}"
        )
    moves = faults = 0
    for match in matches:
        # adjudicated: past --max-deals, which any game of random bots may reach (not only Moon)
        if match.termination not in ("normal", "forfeit", "adjudicated") or match.record is None:
            raise BenchError(
                f"{game.describe()}: match {match.id} ended {match.termination!r} "
                f"({match.detail}); expected every game to be played to its end or its cap"
            )
        record = parse_record(match.record)
        moves += sum(1 for step in record.steps if step.seat >= 0)
        faults += len(record.faults)
    return GameFigures(
        game,
        standings.games_played,
        standings.seconds,
        moves,
        faults,
        referee_cpu,
        bots_cpu,
        load_before,
        os.getloadavg()[0],
    )


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def print_table(figures: Sequence[GameFigures]) -> None:
    print(
        f"\n{'game':<36}{'games':>6}{'seconds':>9}{'games/s':>9}{'moves':>8}{'moves/s':>9}"
        f"{'faults':>7}{'CPU s ref+bots':>16}{'CPU µs/move':>13}{'load':>11}"
    )
    for f in figures:
        cpu = f"{f.referee_cpu:.0f}+{f.bots_cpu:.0f}"
        per_move = f"{1e6 * f.referee_cpu / f.moves:.0f}+{1e6 * f.bots_cpu / f.moves:.0f}"
        load = f"{f.load_before:.1f}->{f.load_after:.1f}"
        print(
            f"{f.game.describe():<36}{f.games:>6}{f.seconds:>9.1f}{f.games / f.seconds:>9.2f}"
            f"{f.moves:>8}{f.moves / f.seconds:>9.0f}{f.faults:>7}{cpu:>16}{per_move:>13}"
            f"{load:>11}"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--games",
        default=",".join(sorted(GAMES)),
        metavar="G1,G2",
        help=f"games (default all: {','.join(sorted(GAMES))})",
    )
    parser.add_argument(
        "--players", type=int, default=2, metavar="N", help="seats, except Moon's 3 (default 2)"
    )
    parser.add_argument(
        "--games-per-pairing", type=int, default=1, metavar="N", help="deals per table (1)"
    )
    parser.add_argument(
        "--concurrency", type=int, default=4, metavar="N", help="games at once (default 4)"
    )
    parser.add_argument(
        "--max-deals",
        type=int,
        default=MAX_DEALS,
        metavar="N",
        help=f"the referee's cap on deals, after which a game is adjudicated (default {MAX_DEALS})",
    )
    parser.add_argument("--seed", type=int, default=1, metavar="S", help="seed (default 1)")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.games.split(",") if n.strip()]
    unknown = [n for n in names if n not in GAMES]
    if unknown or not names:
        parser.error(f"--games: expected names from {', '.join(sorted(GAMES))}, got {args.games!r}")
    for option in ("games_per_pairing", "concurrency"):
        if getattr(args, option) < 1:
            parser.error(f"--{option.replace('_', '-')}: expected at least 1")
    try:
        games = [configuration(n, args.players) for n in names]
    except ValueError as exc:
        parser.error(str(exc))
    print(
        f"{os.cpu_count()} CPUs, load {'/'.join(f'{x:.1f}' for x in os.getloadavg())}; "
        f"{len(ENTRANTS)} random bots, {args.games_per_pairing} deal(s) per table, "
        f"{args.concurrency} games at once, seed {args.seed}",
        flush=True,
    )
    console = Console(stderr=True)
    figures = []
    try:
        with tempfile.TemporaryDirectory(prefix="tournament-bench-") as folder:
            for game in games:
                figures.append(bench_game(game, args, Path(folder), console))
    except Exception as exc:
        if figures:
            print_table(figures)
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print_table(figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())

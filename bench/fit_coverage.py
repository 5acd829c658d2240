"""How often the batch fit's 95% bootstrap intervals hold the true strengths: their coverage.

Plays many simulated tournaments of bots whose strengths are known, fits each
(``server/ladder/fit.py``), bootstraps it over its duplicate sets (``fit_bootstrap.py``) and
counts, per bot and per seat position, how often the interval holds the truth. The goal is
about 95%: much less means the intervals claim more certainty than the data has.

The games are drawn from the fit's own model (``tests/fakes/fit_games.py``): Plackett-Luce over
the sides' strengths, a side being the mean of its partners, plus a seat advantage per position
after the first starter. A tournament is a round robin of tables: every ``--players`` of the
``--bots`` (in partnerships, each four in its three pairings), each table ``--deals`` duplicate
sets of one first seat under every rotation of the seats. True strengths are evenly spaced over
``--spread`` Elo around 1500 (the fit anchors the pool mean at 1500, so the truth is on the
fit's scale); the true seat advantages are ``--seats``.

Run from the repository root::

    .venv/bin/python -m bench.fit_coverage                     # 100 tournaments, 2 players
    .venv/bin/python -m bench.fit_coverage --players 3 --seats 0,-40,-80
    .venv/bin/python -m bench.fit_coverage --players 4 --partners --seats 0,-30,10,-30

Prints the coverage per bot, per seat position and overall, the mean interval width, and the
fit and bootstrap times; asserts nothing.
"""

from __future__ import annotations

import argparse
import itertools
import random
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from domino_arena.server.ladder.fit import FitGame, fit
from domino_arena.server.ladder.fit_bootstrap import bootstrap
from tests.fakes.fit_games import duplicate_sets


@dataclass(frozen=True, slots=True)
class Setup:
    bots: int
    players: int
    partners: bool
    deals: int
    rounds: int
    spread: float
    seats: tuple[float, ...]
    level: float


@dataclass(frozen=True, slots=True)
class Outcome:
    games: int
    units: int
    covered: tuple[bool, ...]
    """Per bot, in name order."""
    seat_covered: tuple[bool, ...]
    """Per seat position 1..players-1."""
    widths: tuple[float, ...]
    fit_seconds: float
    bootstrap_seconds: float


def truth_of(setup: Setup) -> dict[str, float]:
    """The bots' true strengths: evenly spaced over the spread, mean 1500."""
    step = setup.spread / max(1, setup.bots - 1)
    return {f"bot{i}": 1500 + (i - (setup.bots - 1) / 2) * step for i in range(setup.bots)}


def tournament(setup: Setup, seed: int) -> list[FitGame]:
    """One simulated tournament's games."""
    truth = truth_of(setup)
    rng = random.Random(f"fit-coverage/{seed}")
    tables: list[list[str]] = []
    if setup.partners:
        for w, x, y, z in itertools.combinations(truth, 4):
            tables += [[w, y, x, z], [w, x, y, z], [w, x, z, y]]
        sides: tuple[int, ...] = (0, 1, 0, 1)
    else:
        tables = [list(t) for t in itertools.combinations(truth, setup.players)]
        sides = tuple(range(setup.players))
    return duplicate_sets(
        tables, sides, truth, setup.seats, rng, deals=setup.deals, prefix=f"t{seed}"
    )


def run(job: tuple[Setup, int]) -> Outcome:
    setup, seed = job
    games = tournament(setup, seed)
    truth = truth_of(setup)
    began = time.perf_counter()
    point = fit(games)
    fitted = time.perf_counter()
    spread = bootstrap(games, point, rounds=setup.rounds, seed=seed, level=setup.level)
    done = time.perf_counter()
    bots = sorted(truth)
    return Outcome(
        games=len(games),
        units=point.units,
        covered=tuple(
            spread.intervals[bot][0] <= truth[bot] <= spread.intervals[bot][1] for bot in bots
        ),
        seat_covered=tuple(
            low <= true <= high
            for (low, high), true in zip(spread.seat_intervals[1:], setup.seats[1:], strict=True)
        ),
        widths=tuple(spread.intervals[bot][1] - spread.intervals[bot][0] for bot in bots),
        fit_seconds=fitted - began,
        bootstrap_seconds=done - fitted,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--tournaments", type=int, default=100)
    parser.add_argument("--bots", type=int, default=6)
    parser.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    parser.add_argument("--partners", action="store_true", help="4 players in two partnerships")
    parser.add_argument("--deals", type=int, default=4, help="duplicate sets per table")
    parser.add_argument("--rounds", type=int, default=200, help="bootstrap rounds")
    parser.add_argument("--spread", type=float, default=300.0, help="Elo from weakest to best")
    parser.add_argument(
        "--seats", default=None, help="true seat advantages per position, e.g. 0,-40 (Elo)"
    )
    parser.add_argument("--level", type=float, default=0.95)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    if args.partners and args.players != 4:
        parser.error("--partners needs --players 4")
    if args.seats is None:
        seats = tuple(float(-30 * p) for p in range(args.players))
    else:
        seats = tuple(float(part) for part in args.seats.split(","))
    if len(seats) != args.players or seats[0] != 0:
        parser.error(f"--seats: expected {args.players} numbers, the first 0, got {args.seats}")
    setup = Setup(
        args.bots,
        args.players,
        args.partners,
        args.deals,
        args.rounds,
        args.spread,
        seats,
        args.level,
    )
    began = time.perf_counter()
    jobs = [(setup, seed) for seed in range(args.tournaments)]
    with ProcessPoolExecutor(args.workers) as pool:
        outcomes = list(pool.map(run, jobs, chunksize=1))
    elapsed = time.perf_counter() - began
    truth = truth_of(setup)
    bots = sorted(truth)
    n = len(outcomes)
    kind = "in two partnerships" if args.partners else "one bot per side"
    print(
        f"{n} tournaments of {args.bots} bots, {args.players} seats {kind}; "
        f"{outcomes[0].games} games in {outcomes[0].units} duplicate sets each; "
        f"{args.rounds} bootstrap rounds; {args.level:.0%} intervals"
    )
    print(f"true seat advantages {seats}; strengths over {args.spread:g} Elo")
    print(f"{'bot':8} {'truth':>7} {'coverage':>9} {'mean width':>11}")
    for column, bot in enumerate(bots):
        hits = sum(o.covered[column] for o in outcomes)
        width = sum(o.widths[column] for o in outcomes) / n
        print(f"{bot:8} {truth[bot]:7.0f} {hits / n:9.1%} {width:11.1f}")
    for position in range(1, args.players):
        hits = sum(o.seat_covered[position - 1] for o in outcomes)
        print(f"seat {position:<3} {seats[position]:7.0f} {hits / n:9.1%}")
    overall = sum(sum(o.covered) for o in outcomes) / (n * len(bots))
    print(f"overall bot coverage {overall:.1%} (goal {args.level:.0%})")
    fit_ms = 1000 * sum(o.fit_seconds for o in outcomes) / n
    boot_s = sum(o.bootstrap_seconds for o in outcomes) / n
    print(
        f"fit {fit_ms:.1f} ms, bootstrap {boot_s:.2f} s per tournament "
        f"({1000 * boot_s / args.rounds:.1f} ms a round); {elapsed:.0f} s in all "
        f"on {args.workers} workers"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

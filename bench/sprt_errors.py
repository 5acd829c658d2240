"""The SPRT's error rates by simulation: accepting H1 at elo0 (~alpha), H0 at elo1 (~beta).

Usage::

    python bench/sprt_errors.py                  # 2,000 tests per hypothesis and cell
    python bench/sprt_errors.py --quick          # 300 tests, for a look
    python bench/sprt_errors.py --runs 5000 --workers 2 --seed 3
    python bench/sprt_errors.py --cell pair:0:10 --cell pair:0:5   # slower: ~4x units per halving

Each cell is a unit shape and SPRT bounds (elo0, elo1; alpha = beta = 0.05 by default). For
each hypothesis the shape is tilted to the exact expected unit score of that Elo with
``sprt.constrained_mle`` (the most likely distribution with that mean: how fishtest's own
simulations pin an Elo), then ``--runs`` tests each draw units from it one at a time and ask
``Sprt.status`` after every unit until it leaves ``continue``. The tests are built as a
comparison builds them (``server/tournaments/lifecycle/compare.py``, ``SprtPlan.sprt``): the
pentanomial support for game pairs, none beyond 0 and 1 for swap-one-seat sets. The shapes:

* **pair**: fishtest's game pair. Each game is a win, draw or loss (``--draw-ratio`` draws, the
  rest split evenly), the pair's score is the mean of its two games: the pentanomial values 0,
  1/4, 1/2, 3/4, 1;
* **swap3**, **swap4**: a swap-one-seat set for 3 or 4 seats
  (``server/tournaments/lifecycle/compare.py``): A and B each play one game in every seat, a game's
  score being the pairwise score by standing (3 seats: 1, 1/2, 0; 4 seats: 1, 2/3, 1/3, 0), every
  place equally likely; the set's score is ``1/2 + (mean of A - mean of B) / 2`` (multiples of 1/12
  or 1/24).

Printed per cell and hypothesis: the share of tests that accepted the wrong hypothesis with a
Wilson 95% interval; ``simple``, the same share for Wald's simple SPRT on the same draws (the
log-ratio of the two true distributions summed unit by unit: the control, whose error rates
Wald's inequality keeps near alpha and beta, so a gap between the two columns is the
generalised test's own and the rest is the luck of the draws); the tests that hit the unit cap
(``--max-units``, inconclusive); the mean and 90th percentile of the units to a verdict.
Runs are seeded per (cell, hypothesis, run), so the figures do not depend on ``--workers``.
Asserts nothing.
"""

from __future__ import annotations

import argparse
import itertools
import math
import multiprocessing
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from domino_arena.server.stats.sprt import Sprt, Verdict, constrained_mle
from domino_arena.server.tournaments.game_sd import Z95
from domino_arena.server.tournaments.lifecycle.compare import PENTANOMIAL

SHAPES = ("pair", "swap3", "swap4")
DEFAULT_CELLS = ("pair:0:20", "swap3:0:10", "swap4:0:10")
"""Cells of a default run: shape:elo0:elo1."""


@dataclass(frozen=True, slots=True)
class Cell:
    shape: str
    elo0: float
    elo1: float

    @property
    def label(self) -> str:
        return f"{self.shape} [{self.elo0:g}, {self.elo1:g}]"


def parse_cell(text: str) -> Cell:
    """Return the cell written ``shape:elo0:elo1`` (e.g. ``pair:0:10``)."""
    parts = text.split(":")
    if len(parts) != 3 or parts[0] not in SHAPES:
        raise argparse.ArgumentTypeError(
            f"--cell: expected shape:elo0:elo1 with shape one of {', '.join(SHAPES)}, got {text!r}"
        )
    try:
        return Cell(parts[0], float(parts[1]), float(parts[2]))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--cell: elo0 and elo1 must be numbers, got {text!r}"
        ) from None


def base_shape(shape: str, draw_ratio: float) -> dict[float, float]:
    """Return the untilted distribution of unit scores of ``shape`` (value -> probability)."""
    if shape == "pair":
        win = (1 - draw_ratio) / 2
        game = {Fraction(0): win, Fraction(1, 2): draw_ratio, Fraction(1): win}
        return _mean_of(game, 2)
    places = 3 if shape == "swap3" else 4
    game = {Fraction(k, places - 1): 1 / places for k in range(places)}
    a_mean = _mean_of(game, places)
    shape_counts: dict[Fraction, float] = {}
    for (a, pa), (b, pb) in itertools.product(a_mean.items(), repeat=2):
        value = Fraction(1, 2) + (Fraction(a) - Fraction(b)) / 2
        shape_counts[value] = shape_counts.get(value, 0.0) + pa * pb
    return {float(v): p for v, p in sorted(shape_counts.items())}


def _mean_of(game: dict[Fraction, float], games: int) -> dict[float, float]:
    """The distribution of the mean of ``games`` independent draws of ``game``."""
    totals: dict[Fraction, float] = {Fraction(0): 1.0}
    for _ in range(games):
        step: dict[Fraction, float] = {}
        for (total, p), (value, q) in itertools.product(totals.items(), game.items()):
            step[total + value] = step.get(total + value, 0.0) + p * q
        totals = step
    return {float(t / games): p for t, p in sorted(totals.items()) if p > 0}


def sprt_of(cell: Cell, alpha: float, beta: float, max_units: int) -> Sprt:
    """The test a comparison would run on ``cell``'s units (``SprtPlan.sprt``)."""
    support = PENTANOMIAL if cell.shape == "pair" else ()
    return Sprt(cell.elo0, cell.elo1, alpha, beta, max_units=max_units, support=support)


@dataclass(frozen=True, slots=True)
class Job:
    cell: Cell
    hypothesis: str
    """``H0``: units drawn at elo0; ``H1``: at elo1."""
    first_run: int
    runs: int
    seed: int
    draw_ratio: float
    alpha: float
    beta: float
    max_units: int


@dataclass(frozen=True, slots=True)
class JobResult:
    job: Job
    verdicts: tuple[Verdict, ...]
    units: tuple[int, ...]
    simple: tuple[Verdict, ...]
    """Wald's SPRT with the true distributions on the same draws (the control)."""


def run_job(job: Job) -> JobResult:
    """Run ``job.runs`` tests to their verdicts, and Wald's simple SPRT on the same draws."""
    test = sprt_of(job.cell, job.alpha, job.beta, job.max_units)
    base = base_shape(job.cell.shape, job.draw_ratio)
    at_h0, at_h1 = constrained_mle(base, test.s0), constrained_mle(base, test.s1)
    step = {v: math.log(at_h1[v] / at_h0[v]) for v in at_h0}
    shape = at_h0 if job.hypothesis == "H0" else at_h1
    values, weights = list(shape), list(itertools.accumulate(shape.values()))
    verdicts: list[Verdict] = []
    units: list[int] = []
    simple: list[Verdict] = []
    for run in range(job.first_run, job.first_run + job.runs):
        rng = random.Random(f"sprt-errors/{job.seed}/{job.cell.label}/{job.hypothesis}/{run}")
        counts: dict[float, int] = {}
        general: Verdict | None = None
        llr = 0.0
        wald: Verdict | None = None
        while general is None or wald is None:
            value = rng.choices(values, cum_weights=weights)[0]
            if general is None:
                counts[value] = counts.get(value, 0) + 1
                status = test.status(counts)
                if status.verdict is not Verdict.CONTINUE:
                    general = status.verdict
                    verdicts.append(status.verdict)
                    units.append(status.units)
            if wald is None:
                llr += step[value]
                if llr >= test.upper:
                    wald = Verdict.H1
                elif llr <= test.lower:
                    wald = Verdict.H0
        simple.append(wald)
    return JobResult(job, tuple(verdicts), tuple(units), tuple(simple))


def wilson(hits: int, n: int) -> tuple[float, float]:
    """The Wilson score 95% interval of a binomial proportion ``hits / n``."""
    if n == 0:
        return 0.0, 1.0
    p = hits / n
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


HEADER = (
    f"{'cell':<18} {'true':>4} {'runs':>5} {'wrong':>6} {'rate':>6} {'95% interval':>15} "
    f"{'target':>6} {'simple':>6} {'capped':>6} {'mean units':>10} {'p90 units':>9} "
    f"{'sd/unit':>7}"
)


def line(cell: Cell, hypothesis: str, results: Sequence[JobResult], target: float) -> str:
    verdicts = [v for r in results for v in r.verdicts]
    units = sorted(u for r in results for u in r.units)
    wrong_verdict = Verdict.H1 if hypothesis == "H0" else Verdict.H0
    wrong = sum(v is wrong_verdict for v in verdicts)
    capped = sum(v is Verdict.INCONCLUSIVE for v in verdicts)
    n = len(verdicts)
    simple = sum(v is wrong_verdict for r in results for v in r.simple) / n
    low, high = wilson(wrong, n)
    sd = math.sqrt(_variance(base_shape(cell.shape, results[0].job.draw_ratio)))
    return (
        f"{cell.label:<18} {hypothesis:>4} {n:>5} {wrong:>6} {wrong / n:>6.3f} "
        f"{f'[{low:.3f}, {high:.3f}]':>15} {target:>6.3f} {simple:>6.3f} {capped:>6} "
        f"{sum(units) / n:>10.0f} {units[int(0.9 * (n - 1))]:>9} {sd:>7.3f}"
    )


def _variance(shape: dict[float, float]) -> float:
    mean = sum(v * p for v, p in shape.items())
    return sum(p * (v - mean) ** 2 for v, p in shape.items())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2000, help="tests per hypothesis and cell")
    parser.add_argument("--quick", action="store_true", help="300 tests per hypothesis and cell")
    parser.add_argument(
        "--cell",
        type=parse_cell,
        action="append",
        help="shape:elo0:elo1, repeatable (default: " + ", ".join(DEFAULT_CELLS) + ")",
    )
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--beta", type=float, default=0.05)
    parser.add_argument("--draw-ratio", type=float, default=0.1, help="draws per game (pair)")
    parser.add_argument("--max-units", type=int, default=100_000, help="the tests' unit cap")
    parser.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    runs = 300 if args.quick else args.runs
    cells: list[Cell] = args.cell or [parse_cell(c) for c in DEFAULT_CELLS]
    chunk = max(1, min(50, runs // (4 * args.workers) or 1))
    jobs = [
        Job(
            cell,
            hyp,
            first,
            min(chunk, runs - first),
            args.seed,
            args.draw_ratio,
            args.alpha,
            args.beta,
            args.max_units,
        )
        for cell in cells
        for hyp in ("H0", "H1")
        for first in range(0, runs, chunk)
    ]
    print(
        f"GSPRT error rates: alpha {args.alpha}, beta {args.beta}, {runs} tests per row, "
        f"pair draw ratio {args.draw_ratio}, unit cap {args.max_units}, seed {args.seed}"
    )
    print("wrong: H1 accepted when H0 is true (target alpha), H0 accepted when H1 is (beta)")
    print(HEADER, flush=True)
    began = time.perf_counter()
    worst = 0.0
    done: list[JobResult] = []
    with multiprocessing.Pool(args.workers) as pool:
        for result in pool.imap(run_job, jobs, chunksize=1):
            done.append(result)
            key = (result.job.cell, result.job.hypothesis)
            mine = [r for r in done if (r.job.cell, r.job.hypothesis) == key]
            if sum(r.job.runs for r in mine) < runs:
                continue
            cell, hyp = key
            target = args.alpha if hyp == "H0" else args.beta
            print(line(cell, hyp, mine, target), flush=True)
            wrong = Verdict.H1 if hyp == "H0" else Verdict.H0
            verdicts = [v for r in mine for v in r.verdicts]
            worst = max(worst, sum(v is wrong for v in verdicts) / len(verdicts))
    wall = time.perf_counter() - began
    print(
        f"summary: {len(cells)} cells x 2 hypotheses x {runs} tests in {wall:.0f}s "
        f"({args.workers} workers); worst error rate {worst:.3f} against targets "
        f"{args.alpha}/{args.beta}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

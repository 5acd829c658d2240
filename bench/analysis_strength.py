"""Does the analysis rank the house bots as they are? Mean loss per decision of each bot.

Usage::

    python bench/analysis_strength.py [--games N] [--decisions D] [--max-samples M]
                                      [--precision P] [--search-samples S] [--workers W]

For each house bot (random, greedy, and search at ``--search-samples`` sampled deals per
move, 16 by default: the hosted budget), ``--games`` two-player Passing games (100 by
default) are played with that bot in seat 0 against the greedy bot in seat 1, deal seeds
1..N (the same for every bot). Each game is cut after seat 0's ``--decisions``-th decision
with a choice (40) and seat 0 is analysed with ``analyse_match`` at ``--precision`` (1.0
point) and ``--max-samples`` (200). A game's figure is its mean loss per decision; the bot's
is the mean over games with a 95% interval (t). Then Welch's t-test, one-sided, for each
step of the expected order search < greedy < random (lower loss is better), with its
p-value, and the same on accuracy. Games run in ``--workers`` processes (2).

The analysis plays out with the greedy policy, which is also the search bot's playout
policy: the yardstick is closer to the search bot's own view than to the others'
(docs/analysis.md: what it cannot see).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Final

from scipy import stats

from domino_arena.bots import make_bot
from domino_arena.sdk.match.records import record_from_state
from domino_arena.sdk.rules import GameState, make_game
from domino_arena.server.analysis import analyse_match

BOTS: Final = ("search", "greedy", "random")


@dataclasses.dataclass(frozen=True)
class Job:
    bot: str
    seed: int
    decisions: int
    max_samples: int
    precision: float
    search_samples: int


def one_game(job: Job) -> tuple[str, int, float, float, int]:
    """Play one game, analyse seat 0: (bot, seed, mean loss, accuracy, decisions)."""
    game = make_game("passing", players=2)
    bots = [
        make_bot(job.bot, job.seed, samples=job.search_samples if job.bot == "search" else None),
        make_bot("greedy", job.seed + 10_000),
    ]
    state: GameState = game.new_game(job.seed, first_seat=job.seed % 2)
    first = state.current_seat
    counted, cut = 0, None
    while not state.is_terminal() and cut is None:
        seat = state.current_seat
        legal = state.legal_actions()
        if seat < 0 or len(legal) == 1:
            action = legal[0]
        else:
            action = bots[seat].choose(state.observe(seat))
            if seat == 0:
                counted += 1
                if counted == job.decisions:
                    cut = len(state.history) + 1
        state = state.apply(action)
    # The record of a game cut short: its steps are all the analysis reads.
    while not state.is_terminal():
        state = state.apply(state.legal_actions()[-1])
    record = record_from_state(state, seats=[job.bot, "greedy"], seed=job.seed, first_seat=first)
    if cut is not None:
        record = dataclasses.replace(record, steps=record.steps[:cut])
    analysis = analyse_match(
        record,
        f"strength-{job.seed}",
        seats=[0],
        precision=job.precision,
        max_samples=job.max_samples,
    )
    (summary,) = analysis.summaries
    return job.bot, job.seed, summary.mean_loss_points, summary.accuracy, summary.decisions


def interval(values: list[float]) -> tuple[float, float]:
    mean = statistics.mean(values)
    if len(values) < 2:
        return mean, math.inf
    half = stats.t.ppf(0.975, len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return mean, float(half)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--decisions", type=int, default=40)
    parser.add_argument("--max-samples", type=int, default=200)
    parser.add_argument("--precision", type=float, default=1.0)
    parser.add_argument("--search-samples", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    jobs = [
        Job(bot, seed, args.decisions, args.max_samples, args.precision, args.search_samples)
        for seed in range(1, args.games + 1)
        for bot in BOTS
    ]
    began = time.perf_counter()
    loss: dict[str, list[float]] = {b: [] for b in BOTS}
    acc: dict[str, list[float]] = {b: [] for b in BOTS}
    decisions = 0
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for bot, _seed, mean_loss, accuracy, n in pool.map(one_game, jobs):
            loss[bot].append(mean_loss)
            acc[bot].append(accuracy)
            decisions += n
    seconds = time.perf_counter() - began
    print(
        f"passing 2p, {args.games} games per bot against greedy, first {args.decisions} "
        f"decisions of seat 0, precision {args.precision}, max {args.max_samples} samples"
    )
    print(f"{decisions} decisions analysed in {seconds:.0f} s with {args.workers} workers")
    print(f"{'bot':8} {'mean loss/decision':>24} {'accuracy':>18}")
    for bot in BOTS:
        m, h = interval(loss[bot])
        am, ah = interval(acc[bot])
        print(f"{bot:8} {m:10.3f} ± {h:5.3f} points {am:10.1f} ± {ah:4.1f}")
    for better, worse in (("search", "greedy"), ("greedy", "random")):
        t, p = stats.ttest_ind(loss[better], loss[worse], equal_var=False, alternative="less")
        print(f"loss {better} < {worse}: Welch t = {t:.2f}, one-sided p = {p:.2g}")


if __name__ == "__main__":
    main()

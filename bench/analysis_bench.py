"""How long the analysis of a 40-decision Passing game takes for one seat, on one core.

Usage::

    python bench/analysis_bench.py [--precision POINTS] [--game-precision POINTS]
                                   [--max-samples N] [--decisions N] [--seed S]

The game is made deterministically: a two-player Passing game from ``--seed``, the house
greedy bot in seat 0 and the random bot in seat 1, cut just after seat 0's ``--decisions``-th
decision with more than one legal action (40 by default). Seat 0 is analysed with
``analyse_match`` at ``--precision`` (0.05 points by default) and ``--max-samples`` (2000),
in this process; with ``--game-precision`` the seat's decisions are sampled together to that
standard error of the mean loss per decision (docs/analysis.md: precision). Printed:
decisions, samples (total, mean, and how many decisions stopped at the budget rather than the
precision), wall and CPU seconds, both readings of the precision reached (each decision's
standard error, largest and median; and the standard error of the seat's mean loss per
decision), the seat's mean loss and accuracy, and the floor (5 s of one core's CPU time) met
or missed for the reading asked for.

At the default precision the budget, not the precision, stops nearly every decision: a paired
difference of two Passing actions has a standard deviation of 10-15 points per sample, so
±0.05 points would take about 70,000 samples a decision (docs/analysis.md: precision).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

from domino_arena.bots import make_bot
from domino_arena.sdk.match.records import MatchRecord, record_from_state
from domino_arena.sdk.rules import GameState, make_game
from domino_arena.server.analysis import analyse_match

FLOOR_SECONDS = 5.0


def bench_record(seed: int, decisions: int) -> MatchRecord:
    """Greedy (seat 0) against random (seat 1), cut after seat 0's ``decisions``-th choice."""
    game = make_game("passing", players=2)
    bots = [make_bot("greedy", seed), make_bot("random", seed + 1)]
    state: GameState = game.new_game(seed, first_seat=0)
    counted = 0
    cut = None
    while not state.is_terminal():
        seat = state.current_seat
        legal = state.legal_actions()
        if seat < 0 or len(legal) == 1:
            action = legal[0]
        else:
            action = bots[seat].choose(state.observe(seat))
            if seat == 0:
                counted += 1
                if counted == decisions and cut is None:
                    cut = len(state.history) + 1
        state = state.apply(action)
    if cut is None:
        raise SystemExit(f"seed {seed}: seat 0 had only {counted} decisions")
    record = record_from_state(state, seats=["greedy", "random"], seed=seed, first_seat=0)
    return dataclasses.replace(record, steps=record.steps[:cut])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--precision", type=float, default=0.05)
    parser.add_argument("--game-precision", type=float, default=None)
    parser.add_argument("--max-samples", type=int, default=2000)
    parser.add_argument("--decisions", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    record = bench_record(args.seed, args.decisions)
    wall, cpu = time.perf_counter(), time.process_time()
    analysis = analyse_match(
        record,
        "bench",
        seats=[0],
        precision=args.precision,
        game_precision=args.game_precision,
        max_samples=args.max_samples,
    )
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    decisions = analysis.decisions
    samples = [d.samples for d in decisions]
    errors = [d.stderr for d in decisions]
    capped = sum(1 for d in decisions if d.samples >= args.max_samples)
    (summary,) = analysis.summaries
    game_stderr = analysis.mean_loss_stderr(0)
    print(
        f"precision {args.precision} points a decision, game precision {args.game_precision}, "
        f"max {args.max_samples} samples"
    )
    print(f"decisions          {len(decisions)}")
    print(f"samples            {sum(samples)} total, {statistics.mean(samples):.0f} mean")
    print(f"stopped at budget  {capped} of {len(decisions)}")
    print(f"seconds            {wall:.2f} wall, {cpu:.2f} cpu")
    print(f"decision stderr    max {max(errors):.3f}, median {statistics.median(errors):.3f}")
    print(f"game-mean stderr   {game_stderr:.3f} (of the mean loss per decision)")
    print(
        f"mean loss          {summary.mean_loss_points:.3f} points, accuracy {summary.accuracy:.1f}"
    )
    # The floor is one core's work: on a shared machine the CPU time measures it, the wall
    # time also counts the other processes' turns.
    # The floor's reading: the stated precision reached (per decision, or of the game's mean
    # when --game-precision is given) within 5 s of one core.
    if args.game_precision is None:
        reached, reading = max(errors) <= args.precision, "every decision"
    else:
        reached, reading = game_stderr <= args.game_precision, "game mean"
    verdict = "met" if cpu <= FLOOR_SECONDS and reached else "MISSED"
    print(
        f"floor {FLOOR_SECONDS:.0f} s cpu    {verdict} "
        f"(precision of the {reading} {'reached' if reached else 'not reached'})"
    )


if __name__ == "__main__":
    main()

"""How well the repeat-deal check separates a memorizing bot from honest ones.

For tournament sizes (entrants) x games per pairing x deal modes (duplicate, spread), plays
in-process round robins of house bots (``tests/fakes/tournaments.py``: the real schedule and
seeds, one bot object per entrant across its games) and runs the check of
``server/stats/repeat_deals.py`` on the rows:

* **false positives**: tournaments of honest bots only (greedy and random, alternating); the
  share of tournaments in which some bot is flagged, and the share of bots flagged;
* **power**: the same with the first entrant replaced by the memorizer (``bots/memorizer``,
  search with one sample on a remembered deal; ``--honest`` says how it plays the others);
  the share of tournaments where it is flagged, and its mean scores in the first and later
  games of its repeated deals.

Run from the repository root::

    .venv/bin/python -m bench.repeat_deals                 # straight, 2 players, ~10 min
    .venv/bin/python -m bench.repeat_deals --tournaments 4 --honest random --game doubles

Prints one table; asserts nothing.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from domino_arena.bots import GreedyBot, RandomBot
from domino_arena.bots.memorizer import MemorizerBot
from domino_arena.sdk.bot import Bot
from domino_arena.sdk.rules import make_game
from domino_arena.server.stats.repeat_deals import repeat_deal_checks
from domino_arena.server.tournaments.scheduler import DealMode
from tests.fakes.tournaments import played_tournament


@dataclass(frozen=True, slots=True)
class Cell:
    game: str
    entrants: int
    games_per_pairing: int
    deals: DealMode
    honest: str
    cheat: bool
    seed: int


@dataclass(frozen=True, slots=True)
class Outcome:
    games: int
    any_flagged: bool
    honest_flagged: int
    honest_bots: int
    cheat_flagged: bool
    cheat_first: float
    cheat_later: float
    cheat_gain: float


def run_cell(cell: Cell) -> Outcome:
    """Play one tournament of ``cell`` and check it."""
    bots: dict[str, Bot] = {}
    for i in range(cell.entrants):
        seed = cell.seed * 100 + i
        if i == 0 and cell.cheat:
            bots["memorizer"] = MemorizerBot(seed, max_time=None, max_samples=1, honest=cell.honest)
        else:
            bots[f"{'greedy' if i % 2 else 'random'}-{i}"] = (
                GreedyBot(seed) if i % 2 else RandomBot(seed)
            )
    rows = played_tournament(
        make_game(cell.game, players=2),
        bots,
        games_per_pairing=cell.games_per_pairing,
        deals=cell.deals,
        seed=cell.seed,
    )
    checks = {c.bot: c for c in repeat_deal_checks(rows, list(bots))}
    cheat = checks.get("memorizer")
    honest = [c for name, c in checks.items() if name != "memorizer"]
    return Outcome(
        games=len(rows),
        any_flagged=any(c.flagged for c in checks.values()),
        honest_flagged=sum(c.flagged for c in honest),
        honest_bots=len(honest),
        cheat_flagged=cheat is not None and cheat.flagged,
        cheat_first=cheat.first_score if cheat else 0.0,
        cheat_later=cheat.later_score if cheat else 0.0,
        cheat_gain=cheat.gain if cheat else 0.0,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="straight", help="a two-player game (default straight)")
    parser.add_argument("--entrants", type=int, nargs="+", default=[4, 6, 8])
    parser.add_argument("--games-per-pairing", type=int, nargs="+", default=[2, 5, 10])
    parser.add_argument("--tournaments", type=int, default=2, help="per cell, with the cheat")
    parser.add_argument(
        "--honest-tournaments", type=int, default=None, help="per cell, honest only (default 2x)"
    )
    parser.add_argument("--honest", default="greedy", help="how the memorizer plays fresh deals")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    honest_runs = (
        2 * args.tournaments if args.honest_tournaments is None else args.honest_tournaments
    )
    began = time.perf_counter()
    keys = [
        (n, gpp, mode)
        for mode in (DealMode.DUPLICATE, DealMode.SPREAD)
        for n in args.entrants
        for gpp in args.games_per_pairing
    ]
    cells = [
        Cell(args.game, n, gpp, mode, args.honest, cheat, seed)
        for n, gpp, mode in keys
        for cheat, runs in ((True, args.tournaments), (False, honest_runs))
        for seed in range(runs)
    ]
    with ProcessPoolExecutor(args.workers) as pool:
        outcomes = list(pool.map(run_cell, cells, chunksize=1))
    results: dict[tuple[int, int, DealMode, bool], list[Outcome]] = {}
    for cell, outcome in zip(cells, outcomes, strict=True):
        key = (cell.entrants, cell.games_per_pairing, cell.deals, cell.cheat)
        results.setdefault(key, []).append(outcome)
    print(
        f"{args.game}, 2 players; memorizer plays fresh deals as {args.honest}; "
        f"{args.tournaments} tournaments with it and {honest_runs} honest-only per cell"
    )
    header = (
        f"{'deals':9} {'entrants':>8} {'g/pair':>6} {'games':>6} "
        f"{'FP tourn':>8} {'FP bots':>8} {'power':>6} {'first':>6} {'later':>6} {'gain':>6}"
    )
    print(header)
    print("-" * len(header))
    for n, gpp, mode in keys:
        cheats = results.get((n, gpp, mode, True), [])
        honest = results.get((n, gpp, mode, False), [])
        games = (cheats or honest)[0].games
        if honest:
            fp_t = sum(o.any_flagged for o in honest) / len(honest)
            fp_b = sum(o.honest_flagged for o in honest) / sum(o.honest_bots for o in honest)
            false_positives = f"{fp_t:8.3f} {fp_b:8.3f}"
        else:
            false_positives = f"{'-':>8} {'-':>8}"
        if cheats:
            power = sum(o.cheat_flagged for o in cheats) / len(cheats)
            first = sum(o.cheat_first for o in cheats) / len(cheats)
            later = sum(o.cheat_later for o in cheats) / len(cheats)
            gain = sum(o.cheat_gain for o in cheats) / len(cheats)
            cheat = f"{power:6.2f} {first:6.2f} {later:6.2f} {gain:+6.2f}"
        else:
            cheat = f"{'-':>6} {'-':>6} {'-':>6} {'-':>6}"
        print(f"{mode.value:9} {n:8} {gpp:6} {games:6} {false_positives} {cheat}")
    honest_all = [o for o, c in zip(outcomes, cells, strict=True) if not c.cheat]
    print(
        f"all honest-only tournaments: {sum(o.any_flagged for o in honest_all)} of "
        f"{len(honest_all)} flagged a bot; {sum(o.honest_flagged for o in honest_all)} of "
        f"{sum(o.honest_bots for o in honest_all)} bot checks flagged"
    )
    print(f"({time.perf_counter() - began:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

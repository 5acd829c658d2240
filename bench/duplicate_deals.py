"""What duplicate deals buy: games needed for an Elo interval of a given width, with and without.

Usage::

    python bench/duplicate_deals.py                  # every game, both pairings (~10 min, 2 cores)
    python bench/duplicate_deals.py --quick          # a quarter of the sets, for a look
    python bench/duplicate_deals.py --config moon --pairing greedy-random --sets 400
    python bench/duplicate_deals.py --elo 10 --workers 2 --seed 3

For each game (Straight, Doubles and the Passing Game with 2 players, head to head; Three-Player
Moon with a swap-one-seat design against two greedy opponents) and each pairing (greedy against
random, search against greedy: the search bot with a few sampled deals per move and no clock,
``--samples``), a comparison is laid out as the referee lays one out (``compare.new_comparison``
and ``compare_schedule``: a game pair A-B, B-A per deal, or A and then B in every seat of a
Moon deal) and every game is played in-process (``sdk.local.play_game``), two ways:

* **duplicate**: every game of a set from the set's deal seed (``tournament.match_spec``), as a
  comparison plays it: the luck of the deal cancels inside the set;
* **independent**: the same schedule, but every game from a deal of its own, so nothing cancels
  (a block of independent games is scored exactly like a set only so both ways go through the
  same code; its variance over its games is that of independent games with the seats balanced).

Each way's rows are scored by ``compare.tally`` (the comparison's own set scores) and
``paired.estimate``. Since games needed scale with the variance per game, the measure is the
*variance per game* of a unit: ``sigma^2 x games per unit`` (``sigma`` the standard deviation of
a unit's score, a unit being a set of 2 games head to head or 6 in Moon), the variance the
estimate would have after one game. Printed per game and pairing, for each way: units, games,
the Elo estimate and its 95% interval, sigma per game (the square root of the above), and the
games needed for an interval of +-``--elo`` Elo (the games played times the squared ratio of
the measured half-width to the target); then the ratio independent / duplicate of the variances
per game, which is the factor of games saved (``ratio``), with a 95% percentile-bootstrap
interval (each way's units resampled apart). A game and pairing where either way shows no
spread, or a score within 1% of 0 or 1 (greedy wins nearly every game against random), has no
ratio (``n/a``): the Elo scale is clamped there. Deterministic by ``--seed``.
"""

from __future__ import annotations

import argparse
import functools
import math
import multiprocessing
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from domino_arena.bots import GreedyBot, RandomBot
from domino_arena.bots.search import SearchBot
from domino_arena.sdk.bot import Bot
from domino_arena.sdk.local import play_game
from domino_arena.sdk.match.results import FaultPolicy, Termination
from domino_arena.sdk.rules import Game, make_game
from domino_arena.server.play.match_spec import FinishedMatch
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.stats import paired
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tournaments import StoredTournament
from domino_arena.server.tournaments.lifecycle import match_spec
from domino_arena.server.tournaments.lifecycle.compare import (
    compare_schedule,
    games_per_score,
    new_comparison,
    plan_of,
    tally,
)
from domino_arena.server.tournaments.scheduler import ScheduledGame

CONFIGS: Final = ("straight", "doubles", "passing", "moon")
PAIRINGS: Final = {"greedy-random": ("greedy", "random"), "search-greedy": ("search", "greedy")}
"""Pairing name -> (candidate A, baseline B)."""
MOON_OPPONENTS: Final = ("greedy-2", "greedy-3")
DEFAULT_SETS: Final = {"greedy-random": 300, "search-greedy": 60}
"""Sets per game and way: 600 games head to head, 1,800 in Moon for greedy-random."""
MOON_SETS_SHARE: Final = 3
"""Moon sets have 6 games, head-to-head sets 2: Moon plays a third of the sets."""
DEFAULT_SAMPLES: Final = {"straight": 4, "doubles": 4, "passing": 2, "moon": 4}
"""The search bot's sampled deals per move: small, so a default run stays near 10 minutes."""
DESIGNS: Final = ("duplicate", "independent")


def game_of(config: str) -> Game:
    return make_game("moon") if config == "moon" else make_game(config, players=2)


@functools.lru_cache(maxsize=64)
def comparison(config: str, pairing: str, sets: int, seed: int) -> StoredTournament:
    """The comparison row a referee would make for ``config`` and ``pairing``."""
    game = game_of(config)
    candidate, baseline = PAIRINGS[pairing]
    opponents = MOON_OPPONENTS if game.num_players > 2 else ()
    return new_comparison(
        game=game,
        candidate=candidate,
        baseline=baseline,
        opponents=opponents,
        known_bots=(candidate, baseline, *opponents),
        max_sets=sets,
        time_control=TimeControl(),
        fault_policy=FaultPolicy.FORFEIT,
        seed=seed,
        tournament_id=f"bench-{config}-{pairing}",
    )


@functools.lru_cache(maxsize=64)
def set_games(config: str, pairing: str, sets: int, seed: int) -> list[list[ScheduledGame]]:
    """The comparison's schedule, set by set (``compare_schedule``)."""
    plan = plan_of(comparison(config, pairing, sets, seed))
    by_set: list[list[ScheduledGame]] = [[] for _ in range(sets)]
    for g in compare_schedule(plan, game_of(config).num_players):
        by_set[g.deal_id].append(g)
    return by_set


def make_bot(name: str, seed: int, samples: int) -> Bot:
    if name == "search":
        return SearchBot(seed, max_time=None, max_samples=samples)
    if name == "random":
        return RandomBot(seed)
    return GreedyBot(seed)


@dataclass(frozen=True, slots=True)
class Job:
    config: str
    pairing: str
    design: str
    deal: int
    sets: int
    seed: int
    samples: int


@dataclass(frozen=True, slots=True)
class SetResult:
    job: Job
    score: float | None
    """The set's score (``compare.tally``); None when a game ran past the local deal cap."""
    games: int
    seconds: float


def play_set(job: Job) -> SetResult:
    """Play every game of set ``job.deal`` one way and score it as a comparison does."""
    began = time.process_time()
    t = comparison(job.config, job.pairing, job.sets, job.seed)
    plan = plan_of(t)
    game = game_of(job.config)
    rows: list[StoredMatch] = []
    for g in set_games(job.config, job.pairing, job.sets, job.seed)[job.deal]:
        spec = match_spec(t, g, game=game)
        if job.design == "independent":
            deal = random.Random(f"duplicate-deals/independent/{job.seed}/{g.index}")
            spec = replace(spec, seed=deal.getrandbits(63))
        bots = [
            make_bot(
                name,
                random.Random(f"duplicate-deals/bot/{job.seed}/{g.index}/{seat}").getrandbits(32),
                job.samples,
            )
            for seat, name in enumerate(g.seats)
        ]
        local = play_game(game, bots, spec.seed, names=g.seats, timer=None)
        if local.result.termination is Termination.ADJUDICATED:
            return SetResult(job, None, len(rows) + 1, time.process_time() - began)
        rows.append(FinishedMatch(spec, local.result, None, (0,) * game.num_players).to_row())
    scores = tally(plan, game.num_players, rows).scores
    return SetResult(job, scores[0], len(rows), time.process_time() - began)


@dataclass(frozen=True, slots=True)
class Way:
    """One way (duplicate or independent) of one game and pairing, measured."""

    estimate: paired.PairedEstimate
    games: int
    games_per_unit: int
    lost_sets: int
    seconds: float

    @property
    def variance_per_game(self) -> float:
        """The sample variance of a unit's score times its games: the estimate's variance
        after one game (0 when every unit scored alike; ``paired``'s floor is not used here)."""
        cells = self.estimate.distribution
        mean = self.estimate.score
        n = sum(count for _, count in cells)
        return sum(c * (v - mean) ** 2 for v, c in cells) / n * self.games_per_unit if n else 0.0

    @property
    def informative(self) -> bool:
        """Whether the units show spread and the score is off the clamp (else Elo says little)."""
        e = self.estimate
        return self.variance_per_game > 0 and 0.01 < e.score < 0.99

    def games_needed(self, elo: float) -> float:
        """Games for a 95% interval of +-``elo``: width scales as 1/sqrt(games)."""
        return self.games * (self.estimate.elo_half_width / elo) ** 2


def measure(results: Sequence[SetResult], config: str, pairing: str, sets: int, seed: int) -> Way:
    plan = plan_of(comparison(config, pairing, sets, seed))
    seats = game_of(config).num_players
    scores = [r.score for r in results if r.score is not None]
    return Way(
        estimate=paired.estimate(scores, games_per_unit=games_per_score(plan, seats)),
        games=len(scores) * plan.games_per_set(seats),
        games_per_unit=plan.games_per_set(seats),
        lost_sets=sum(r.score is None for r in results),
        seconds=sum(r.seconds for r in results),
    )


HEADER = (
    f"{'game':<9} {'pairing':<14} {'way':<11} {'units':>5} {'games':>5} {'score':>6} "
    f"{'Elo':>6} {'95% interval':>16} {'sd/game':>7} {'games for +-X':>13} {'ratio':>6} "
    f"{'ratio 95% (bs)':>15} {'cpu s':>6}"
)


def ratio_of(ways: dict[str, Way]) -> float | None:
    """Variance per game, independent / duplicate; None when either way says too little."""
    if not all(way.informative for way in ways.values()):
        return None
    return ways["independent"].variance_per_game / ways["duplicate"].variance_per_game


def bootstrap_ratio(ways: dict[str, Way], seed: int, draws: int = 2000) -> tuple[float, float]:
    """A 95% percentile-bootstrap interval of the ratio: each way's units resampled apart."""
    rng = random.Random(f"duplicate-deals/bootstrap/{seed}")
    units = {
        design: [v for v, c in way.estimate.distribution for _ in range(c)]
        for design, way in ways.items()
    }
    ratios = []
    for _ in range(draws):
        variances = {}
        for design, values in units.items():
            sample = rng.choices(values, k=len(values))
            mean = sum(sample) / len(sample)
            variances[design] = sum((v - mean) ** 2 for v in sample) / len(sample)
        if variances["duplicate"] > 0:
            ratios.append(variances["independent"] / variances["duplicate"])
    ratios.sort()
    if not ratios:
        return math.nan, math.nan
    scale = ways["independent"].games_per_unit / ways["duplicate"].games_per_unit
    return ratios[int(0.025 * (len(ratios) - 1))] * scale, ratios[
        int(0.975 * (len(ratios) - 1))
    ] * scale


def lines(config: str, pairing: str, ways: dict[str, Way], elo: float, seed: int) -> list[str]:
    ratio = ratio_of(ways)
    shown = "n/a" if ratio is None else f"{ratio:.2f}x"
    low, high = bootstrap_ratio(ways, seed) if ratio is not None else (math.nan, math.nan)
    interval = "" if ratio is None else f"[{low:.2f}, {high:.2f}]"
    out = []
    for design in DESIGNS:
        way = ways[design]
        e = way.estimate
        lost = f"  ({way.lost_sets} sets past the deal cap left out)" if way.lost_sets else ""
        needed = f"{way.games_needed(elo):.0f}" if way.informative else "-"
        out.append(
            f"{config:<9} {pairing:<14} {design:<11} {e.units:>5} {way.games:>5} {e.score:>6.3f} "
            f"{e.elo:>6.0f} {f'[{e.elo_low:.0f}, {e.elo_high:.0f}]':>16} "
            f"{math.sqrt(way.variance_per_game):>7.3f} {needed:>13} "
            f"{(shown if design == 'independent' else ''):>6} "
            f"{(interval if design == 'independent' else ''):>15} "
            f"{way.seconds:>6.1f}{lost}"
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", action="append", choices=CONFIGS, help="repeatable")
    parser.add_argument("--pairing", action="append", choices=tuple(PAIRINGS), help="repeatable")
    parser.add_argument(
        "--sets",
        type=int,
        help="head-to-head sets per game, pairing and way (default: 300 greedy-random, "
        "60 search-greedy; Moon plays a third as many sets of 6 games)",
    )
    parser.add_argument("--quick", action="store_true", help="a quarter of the default sets")
    parser.add_argument("--samples", type=int, help="the search bot's samples per move")
    parser.add_argument("--elo", type=float, default=20.0, help="target half-width X, in Elo")
    parser.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    configs = args.config or list(CONFIGS)
    pairings = args.pairing or list(PAIRINGS)
    print(
        f"duplicate deals against independent deals: seed {args.seed}, X = {args.elo:g} Elo, "
        f"search samples/move {args.samples or DEFAULT_SAMPLES}"
    )
    print(
        "sd/game: a unit's score sd x sqrt(games per unit); ratio: variance per game, "
        "independent / duplicate (the factor of games saved), with a 95% bootstrap interval"
    )
    print(HEADER, flush=True)
    ratios: list[tuple[str, float]] = []
    skipped: list[str] = []
    began = time.perf_counter()
    with multiprocessing.Pool(args.workers) as pool:
        for pairing in pairings:
            for config in configs:
                sets = args.sets or DEFAULT_SETS[pairing]
                if args.quick:
                    sets = max(4, sets // 4)
                if config == "moon":
                    sets = max(2, sets // MOON_SETS_SHARE)
                samples = args.samples or DEFAULT_SAMPLES[config]
                ways: dict[str, Way] = {}
                for design in DESIGNS:
                    jobs = [
                        Job(config, pairing, design, deal, sets, args.seed, samples)
                        for deal in range(sets)
                    ]
                    results = pool.map(play_set, jobs, chunksize=2)
                    ways[design] = measure(results, config, pairing, sets, args.seed)
                for text in lines(config, pairing, ways, args.elo, args.seed):
                    print(text, flush=True)
                ratio = ratio_of(ways)
                if ratio is None:
                    skipped.append(f"{config}/{pairing}")
                else:
                    ratios.append((f"{config}/{pairing}", ratio))
    wall = time.perf_counter() - began
    note = f"; n/a (a one-sided result, no spread): {', '.join(skipped)}" if skipped else ""
    if ratios:
        low = min(ratios, key=lambda item: item[1])
        high = max(ratios, key=lambda item: item[1])
        print(
            f"summary: duplicate deals need {low[1]:.2f}x ({low[0]}) to {high[1]:.2f}x "
            f"({high[0]}) fewer games for the same interval; "
            f"{sum(r >= 2 for _, r in ratios)} of {len(ratios)} reach the 2x target{note}; "
            f"{wall:.0f}s on {args.workers} workers"
        )
    else:
        print(f"summary: no informative comparison{note}; {wall:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The search bot on the push/pop simulator against the search bot before it, at equal time.

Usage::

    python bench/search_strength.py [--max-time SECONDS] [--config NAME[:PLAYERS[p]]]...
                                    [--units N] [--minutes M] [--workers W] [--seed BASE]
    python bench/search_strength.py --speed [--games N]

Both bots are :class:`SearchBot` with the same time per move (``--max-time``, 0.2 s by
default) and the same code for sampling, playouts and the pick; they differ only in where the
playouts run: ``engine="sim"`` (the new one) pushes and pops on
:mod:`domino_arena.sdk.rules.sim`, ``engine="immutable"`` (the old one, kept in the bot for
this) builds an immutable state per move. With the same samples they choose the same actions,
so any difference in strength comes from the samples the faster engine fits in the time.

One *unit* is one deal seed of one configuration, played with the new bot in each seat and the
old bot in the others, and with the old bot in each seat and the new bot in the others (for two
players these are the same two games: the duplicate pair with the bots swapped). Its score is
``server/stats/paired.swap_score`` of the new bot's and the old bot's mean game scores (win 1,
loss 0; a game stopped at the cap on deals scores by rank), so the luck of the deal cancels
inside a unit. Reported per configuration and over all: units, games, the new bot's W/D/L in
games, its mean unit score, the Elo difference with its 95% interval
(``server/stats/paired.estimate``), the one-sided p-value of that normal approximation
(1 - LOS), and an exact sign test over the units that are not drawn (P(X >= wins) for
X ~ Binomial(decisive units, 1/2)); and the samples per searched move each bot reached, whose
ratio is the engine speed-up the search sees.

Units of the configurations are interleaved and run in ``--workers`` processes (2 by default:
at most one per core; the machine may be shared) until ``--units`` per configuration are done
or ``--minutes`` have passed (no new unit starts after that). Every finished unit is printed as
it comes, so a run cut short still reports.

``--speed`` measures the engines alone instead: for every configuration it plays ``--games``
seeded games of uniformly random actions, each deal once on the immutable engine
(``state.apply``) and once on a simulator built at the deal's start (``push``), the same
random actions chosen the same way from each one's ``legal_actions()``, interleaved deal by
deal in one process and timed in process CPU time; it prints the moves per second of each and
their ratio. Then, on ``--games``/5 positions of each default configuration (random games,
every seventh move with a choice), it runs each search once for ``--max-time`` and prints the
samples per move each reached: the engine speed-up as search sees it, playout policy and
sampling included.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from domino_arena.bots.search import SearchBot
from domino_arena.sdk.local import LocalResult, play_game
from domino_arena.sdk.match.results import Termination
from domino_arena.sdk.match.seeds import bot_seed
from domino_arena.sdk.rules import (
    DEAL,
    TERMINAL,
    Action,
    Game,
    Observation,
    configurations,
    make_game,
)
from domino_arena.sdk.rules.sim import simulate, snapshot_of
from domino_arena.server.stats.paired import estimate, swap_score

DEFAULT_CONFIGS = ("passing:2", "straight:2", "doubles:2", "moon")


def parse_config(text: str) -> Game:
    """Return the game of ``moon``, ``passing:3`` or ``straight:4p``."""
    name, _, seating = text.partition(":")
    if not seating:
        return make_game(name)
    options: dict[str, Any] = {"players": int(seating.rstrip("p"))}
    if seating.endswith("p"):
        options["partnerships"] = True
    return make_game(name, **options)


class CountingSearch(SearchBot):
    """The search bot, adding up the moves it searched and the samples they took."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.searched = 0
        self.samples = 0

    def choose(self, observation: Observation) -> Action:
        action = super().choose(observation)
        if self.samples_last_move:
            self.searched += 1
            self.samples += self.samples_last_move
        return action


@dataclass(frozen=True)
class Job:
    config: str
    seed: int
    max_time: float


@dataclass
class UnitResult:
    config: str
    seed: int
    score: float
    """The unit's swap score for the new bot."""
    games: list[float]
    """The new bot's result in each game of the unit (1 win, 1/2 tie at the cap, 0 loss)."""
    searched: dict[str, int]
    samples: dict[str, int]


def game_score(game: Game, result: LocalResult, seat: int) -> float:
    """1 if ``seat``'s side won, 0 if it lost; a game stopped at the cap scores by rank."""
    side = game.side_of(seat)
    if result.result.termination is not Termination.ADJUDICATED:
        return 1.0 if result.outcome.winner == side else 0.0
    scores = result.state.scores
    top = max(scores)
    if scores[side] < top:
        return 0.0
    return 1.0 / scores.count(top)


def play_unit(job: Job) -> UnitResult:
    """Play one deal seed with each bot alone in each seat against the other."""
    game = parse_config(job.config)
    seats = game.num_players
    alone: dict[str, list[float]] = {"sim": [], "immutable": []}
    searched = {"sim": 0, "immutable": 0}
    samples = {"sim": 0, "immutable": 0}
    new_games: list[float] = []
    played: set[tuple[str, ...]] = set()
    for lone in ("sim", "immutable"):
        other = "immutable" if lone == "sim" else "sim"
        for seat in range(seats):
            engines = tuple(lone if s == seat else other for s in range(seats))
            bots = [
                CountingSearch(bot_seed(job.seed, s), max_time=job.max_time, engine=e)
                for s, e in enumerate(engines)
            ]
            if engines in played:
                # Two players: this game was played already with the roles named the other way.
                continue
            played.add(engines)
            result = play_game(game, bots, seed=job.seed, timer=None)
            for bot in bots:
                searched[bot.engine] += bot.searched
                samples[bot.engine] += bot.samples
            score = game_score(game, result, seat)
            alone[lone].append(score)
            if seats == 2:
                alone[other].append(1.0 - score)
            new_games.append(score if lone == "sim" else 1.0 - score)
    a = sum(alone["sim"]) / len(alone["sim"])
    b = sum(alone["immutable"]) / len(alone["immutable"])
    return UnitResult(job.config, job.seed, swap_score(a, b), new_games, searched, samples)


@dataclass
class Tally:
    units: list[float] = field(default_factory=list)
    games: list[float] = field(default_factory=list)
    searched: dict[str, int] = field(default_factory=lambda: {"sim": 0, "immutable": 0})
    samples: dict[str, int] = field(default_factory=lambda: {"sim": 0, "immutable": 0})

    def add(self, unit: UnitResult) -> None:
        self.units.append(unit.score)
        self.games.extend(unit.games)
        for engine in self.searched:
            self.searched[engine] += unit.searched[engine]
            self.samples[engine] += unit.samples[engine]


def sign_test(wins: int, losses: int) -> float:
    """Exact one-sided sign test: P(X >= wins) for X ~ Binomial(wins + losses, 1/2)."""
    n = wins + losses
    return sum(math.comb(n, k) for k in range(wins, n + 1)) / 2**n if n else 1.0


HEADER = (
    f"{'config':<11} {'units':>5} {'games':>5} {'W-D-L (games)':>14} {'score':>6} "
    f"{'Elo [95%]':>20} {'p normal':>9} {'p sign':>8} {'samples/move new':>16} {'old':>6} "
    f"{'ratio':>6}"
)


def summary(label: str, tally: Tally) -> str:
    est = estimate(tally.units)
    wins = sum(1 for g in tally.games if g == 1.0)
    losses = sum(1 for g in tally.games if g == 0.0)
    draws = len(tally.games) - wins - losses
    unit_wins = sum(1 for u in tally.units if u > 0.5)
    unit_losses = sum(1 for u in tally.units if u < 0.5)
    per = {
        e: tally.samples[e] / tally.searched[e] if tally.searched[e] else 0.0
        for e in tally.searched
    }
    ratio = per["sim"] / per["immutable"] if per["immutable"] else 0.0
    elo = f"{est.elo:+.0f} [{est.elo_low:+.0f}, {est.elo_high:+.0f}]"
    return (
        f"{label:<11} {est.units:>5} {len(tally.games):>5} {f'{wins}-{draws}-{losses}':>14} "
        f"{est.score:>6.3f} {elo:>20} {1 - est.los:>9.2g} "
        f"{sign_test(unit_wins, unit_losses):>8.2g} {per['sim']:>16.1f} {per['immutable']:>6.1f} "
        f"{ratio:>6.2f}"
    )


def run(
    configs: Sequence[str], *, units: int, minutes: float, workers: int, max_time: float, seed: int
) -> dict[str, Tally]:
    jobs = [Job(c, seed + k, max_time) for k in range(units) for c in configs]
    tallies = {c: Tally() for c in configs}
    deadline = time.monotonic() + 60 * minutes
    pending: list[Any] = []
    done = 0
    with multiprocessing.Pool(workers) as pool:
        queue = iter(jobs)
        while True:
            while len(pending) < 2 * workers and time.monotonic() < deadline:
                job = next(queue, None)
                if job is None:
                    break
                pending.append(pool.apply_async(play_unit, (job,)))
            if not pending:
                break
            ready = [p for p in pending if p.ready()]
            if not ready:
                time.sleep(0.5)
                continue
            for p in ready:
                pending.remove(p)
                unit: UnitResult = p.get()
                tallies[unit.config].add(unit)
                done += 1
                print(
                    f"unit {done}: {unit.config} seed {unit.seed} score {unit.score:.3f} "
                    f"games {unit.games}",
                    flush=True,
                )
                if done % 20 == 0:
                    report(tallies)
    return tallies


def report(tallies: dict[str, Tally]) -> None:
    print(HEADER)
    total = Tally()
    for label, tally in tallies.items():
        if tally.units:
            print(summary(label, tally))
        total.units += tally.units
        total.games += tally.games
        for e in total.searched:
            total.searched[e] += tally.searched[e]
            total.samples[e] += tally.samples[e]
    if total.units:
        print(summary("all", total), flush=True)


def label_of(game: Game) -> str:
    options = game.options()
    if "players" not in options:
        return game.name
    return f"{game.name}:{options['players']}{'p' if options.get('partnerships') else ''}"


def engine_speed(games: int) -> None:
    """Print random-playout moves/s on the immutable engine and on the simulator, per config.

    Timed in process CPU time, so other work on a shared machine slows neither side's clock.
    """
    print(f"{'config':<11} {'moves':>8} {'immutable/s':>12} {'sim/s':>10} {'ratio':>6}")
    for game in configurations():
        moves = 0
        slow = fast = 0.0
        for seed in range(games):
            rng = random.Random(seed)
            state = game.new_game(seed=seed)
            while not state.is_terminal():
                if state.current_seat < 0:
                    state = state.apply(DEAL)
                    continue
                start, chosen = state, rng.getstate()
                began = time.process_time()
                while state.current_seat >= 0:
                    state = state.apply(rng.choice(state.legal_actions()))
                    moves += 1
                slow += time.process_time() - began
                rng.setstate(chosen)
                began = time.process_time()
                sim = simulate(start)
                while sim.seat >= 0:
                    sim.push(rng.choice(sim.legal_actions()))
                fast += time.process_time() - began
                assert sim.snapshot() == snapshot_of(state), "the simulator went astray"
        print(
            f"{label_of(game):<11} {moves:>8} {moves / slow:>12.0f} {moves / fast:>10.0f} "
            f"{slow / fast:>6.2f}",
            flush=True,
        )


def search_speed(positions: int, max_time: float) -> None:
    """Print the samples per move each engine's search reaches in ``max_time``, per config."""
    print(f"\nsearch at {max_time * 1000:g} ms/move, {positions} positions per config")
    print(f"{'config':<11} {'new samples':>11} {'old samples':>11} {'ratio':>6}")
    for config in DEFAULT_CONFIGS:
        game = parse_config(config)
        counts = {"sim": 0, "immutable": 0}
        found = 0
        seed = 0
        while found < positions:
            state = game.new_game(seed=seed)
            rng = random.Random(seed)
            seed += 1
            step = 0
            while state.current_seat != TERMINAL and found < positions:
                if state.current_seat < 0:
                    state = state.apply(DEAL)
                    continue
                legal = state.legal_actions()
                if len(legal) > 1 and step % 7 == 3:
                    observation = state.observe(state.current_seat)
                    for engine in ("sim", "immutable") if found % 2 else ("immutable", "sim"):
                        bot = SearchBot(found, max_time=max_time, engine=engine)
                        bot.choose(observation)
                        counts[engine] += bot.samples_last_move
                    found += 1
                state = state.apply(rng.choice(legal))
                step += 1
        new, old = counts["sim"] / positions, counts["immutable"] / positions
        print(f"{config:<11} {new:>11.1f} {old:>11.1f} {new / old:>6.2f}", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--max-time", type=float, default=0.2, help="seconds per move, both bots")
    parser.add_argument("--config", action="append", help=f"default: {' '.join(DEFAULT_CONFIGS)}")
    parser.add_argument("--units", type=int, default=200, help="units per configuration")
    parser.add_argument("--minutes", type=float, default=60.0, help="start no unit after this")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--speed", action="store_true", help="measure the engines alone")
    parser.add_argument("--games", type=int, default=100, help="games per config, --speed")
    args = parser.parse_args(argv)
    if args.speed:
        print(f"random playouts, load {os.getloadavg()[0]:.2f}")
        engine_speed(args.games)
        search_speed(args.games // 5, args.max_time)
        return 0
    configs = tuple(args.config or DEFAULT_CONFIGS)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"search on the simulator vs on the immutable engine, {args.max_time * 1000:g} ms/move, "
        f"configs {' '.join(configs)}, {args.workers} workers, load {load:.2f}",
        flush=True,
    )
    began = time.perf_counter()
    tallies = run(
        configs,
        units=args.units,
        minutes=args.minutes,
        workers=args.workers,
        max_time=args.max_time,
        seed=args.seed,
    )
    print(f"\nfinal, {time.perf_counter() - began:.0f} s:")
    report(tallies)
    return 0


if __name__ == "__main__":
    sys.exit(main())

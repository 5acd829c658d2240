"""The search bot against greedy, with seats rotated, and whether it wins significantly more.

Usage::

    python bench/search_vs_greedy.py [--games N] [--config NAME[:PLAYERS[p]]]... [--workers W]
                                     [--samples S | --max-time SECONDS] [--seed BASE]

For each game configuration (by default Moon, and the Passing Game, Straight and Doubles with 2
players) it plays about N games: every deal seed is played once with the search bot in each
seat and greedy bots in the others, so no seat or deal favours either side. A game counts as a
win when the search bot's side wins it. The win rate expected if search were no better than
greedy is one over the number of sides (1/2 with two, 1/3 in Moon); the one-sided p-value is
the exact binomial probability of at least that many wins under it.

By default the search bot has a fixed number of sampled deals per move (``--samples``, or a
per-game default below) and no clock, so a run is reproducible; ``--max-time`` gives it a
per-move time limit instead. Games run in ``--workers`` processes (2 by default).

A configuration is written ``moon``, ``passing:2``, ``straight:3``, ``passing:4p`` (four
players in partnerships).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from domino_arena.bots.greedy import GreedyBot
from domino_arena.bots.search import SearchBot
from domino_arena.sdk.local import play_game
from domino_arena.sdk.match.results import Termination
from domino_arena.sdk.match.seeds import bot_seed
from domino_arena.sdk.rules import Action, Game, Observation, make_game

DEFAULT_CONFIGS = ("moon", "passing:2", "straight:2", "doubles:2")
DEFAULT_SAMPLES: dict[str, int] = {"moon": 20, "passing": 12, "straight": 50, "doubles": 50}
"""Samples per move that keep 200 games of each game within about 10 minutes on 2 cores."""


def parse_config(text: str) -> tuple[str, dict[str, Any]]:
    """Return the game name and options of ``moon``, ``passing:3`` or ``straight:4p``."""
    name, _, seating = text.partition(":")
    if not seating:
        return name, {}
    partnerships = seating.endswith("p")
    options: dict[str, Any] = {"players": int(seating.rstrip("p"))}
    if partnerships:
        options["partnerships"] = True
    return name, options


def config_label(game: Game) -> str:
    if "players" not in game.options():
        return game.name
    teams = "p" if len(game.sides) != game.num_players else ""
    return f"{game.name}:{game.num_players}{teams}"


class TimedSearch(SearchBot):
    """The search bot, counting the moves it searched and the time they took."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.searched = 0
        self.seconds = 0.0

    def choose(self, observation: Observation) -> Action:
        began = time.perf_counter()
        action = super().choose(observation)
        if self.samples_last_move:
            self.searched += 1
            self.seconds += time.perf_counter() - began
        return action


@dataclass(frozen=True)
class Job:
    label: str
    seed: int
    seat: int
    samples: int | None
    max_time: float | None


@dataclass(frozen=True)
class GameResult:
    label: str
    seed: int
    seat: int
    won: bool
    finished: bool
    searched: int
    seconds: float


def play_one(job: Job) -> GameResult:
    """Play one game: the search bot in ``job.seat``, greedy bots elsewhere."""
    name, options = parse_config(job.label)
    game = make_game(name, **options)
    search = TimedSearch(
        bot_seed(job.seed, job.seat), max_time=job.max_time, max_samples=job.samples
    )
    bots = [
        search if seat == job.seat else GreedyBot(bot_seed(job.seed, seat))
        for seat in range(game.num_players)
    ]
    result = play_game(game, bots, seed=job.seed, timer=None)
    if result.result.termination is Termination.ADJUDICATED:
        return GameResult(job.label, job.seed, job.seat, False, False, search.searched, 0.0)
    won = result.outcome.winner == game.side_of(job.seat)
    return GameResult(job.label, job.seed, job.seat, won, True, search.searched, search.seconds)


def p_value(wins: int, games: int, rate: Fraction) -> float:
    """Exact one-sided binomial test: P(X >= wins) for X ~ Binomial(games, rate)."""
    tail = sum(
        math.comb(games, k) * rate**k * (1 - rate) ** (games - k) for k in range(wins, games + 1)
    )
    return float(tail)


@dataclass
class Row:
    label: str
    games: int = 0
    wins: int = 0
    unfinished: int = 0
    searched: int = 0
    seconds: float = 0.0
    wall: float = 0.0


def run(
    configs: Sequence[str],
    *,
    games: int,
    workers: int,
    samples: int | None,
    max_time: float | None,
    base_seed: int,
) -> list[tuple[Row, Game, str]]:
    rows: list[tuple[Row, Game, str]] = []
    for text in configs:
        name, options = parse_config(text)
        game = make_game(name, **options)
        label = config_label(game)
        per_move = samples if samples is not None else DEFAULT_SAMPLES.get(name, 20)
        budget = f"{max_time * 1000:g} ms/move" if max_time else f"{per_move} samples/move"
        seeds = math.ceil(games / game.num_players)
        jobs = [
            Job(label, base_seed + k, seat, None if max_time else per_move, max_time)
            for k in range(seeds)
            for seat in range(game.num_players)
        ]
        row = Row(label)
        began = time.perf_counter()
        with multiprocessing.Pool(workers) as pool:
            for result in pool.imap_unordered(play_one, jobs):
                row.games += 1
                row.wins += result.won
                row.unfinished += not result.finished
                row.searched += result.searched
                row.seconds += result.seconds
        row.wall = time.perf_counter() - began
        rows.append((row, game, budget))
        print(_line(row, game, budget), flush=True)
    return rows


HEADER = (
    f"{'game':<13} {'games':>5} {'wins':>5} {'rate':>6} {'null':>5} {'p-value':>9} "
    f"{'budget':>18} {'ms/search':>9} {'run time':>9}"
)


def _line(row: Row, game: Game, budget: str) -> str:
    expected = Fraction(1, len(game.sides))
    rate = row.wins / row.games if row.games else 0.0
    p = p_value(row.wins, row.games, expected)
    ms = 1000 * row.seconds / row.searched if row.searched else 0.0
    extra = f"  ({row.unfinished} unfinished)" if row.unfinished else ""
    return (
        f"{row.label:<13} {row.games:>5} {row.wins:>5} {rate:>6.1%} {float(expected):>5.2f} "
        f"{p:>9.2g} {budget:>18} {ms:>9.1f} {row.wall:>8.0f}s{extra}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games per configuration")
    parser.add_argument(
        "--config",
        action="append",
        help="moon, passing:2, straight:3, passing:4p, ... (repeatable; default: "
        + ", ".join(DEFAULT_CONFIGS)
        + ")",
    )
    parser.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--samples", type=int, help="sampled deals per move (no clock)")
    budget.add_argument("--max-time", type=float, help="seconds per move instead of samples")
    parser.add_argument("--seed", type=int, default=1, help="first deal seed")
    args = parser.parse_args(argv)
    configs = args.config or list(DEFAULT_CONFIGS)
    print(HEADER, flush=True)
    began = time.perf_counter()
    rows = run(
        configs,
        games=args.games,
        workers=args.workers,
        samples=args.samples,
        max_time=args.max_time,
        base_seed=args.seed,
    )
    print(f"total run time {time.perf_counter() - began:.0f}s, {args.workers} workers")
    expected = [Fraction(1, len(game.sides)) for _, game, _ in rows]
    failed = [
        row.label
        for (row, _, _), rate in zip(rows, expected, strict=True)
        if p_value(row.wins, row.games, rate) >= 0.05
    ]
    if failed:
        print(f"not significant at 0.05: {', '.join(failed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

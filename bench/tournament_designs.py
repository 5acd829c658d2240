"""Tournament designs against known strengths: how many games buy how good a ranking.

Issue 31's measure. Entrants get true Elo ratings (normal, SD ``--spread`` 200, mean 1500: the
fit's own anchor); each table's game is drawn from the official fit's model
(``tests/fakes/fit_games.py``: Plackett-Luce over the sides, a side the mean of its partners,
plus a seat advantage of -30 Elo per position after the first starter), one deal per table
under every rotation of its seats (a duplicate set: the bootstrap's unit). Each tournament is
rated by the official fit (``server/ladder/fit.py``; a gauntlet's baselines are frozen at their
true ratings, as a course's are) and compared with the truth:

* **rho**: Spearman rank correlation of the fitted ratings with the true ones;
* **MAE**: mean absolute rating error (Elo), the pool's mean aligned (the fit anchors it);
* **hw meas**: the measured 95% half-width, 1.96 x the root mean square error: the interval
  the truth needs; **hw boot**: the mean bootstrap half-width (``fit_bootstrap.py``, the
  intervals the standings print) where ``--rounds`` > 0 and the field is at most
  ``--boot-max`` entrants; **hw plan**: the planner's estimate (``server/tournaments/
  planner.py``) with the simulation's per-game SD (0.5, even odds, no deal luck), **ratio**
  hw meas / hw plan (goal: within 0.8-1.2), and **raw** the same ratio without the planner's
  correction (``planner.correction``): what calibrates it (bench/README.md says how).

Formats: the full round robin where it has at most ``--max-rr`` games; balanced at several
games per entrant (``server/tournaments/designs.balanced``); a gauntlet against 3 baselines of
fixed strength, 1300, 1500 and 1700 (``designs.gauntlet``); Swiss at the balanced sizes
(``server/tournaments/swiss.py``): rounds played one after another, each seated by
``swiss_round`` from the ranking of :func:`swiss_order`, as many as ``swiss_rounds`` gives.

Run from the repository root::

    .venv/bin/python -m bench.tournament_designs             # 40 and 200 entrants, 1,000 in Moon
    .venv/bin/python -m bench.tournament_designs --quick     # 40 entrants only, one repetition
    .venv/bin/python -m bench.tournament_designs --all       # 1,000 entrants in every seating
    .venv/bin/python -m bench.tournament_designs --moves     # moves a game: planner.MOVES_PER_GAME
    .venv/bin/python -m bench.tournament_designs --formats swiss --fields 40  # some rows only

Prints one row per configuration (means over ``--reps`` tournaments of 40 entrants,
``--reps-large`` of more); asserts nothing.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
from scipy import stats

from domino_arena.server.ladder.elo import RatedGame
from domino_arena.server.ladder.fit import ELO_PER_NATURAL, FitGame, fit
from domino_arena.server.ladder.fit_bootstrap import bootstrap
from domino_arena.server.tournaments import designs, planner, rounds, swiss

BASELINES = {"house:low": 1300.0, "house:mid": 1500.0, "house:high": 1700.0}
SEAT_STEP = -30.0
SIM_SD = 0.5
"""A simulated game's score SD per pairwise result at even odds (no deal luck to pair out)."""


@dataclass(frozen=True, slots=True)
class Config:
    entrants: int
    seats: int
    partners: bool
    format: str
    games_per_entrant: int
    rep: int
    spread: float
    rounds: int


@dataclass(frozen=True, slots=True)
class Row:
    config: Config
    games: int
    per_entrant: float
    rho: float
    mae: float
    hw_measured: float
    hw_boot: float
    hw_plan: float
    hw_raw: float
    seconds: float


def seating(seats: int, partners: bool) -> str:
    return "4 partners" if partners else f"{seats} seats"


def play(
    tables: Sequence[tuple[str, ...]],
    truth: dict[str, float],
    partners: bool,
    rng: np.random.Generator,
    prefix: str,
) -> list[FitGame]:
    """Every table once (one deal) under every rotation, drawn from the fit's model."""
    seats = len(tables[0])
    side_of_seat = (0, 1, 0, 1) if partners else tuple(range(seats))
    sides = max(side_of_seat) + 1
    advantage = np.array([SEAT_STEP * p for p in range(seats)])
    table_array = np.array(tables)
    strength = np.vectorize(truth.__getitem__, otypes=[float])(table_array)
    firsts = rng.integers(0, seats, size=len(tables))
    games: list[FitGame] = []
    for rotation in range(seats):
        order = [(s + rotation) % seats for s in range(seats)]
        at_seat = (
            strength[:, order] + advantage[(np.arange(seats)[None, :] - firsts[:, None]) % seats]
        )
        side_strength = np.zeros((len(tables), sides))
        for seat, side in enumerate(side_of_seat):
            side_strength[:, side] += at_seat[:, seat]
        side_strength /= seats / sides
        noisy = side_strength / ELO_PER_NATURAL + rng.gumbel(size=side_strength.shape)
        standing = np.argsort(np.argsort(-noisy, axis=1), axis=1)
        bots_at = table_array[:, order]
        for i in range(len(tables)):
            game = RatedGame(
                tuple(bots_at[i]), side_of_seat, tuple(int(x) for x in standing[i]), (0,) * seats
            )
            games.append(FitGame(game, int(firsts[i]), f"{prefix}/{i}"))
    return games


def swiss_order(
    entrants: Sequence[str],
    order: Sequence[str],
    previous: Sequence[Sequence[tuple[str, ...]]],
    games: Sequence[FitGame],
    results: Sequence[rounds.TableResult],
) -> list[str]:
    """The ranking a Swiss round is seated by (docs/tournaments.md: Swiss), strongest first.

    Once the tables so far link every entrant to every other (``swiss.connected``): the
    official fit of all the games so far, highest rating first, equal ratings in ``order`` (the
    previous round's ranking). Before (round 2 at least, and while an entrant has only had
    byes): ``swiss.points_order``, match points per game over all the tables so far (1 a game
    for first alone, 0 for last alone; an entrant without games 0.5), equal ones in ``order``.
    Round 1 takes the listed order.
    """
    if not swiss.connected(entrants, previous):
        return swiss.points_order(order, results)
    ratings = fit(games).ratings
    rank = {e: i for i, e in enumerate(order)}
    return sorted(order, key=lambda e: (-ratings[e], rank[e]))


def swiss_tournament(
    names: list[str], config: Config, truth: dict[str, float], rng: np.random.Generator
) -> list[FitGame]:
    """A Swiss tournament of ``swiss_rounds`` rounds, each table played once under every
    rotation (the names are drawn independently of the strengths: round 1 is a random draw)."""
    seats = config.seats
    count = swiss.swiss_rounds(len(names), seats, config.games_per_entrant, seats)
    order = list(names)
    previous: list[tuple[tuple[str, ...], ...]] = []
    games: list[FitGame] = []
    results: list[rounds.TableResult] = []
    for number in range(count):
        if number:
            order = swiss_order(names, order, previous, games, results)
        seated = swiss.swiss_round(
            names, seats, order, previous, partnerships=config.partners, seed=config.rep
        )
        played = play(seated.tables, truth, config.partners, rng, f"swiss/{config.rep}/{number}")
        previous.append(seated.tables)
        games += played
        placed = [
            rounds.PlacedGame(
                g.game.bots,
                g.game.side_of_seat,
                g.game.standing,
                (0,) * len(g.game.standing),
            )
            for g in played
        ]
        results += rounds.round_results(seated.tables, placed)
    return games


def run(config: Config) -> Row:
    began = time.perf_counter()
    rng = np.random.default_rng([config.entrants, config.seats, config.rep, 31])
    names = [f"e{i:04d}" for i in range(config.entrants)]
    draws = rng.normal(0, config.spread, size=config.entrants)
    truth = dict(zip(names, 1500 + draws - draws.mean(), strict=True))
    fixed = None
    step = config.seats
    if config.format == "round-robin":
        import itertools  # noqa: PLC0415

        tables: list[tuple[str, ...]] = []
        for combo in itertools.combinations(names, config.seats):
            if config.partners:
                w, x, y, z = combo
                tables += [(w, x, y, z), (w, y, x, z), (w, x, z, y)]
            else:
                tables.append(combo)
    elif config.format == "balanced":
        design = designs.balanced(
            names,
            config.seats,
            tables_per_entrant=config.games_per_entrant // step,
            partnerships=config.partners,
            seed=config.rep,
        )
        tables = list(design.tables)
    elif config.format == "swiss":
        tables = []
    else:
        tables = list(
            designs.gauntlet(
                names,
                list(BASELINES),
                config.seats,
                tables_per_entrant=config.games_per_entrant // step,
                partnerships=config.partners,
                seed=config.rep,
            ).tables
        )
        truth |= BASELINES
        fixed = dict(BASELINES)
    if config.format == "swiss":
        games = swiss_tournament(names, config, truth, rng)
    else:
        games = play(tables, truth, config.partners, rng, f"{config.format}/{config.rep}")
    point = fit(games, fixed=fixed)
    fitted = np.array([point.ratings[n] for n in names])
    true = np.array([truth[n] for n in names])
    error = fitted - true
    if fixed is None:
        error -= error.mean()
    rho = float(stats.spearmanr(fitted, true).statistic)
    boot = math.nan
    if config.rounds:
        spread = bootstrap(games, point, rounds=config.rounds, seed=config.rep)
        boot = float(
            np.mean([(spread.intervals[n][1] - spread.intervals[n][0]) / 2 for n in names])
        )
    mine = sum(1 for g in games for b in g.game.bots if b.startswith("e"))
    per_entrant = mine / config.entrants
    plan_hw = planner.half_width(
        config.format,
        "simulated",  # no measured SD: 0.5 a result, as the simulation's are at even odds
        per_entrant,
        seats=config.seats,
        partnerships=config.partners,
    )
    return Row(
        config=config,
        games=len(games),
        per_entrant=per_entrant,
        rho=rho,
        mae=float(np.abs(error).mean()),
        hw_measured=1.959964 * float(np.sqrt((error**2).mean())),
        hw_boot=boot,
        hw_plan=plan_hw,
        hw_raw=plan_hw
        / planner.correction(
            config.format,
            per_entrant * (planner.sides_of(config.seats, config.partners) - 1),
            seats=config.seats,
            partnerships=config.partners,
        ),
        seconds=time.perf_counter() - began,
    )


def moves_per_game(games: int = 30) -> None:
    """Print the decisions of a whole game between greedy policies, per game and seating: the
    planner's ``MOVES_PER_GAME``."""
    import random  # noqa: PLC0415

    from bench.rules_bench import our_games  # noqa: PLC0415
    from domino_arena.bots.search.playout import greedy_policy  # noqa: PLC0415
    from domino_arena.sdk.rules import CHANCE  # noqa: PLC0415

    for name, game in our_games():
        moves = 0
        for seed in range(games):
            rng = random.Random(seed)
            state = game.new_game(seed)
            while state.current_seat >= 0 or state.current_seat == CHANCE:
                if state.current_seat == CHANCE:
                    state = state.apply(state.legal_actions()[0])
                else:
                    state = state.apply(greedy_policy(state, rng))
                    moves += 1
        teams = " partnerships" if len(game.sides) != game.num_players else ""
        print(f"{name} {game.num_players} seats{teams}: {moves / games:.0f} moves a game")


def configs(args: argparse.Namespace) -> list[Config]:
    seatings = [(2, False), (3, False), (4, False), (4, True)]
    fields = [40] if args.quick else [40, 200, 1000]
    if args.fields:
        fields = [int(n) for n in args.fields.split(",")]
    reps = 1 if args.quick else args.reps
    out: list[Config] = []
    for n in fields:
        for seats, partners in seatings:
            if n == 1000 and not args.all and (seats, partners) != (3, False):
                continue
            if args.seatings and seating(seats, partners) not in args.seatings.split(","):
                continue
            pairings = 3 if partners else 1
            rr_games = math.comb(n, seats) * pairings * seats
            designs: list[tuple[str, int]] = []
            if rr_games <= args.max_rr:
                designs.append(("round-robin", 0))
            sizes: tuple[int, ...] = (24, 48, 96) if n < 1000 else (48, 96)
            if n == 40 and (seats, partners) == (4, False):
                sizes += (192, 960)  # 0.5% and 2.6% of the round robin's games
            for g in sizes:
                gpe = max(seats, g // seats * seats)
                designs.append(("balanced", gpe))
                designs.append(("swiss", gpe))
            designs.append(("gauntlet", 48 // seats * seats))
            for fmt, gpe in designs:
                if args.formats and fmt not in args.formats.split(","):
                    continue
                for rep in range(reps if n == 40 else args.reps_large):
                    rounds = args.rounds if n <= args.boot_max and fmt != "round-robin" else 0
                    out.append(Config(n, seats, partners, fmt, gpe, rep, args.spread, rounds))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="40 entrants, one repetition")
    parser.add_argument("--all", action="store_true", help="1,000 entrants in every seating")
    parser.add_argument("--reps", type=int, default=3, help="tournaments per row, 40 entrants")
    parser.add_argument(
        "--reps-large", type=int, default=1, help="tournaments per row, 200 and 1,000 entrants"
    )
    parser.add_argument("--spread", type=float, default=200.0, help="SD of the true Elo")
    parser.add_argument("--max-rr", type=int, default=400_000, help="largest round robin")
    parser.add_argument("--rounds", type=int, default=0, help="bootstrap rounds (0: none)")
    parser.add_argument("--boot-max", type=int, default=40, help="largest field bootstrapped")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--formats", default="", help="only these formats, e.g. swiss,balanced")
    parser.add_argument("--fields", default="", help="only these fields, e.g. 40,200")
    parser.add_argument(
        "--seatings", default="", help="only these seatings, e.g. '2 seats,4 partners'"
    )
    parser.add_argument(
        "--moves", action="store_true", help="only the moves per game of greedy players"
    )
    args = parser.parse_args(argv)
    if args.moves:
        moves_per_game()
        return 0
    began = time.perf_counter()
    jobs = configs(args)
    jobs.sort(key=lambda c: -c.entrants * c.seats * (c.games_per_entrant or 10_000))
    with ProcessPoolExecutor(args.workers) as pool:
        rows = list(pool.map(run, jobs, chunksize=1))
    print(
        f"{len(rows)} tournaments; true Elo normal SD {args.spread:g}; load "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; {time.perf_counter() - began:.0f} s"
    )
    head = (
        f"{'n':>5} {'seating':10} {'format':11} {'games':>9} {'g/entr':>7} {'rho':>6} "
        f"{'MAE':>6} {'hw meas':>7} {'hw boot':>7} {'hw plan':>7} {'ratio':>6} {'raw':>5}"
    )
    print(head)
    groups: dict[tuple[object, ...], list[Row]] = {}
    for row in rows:
        c = row.config
        groups.setdefault(
            (c.entrants, c.seats, c.partners, c.format, c.games_per_entrant), []
        ).append(row)
    for key in sorted(groups, key=lambda k: (k[0], k[1], k[2], k[3] != "round-robin", k[3], k[4])):
        group = groups[key]
        c = group[0].config

        def mean(values: list[float]) -> float:
            return float(np.mean(values))

        meas = mean([r.hw_measured for r in group])
        plan_hw = mean([r.hw_plan for r in group])
        raw = mean([r.hw_raw for r in group])
        boot = mean([r.hw_boot for r in group])
        boot_text = "" if math.isnan(boot) else f"{boot:.0f}"
        print(
            f"{c.entrants:>5} {seating(c.seats, c.partners):10} {c.format:11} "
            f"{mean([r.games for r in group]):>9,.0f} {mean([r.per_entrant for r in group]):>7.0f} "
            f"{mean([r.rho for r in group]):>6.3f} {mean([r.mae for r in group]):>6.1f} "
            f"{meas:>7.0f} {boot_text:>7} {plan_hw:>7.0f} {meas / plan_hw:>6.2f} {meas / raw:>5.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

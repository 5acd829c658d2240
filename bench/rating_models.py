"""Which incremental rating predicts games better: the ladder's Elo or openskill's Plackett-Luce.

Usage::

    python bench/rating_models.py                 # 3,000 games per synthetic set, 600 Moon games
    python bench/rating_models.py --quick         # 800 and 150
    python bench/rating_models.py --games 10000 --bots 30 --spread 200 --seed 3
    python bench/rating_models.py --no-house      # synthetic sets only

The live ladder keeps an incremental rating (docs/ratings.md): pairwise Elo by final
standing with K/(N-1) (``server/ladder/elo.py``, K = 24), or a Bayesian incremental model if it
predicts better. This bench measures both on the same games, in the same order:

* **Elo**: ``elo.rate_game`` with the ladder's K; the chance that side i finishes ahead of
  side j is ``elo.expected_score`` of their ratings;
* **PL**: ``openskill.models.PlackettLuce`` with its defaults (mu 25, sigma 25/3, beta 25/6),
  updated by ``rate(teams, ranks=places)`` (ties share a place); the chance is
  ``predict_win`` of the two sides alone (its two values sum to 1);
* **PL logistic**: the same ratings, the chance from the Plackett-Luce likelihood of two sides,
  ``1 / (1 + exp(-(mu_i - mu_j) / c))``, ``c = sqrt(2 beta^2 + sigma_i^2 + sigma_j^2)``, the
  curve the update fits (``predict_win`` uses the steeper ``Phi(d / c)``).

**Log-loss** of a game: each pair of sides (i, j) has the outcome y = 1, 1/2 or 0 as i finished
ahead of, level with or behind j, and a model's p = P(i ahead of j); the pair's loss is
``-(y ln p + (1 - y) ln(1 - p))`` (a draw counts as half a win, as Elo scores it), p clipped to
[1e-9, 1 - 1e-9]; the game's loss is the mean over its N(N-1)/2 pairs and a dataset's the mean
over its games. A coin (p = 1/2) scores ln 2 = 0.693; lower is better. Two readings:

* **prequential**: every game predicted with the ratings of the games before it, then rated;
* **held-out**: rated on the first 80% of the games in order, then the last 20% predicted
  with the ratings frozen.

The datasets (each a sequence of games among ``--bots`` bots, tables drawn at random):

* **PL 2/3/4 sides**: synthetic; each bot has a true strength drawn from a normal distribution
  with ``--spread`` Elo standard deviation, and a game's finishing order is that of strength
  plus Gumbel noise, which is exactly Plackett-Luce (Bradley-Terry for two sides, the logistic
  curve of Elo); the ``truth`` row predicts with the true strengths (the floor);
* **Moon house bots**: real Three-Player Moon games of house bots played in-process
  (``sdk.local.play_game``): three random, three greedy and one search bot (``--samples``
  sampled deals per move, no clock); a game past ``--max-deals`` deals is left out.

Prints a table per dataset and a line saying which model wins by how much. Seeded; asserts
nothing.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Final

from openskill.models import PlackettLuce, PlackettLuceRating

from domino_arena.bots import GreedyBot, RandomBot
from domino_arena.bots.search import SearchBot
from domino_arena.sdk.bot import Bot
from domino_arena.sdk.local import play_game
from domino_arena.sdk.match.results import Termination
from domino_arena.sdk.rules import make_game
from domino_arena.server.ladder import elo

CLIP: Final = 1e-9
TRAIN_SHARE: Final = 0.8
HOUSE_BOTS: Final = (
    "random-1",
    "random-2",
    "random-3",
    "greedy-1",
    "greedy-2",
    "greedy-3",
    "search-1",
)


@dataclass(frozen=True, slots=True)
class Game:
    """One game as the ratings see it: the bots, one side each, and each side's place."""

    bots: tuple[str, ...]
    places: tuple[int, ...]
    """0 = first; equal places drew."""


Predictor = Callable[[str, str], float]
"""P(first bot finishes ahead of the second), in (0, 1)."""


def game_loss(game: Game, predict: Predictor) -> float:
    """The mean pairwise log-loss of ``game`` (see the module docstring)."""
    total = 0.0
    pairs = 0
    for i, j in combinations(range(len(game.bots)), 2):
        a, b = game.places[i], game.places[j]
        y = 1.0 if a < b else 0.5 if a == b else 0.0
        p = min(max(predict(game.bots[i], game.bots[j]), CLIP), 1 - CLIP)
        total -= y * math.log(p) + (1 - y) * math.log(1 - p)
        pairs += 1
    return total / pairs


class Model:
    """An incremental rating: predict a pair, rate a game."""

    name = ""

    def predict(self, a: str, b: str) -> float:
        raise NotImplementedError

    def rate(self, game: Game) -> None:
        raise NotImplementedError


class EloModel(Model):
    """The ladder's pairwise Elo (``server/ladder/elo.py``), K = 24 by default."""

    name = "Elo K=24"

    def __init__(self, k: float = elo.DEFAULT_K) -> None:
        self.k = k
        self.ratings: dict[str, elo.Rating] = {}

    def predict(self, a: str, b: str) -> float:
        ra = self.ratings.get(a, elo.Rating()).rating
        rb = self.ratings.get(b, elo.Rating()).rating
        return elo.expected_score(ra, rb)

    def rate(self, game: Game) -> None:
        rated = elo.RatedGame(
            bots=game.bots,
            side_of_seat=tuple(range(len(game.bots))),
            standing=game.places,
            faults=(0,) * len(game.bots),
        )
        self.ratings.update(elo.rate_game(self.ratings, rated, self.k))


class PlackettLuceModel(Model):
    """openskill's Plackett-Luce with its default parameters."""

    name = "openskill PL"

    def __init__(self) -> None:
        self.model = PlackettLuce()
        self.ratings: dict[str, PlackettLuceRating] = {}

    def _rating(self, bot: str) -> PlackettLuceRating:
        if bot not in self.ratings:
            self.ratings[bot] = self.model.rating(name=bot)
        return self.ratings[bot]

    def predict(self, a: str, b: str) -> float:
        return float(self.model.predict_win([[self._rating(a)], [self._rating(b)]])[0])

    def rate(self, game: Game) -> None:
        teams = [[self._rating(bot)] for bot in game.bots]
        new = self.model.rate(teams, ranks=[float(p) for p in game.places])
        for bot, team in zip(game.bots, new, strict=True):
            self.ratings[bot] = team[0]


class PlackettLuceLogisticModel(PlackettLuceModel):
    """The same ratings, predicted by the PL model's own two-side likelihood.

    openskill's ``predict_win`` uses the normal curve ``Phi(d / c)`` (``d`` the difference of
    the mu, ``c = sqrt(2 beta^2 + sigma_a^2 + sigma_b^2)``), but its Plackett-Luce update fits
    the logistic ``1 / (1 + exp(-d / c))``, which is far flatter: this row asks whether the
    ratings or only the prediction formula lose.
    """

    name = "PL logistic"

    def predict(self, a: str, b: str) -> float:
        ra, rb = self._rating(a), self._rating(b)
        c = math.sqrt(2 * self.model.beta**2 + ra.sigma**2 + rb.sigma**2)
        return 1 / (1 + math.exp(-(ra.mu - rb.mu) / c))


@dataclass(frozen=True, slots=True)
class Score:
    model: str
    prequential: float
    held_out: float


def evaluate(make: Callable[[], Model], games: Sequence[Game]) -> Score:
    """Prequential and held-out log-loss of a fresh model of ``make`` on ``games``."""
    model = make()
    losses = []
    for game in games:
        losses.append(game_loss(game, model.predict))
        model.rate(game)
    prequential = sum(losses) / len(losses)
    split = int(TRAIN_SHARE * len(games))
    model = make()
    for game in games[:split]:
        model.rate(game)
    test = games[split:]
    held_out = sum(game_loss(game, model.predict) for game in test) / len(test)
    return Score(model.name, prequential, held_out)


def synthetic(
    sides: int, games: int, bots: int, spread: float, seed: int
) -> tuple[list[Game], dict[str, float]]:
    """Games under Plackett-Luce with true strengths (Elo scale); also the strengths."""
    rng = random.Random(f"rating-models/{seed}/{sides}")
    strength = {f"bot-{i:02d}": rng.gauss(0.0, spread) for i in range(bots)}
    names = sorted(strength)
    scale = math.log(10) / 400
    out = []
    for _ in range(games):
        table = rng.sample(names, sides)
        performance = [strength[b] * scale - math.log(-math.log(rng.random())) for b in table]
        order = sorted(range(sides), key=lambda i: -performance[i])
        places = [0] * sides
        for place, i in enumerate(order):
            places[i] = place
        out.append(Game(tuple(table), tuple(places)))
    return out, strength


@dataclass(frozen=True, slots=True)
class HouseJob:
    index: int
    table: tuple[str, ...]
    seed: int
    samples: int
    max_deals: int


def house_bot(name: str, seed: int, samples: int) -> Bot:
    if name.startswith("search"):
        return SearchBot(seed, max_time=None, max_samples=samples)
    if name.startswith("random"):
        return RandomBot(seed)
    return GreedyBot(seed)


def play_house(job: HouseJob) -> Game | None:
    """Play one Moon game of house bots; None when it runs past the deal cap."""
    game = make_game("moon")
    bots = [
        house_bot(
            name,
            random.Random(f"rating-models/bot/{job.seed}/{job.index}/{s}").getrandbits(32),
            job.samples,
        )
        for s, name in enumerate(job.table)
    ]
    deal = random.Random(f"rating-models/deal/{job.seed}/{job.index}").getrandbits(63)
    result = play_game(game, bots, deal, names=job.table, timer=None, max_deals=job.max_deals)
    if result.result.termination is Termination.ADJUDICATED:
        return None
    outcome = result.outcome
    places = elo.standing(outcome.scores, outcome.winner)
    return Game(job.table, places)


def house_games(
    games: int, seed: int, samples: int, max_deals: int, workers: int
) -> tuple[list[Game], int]:
    """Moon games of house bots at random tables, in order; also how many were left out."""
    rng = random.Random(f"rating-models/house/{seed}")
    jobs = [
        HouseJob(i, tuple(rng.sample(HOUSE_BOTS, 3)), seed, samples, max_deals)
        for i in range(games)
    ]
    with multiprocessing.Pool(workers) as pool:
        played = pool.map(play_house, jobs, chunksize=4)
    kept = [g for g in played if g is not None]
    return kept, len(played) - len(kept)


def report(name: str, games: Sequence[Game], truth: dict[str, float] | None) -> str:
    """Print a dataset's table; return its one-line verdict."""
    scores = [
        evaluate(EloModel, games),
        evaluate(PlackettLuceModel, games),
        evaluate(PlackettLuceLogisticModel, games),
    ]
    print(f"\n{name}: {len(games)} games, {len({b for g in games for b in g.bots})} bots")
    print(f"  {'model':<14} {'prequential':>11} {'held-out':>9}")
    for s in scores:
        print(f"  {s.model:<14} {s.prequential:>11.4f} {s.held_out:>9.4f}")
    if truth is not None:
        floor = [game_loss(g, lambda a, b: elo.expected_score(truth[a], truth[b])) for g in games]
        held = floor[int(TRAIN_SHARE * len(games)) :]
        print(f"  {'truth':<14} {sum(floor) / len(floor):>11.4f} {sum(held) / len(held):>9.4f}")
    print(f"  {'coin (p = 1/2)':<14} {math.log(2):>11.4f} {math.log(2):>9.4f}")
    eloscore, pl, logistic = scores
    ranked = sorted(scores, key=lambda s: s.held_out)
    verdict = (
        f"{name}: held-out {ranked[0].model} wins by {ranked[1].held_out - ranked[0].held_out:.4f}"
        f" nats/pair over {ranked[1].model} (Elo {eloscore.held_out:.4f}, PL {pl.held_out:.4f},"
        f" PL logistic {logistic.held_out:.4f}); prequential Elo {eloscore.prequential:.4f},"
        f" PL {pl.prequential:.4f}, PL logistic {logistic.prequential:.4f}"
    )
    print("  " + verdict, flush=True)
    return verdict


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=3000, help="games per synthetic dataset")
    parser.add_argument("--house-games", type=int, default=600, help="Moon house-bot games")
    parser.add_argument("--quick", action="store_true", help="800 synthetic, 150 Moon games")
    parser.add_argument("--bots", type=int, default=16, help="bots per synthetic dataset")
    parser.add_argument("--spread", type=float, default=150.0, help="sd of true strength (Elo)")
    parser.add_argument("--samples", type=int, default=2, help="the search bot's samples/move")
    parser.add_argument("--max-deals", type=int, default=200, help="Moon deal cap per game")
    parser.add_argument("--no-house", action="store_true", help="skip the house-bot games")
    parser.add_argument("--workers", type=int, default=2, help="processes for the Moon games")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    games = 800 if args.quick else args.games
    house = 150 if args.quick else args.house_games
    began = time.perf_counter()
    print(
        f"incremental ratings: mean pairwise log-loss (nats, lower is better), seed {args.seed}; "
        f"held-out = last {1 - TRAIN_SHARE:.0%} with ratings frozen after the first "
        f"{TRAIN_SHARE:.0%}"
    )
    verdicts = []
    for sides in (2, 3, 4):
        data, truth = synthetic(sides, games, args.bots, args.spread, args.seed)
        verdicts.append(report(f"PL {sides} sides", data, truth))
    if not args.no_house:
        data, left_out = house_games(house, args.seed, args.samples, args.max_deals, args.workers)
        name = f"Moon house bots ({left_out} games past {args.max_deals} deals left out)"
        verdicts.append(report(name, data, None))
    print(f"\nsummary ({time.perf_counter() - began:.0f}s):")
    for verdict in verdicts:
        print("  " + verdict)
    return 0


if __name__ == "__main__":
    sys.exit(main())

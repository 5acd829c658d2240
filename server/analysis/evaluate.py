"""One decision evaluated: every legal action played out on the same sampled deals.

The evaluation sees the deciding seat's :class:`~domino_arena.sdk.rules.Observation` and
nothing else: the deals it plays out come from a *sampler* built from that observation (the
search bot's :func:`~domino_arena.bots.search.sampling.determinizer` by default), so what the
seat could not know cannot leak into the verdict (``tests/analysis/test_hidden.py`` plants a
leak and shows the check catches it).

Each sample is one deal consistent with the observation, made into a push/pop simulator; every
legal action is pushed on it, the deal is played out by the house greedy policy with the same
playout seed for every action (common random numbers, as the search bot does), scored, and
popped back. Samples are drawn in batches until the standard error of the paired difference
that decides the verdict is within the stated precision, or the sample budget is spent
(docs/analysis.md: precision).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from domino_arena.bots.search.playout import SIM_POLICIES, play_out_sim
from domino_arena.bots.search.sampling import Hidden, determinizer
from domino_arena.bots.search.worlds import sim_of
from domino_arena.sdk.rules import TERMINAL, Action, Observation
from domino_arena.sdk.rules.sim import Sim

from .scale import Scale, scale_of, win_chance

BATCH: Final = 16
"""Samples drawn between two checks of the stopping rule."""

POLICY: Final = "greedy"
"""The playout policy: every seat after the decision plays as the house greedy bot."""


class WorldSampler(Protocol):
    """Deals the tiles one seat cannot see (a search bot's :class:`.Determinizer`)."""

    def sample(self, rng: random.Random) -> Hidden:
        """Return one guess at every hand and the stock, consistent with the observation."""
        ...


SamplerFactory = Callable[[Observation], WorldSampler]
"""Builds the sampler of a decision from the deciding seat's observation alone."""


@dataclass(frozen=True, slots=True)
class Budget:
    """How hard to look at one decision."""

    precision: float
    """Target standard error, in points, of the difference that decides the verdict."""
    max_samples: int
    min_samples: int

    def __post_init__(self) -> None:
        if not (self.precision > 0 and math.isfinite(self.precision)):
            raise ValueError(
                f"precision: expected a positive number of points, got {self.precision}"
            )
        if self.min_samples < 2:
            raise ValueError(f"min_samples: expected 2 or more, got {self.min_samples}")
        if self.max_samples < self.min_samples:
            raise ValueError(
                f"max_samples: expected at least min_samples ({self.min_samples}), "
                f"got {self.max_samples}"
            )


@dataclass(frozen=True, slots=True)
class Evaluation:
    """Every legal action's mean value at one decision, and how sure the verdict is."""

    actions: tuple[Action, ...]
    points: tuple[float, ...]
    """Mean points of the deal (the side's gain minus the best other side's) per action."""
    wins: tuple[float, ...]
    """Mean estimated chance of winning the game per action."""
    best: int
    """Index of the action with the most expected points (the lowest index on a tie)."""
    chosen: int
    stderr: float
    """Standard error of the difference the stopping rule watched (docs/analysis.md)."""
    samples: int

    @property
    def loss_points(self) -> float:
        return max(0.0, self.points[self.best] - self.points[self.chosen])

    @property
    def loss_win(self) -> float:
        return max(0.0, self.wins[self.best] - self.wins[self.chosen])


def evaluate(
    observation: Observation,
    chosen: Action,
    rng: random.Random,
    budget: Budget,
    sampler: SamplerFactory = determinizer,
) -> Evaluation:
    """Evaluate ``chosen`` against every legal action of ``observation`` (the seat to move's).

    Raises:
        ValueError: ``chosen`` is not one of the observation's legal actions, or the
            observation's seat is not the one to move.
    """
    legal = observation.legal_actions
    if observation.seat != observation.current_seat or not legal:
        raise ValueError(
            f"observation: seat {observation.seat} is not to move "
            f"(seat {observation.current_seat} is)"
        )
    if chosen not in legal:
        raise ValueError(f"chosen: '{chosen}' is not a legal action here")
    game = observation.game
    scale = scale_of(game.name)
    side = game.side_of(observation.seat)
    worlds = sampler(observation)
    policy = SIM_POLICIES[POLICY]
    index = legal.index(chosen)
    points: list[list[float]] = [[] for _ in legal]
    wins: list[list[float]] = [[] for _ in legal]
    while True:
        for _ in range(BATCH):
            sim = sim_of(observation, worlds.sample(rng))
            playout_seed = rng.getrandbits(64)
            for i, action in enumerate(legal):
                sim.push(action)
                pushed = play_out_sim(sim, policy, random.Random(playout_seed))
                p, w = _score(sim, side, observation.scores, scale)
                points[i].append(p)
                wins[i].append(w)
                for _ in range(pushed + 1):
                    sim.pop()
        n = len(points[0])
        means = [sum(column) / n for column in points]
        best = max(range(len(legal)), key=lambda i: (means[i], -i))
        other = index if index != best else _runner_up(means, best)
        stderr = _paired_stderr(points[best], points[other])
        if n >= budget.min_samples and (stderr <= budget.precision or n >= budget.max_samples):
            break
        if n >= budget.max_samples:
            break
    return Evaluation(
        actions=legal,
        points=tuple(means),
        wins=tuple(sum(column) / n for column in wins),
        best=best,
        chosen=index,
        stderr=stderr,
        samples=n,
    )


def _score(sim: Sim, side: int, before: Sequence[int], scale: Scale) -> tuple[float, float]:
    """The deal's points for ``side`` (its gain minus the best other side's) and its chance of
    winning the game: 1 or 0 when the deal ended it, else the model of :mod:`.scale`."""
    scores = sim.scores
    gains = [now - then for now, then in zip(scores, before, strict=True)]
    points = float(gains[side] - max(g for s, g in enumerate(gains) if s != side))
    if sim.seat == TERMINAL and sim.winner is not None:
        return points, 1.0 if sim.winner == side else 0.0
    return points, win_chance(scores, side, sim.game.target, scale)


def _runner_up(means: Sequence[float], best: int) -> int:
    """The action with the most expected points after ``best`` (itself when it is alone)."""
    others = [i for i in range(len(means)) if i != best]
    if not others:
        return best
    return max(others, key=lambda i: (means[i], -i))


def _paired_stderr(a: Sequence[float], b: Sequence[float]) -> float:
    """Standard error of the mean of ``a[k] - b[k]``."""
    n = len(a)
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    mean = sum(diffs) / n
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    return math.sqrt(var / n)

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


PRUNE_Z: Final = 4.0
"""An action neither chosen nor best stops being played out once the best leads it by more than
this many standard errors of their paired difference (docs/analysis.md: precision)."""


class Sampling:
    """One decision's samples so far, drawn on demand: what :func:`evaluate` runs to one
    decision's precision and :func:`.allocate.allocate` shares out across a game's decisions.

    Every sample plays out every *active* action on one sampled deal with one playout seed. An
    action that is not one of the verdict's pair (the best and the chosen action, or the best
    and the runner-up when they are the same) and trails the best by more than
    :data:`PRUNE_Z` paired standard errors is retired: its value stays the mean of the samples
    it had, and no later sample plays it (a sample's draws from ``rng`` do not depend on which
    actions are played, so the others see the same deals). Should a retired action become one
    of the pair (the pair's means fell below its own), it is played again from the next
    sample, so the verdict's standard error keeps falling with the samples.
    """

    def __init__(
        self,
        observation: Observation,
        chosen: Action,
        rng: random.Random,
        sampler: SamplerFactory = determinizer,
    ) -> None:
        legal = observation.legal_actions
        if observation.seat != observation.current_seat or not legal:
            raise ValueError(
                f"observation: seat {observation.seat} is not to move "
                f"(seat {observation.current_seat} is)"
            )
        if chosen not in legal:
            raise ValueError(f"chosen: '{chosen}' is not a legal action here")
        self._observation = observation
        self._legal = legal
        self._chosen = legal.index(chosen)
        self._rng = rng
        game = observation.game
        self._scale = scale_of(game.name)
        self._side = game.side_of(observation.seat)
        self._worlds = sampler(observation)
        self._policy = SIM_POLICIES[POLICY]
        k = len(legal)
        self._counts = [0] * k
        self._points = [0.0] * k
        self._wins = [0.0] * k
        self._pairs = {(i, j): _Paired() for i in range(k) for j in range(i + 1, k)}
        """The paired difference of every two actions over the samples both were played on."""
        self._active = list(range(k))
        self.samples = 0
        self.best = self._chosen
        self.stderr = math.inf
        """Standard error of the difference that decides the verdict (inf before 2 samples)."""

    @property
    def cost(self) -> int:
        """Playouts one more sample costs (its actions still played)."""
        return len(self._active)

    def draw(self, count: int) -> None:
        """Play ``count`` more samples, then retire the actions out of contention and update
        :attr:`best` and :attr:`stderr`."""
        observation, legal, rng, active = self._observation, self._legal, self._rng, self._active
        pairs = [(i, j, self._pairs[i, j]) for i in active for j in active if i < j]
        values = [0.0] * len(legal)
        for _ in range(count):
            sim = sim_of(observation, self._worlds.sample(rng))
            playout_seed = rng.getrandbits(64)
            for i in active:
                sim.push(legal[i])
                pushed = play_out_sim(sim, self._policy, random.Random(playout_seed))
                p, w = _score(sim, self._side, observation.scores, self._scale)
                values[i] = p
                self._points[i] += p
                self._wins[i] += w
                self._counts[i] += 1
                for _ in range(pushed + 1):
                    sim.pop()
            for i, j, paired in pairs:
                paired.add(values[i] - values[j])
        self.samples += count
        means = self._means(self._points)
        self.best = best = max(range(len(legal)), key=lambda i: (means[i], -i))
        other = self._chosen if self._chosen != best else _runner_up(means, best)
        self.stderr = self._stderr(best, other)
        self._active = [
            i
            for i in range(len(legal))
            if i in (best, self._chosen, other)
            or (
                i in active
                and (
                    self.samples < BATCH
                    or means[best] - means[i] <= PRUNE_Z * self._stderr(best, i)
                )
            )
        ]

    def _stderr(self, a: int, b: int) -> float:
        return 0.0 if a == b else self._pairs[min(a, b), max(a, b)].stderr()

    def run(self, budget: Budget) -> Evaluation:
        """Sample to ``budget.precision`` or ``budget.max_samples``, whichever comes first."""
        self.draw(max(0, budget.min_samples - self.samples))
        while self.stderr > budget.precision and self.samples < budget.max_samples:
            self.draw(min(BATCH, budget.max_samples - self.samples))
        return self.evaluation()

    def evaluation(self) -> Evaluation:
        """The values as they stand."""
        return Evaluation(
            actions=self._legal,
            points=tuple(self._means(self._points)),
            wins=tuple(self._means(self._wins)),
            best=self.best,
            chosen=self._chosen,
            stderr=self.stderr,
            samples=self.samples,
        )

    def _means(self, sums: Sequence[float]) -> list[float]:
        return [s / n if n else 0.0 for s, n in zip(sums, self._counts, strict=True)]


class _Paired:
    """Running moments of one paired difference (shifted by its first value, so the variance
    does not cancel catastrophically when the difference is large and steady)."""

    __slots__ = ("n", "shift", "squares", "total")

    def __init__(self) -> None:
        self.n = 0
        self.shift = 0.0
        self.total = 0.0
        self.squares = 0.0

    def add(self, d: float) -> None:
        if self.n == 0:
            self.shift = d
        d -= self.shift
        self.n += 1
        self.total += d
        self.squares += d * d

    def stderr(self) -> float:
        """Standard error of the difference's mean; inf below two samples."""
        n = self.n
        if n < 2:
            return math.inf
        var = max(0.0, (self.squares - self.total * self.total / n) / (n - 1))
        return math.sqrt(var / n)


def evaluate(
    observation: Observation,
    chosen: Action,
    rng: random.Random,
    budget: Budget,
    sampler: SamplerFactory = determinizer,
) -> Evaluation:
    """Evaluate ``chosen`` against every legal action of ``observation`` (the seat to move's),
    sampling until the verdict's standard error is within ``budget.precision`` or the budget
    is spent.

    Raises:
        ValueError: ``chosen`` is not one of the observation's legal actions, or the
            observation's seat is not the one to move.
    """
    return Sampling(observation, chosen, rng, sampler).run(budget)


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

"""The search house bot: determinized Monte Carlo search over the tiles it cannot see.

For each move it samples complete deals consistent with its observation
(:mod:`.sampling`), tries every legal action in each, finishes the deal with a fast default
policy (:mod:`.playout`, the greedy bot by default) and plays the action with the best total
value over all samples: its side's points minus the best other side's, plus a bonus for
winning the game. Every action is tried on the same samples with the same playout seed, so
the comparison between actions is not drowned in the noise of the deal. Each sample is one
push/pop simulator (:mod:`domino_arena.sdk.rules.sim`): push an action, play the deal out,
score, pop back; ``engine="immutable"`` runs the same search on immutable states instead, as it
did before the simulator (the same choices, about half the samples in the same time).

It thinks for at most ``max_time`` seconds per move and at most ``max_samples`` samples; with
``max_time=None`` and a fixed ``max_samples`` its choice depends only on its seed and the
observation, which makes evaluations reproducible. A forced move is answered at once.

>>> from domino_arena.sdk.rules import make_game
>>> state = make_game("passing").new_game(seed=3)
>>> bot = SearchBot(seed=1, max_time=None, max_samples=4)
>>> bot.choose(state.observe(state.current_seat)) in state.legal_actions()
True
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from typing import Final, Protocol

from domino_arena.bots.greedy import strategy
from domino_arena.bots.seeded import SeededBot
from domino_arena.sdk.rules import Action, GameState, Observation
from domino_arena.sdk.rules.sim import Sim, simulate

from .playout import POLICIES, SIM_POLICIES, play_out, play_out_sim, side_value, sim_value
from .sampling import Determinizer, determinizer
from .worlds import sim_of

__all__ = ["ENGINES", "Sampler", "SearchBot"]

ENGINES: Final = ("sim", "immutable")
"""Where playouts run: the push/pop simulator, or the immutable engine (the search before it
had a simulator, kept as the baseline of ``bench/search_strength.py``)."""

TIME_SHARE: Final = 0.9
"""Part of ``max_time`` spent sampling; the rest covers the last sample's overrun and the pick."""


class Sampler(Protocol):
    """Where the search takes its complete positions from (a :class:`.Determinizer`)."""

    def determinize(self, rng: random.Random) -> GameState:
        """Return one full position consistent with the observation searched."""
        ...


class SearchBot(SeededBot):
    """Flat Monte Carlo search over sampled deals; deterministic for a seed and sample budget.

    Args:
        seed: seeds every sample and playout, together with the observation.
        max_time: seconds of thinking per move; None for no time limit.
        max_samples: sampled deals per move; None for as many as ``max_time`` allows.
        policy: the playout policy, ``"greedy"`` or ``"random"``.
        prior_z: keep the greedy bot's choice unless the best action beats it by this many
            standard errors (0 always takes the best mean).
        timer: the clock that ``max_time`` is measured with.
        engine: ``"sim"`` plays out on the push/pop simulator; ``"immutable"`` on the engine's
            immutable states, as the search did before (same choices for the same seed and
            samples, only slower).

    Raises:
        ValueError: neither limit is set, a limit is not positive, or the policy or engine is
            unknown.
    """

    name = "search"

    def __init__(
        self,
        seed: int,
        max_time: float | None = 0.2,
        max_samples: int | None = None,
        *,
        policy: str = "greedy",
        prior_z: float = 1.0,
        timer: Callable[[], float] = time.perf_counter,
        engine: str = "sim",
    ) -> None:
        if max_time is None and max_samples is None:
            raise ValueError("search: set max_time, max_samples or both, or it never stops")
        if max_time is not None and max_time <= 0:
            raise ValueError(f"search: max_time must be positive, got {max_time}")
        if max_samples is not None and max_samples < 1:
            raise ValueError(f"search: max_samples must be 1 or more, got {max_samples}")
        if policy not in POLICIES:
            raise ValueError(f"search: unknown policy '{policy}' (known: {', '.join(POLICIES)})")
        if engine not in ENGINES:
            raise ValueError(f"search: unknown engine '{engine}' (known: {', '.join(ENGINES)})")
        super().__init__(seed)
        self.max_time = max_time
        self.max_samples = max_samples
        self.policy = POLICIES[policy]
        self.sim_policy = SIM_POLICIES[policy]
        self.engine = engine
        self.prior_z = prior_z
        self.timer = timer
        self.samples_last_move = 0
        """Deals sampled for the last searched move (0 for a forced one)."""

    def choose(self, observation: Observation) -> Action:
        if len(observation.legal_actions) == 1:
            self.samples_last_move = 0
            return observation.legal_actions[0]
        return self.choose_with(observation, determinizer(observation))

    def choose_with(self, observation: Observation, sampler: Sampler) -> Action:
        """Search the positions ``sampler`` deals (the honest bot: its observation's
        :class:`.Determinizer`) and return the best legal action."""
        legal = observation.legal_actions
        if len(legal) == 1:
            self.samples_last_move = 0
            return legal[0]
        began = self.timer()
        rng = random.Random(f"domino-arena/search/{self.seed}/{_key(observation)}")
        values = self._search(observation, sampler, rng, began)
        default = legal.index(strategy(observation.game.name)(observation, rng))
        return legal[_pick(values, default, self.prior_z)]

    def _search(
        self, observation: Observation, sampler: Sampler, rng: random.Random, began: float
    ) -> list[list[float]]:
        """Return each sample's playout value of every legal action, for as many as fit."""
        legal = observation.legal_actions
        side = observation.game.side_of(observation.seat)
        before = observation.scores
        values: list[list[float]] = []
        samples = 0
        deadline = None if self.max_time is None else began + TIME_SHARE * self.max_time
        # The honest sampler's deal goes straight into a simulator (.worlds); any other sampler
        # (the memorizer's) gives a state. Either way the generator is drawn from alike.
        direct = (
            sampler
            if self.engine == "sim"
            and isinstance(sampler, Determinizer)
            and type(sampler).determinize is Determinizer.determinize
            else None
        )
        while self.max_samples is None or samples < self.max_samples:
            row: list[float]
            if direct is not None:
                sim = sim_of(observation, direct.sample(rng))
                playout_seed = rng.getrandbits(64)
                row = self._sample_values(sim, legal, side, before, playout_seed)
            else:
                world = sampler.determinize(rng)
                playout_seed = rng.getrandbits(64)
                if self.engine == "sim":
                    row = self._sample_values(simulate(world), legal, side, before, playout_seed)
                else:
                    row = [
                        side_value(
                            play_out(world.apply(action), self.policy, random.Random(playout_seed)),
                            side,
                            before,
                        )
                        for action in legal
                    ]
            values.append(row)
            samples += 1
            if self._out_of_time(began, samples, deadline):
                break
        self.samples_last_move = samples
        return values

    def _out_of_time(self, began: float, samples: int, deadline: float | None) -> bool:
        """Whether one more sample, as long as the average so far, would run over."""
        if deadline is None:
            return False
        now = self.timer()
        return now + (now - began) / samples > deadline

    def _sample_values(
        self,
        sim: Sim,
        legal: Sequence[Action],
        side: int,
        before: Sequence[int],
        playout_seed: int,
    ) -> list[float]:
        """Try each action on the simulator of a sample: push it, play the deal out with the
        same playout seed, score, and pop back to the sampled position."""
        values: list[float] = []
        for action in legal:
            sim.push(action)
            pushed = play_out_sim(sim, self.sim_policy, random.Random(playout_seed))
            values.append(sim_value(sim, side, before))
            for _ in range(pushed + 1):
                sim.pop()
        return values


def _pick(values: list[list[float]], default: int, z: float) -> int:
    """Return the action with the best mean value, unless it is not clearly better.

    The greedy choice ``default`` is kept unless the best action beats it by more than ``z``
    standard errors of the paired difference: when the samples cannot tell two actions apart,
    the rule of thumb is a better guide than the noise.
    """
    n = len(values)
    count = len(values[0])
    means = [sum(v[i] for v in values) / n for i in range(count)]
    best = max(range(count), key=lambda i: (means[i], -i))
    if best == default or n < 2 or z <= 0:
        return best
    diffs = [v[best] - v[default] for v in values]
    mean = sum(diffs) / n
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    return best if mean > z * math.sqrt(var / n) else default


def _key(observation: Observation) -> str:
    """A text that identifies the observation, stable across processes (no ``hash()``)."""
    return repr(
        (
            observation.game,
            observation.seat,
            observation.deal,
            observation.scores,
            observation.hand,
            observation.history,
            observation.legal_actions,
        )
    )

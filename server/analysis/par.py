"""A hand's par: its deal played with every tile known (double dummy), each side at its best.

From the position at the start of a hand (all hands, the boneyard's order and Moon's widow
known), the push/pop simulator is searched to the end of the deal:

- **Two sides** (two players, or two partnerships): minimax with alpha-beta on the margin
  ``gain(side 0) - gain(side 1)``; exact when the whole tree fits the node budget.
- **Three or more sides** (Moon, the line games played individually by 3 or 4): max-n, each
  mover maximising its own side's gain minus the best other side's, ties going to the first
  action in the engine's order. Max-n has no safe pruning, so only small endings are exact.

The search counts the positions it expands; past ``nodes`` it stops expanding and finishes
each remaining line with the house greedy policy, and the par is marked ``exact=False``: the
best line found, not a proof (docs/analysis.md: par).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Final

from domino_arena.bots.search.playout import SIM_POLICIES, play_out_sim
from domino_arena.sdk.rules import CHANCE, GameState
from domino_arena.sdk.rules.sim import Sim, simulate

from .report import HandPar

DEFAULT_NODES: Final = 20_000
"""Positions expanded per hand before the search falls back to greedy play."""

Line = tuple[float, tuple[int, ...]]
"""A line's value for the side choosing, and every side's gain at its end."""


def hand_pars(states: Sequence[GameState], nodes: int = DEFAULT_NODES) -> tuple[HandPar, ...]:
    """The par of every finished hand of a replayed match (``states[i]``: after ``i`` steps)."""
    if nodes < 1:
        raise ValueError(f"par_nodes: expected 1 or more, got {nodes}")
    results = states[-1].hand_results
    pars: list[HandPar] = []
    for i, state in enumerate(states):
        starts = i == 0 or states[i - 1].current_seat == CHANCE
        if not starts or state.current_seat < 0:
            continue
        hand = state.deal_number
        if hand > len(results):
            continue
        par, exact = hand_par(state, nodes)
        pars.append(HandPar(hand=hand, par=par, actual=results[hand - 1].scored, exact=exact))
    return tuple(pars)


def hand_par(state: GameState, nodes: int = DEFAULT_NODES) -> tuple[tuple[int, ...], bool]:
    """Every side's points under double-dummy play of the rest of ``state``'s deal, and
    whether the search was exhaustive."""
    search = _Search(simulate(state), nodes, random.Random(f"domino-arena/par/{state.deal_number}"))
    _, gains = search.two_sides() if len(state.scores) == 2 else search.max_n()
    return gains, search.exact


class _Search:
    def __init__(self, sim: Sim, nodes: int, rng: random.Random) -> None:
        self.sim = sim
        self.before = sim.scores
        self.budget = nodes
        self.nodes = 0
        self.exact = True
        self.rng = rng
        self.policy = SIM_POLICIES["greedy"]

    def _gains(self) -> tuple[int, ...]:
        return tuple(now - then for now, then in zip(self.sim.scores, self.before, strict=True))

    def _finish(self) -> tuple[int, ...]:
        """Play the rest with the greedy policy (the budget is spent) and take it back."""
        self.exact = False
        pushed = play_out_sim(self.sim, self.policy, self.rng)
        gains = self._gains()
        for _ in range(pushed):
            self.sim.pop()
        return gains

    def _leaf(self) -> tuple[int, ...] | None:
        sim = self.sim
        if sim.seat < 0:
            return self._gains()
        if self.nodes >= self.budget:
            return self._finish()
        self.nodes += 1
        return None

    def two_sides(self, alpha: float = float("-inf"), beta: float = float("inf")) -> Line:
        """Alpha-beta on side 0's margin; returns (margin, gains) of the principal line."""
        leaf = self._leaf()
        if leaf is not None:
            return float(leaf[0] - leaf[1]), leaf
        sim = self.sim
        maximizing = sim.side[sim.seat] == 0
        best: Line | None = None
        for action in sim.legal_actions():
            sim.push(action)
            line = self.two_sides(alpha, beta)
            sim.pop()
            if best is None or (line[0] > best[0] if maximizing else line[0] < best[0]):
                best = line
            if maximizing:
                alpha = max(alpha, line[0])
            else:
                beta = min(beta, line[0])
            if alpha >= beta:
                break
        assert best is not None
        return best

    def max_n(self) -> Line:
        """Max-n: each mover takes the line best for its own side's margin."""
        leaf = self._leaf()
        if leaf is not None:
            return 0.0, leaf
        sim = self.sim
        side = sim.side[sim.seat]
        best: Line | None = None
        for action in sim.legal_actions():
            sim.push(action)
            _, gains = self.max_n()
            sim.pop()
            value = float(gains[side] - max(g for s, g in enumerate(gains) if s != side))
            if best is None or value > best[0]:
                best = (value, gains)
        assert best is not None
        return best

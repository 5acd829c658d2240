"""Seeded positions of every kind of decision, for the compliance check (:mod:`.testing`).

A position is a state with a seat to move, found by a seeded random playout; the same
arguments always give the same positions, so a failure the check reports can be rebuilt.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from .rules import Game, GameState

PER_PLAYOUT: Final = 5
"""Positions per random playout: ``count`` positions come from ``count / 5`` playouts."""


@dataclass(frozen=True, slots=True)
class Position:
    """A position to ask about: a state with a seat to move, and where it came from."""

    id: str
    """Unique within a check, e.g. ``"passing-3p/7"``."""
    state: GameState
    seed: int
    """The seed of the playout's game."""
    step: int
    """Actions applied to ``game.new_game(seed)`` (deals included) to reach the position."""

    def describe(self) -> str:
        seat = self.state.current_seat
        hand = " ".join(str(tile) for tile in self.state.hand(seat)) or "empty"
        return (
            f"position {self.id} (game seed {self.seed}, step {self.step}, deal "
            f"{self.state.deal_number}, seat {seat} to move, hand {hand})"
        )


def label(game: Game) -> str:
    """A short name for a configuration: ``passing-4p``, ``straight-4p-teams``, ``moon``."""
    if game.name == "moon":
        return "moon"
    teams = "-teams" if len(game.sides) != game.num_players else ""
    return f"{game.name}-{game.num_players}p{teams}"


def sample_positions(game: Game, count: int, seed: int) -> list[Position]:
    """Return ``count`` positions of ``game`` from seeded random playouts.

    The first is the first decision of a new game. Then comes one position of every kind of
    decision the playouts met (the set of action types that are legal: bidding, discarding,
    naming trumps, playing, drawing, passing...), so rare kinds are asked about too, and the
    rest are drawn at random. The same arguments always give the same positions, so
    ``sample_positions(game, count, seed)[n]`` rebuilds position ``n`` of a report.
    """
    name = label(game)
    rng = random.Random(f"domino-arena/check/{name}/{seed}")
    pool: list[tuple[int, int, GameState]] = []
    for _ in range(max(1, -(-(count - 1) // PER_PLAYOUT))):
        game_seed = rng.getrandbits(32)
        pool += [(game_seed, step, state) for step, state in _decisions(game, game_seed, rng)]
    chosen = [0][:count]
    kinds: dict[tuple[str, ...], list[int]] = {}
    for index, (_, _, state) in enumerate(pool):
        kinds.setdefault(_kind(state), []).append(index)
    for indices in kinds.values():
        options = [i for i in indices if i not in chosen]
        if len(chosen) < count and options:
            chosen.append(rng.choice(options))
    taken = set(chosen)
    rest = [i for i in range(len(pool)) if i not in taken]
    chosen += rng.sample(rest, min(count - len(chosen), len(rest)))
    return [
        Position(f"{name}/{n}", pool[i][2], pool[i][0], pool[i][1]) for n, i in enumerate(chosen)
    ]


def _kind(state: GameState) -> tuple[str, ...]:
    """The kind of decision: the names of the action types that are legal, e.g. (bid, pass)."""
    return tuple(sorted({type(action).__name__.lower() for action in state.legal_actions()}))


def _decisions(game: Game, seed: int, rng: random.Random) -> Iterator[tuple[int, GameState]]:
    """Yield every state of a random playout where a seat is to move, with its step number."""
    state = game.new_game(seed)
    step = 0
    while not state.is_terminal():
        if not state.is_chance():
            yield step, state
        state = state.apply(rng.choice(state.legal_actions()))
        step += 1

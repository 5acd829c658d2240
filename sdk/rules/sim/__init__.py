"""A fast, mutable simulator of one deal, with undo, for search (docs/decisions.md: decision 4).

The immutable engine (:meth:`GameState.apply`) copies the state on every move so that a position
can be shared; a search that tries thousands of moves a second does not need that. A
:class:`Sim` is built from any state, plays actions in place and takes them back, in the style
of python-chess's ``Board.push``/``pop``:

>>> from domino_arena.sdk.rules import make_game
>>> state = make_game("passing").new_game(seed=3)
>>> sim = simulate(state)
>>> before = sim.snapshot()
>>> for action in sim.legal_actions():
...     sim.push(action)      # try it...
...     _ = sim.pop()         # ...and take it back
>>> sim.snapshot() == before == snapshot_of(state)
True

It plays to the end of the state's deal (``current_seat`` then ``CHANCE`` or ``TERMINAL``); the
next deal comes from the engine. :meth:`Sim.push` trusts its caller, :meth:`Sim.push_checked`
checks; tests play thousands of random games on both and compare every step
(``tests/rules/test_sim_differential.py``).

Each game's simulator registers itself in :data:`SIMULATORS` under the game's registry name
(its class sets ``game_name``); everything here and in search dispatches through that table,
so a new game adds its simulator module and its import below, and nothing else changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..state import GameState, Observation
from ..tiles import Tile
from .base import SIMULATORS, Sim
from .line import DoublesSim, PassingSim
from .moon import MoonSim
from .straight import StraightSim

__all__ = [
    "SIMULATORS",
    "DoublesSim",
    "MoonSim",
    "PassingSim",
    "Sim",
    "StraightSim",
    "simulate",
    "simulate_observation",
    "simulator_of",
    "snapshot_of",
]


def simulator_of(game_name: str) -> type[Sim]:
    """Return the simulator class of the game called ``game_name``.

    Raises:
        TypeError: no simulator is registered for that game.
    """
    try:
        return SIMULATORS[game_name]
    except KeyError:
        known = ", ".join(sorted(SIMULATORS))
        raise TypeError(f"no simulator for game '{game_name}' (simulators: {known})") from None


def simulate(state: GameState) -> Sim:
    """Return a new simulator at ``state`` (which is left as it is)."""
    return simulator_of(state.game.name)(state)


def simulate_observation(
    observation: Observation, hands: Sequence[Sequence[Tile]], stock: Sequence[Tile]
) -> Sim:
    """Return the simulator of ``observation`` with the hidden tiles filled in: every seat's
    ``hands`` and the ``stock`` (see :meth:`Sim.from_observation`)."""
    return simulator_of(observation.game.name).from_observation(observation, hands, stock)


def snapshot_of(state: GameState) -> tuple[Any, ...]:
    """Return what :meth:`Sim.snapshot` returns for a simulator at ``state``.

    Made from the engine's own fields, not through a simulator, so a test comparing the two
    compares two implementations.
    """
    return simulator_of(state.game.name).snapshot_of(state)

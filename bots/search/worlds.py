"""A sampled deal straight into a simulator, skipping the engine's checked ``from_position``.

:meth:`.Determinizer.build` makes an immutable state of a sample through ``from_position``,
which checks every field (each tile once, the layout legal, the bids in order): right for a
position typed by a person, and a third of the search's time in Doubles. A sample is
consistent by construction, so the search builds its simulator from the observation and the
hidden tiles directly, through the game's own simulator (:meth:`Sim.from_observation`, found
by game name). ``tests/bots/test_search_sim.py`` checks that both ways give the same position.
"""

from __future__ import annotations

from domino_arena.sdk.rules import Observation
from domino_arena.sdk.rules.sim import Sim, simulate_observation

from .sampling import Hidden


def sim_of(observation: Observation, hidden: Hidden) -> Sim:
    """Return the simulator of ``observation`` with the hidden tiles of ``hidden`` filled in
    (the position :meth:`.Determinizer.build` would return)."""
    return simulate_observation(observation, hidden.hands, hidden.stock)

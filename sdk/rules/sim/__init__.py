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
"""

from __future__ import annotations

from typing import Any

from ..doubles import DoublesState
from ..moon import MoonState
from ..passing import PassingState
from ..state import GameState
from ..straight import StraightState
from .base import Sim
from .line import DoublesSim, PassingSim
from .moon import MoonSim
from .straight import StraightSim, layout_of

__all__ = ["DoublesSim", "MoonSim", "PassingSim", "Sim", "StraightSim", "simulate", "snapshot_of"]


def simulate(state: GameState) -> Sim:
    """Return a new simulator at ``state`` (which is left as it is)."""
    if isinstance(state, PassingState):
        return PassingSim(state)
    if isinstance(state, StraightState):
        return StraightSim(state)
    if isinstance(state, DoublesState):
        return DoublesSim(state)
    if isinstance(state, MoonState):
        return MoonSim(state)
    raise TypeError(f"no simulator for {type(state).__name__}")


def snapshot_of(state: GameState) -> tuple[Any, ...]:
    """Return what :meth:`Sim.snapshot` returns for a simulator at ``state``.

    Made from the engine's own fields, not through a simulator, so a test comparing the two
    compares two implementations.
    """
    hands = tuple(state.hand(s) for s in range(state.game.num_players))
    outcome = state.outcome()
    winner = None if outcome is None else outcome.winner
    common = (state.current_seat, hands)
    if isinstance(state, PassingState):
        return (
            *common,
            state.boneyard,
            state.scores,
            winner,
            state.line,
            state.ends,
            state.passes,
        )
    if isinstance(state, StraightState):
        layout = layout_of(state.layout)
        ends = tuple(sorted(state.layout.ends))
        return (*common, state.boneyard, state.scores, winner, layout, (ends, state.layout.count))
    if isinstance(state, DoublesState):
        return (
            *common,
            state.boneyard,
            state.scores,
            winner,
            state.placed,
            state.ends,
            state.unlocked,
            state.drawn,
        )
    if isinstance(state, MoonState):
        return (
            *common,
            state.scores,
            winner,
            state.phase,
            state.widow,
            state.discard,
            state.bids,
            state.bidder,
            state.contract,
            state.trump,
            state.leader,
            state.trick,
            state.won,
            tuple(t for trick in state.tricks for _, t in trick.plays),
        )
    raise TypeError(f"no simulator for {type(state).__name__}")

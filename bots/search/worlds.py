"""A sampled deal straight into a simulator, skipping the engine's checked ``from_position``.

:meth:`.Determinizer.build` makes an immutable state of a sample through ``from_position``,
which checks every field (each tile once, the layout legal, the bids in order): right for a
position typed by a person, and a third of the search's time in Doubles. A sample is
consistent by construction, so the search builds its simulator from the observation and the
hidden tiles directly. ``tests/bots/test_search_sim.py`` checks that both ways give the same
position.
"""

from __future__ import annotations

from domino_arena.sdk.rules import (
    DoublesObservation,
    MoonObservation,
    Observation,
    PassingObservation,
    StraightObservation,
)
from domino_arena.sdk.rules.moon import Phase
from domino_arena.sdk.rules.sim import DoublesSim, MoonSim, PassingSim, Sim, StraightSim

from .sampling import Hidden


def sim_of(observation: Observation, hidden: Hidden) -> Sim:
    """Return the simulator of ``observation`` with the hidden tiles of ``hidden`` filled in
    (the position :meth:`.Determinizer.build` would return)."""
    obs = observation
    seat, hands, scores = obs.current_seat, hidden.hands, obs.scores
    if isinstance(obs, PassingObservation):
        return PassingSim.from_parts(
            obs.game,
            seat=seat,
            hands=hands,
            scores=scores,
            boneyard=hidden.stock,
            line=obs.line,
            passes=obs.passes,
        )
    if isinstance(obs, StraightObservation):
        return StraightSim.from_parts(
            obs.game,
            seat=seat,
            hands=hands,
            scores=scores,
            boneyard=hidden.stock,
            layout=obs.layout,
        )
    if isinstance(obs, DoublesObservation):
        return DoublesSim.from_parts(
            obs.game,
            seat=seat,
            hands=hands,
            scores=scores,
            boneyard=hidden.stock,
            placed=obs.placed,
            ends=obs.ends,
            unlocked=obs.unlocked,
            drawn=obs.drawn,
        )
    assert isinstance(obs, MoonObservation)
    mine = obs.bidder == obs.seat
    widow = obs.widow if mine else None
    discard = obs.discard if mine else None
    if obs.phase is Phase.BIDDING:
        widow = hidden.stock[0]
    elif not mine and obs.phase is not Phase.DISCARD:
        discard = hidden.stock[0]
    return MoonSim.from_parts(
        obs.game,
        seat=seat,
        hands=hands,
        scores=scores,
        phase=obs.phase,
        widow=widow,
        discard=discard,
        bids=obs.bids,
        bidder=obs.bidder,
        contract=obs.contract,
        trump=obs.trump,
        leader=obs.leader,
        trick=obs.trick,
        tricks=obs.tricks,
        won=obs.tricks_won,
    )

"""What one seat sees of a Moon position (docs/rules.md 1.14), and how the engine builds it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from .moon_tricks import Trick
from .observing import observation_base
from .slots import slot_setter
from .state import Observation, Phase
from .tiles import Tile

if TYPE_CHECKING:
    from .moon import MoonState


@dataclass(frozen=True, slots=True)
class MoonObservation(Observation):
    """What one seat sees of a Moon position (docs/rules.md 1.14), beyond the common fields."""

    phase: Phase
    bids: tuple[tuple[int, int | None], ...]
    """``(seat, bid)`` for every bidding turn so far in this deal; ``None`` is a pass."""
    bidder: int | None
    contract: int | None
    trump: int | None
    """0-6, ``TRUMP_DOUBLES`` or ``NO_TRUMP``; None until the bidder names it."""
    leader: int | None
    """The leader of the current trick; None outside the tricks."""
    trick: tuple[tuple[int, Tile], ...]
    """``(seat, tile)`` played so far to the current trick."""
    tricks: tuple[Trick, ...]
    """The completed tricks of this deal."""
    tricks_won: tuple[int, ...]
    """Tricks taken by each seat in this deal."""
    discard: Tile | None
    """The bidder's own discard; None for every other seat."""
    widow: Tile | None
    """The widow, known only to the bidder once picked up; None for every other seat."""


_SET_PHASE: Final = slot_setter(MoonObservation, "phase")
_SET_BIDS: Final = slot_setter(MoonObservation, "bids")
_SET_BIDDER: Final = slot_setter(MoonObservation, "bidder")
_SET_CONTRACT: Final = slot_setter(MoonObservation, "contract")
_SET_TRUMP: Final = slot_setter(MoonObservation, "trump")
_SET_LEADER: Final = slot_setter(MoonObservation, "leader")
_SET_TRICK: Final = slot_setter(MoonObservation, "trick")
_SET_TRICKS: Final = slot_setter(MoonObservation, "tricks")
_SET_WON: Final = slot_setter(MoonObservation, "tricks_won")
_SET_DISCARD: Final = slot_setter(MoonObservation, "discard")
_SET_WIDOW: Final = slot_setter(MoonObservation, "widow")


def moon_observation(state: MoonState, seat: int) -> MoonObservation:
    """Return what ``seat`` sees of ``state`` (:meth:`MoonState.observe`)."""
    hands = state.hands
    own = seat == state.bidder
    sizes = (len(hands[0]), len(hands[1]), len(hands[2]))
    made = observation_base(state, MoonObservation, seat, sizes)
    _SET_PHASE(made, state.phase)
    _SET_BIDS(made, state.bids)
    _SET_BIDDER(made, state.bidder)
    _SET_CONTRACT(made, state.contract)
    _SET_TRUMP(made, state.trump)
    _SET_LEADER(made, state.leader)
    _SET_TRICK(made, state.trick)
    _SET_TRICKS(made, state.tricks)
    _SET_WON(made, state.won)
    _SET_DISCARD(made, state.discard if own else None)
    _SET_WIDOW(made, state.widow if own else None)
    return made

"""The fields every game's observation shares, set on a new observation of the game's class.

``observe`` runs on every move of a bot loop; a frozen dataclass's ``__init__`` sets each field
through ``object.__setattr__``, the slot setters (:mod:`.slots`) at a fraction of the cost.
"""

from __future__ import annotations

from typing import Final, TypeVar

from .slots import new_object, slot_setter
from .state import GameState, Observation

_O = TypeVar("_O", bound=Observation)
_GAME: Final = slot_setter(Observation, "game")
_SEAT: Final = slot_setter(Observation, "seat")
_CURRENT: Final = slot_setter(Observation, "current_seat")
_LEGAL: Final = slot_setter(Observation, "legal_actions")
_HAND: Final = slot_setter(Observation, "hand")
_SIZES: Final = slot_setter(Observation, "hand_sizes")
_SCORES: Final = slot_setter(Observation, "scores")
_DEAL: Final = slot_setter(Observation, "deal")
_HISTORY: Final = slot_setter(Observation, "history")
_OPENER: Final = slot_setter(Observation, "opener")


def observation_base(state: GameState, cls: type[_O], seat: int, sizes: tuple[int, ...]) -> _O:
    """Return a new ``cls`` seen by ``seat`` with the fields every observation shares set
    (``hand_sizes`` is ``sizes``); the caller sets the game's own before anyone sees it."""
    made = new_object(cls)
    mover = state.seat
    seated = seat >= 0
    _GAME(made, state.game)
    _SEAT(made, seat)
    _CURRENT(made, mover)
    if seat == mover and seated:
        legal = state._legal
        _LEGAL(made, state.legal_actions() if legal is None else legal)
    else:
        _LEGAL(made, ())
    _HAND(made, state.hands[seat] if seated else ())
    _SIZES(made, sizes)
    _SCORES(made, state.side_scores)
    _DEAL(made, state.deal_index + 1)
    # Only Moon hides steps from some viewers; the other games show every seat the same steps.
    _HISTORY(made, state.deal_history(seat) if state._hides_steps else state._deal_steps)
    _OPENER(made, state.opener)
    return made

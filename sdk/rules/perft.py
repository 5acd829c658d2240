"""Move counting (perft) over the legal-action tree, as python-chess does for chess.

Every step counts, the ``deal`` chance step between hands included (it has exactly one outcome,
fixed by the seed). A finished game has no children.
"""

from __future__ import annotations

from .state import GameState


def perft(state: GameState, depth: int) -> int:
    """Return the number of action sequences of length ``depth`` from ``state``."""
    if depth == 0:
        return 1
    actions = state.legal_actions()
    if depth == 1:
        return len(actions)
    return sum(perft(state.apply(a), depth - 1) for a in actions)


def divide(state: GameState, depth: int) -> dict[str, int]:
    """Return perft(depth - 1) below each legal action, keyed by the action's text."""
    return {str(a): perft(state.apply(a), depth - 1) for a in state.legal_actions()}

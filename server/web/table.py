"""A match's table as plain data: what the replay viewer and the live viewer draw.

:func:`draw_public` draws what everybody may see (a spectator's observation, as the live view
gets it from the referee); :func:`draw_table` draws a recorded match, which has ended, so
everything is shown face up on top of that: every hand, the boneyard, the widow. The
positions come from the rules engine itself: :func:`replay_states` re-runs the record's steps
from its header (``make_game(game, **options).new_game(seed, first_seat=...)``), the same way
:func:`domino_arena.sdk.match.records.replay` checks a record.
"""

from __future__ import annotations

from typing import Any

from domino_arena.sdk.match.records import MatchRecord
from domino_arena.sdk.rules import CHANCE, SPECTATOR, TERMINAL, GameState, Observation, make_game

from .table_games import ARM_NAMES, table_view, tiles

__all__ = ["ARM_NAMES", "draw_public", "draw_table", "hand_starts", "replay_states"]


def replay_states(record: MatchRecord, steps: int) -> GameState:
    """Return the engine's state after the first ``steps`` steps of ``record``.

    Raises:
        ValueError: ``steps`` is out of range, or a step of the record is illegal there (a
            :class:`~domino_arena.sdk.rules.RulesError`, which names the rule).
    """
    if not 0 <= steps <= len(record.steps):
        raise ValueError(f"step: expected 0 to {len(record.steps)}, got {steps}")
    state: GameState = make_game(record.game, **record.options).new_game(
        record.seed, first_seat=record.first_seat
    )
    for step in record.steps[:steps]:
        state = state.apply(step.action)
    return state


def hand_starts(record: MatchRecord) -> list[int]:
    """The step at which each hand's play starts: 0, then just after every ``deal`` step."""
    return [0] + [i + 1 for i, step in enumerate(record.steps) if step.seat == CHANCE]


def draw_table(state: GameState) -> dict[str, Any]:
    """Return everything on the table of ``state``, face up, as JSON-ready data.

    The public part is :func:`draw_public` of the engine's spectator view; on top of it come
    what the match kept hidden while it ran: ``hands`` (per seat), the ``boneyard`` of a line
    game, Moon's ``widow`` and ``discard``, Doubles' ``drawn`` tile.
    """
    table = draw_public(state.observe(SPECTATOR))
    table["hands"] = [tiles(hand) for hand in state.hands]
    table.update(table_view(state.game.name).hidden(state))
    return table


def draw_public(view: Observation) -> dict[str, Any]:
    """Return what everybody may see of a table (a spectator's observation) as JSON-ready data.

    Common keys: ``game``, ``deal``, ``phase``, ``to_move`` (``CHANCE``, -1, when a deal is
    next; None once the game is over), ``scores`` (per side), ``sides`` (the seats of each
    side), ``hand_sizes`` (per seat), ``last`` (the hand's last public move as ``{"seat",
    "action"}``, seat None for the deal; None before any: a discard's tile stays ``?``). Line
    games add ``boneyard_size``; Straight adds ``layout`` (the line, or the spinner and its four
    arms), Doubles ``placed``, ``ends`` and ``unlocked``, Passing ``line`` and ``ends``, Moon the
    auction, trump and tricks.
    No key holds a tile of a hand, the boneyard or the widow: the view has none.
    """
    table: dict[str, Any] = {
        "game": view.game.name,
        "deal": view.deal,
        "phase": None,
        "to_move": None if view.current_seat == TERMINAL else view.current_seat,
        "scores": list(view.scores),
        "sides": [list(side) for side in view.game.sides],
        "hand_sizes": list(view.hand_sizes),
        "last": _last(view),
    }
    table.update(table_view(view.game.name).public(view))
    return table


def _last(view: Observation) -> dict[str, Any] | None:
    """The last public move of the hand (what a spectator saw: a discard names no tile)."""
    if not view.history:
        return None
    entry = view.history[-1]
    return {"seat": None if entry.seat == CHANCE else entry.seat, "action": str(entry.action)}

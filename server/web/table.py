"""A recorded match's table at any step: what the replay viewer draws, as plain data.

The match has ended, so everything is shown face up: every hand, the boneyard, the widow. The
positions come from the rules engine itself: :func:`replay_states` re-runs the record's steps
from its header (``make_game(game, **options).new_game(seed, first_seat=...)``), the same way
:func:`domino_arena.sdk.match.records.replay` checks a record.
"""

from __future__ import annotations

from typing import Any, Final

from domino_arena.sdk.match.records import MatchRecord
from domino_arena.sdk.rules import (
    CHANCE,
    DoublesState,
    GameState,
    MoonState,
    PassingState,
    StraightState,
    Tile,
    Trump,
    make_game,
)
from domino_arena.sdk.rules.linegame import LineGameState

ARM_NAMES: Final = ("W", "E", "N", "S")


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


def _tiles(tiles: tuple[Tile, ...] | list[Tile]) -> list[str]:
    return [str(t) for t in tiles]


def _pairs(pairs: tuple[tuple[int, int], ...]) -> list[dict[str, Any]]:
    """Laid tiles as they lie: the tile, and its text with its numbers in the layout's order."""
    return [{"tile": str(Tile(a, b)), "shown": f"{a}-{b}"} for a, b in pairs]


def _trump_text(trump: int | None) -> str | None:
    return None if trump is None else str(Trump(trump)).removeprefix("trump ")


def draw_table(state: GameState) -> dict[str, Any]:
    """Return everything on the table of ``state``, face up, as JSON-ready data.

    Common keys: ``game``, ``deal``, ``phase``, ``to_move`` (None once over), ``scores`` (per
    side), ``hands`` (per seat). Line games add ``boneyard``; Straight adds ``layout`` (the line,
    or the spinner and its four arms), Doubles ``placed``, ``ends`` and ``unlocked``, Passing
    ``line`` and ``ends``, Moon the auction, widow, discard, trump and tricks.
    """
    table: dict[str, Any] = {
        "game": state.game.name,
        "deal": state.deal_number,
        "phase": state.phase.value,
        "to_move": None if state.is_terminal() else state.current_seat,
        "scores": list(state.scores),
        "hands": [_tiles(hand) for hand in state.hands],
    }
    if isinstance(state, LineGameState):
        table["boneyard"] = _tiles(state.boneyard)
    if isinstance(state, StraightState):
        layout = state.layout
        table["layout"] = {
            "line": _pairs(layout.line),
            "spinner": None if layout.spinner is None else str(Tile(*(layout.spinner,) * 2)),
            "arms": {name: _pairs(arm) for name, arm in zip(ARM_NAMES, layout.arms, strict=True)},
            "count": layout.count,
        }
    elif isinstance(state, DoublesState):
        table["placed"] = _tiles(state.placed)
        table["ends"] = list(state.ends)
        table["unlocked"] = sorted(state.unlocked)
        table["drawn"] = None if state.drawn is None else str(state.drawn)
    elif isinstance(state, PassingState):
        table["line"] = _pairs(state.line)
        table["ends"] = None if state.ends is None else list(state.ends)
    elif isinstance(state, MoonState):
        table.update(
            bids=[{"seat": seat, "bid": bid} for seat, bid in state.bids],
            bidder=state.bidder,
            contract=state.contract,
            trump=_trump_text(state.trump),
            widow=None if state.widow is None else str(state.widow),
            discard=None if state.discard is None else str(state.discard),
            trick=[{"seat": seat, "tile": str(tile)} for seat, tile in state.trick],
            tricks=[
                {
                    "leader": trick.leader,
                    "plays": [{"seat": seat, "tile": str(tile)} for seat, tile in trick.plays],
                    "winner": trick.winner,
                }
                for trick in state.tricks
            ],
            tricks_won=list(state.won),
        )
    return table

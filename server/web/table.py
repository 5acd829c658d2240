"""A match's table as plain data: what the replay viewer and the live viewer draw.

:func:`draw_public` draws what everybody may see (a spectator's observation, as the live view
gets it from the referee); :func:`draw_table` draws a recorded match, which has ended, so
everything is shown face up on top of that: every hand, the boneyard, the widow. The
positions come from the rules engine itself: :func:`replay_states` re-runs the record's steps
from its header (``make_game(game, **options).new_game(seed, first_seat=...)``), the same way
:func:`domino_arena.sdk.match.records.replay` checks a record.
"""

from __future__ import annotations

from typing import Any, Final

from domino_arena.sdk.match.records import MatchRecord
from domino_arena.sdk.rules import (
    CHANCE,
    SPECTATOR,
    TERMINAL,
    DoublesObservation,
    DoublesState,
    GameState,
    LineObservation,
    MoonObservation,
    MoonState,
    Observation,
    PassingObservation,
    Phase,
    StraightObservation,
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

    The public part is :func:`draw_public` of the engine's spectator view; on top of it come
    what the match kept hidden while it ran: ``hands`` (per seat), the ``boneyard`` of a line
    game, Moon's ``widow`` and ``discard``, Doubles' ``drawn`` tile.
    """
    table = draw_public(state.observe(SPECTATOR))
    table["hands"] = [_tiles(hand) for hand in state.hands]
    if isinstance(state, LineGameState):
        table["boneyard"] = _tiles(state.boneyard)
    if isinstance(state, DoublesState):
        table["drawn"] = None if state.drawn is None else str(state.drawn)
    elif isinstance(state, MoonState):
        table["widow"] = None if state.widow is None else str(state.widow)
        table["discard"] = None if state.discard is None else str(state.discard)
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
        "phase": _phase(view).value,
        "to_move": None if view.current_seat == TERMINAL else view.current_seat,
        "scores": list(view.scores),
        "sides": [list(side) for side in view.game.sides],
        "hand_sizes": list(view.hand_sizes),
        "last": _last(view),
    }
    if isinstance(view, LineObservation):
        table["boneyard_size"] = view.boneyard_size
    if isinstance(view, StraightObservation):
        layout = view.layout
        table["layout"] = {
            "line": _pairs(layout.line),
            "spinner": None if layout.spinner is None else str(Tile(*(layout.spinner,) * 2)),
            "arms": {name: _pairs(arm) for name, arm in zip(ARM_NAMES, layout.arms, strict=True)},
            "count": layout.count,
        }
    elif isinstance(view, DoublesObservation):
        table["placed"] = _tiles(view.placed)
        table["ends"] = list(view.ends)
        table["unlocked"] = sorted(view.unlocked)
        table["drawn"] = None
    elif isinstance(view, PassingObservation):
        table["line"] = _pairs(view.line)
        table["ends"] = None if view.ends is None else list(view.ends)
    elif isinstance(view, MoonObservation):
        table.update(
            bids=[{"seat": seat, "bid": bid} for seat, bid in view.bids],
            bidder=view.bidder,
            contract=view.contract,
            trump=_trump_text(view.trump),
            widow=None,
            discard=None,
            trick=[{"seat": seat, "tile": str(tile)} for seat, tile in view.trick],
            tricks=[
                {
                    "leader": trick.leader,
                    "plays": [{"seat": seat, "tile": str(tile)} for seat, tile in trick.plays],
                    "winner": trick.winner,
                }
                for trick in view.tricks
            ],
            tricks_won=list(view.tricks_won),
        )
    return table


def _last(view: Observation) -> dict[str, Any] | None:
    """The last public move of the hand (what a spectator saw: a discard names no tile)."""
    if not view.history:
        return None
    entry = view.history[-1]
    return {"seat": None if entry.seat == CHANCE else entry.seat, "action": str(entry.action)}


def _phase(view: Observation) -> Phase:
    if isinstance(view, LineObservation | MoonObservation):
        return view.phase
    raise TypeError(f"not the observation of one of the four games: {type(view).__name__}")

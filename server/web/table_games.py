"""Each game's part of a drawn table, by registry name (what :mod:`.table` adds per game).

:func:`~.table.draw_public` writes what every game shows (scores, hand sizes, the last move)
and hands the rest to the game's :class:`TableView` here; :func:`~.table.draw_table` does the
same with the hidden part of a finished match. Adding a game adds its two functions and its
entry in :data:`TABLE_VIEWS`; nothing else in the viewer switches on the game.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from domino_arena.sdk.rules import (
    DoublesGame,
    DoublesObservation,
    DoublesState,
    GameState,
    LineObservation,
    MoonGame,
    MoonObservation,
    MoonState,
    Observation,
    PassingGame,
    PassingObservation,
    StraightGame,
    StraightObservation,
    Tile,
    Trump,
)
from domino_arena.sdk.rules.linegame import LineGameState

ARM_NAMES: Final = ("W", "E", "N", "S")


@dataclass(frozen=True)
class TableView:
    """One game's drawing of a table."""

    public: Callable[[Observation], dict[str, Any]]
    """The game's keys of a spectator's view: ``phase`` and its layout."""
    hidden: Callable[[GameState], dict[str, Any]]
    """The game's keys of what a finished match shows face up besides the hands."""


def tiles(tiles: tuple[Tile, ...] | list[Tile]) -> list[str]:
    return [str(t) for t in tiles]


def _pairs(pairs: tuple[tuple[int, int], ...]) -> list[dict[str, Any]]:
    """Laid tiles as they lie: the tile, and its text with its numbers in the layout's order."""
    return [{"tile": str(Tile(a, b)), "shown": f"{a}-{b}"} for a, b in pairs]


def _line_public(view: Observation) -> dict[str, Any]:
    assert isinstance(view, LineObservation)
    return {"phase": view.phase.value, "boneyard_size": view.boneyard_size}


def _line_hidden(state: GameState) -> dict[str, Any]:
    assert isinstance(state, LineGameState)
    return {"boneyard": tiles(state.boneyard)}


# -- the games ----------------------------------------------------------------------------------


def _passing(view: Observation) -> dict[str, Any]:
    assert isinstance(view, PassingObservation)
    ends = None if view.ends is None else list(view.ends)
    return {**_line_public(view), "line": _pairs(view.line), "ends": ends}


def _straight(view: Observation) -> dict[str, Any]:
    assert isinstance(view, StraightObservation)
    layout = view.layout
    drawn = {
        "line": _pairs(layout.line),
        "spinner": None if layout.spinner is None else str(Tile(*(layout.spinner,) * 2)),
        "arms": {name: _pairs(arm) for name, arm in zip(ARM_NAMES, layout.arms, strict=True)},
        "count": layout.count,
    }
    return {**_line_public(view), "layout": drawn}


def _doubles(view: Observation) -> dict[str, Any]:
    assert isinstance(view, DoublesObservation)
    return {
        **_line_public(view),
        "placed": tiles(view.placed),
        "ends": list(view.ends),
        "unlocked": sorted(view.unlocked),
        "drawn": None,
    }


def _doubles_hidden(state: GameState) -> dict[str, Any]:
    assert isinstance(state, DoublesState)
    return {**_line_hidden(state), "drawn": None if state.drawn is None else str(state.drawn)}


def _trump_text(trump: int | None) -> str | None:
    return None if trump is None else str(Trump(trump)).removeprefix("trump ")


def _moon(view: Observation) -> dict[str, Any]:
    assert isinstance(view, MoonObservation)
    return {
        "phase": view.phase.value,
        "bids": [{"seat": seat, "bid": bid} for seat, bid in view.bids],
        "bidder": view.bidder,
        "contract": view.contract,
        "trump": _trump_text(view.trump),
        "widow": None,
        "discard": None,
        "trick": [{"seat": seat, "tile": str(tile)} for seat, tile in view.trick],
        "tricks": [
            {
                "leader": trick.leader,
                "plays": [{"seat": seat, "tile": str(tile)} for seat, tile in trick.plays],
                "winner": trick.winner,
            }
            for trick in view.tricks
        ],
        "tricks_won": list(view.tricks_won),
    }


def _moon_hidden(state: GameState) -> dict[str, Any]:
    assert isinstance(state, MoonState)
    return {
        "widow": None if state.widow is None else str(state.widow),
        "discard": None if state.discard is None else str(state.discard),
    }


TABLE_VIEWS: Final[dict[str, TableView]] = {
    PassingGame.name: TableView(_passing, _line_hidden),
    StraightGame.name: TableView(_straight, _line_hidden),
    DoublesGame.name: TableView(_doubles, _doubles_hidden),
    MoonGame.name: TableView(_moon, _moon_hidden),
}
"""Each game's drawing by registry name."""


def table_view(name: str) -> TableView:
    """Return the drawing of the game called ``name``.

    Raises:
        TypeError: no drawing is registered for that game.
    """
    try:
        return TABLE_VIEWS[name]
    except KeyError:
        raise TypeError(f"no table drawing for game '{name}'") from None

"""Move counts (perft) from explicit positions: engine == data == independent brute force.

Each ``tests/rules/data/<game>.perft.json`` lists positions (``Game.from_position`` keyword
arguments) with the number of action sequences of each depth from there, as python-chess keeps
perft data. Two implementations must reproduce every number: the engine (through
``sdk/rules/perft.py``) and ``tests.rules.brute.<game>.perft``, which re-implements move
generation from docs/rules.md without the engine's game modules. On a mismatch the message gives the
engine's per-action breakdown (``divide``) so the wrong branch is found at once.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any, Final

import pytest

from domino_arena.sdk.rules import GAMES, make_game
from domino_arena.sdk.rules.perft import divide, perft

DATA: Final = Path(__file__).parent / "data"
MIN_POSITIONS: Final = 5
MIN_DEPTH: Final = 3


def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _files() -> list[Path]:
    return sorted(DATA.glob("*.perft.json"))


def _positions() -> list[Any]:
    """One test case per position of every data file whose game is registered."""
    cases = []
    for path in _files():
        data = _load(path)
        for pos in data["positions"]:
            marks = []
            if data["game"] not in GAMES:
                marks.append(pytest.mark.skip(reason=f"game '{data['game']}' is not registered"))
            cases.append(
                pytest.param(data["game"], pos, marks=marks, id=f"{data['game']}-{pos['id']}")
            )
    return cases


def _brute(game: str) -> Any:
    return importlib.import_module(f"tests.rules.brute.{game}")


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_registered_game_has_perft_data(game: str) -> None:
    path = DATA / f"{game}.perft.json"
    if not path.exists():
        pytest.skip(f"no {path.name} yet: the game's perft data is still to be written")
    assert _load(path)["game"] == game


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.name)
def test_data_file_is_complete(path: Path) -> None:
    """Enough positions, deep enough, each with a unique id and the fields the runner reads."""
    data = _load(path)
    assert path.name == f"{data['game']}.perft.json", "the file is named after its game"
    assert data.get("comment"), f"{path.name}: say how the counts were obtained"
    positions = data["positions"]
    assert len(positions) >= MIN_POSITIONS, (
        f"{path.name}: {len(positions)} positions, at least {MIN_POSITIONS} are required"
    )
    ids = [pos["id"] for pos in positions]
    assert len(set(ids)) == len(ids), f"{path.name}: position ids repeat: {ids}"
    for pos in positions:
        assert set(pos) >= {"id", "comment", "options", "position", "perft"}, pos["id"]
        assert len(pos["perft"]) >= MIN_DEPTH, (
            f"{path.name} {pos['id']}: depth {len(pos['perft'])}, at least {MIN_DEPTH} is required"
        )
        assert all(isinstance(n, int) and n >= 0 for n in pos["perft"]), pos["id"]


def check_position(game: str, pos: dict[str, Any]) -> None:
    """Check every depth of one position; fail with the engine's breakdown on a mismatch."""
    state = make_game(game, **pos["options"]).from_position(**pos["position"])
    brute = _brute(game)
    for depth, want in enumerate(pos["perft"], start=1):
        got = perft(state, depth)
        forced = brute.perft(pos["options"], pos["position"], depth)
        if got != want or forced != want:
            breakdown = "\n".join(f"  {a}: {n}" for a, n in divide(state, depth).items())
            pytest.fail(
                f"{game} {pos['id']} depth {depth}: data {want}, engine {got}, brute force "
                f"{forced}\nengine divide (perft {depth - 1} below each action):\n{breakdown}"
            )


@pytest.mark.parametrize(("game", "pos"), _positions())
def test_perft(game: str, pos: dict[str, Any]) -> None:
    check_position(game, pos)


def test_mismatch_shows_the_breakdown() -> None:
    """A wrong count fails with the per-action breakdown, so the wrong branch shows at once."""
    path = DATA / "passing.perft.json"
    if "passing" not in GAMES or not path.exists():
        pytest.skip("needs the Passing Game and its perft data")
    pos = dict(_load(path)["positions"][0])
    pos["perft"] = [pos["perft"][0] + 1]
    with pytest.raises(pytest.fail.Exception, match=r"(?s)depth 1: data .*engine divide.*: 1"):
        check_position("passing", pos)

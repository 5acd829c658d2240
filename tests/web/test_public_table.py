"""The live viewer's table (``draw_public``): what everybody may see, and nothing hidden.

Every step of seeded random games of every configuration: the drawn public table names no tile
of a hand, the boneyard, the widow or the discard, and the face-up table of a finished match is
that same public table with the hidden parts added.
"""

from __future__ import annotations

import json
import random
import re

import pytest

from domino_arena.sdk.rules import SPECTATOR, Game, Tile
from domino_arena.server.web.table import draw_public, draw_table
from tests.fakes.leaks import CONFIG_IDS, CONFIGS, hidden_from, seeds_for

TILE_TEXT = re.compile(r"\b([0-6])-([0-6])\b")
HIDDEN_KEYS = {"hands", "boneyard"}


@pytest.mark.parametrize("game", CONFIGS, ids=CONFIG_IDS)
def test_the_public_table_never_names_a_hidden_tile(game: Game) -> None:
    tiles_seen = 0
    for seed in seeds_for(game)[:2]:
        rng = random.Random(seed)
        state = game.new_game(seed)
        while True:
            public = draw_public(state.observe(SPECTATOR))
            text = json.dumps(public)
            hidden = hidden_from(state, SPECTATOR)
            shown = [Tile(int(a), int(b)) for a, b in TILE_TEXT.findall(text)]
            found = [f"{tile} from {hidden[tile]}" for tile in shown if tile in hidden]
            assert not found, f"seed {seed}: {found} in {text}"
            tiles_seen += len(shown)
            full = draw_table(state)
            assert {k: v for k, v in full.items() if k in public} | {
                "widow": None,
                "discard": None,
                "drawn": None,
            } == public | {"widow": None, "discard": None, "drawn": None}
            assert set(full) - set(public) <= HIDDEN_KEYS
            assert public["hand_sizes"] == [len(hand) for hand in full["hands"]]
            if state.is_terminal():
                break
            state = state.apply(rng.choice(state.legal_actions()))
    assert tiles_seen > 0, "no tile was ever on the table: the walk checked nothing"

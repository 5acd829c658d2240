"""Real matches to analyse: short games of house bots, played in-process, as stored rows."""

from __future__ import annotations

import dataclasses
import io

from domino_arena.bots import RandomBot
from domino_arena.sdk.local import play_game
from domino_arena.sdk.match.records import write_record
from domino_arena.sdk.rules import make_game
from domino_arena.server.store.matches import StoredMatch
from tests.fakes.store import a_match

QUICK: float = 5.0
"""A precision (points) so coarse each decision stops at its first batch of samples."""


def record_text(seed: int = 5, game: str = "passing") -> str:
    """The record of one deal of a two-player game between random bots (seats named
    ``alice`` and ``bob``)."""
    result = play_game(
        make_game(game, players=2),
        [RandomBot(seed), RandomBot(seed + 1)],
        seed=seed,
        timer=None,
        max_deals=1,
        names=("alice", "bob"),
    )
    out = io.StringIO()
    write_record(result.record, out)
    return out.getvalue()


def played(match_id: str, *, seed: int = 5, minute: int = 0) -> StoredMatch:
    """A stored match of ``alice`` and ``bob`` with a real record."""
    return dataclasses.replace(a_match(match_id, minute=minute), record=record_text(seed))

"""Real analyses of stored matches for the web face's tests: the analysis engine
(server/analysis/match.py) run on a stored match's record with a small sample budget (the
tests need a real analysis, not a precise one), saved through the real store."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from typing import Final

from domino_arena.bots.search.playout import greedy_policy
from domino_arena.sdk.match.records import MatchRecord, parse_record, record_from_state
from domino_arena.sdk.rules import GameState, make_game
from domino_arena.server.analysis.match import analyse_match
from domino_arena.server.analysis.report import MatchAnalysis
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.store.analyses import save_analysis

SAMPLES: Final = 8
"""Samples per action at most: enough to mark a random bot's mistakes, quick to run."""


def analyse_stored(
    storage: RatedStorage, match_id: str, seats: Sequence[int] | None = None
) -> MatchAnalysis:
    """Analyse the stored match ``match_id`` (``seats``: all by default) and save it."""
    stored = storage.match(match_id)
    assert stored is not None and stored.record, match_id
    analysis = analyse_match(
        parse_record(stored.record),
        match_id,
        seats=seats,
        max_samples=SAMPLES,
        min_samples=SAMPLES // 2,
    )
    save_analysis(storage.engine, analysis)
    return analysis


def lost_by(storage: RatedStorage, bot: str, match_ids: Sequence[str]) -> tuple[str, int]:
    """The first of ``match_ids`` that ``bot`` lost, and its seat there."""
    for match_id in match_ids:
        stored = storage.match(match_id)
        assert stored is not None
        if bot in stored.seats and stored.winner is not None:
            seat = stored.seats.index(bot)
            sides = stored.side_of_seat or tuple(range(len(stored.seats)))
            if sides[seat] != stored.winner:
                return match_id, seat
    raise AssertionError(f"{bot} lost none of {match_ids}")


def greedy_record(game: str, seed: int, steps: int | None = None) -> MatchRecord:
    """A match of house greedy players, cut to its first ``steps`` steps if asked."""
    state: GameState = make_game(game).new_game(seed, first_seat=0)
    rng = random.Random(seed)
    while not state.is_terminal():
        legal = state.legal_actions()
        state = state.apply(legal[0] if len(legal) == 1 else greedy_policy(state, rng))
    names = [f"bot{s}" for s in range(state.game.num_players)]
    record = record_from_state(state, seats=names, seed=seed, first_seat=0)
    if steps is None:
        return record
    return dataclasses.replace(record, steps=record.steps[:steps])

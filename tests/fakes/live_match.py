"""A live match fed to the spectator hub by hand, step by step: the web face's live pages and
event streams follow it as they would a referee's (tests/web/test_live.py,
tests/web/test_course_live.py)."""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator
from typing import Final

from domino_arena.sdk.match.notices import Step
from domino_arena.sdk.match.results import MatchResult, Termination
from domino_arena.sdk.rules import Game, make_game
from domino_arena.server.play.match_spec import MatchSpec
from domino_arena.server.play.timecontrol import TimeControl
from tests.fakes.admin_server import AdminServer

MATCH_ID: Final = "live-1"
EVENTS: Final = f"/api/live/{MATCH_ID}/events"


def steps(game: Game, seed: int) -> Iterator[Step]:
    """Every step of a seeded random game, as the referee hands them to the hub."""
    rng = random.Random(seed)
    state = game.new_game(seed)
    index = 0
    while not state.is_terminal():
        action = rng.choice(state.legal_actions())
        after = state.apply(action)
        yield Step(index, state.current_seat, action, None, state, after)
        state = after
        index += 1


def start(referee: AdminServer, bots: tuple[str, ...] = ("alice", "bob"), n: int = 6) -> list[Step]:
    """Start a passing match on the hub and feed its first ``n`` steps; return all its steps."""
    game = make_game("passing", players=len(bots))
    spec = MatchSpec(game=game, bots=bots, seed=3, time_control=TimeControl(), match_id=MATCH_ID)
    referee.call(lambda: referee.hub.started(spec))
    game_steps = list(steps(game, 3))
    feed = referee.hub.on_step(MATCH_ID)
    for step in game_steps[:n]:
        referee.call(functools.partial(feed, step))
    return game_steps


def end(referee: AdminServer, final: Step) -> None:
    """End the match with seat 1's forfeit: side 0 wins."""
    scores = final.after.scores
    result = MatchResult(Termination.FORFEIT, 0, scores, faulted_seat=1, detail="seat 1 forfeits")
    referee.call(lambda: referee.hub.ended(MATCH_ID, result))

"""A live match fed to the spectator hub by hand, step by step: the web face's live pages and
event streams follow it as they would a referee's (tests/web/test_live.py,
tests/web/test_course_live.py), and the spectator service's tests watch it (tests/server)."""

from __future__ import annotations

import functools
import random
import threading
from collections.abc import Iterator
from typing import Final

from domino_arena.sdk.match.notices import Step
from domino_arena.sdk.match.results import MatchResult, Termination
from domino_arena.sdk.rules import Game, GameState, make_game
from domino_arena.server.play.match_spec import MatchSpec
from domino_arena.server.play.spectators import Subscription
from domino_arena.server.play.timecontrol import TimeControl
from tests.fakes.admin_server import AdminServer

MATCH_ID: Final = "live-1"
EVENTS: Final = f"/api/live/{MATCH_ID}/events"
WATCHED: Final = "watched"
"""The id :func:`spec_of` gives a match unless told otherwise."""


def spec_of(game: Game, seed: int = 1, match_id: str = WATCHED) -> MatchSpec:
    """A match of ``game`` between ``bot0``, ``bot1``... with ``seed``."""
    bots = tuple(f"bot{seat}" for seat in range(game.num_players))
    return MatchSpec(game=game, bots=bots, seed=seed, time_control=TimeControl(), match_id=match_id)


def normal_end(state: GameState) -> MatchResult:
    """The result of a game played to its end (``state``: its last position)."""
    outcome = state.outcome()
    assert outcome is not None
    return MatchResult(Termination.NORMAL, outcome.winner, outcome.scores, outcome=outcome)


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


def watch_unsubscribes(referee: AdminServer) -> threading.Semaphore:
    """A semaphore released each time the referee's hub drops a spectator (its gRPC stream
    ended): acquire it once per stream the test expects to end."""
    dropped = threading.Semaphore(0)
    original = referee.hub.unsubscribe

    def unsubscribe(subscription: Subscription) -> None:
        original(subscription)
        dropped.release()

    referee.hub.unsubscribe = unsubscribe  # type: ignore[method-assign]
    return dropped

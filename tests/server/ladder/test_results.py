"""A tournament's results table (server/ladder/results.py): which games count, in which order,
and how entrants are ranked."""

from __future__ import annotations

import dataclasses
import datetime as dt

from domino_arena.server.ladder import elo
from domino_arena.server.ladder.results import EntrantResult, counted_games, entrant_results
from tests.fakes.store import a_match


def test_only_normal_ends_and_forfeits_count_in_the_order_stored() -> None:
    first = a_match("m1", minute=1)  # bob wins (side 1)
    later = dataclasses.replace(a_match("m2", minute=2), winner=0, scores=(120, 40))
    void = dataclasses.replace(a_match("m3", minute=3), termination="void", winner=None)
    games = counted_games([later, void, first])
    assert [g.standing for g in games] == [(1, 0), (0, 1)]
    assert games[0].bots == ("alice", "bob")


def test_entrants_rank_by_points_then_performance_then_name() -> None:
    bob_wins = a_match("m1", minute=1)
    rows = entrant_results(("alice", "bob", "carol"), counted_games([bob_wins]))
    bob = elo.replay(counted_games([bob_wins]))["bob"]
    assert rows[0] == EntrantResult("bob", 1, 1, 0, 0, 0, 1.0, bob.rating)
    assert [r.bot for r in rows] == ["bob", "carol", "alice"]  # carol has not played: 1500
    assert rows[1] == EntrantResult("carol", 0, 0, 0, 0, 0, 0.0, elo.INITIAL_RATING)


def test_a_draw_is_half_a_point() -> None:
    draw = dataclasses.replace(
        a_match("m1"), winner=None, scores=(50, 50), created=dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    )
    rows = entrant_results(("alice", "bob"), counted_games([draw]))
    assert [(r.bot, r.points, r.draws) for r in rows] == [("alice", 0.5, 1), ("bob", 0.5, 1)]


def test_a_frozen_baseline_keeps_its_record_and_its_fixed_rating() -> None:
    house = dataclasses.replace(a_match("m1", minute=1), seats=("alice", "house:greedy"))
    rows = entrant_results(("alice", "house:greedy"), counted_games([house], (("greedy", 1700.0),)))
    greedy = next(r for r in rows if r.bot == "house:greedy")
    assert greedy == EntrantResult("house:greedy", 1, 1, 0, 0, 0, 1.0, 1700.0)
    alice = next(r for r in rows if r.bot == "alice")
    expected = 1 / (1 + 10 ** ((1700.0 - 1500.0) / 400))
    assert alice.performance == 1500.0 - 24.0 * expected
    assert (alice.games, alice.losses) == (1, 1)
    unfixed = entrant_results(("alice", "house:greedy"), counted_games([house]))
    assert [(r.bot, r.performance) for r in unfixed] == [
        ("house:greedy", 1500.0),
        ("alice", 1500.0),
    ]

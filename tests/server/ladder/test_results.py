"""A tournament's results table (server/ladder/results.py): which games count, in which order,
and how entrants are ranked."""

from __future__ import annotations

import dataclasses
import datetime as dt

from domino_arena.server.ladder.batch import point_table
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
    bob_wins = dataclasses.replace(a_match("m1", minute=1), record=None)
    matches = [bob_wins]
    table = point_table(matches)
    rows = entrant_results(("alice", "bob", "carol"), counted_games(matches), table)
    assert rows[0] == EntrantResult("bob", 1, 1, 0, 0, 0, 1.0, table["bob"])
    assert table["bob"].text.startswith("≥ ") and table["bob"].provisional  # one win: one-sided
    assert [r.bot for r in rows] == ["bob", "alice", "carol"]  # carol has not played: no fit
    assert rows[2] == EntrantResult("carol", 0, 0, 0, 0, 0, 0.0, None)


def test_the_performance_is_the_tournaments_own_fit() -> None:
    """Not a live Elo in the order stored: the fit of the games, so a bot ranked below
    another never gets the higher number (the issue's 1415 below 1000)."""
    matches = [
        dataclasses.replace(
            a_match(f"m{n}", minute=n), winner=n % 3 and 1, scores=(60, 40), record=None
        )
        for n in range(12)
    ]
    table = point_table(matches)
    rows = entrant_results(("alice", "bob"), counted_games(matches), table)
    assert [r.performance for r in rows] == [table[r.bot] for r in rows]
    assert all(r.performance is not None and r.performance.rank for r in rows)
    assert rows[0].performance is not None and rows[1].performance is not None
    assert rows[0].performance.rating > rows[1].performance.rating


def test_a_draw_is_half_a_point() -> None:
    draw = dataclasses.replace(
        a_match("m1"), winner=None, scores=(50, 50), created=dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    )
    rows = entrant_results(("alice", "bob"), counted_games([draw]))
    assert [(r.bot, r.points, r.draws) for r in rows] == [("alice", 0.5, 1), ("bob", 0.5, 1)]


def test_a_frozen_baseline_keeps_its_record_and_its_fixed_rating() -> None:
    house = dataclasses.replace(
        a_match("m1", minute=1), seats=("alice", "house:greedy"), record=None
    )
    baselines = (("greedy", 1700.0),)
    table = point_table([house], baselines)
    rows = entrant_results(("alice", "house:greedy"), counted_games([house], baselines), table)
    greedy = next(r for r in rows if r.bot == "house:greedy")
    assert greedy == EntrantResult("house:greedy", 1, 1, 0, 0, 0, 1.0, table["house:greedy"])
    assert table["house:greedy"].rating == 1700.0 and table["house:greedy"].rank == 1
    alice = next(r for r in rows if r.bot == "alice")
    assert alice.performance is not None and alice.performance.text.startswith("≤ ")
    assert (alice.games, alice.losses) == (1, 1)

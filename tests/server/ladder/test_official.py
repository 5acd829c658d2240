"""What the official table doesn't know (server/ladder/separation.py, official.py): provisional
bots listed below the table, separated pools shown one-sided, and the intervals of pools
without separation still covering the truth 95% of the time."""

from __future__ import annotations

import math
import random

import pytest

from domino_arena.server.ladder.elo import RatedGame
from domino_arena.server.ladder.fit import ELO_PER_NATURAL, FitGame, fit
from domino_arena.server.ladder.fit_bootstrap import bootstrap
from domino_arena.server.ladder.official import (
    MIN_GAMES,
    OfficialRow,
    bound_of,
    official_rows,
    rating_text,
)
from domino_arena.server.ladder.separation import TAIL, Bound, main_part, separation
from tests.fakes.fit_games import duplicate_sets


def duel(first: str, second: str, winner: int | None, unit: str) -> FitGame:
    """A two-side game of ``first`` (seat 0, the first starter) against ``second``; winner
    None: a draw."""
    standing = (0, 0) if winner is None else ((0, 1) if winner == 0 else (1, 0))
    return FitGame(RatedGame((first, second), (0, 1), standing, (0, 0)), 0, unit)


def mixed(bots: tuple[str, ...], games: int, seed: int) -> list[FitGame]:
    """``games`` games among ``bots``, each pair with wins both ways (no separation)."""
    rng = random.Random(seed)
    pairs = [(a, b) for i, a in enumerate(bots) for b in bots[i + 1 :]]
    found = []
    for n in range(games):
        a, b = pairs[n % len(pairs)]
        winner = n // len(pairs) % 2 if n < 2 * len(pairs) else int(rng.random() < 0.4)
        found.append(duel(a, b, winner, f"m{seed}/{n}"))
    return found


def rows_of(games: list[FitGame], rounds: int = 20) -> dict[str, OfficialRow]:
    point = fit(games, seat_terms=False)
    spread = bootstrap(games, point, rounds=rounds)
    return {row.bot: row for row in official_rows(games, point, spread.intervals)}


def test_a_bot_with_one_game_is_provisional_and_never_ranked_above_established_bots() -> None:
    games = mixed(("greedy1", "greedy2", "random1"), 90, seed=1)
    games.append(duel("nodebot", "greedy1", 0, "one"))  # one game, one win over the best
    point = fit(games, seat_terms=False)
    table = official_rows(games, point, bootstrap(games, point, rounds=20).intervals)
    assert point.ratings["nodebot"] == max(point.ratings.values())  # its number is the top one
    assert [row.bot for row in table][-1] == "nodebot"
    node = table[-1]
    assert (node.rank, node.provisional, node.games) == (None, True, 1)
    assert node.note.startswith(f"provisional: 1 game, fewer than {MIN_GAMES}")
    assert [row.rank for row in table[:-1]] == [1, 2, 3]
    assert not any(row.provisional for row in table[:-1])


def test_a_bot_that_won_every_game_is_bounded_below_only() -> None:
    games = mixed(("a", "b", "c"), 60, seed=2)
    games += [duel("champ", rival, 0, f"c{n}") for n, rival in enumerate("abc" * 5)]
    games += [duel(rival, "dud", 0, f"d{n}") for n, rival in enumerate("abc" * 5)]
    rows = rows_of(games)
    champ, dud = rows["champ"], rows["dud"]
    assert (champ.bound, champ.high, champ.rank) == (Bound.LOWER, math.inf, 1)
    assert champ.low < champ.rating and champ.text == f"≥ {champ.low:.0f}"
    assert champ.interval_text == f"{champ.low:.0f} and above"
    assert "one-sided" in champ.note
    assert (dud.bound, dud.low, dud.rank) == (Bound.UPPER, -math.inf, 4 + 1)
    assert dud.high > dud.rating and dud.text == f"≤ {dud.high:.0f}"
    # The others are two-sided: their intervals are the bootstrap's.
    assert all(rows[b].bound is Bound.BOTH and rows[b].rank in {2, 3, 4} for b in "abc")


def test_an_all_wins_record_against_one_opponent_gives_the_exact_bound() -> None:
    """80 wins out of 80: the rating at which that record has a 2.5% chance (Clopper-Pearson)
    is 531 Elo above the opponent, whatever the prior made of the number itself."""
    games = [duel("greedy", "random1", 0, f"u{n}") for n in range(80)]
    point = fit(games, seat_terms=False)
    found = separation(games, point)
    assert found.bounds == {"greedy": Bound.LOWER, "random1": Bound.UPPER}
    gap = ELO_PER_NATURAL * -math.log(TAIL ** (-1 / 80) - 1)
    assert gap == pytest.approx(530.5, abs=0.5)
    assert found.limits["greedy"] - point.ratings["random1"] == pytest.approx(gap, abs=1e-3)
    assert point.ratings["greedy"] - found.limits["random1"] == pytest.approx(gap, abs=1e-3)


def test_one_match_is_no_narrow_band() -> None:
    """After one match both bots are provisional and one-sided (the issue's "mybot 1694, 95%
    1694-1694")."""
    games = [duel("mybot", "other", 0, "m1")]
    rows = rows_of(games, rounds=5)
    assert rows["mybot"].text.startswith("≥ ") and rows["other"].text.startswith("≤ ")
    assert rows["mybot"].low < rows["other"].high
    assert all(row.provisional and row.rank is None for row in rows.values())


def test_a_bot_linked_to_the_pool_only_through_a_separated_one_is_unbounded() -> None:
    games = mixed(("a", "b", "c"), 30, seed=3)
    games += [duel("boss", "a", 0, f"x{n}") for n in range(12)]
    games += [duel("boss", "minion", 0, f"y{n}") for n in range(12)]
    rows = rows_of(games)
    assert rows["boss"].bound is Bound.LOWER
    minion = rows["minion"]
    assert (minion.bound, minion.text, minion.interval_text) == (Bound.NONE, "?", "unbounded")
    assert (minion.low, minion.high, minion.rank) == (-math.inf, math.inf, None)
    assert minion.note == "unbounded: its games do not place it against the pool"


def test_draws_link_both_ways_and_fixed_baselines_are_the_reference() -> None:
    games = [duel("a", "b", None, "d1"), duel("a", "b", 0, "d2")]
    assert not separation(games, fit(games)).separated
    # A house random that lost every game bounds nobody from above; greedy, which beat and
    # lost to the students, bounds them on both sides.
    games = mixed(("s1", "s2", "house:greedy"), 30, seed=4)
    games += [duel(s, "house:random", 0, f"r{n}") for n, s in enumerate(["s1", "s2"] * 6)]
    point = fit(games, fixed={"house:greedy": 1500.0, "house:random": 1000.0})
    found = separation(games, point)
    assert set(found.bounds.values()) == {Bound.BOTH}
    table = official_rows(games, point, None)
    assert [row.bot for row in table if row.bot.startswith("house:")] == [
        "house:greedy",
        "house:random",
    ]
    assert all(row.rank is not None and row.interval_text == "-" for row in table)


def test_the_text_of_an_interval() -> None:
    assert rating_text(1853.4, 1775.0, 1932.0) == "1853"
    assert rating_text(2500.0, 2100.2, math.inf) == "≥ 2100"
    assert rating_text(700.0, -math.inf, 899.6) == "≤ 900"
    assert rating_text(1500.0, -math.inf, math.inf) == "?"
    assert bound_of(1.0, 2.0) is Bound.BOTH


@pytest.mark.slow
def test_pools_without_separation_still_cover_the_truth_95_percent() -> None:
    """16 simulated pools of 30 bots, each meeting its 10 neighbours (20 duplicate pairs, 40
    games) over a 400-Elo spread: the official rows of the pools without separation are
    two-sided, their intervals the bootstrap's, and hold the true strength 95% ± 2 of the time
    (480 intervals, seeded: the fuller measure is bench/fit_coverage.py). With fewer games a
    bot (24) the bootstrap's intervals run wide, about 97%."""
    bots = 30
    truth = {f"b{i:02d}": 1500 + (i - (bots - 1) / 2) * 400 / (bots - 1) for i in range(bots)}
    names = sorted(truth)
    tables = [[n, names[(i + j) % bots]] for i, n in enumerate(names) for j in range(1, 11)]
    covered = total = 0
    for seed in range(16):
        rng = random.Random(f"official-coverage/{seed}")
        games = duplicate_sets(tables, (0, 1), truth, (0.0, -30.0), rng, deals=1, prefix=str(seed))
        point = fit(games)
        assert not separation(games, point).separated
        spread = bootstrap(games, point, rounds=40, seed=seed)
        for row in official_rows(games, point, spread.intervals):
            assert (row.bound, row.provisional) == (Bound.BOTH, False)
            assert (row.low, row.high) == spread.intervals[row.bot]
            covered += row.low <= truth[row.bot] <= row.high
            total += 1
    assert 0.93 <= covered / total <= 0.97, f"{covered} of {total}"


def test_a_part_that_never_met_the_rest_is_listed_apart() -> None:
    body = mixed(("a", "b", "c"), 30, seed=5)
    island = mixed(("x", "y"), 12, seed=6)
    kept, apart = main_part(body + island)
    assert (kept, apart) == (body, {"x": 12, "y": 12})
    # The anchor's part, or the one holding the frozen baselines, fixes the scale instead.
    assert main_part(body + island, anchor="x") == (island, {"a": 20, "b": 20, "c": 20})
    assert main_part(body + island, fixed=["y"])[0] == island
    assert main_part(body) == (body, {})
    point = fit(kept)
    table = official_rows(kept, point, None, apart=apart)
    assert [row.bot for row in table[-2:]] == ["x", "y"]
    x = table[-2]
    assert (x.fitted, x.rank, x.bound, x.text, x.provisional) == (
        False,
        None,
        Bound.NONE,
        "?",
        False,
    )
    assert math.isnan(x.rating) and x.note.endswith(
        "never met the bots of this table, even through others"
    )

"""The planner's arithmetic (server/tournaments/planner.py) against the scheduler it sizes."""

from __future__ import annotations

import math
from functools import partial
from itertools import pairwise

import pytest

from domino_arena.server.tournaments import planner
from domino_arena.server.tournaments.scheduler import round_robin


@pytest.mark.parametrize(
    ("entrants", "seats", "partnerships", "repeats"),
    [(8, 2, False, 1), (7, 3, False, 2), (6, 4, False, 1), (6, 4, True, 1)],
)
def test_a_round_robin_has_the_games_the_scheduler_lays_out(
    entrants: int, seats: int, partnerships: bool, repeats: int
) -> None:
    names = [f"b{i}" for i in range(entrants)]
    games = round_robin(names, seats, games_per_pairing=repeats, partnerships=partnerships)
    p = planner.plan(
        "round-robin",
        "passing",
        entrants,
        seats=seats,
        partnerships=partnerships,
        games_per_pairing=repeats,
    )
    assert p.games == len(games) == planner.schedule_size(entrants, seats, partnerships, repeats)
    assert p.games_per_entrant == p.games * seats / entrants


def test_balanced_is_whole_rotations_of_tables() -> None:
    p = planner.plan("balanced", "doubles", 40, seats=4, games_per_entrant=50)
    # 50 games -> 13 tables of 4 rotations each -> 52 games an entrant, 130 tables
    assert (p.games_per_entrant, p.games) == (52, 130 * 4)
    odd = planner.plan("balanced", "moon", 1000, seats=3, games_per_entrant=100)
    assert odd.games == math.ceil(1000 * 34 / 3) * 3


def test_a_gauntlet_seats_each_entrant_with_baselines_only() -> None:
    p = planner.plan("gauntlet", "doubles", 200, seats=4, games_per_entrant=24, baselines=3)
    assert (p.games_per_entrant, p.games) == (24, 200 * 24)
    default = planner.plan("gauntlet", "moon", 10, seats=3, baselines=3)
    assert default.games_per_entrant == 3 * 3  # one table per pair of the 3 baselines
    with pytest.raises(ValueError, match=r"^baselines: a 4-seat gauntlet needs at least 3"):
        planner.plan("gauntlet", "doubles", 200, seats=4, baselines=2)


def test_a_round_robin_too_big_is_refused_with_a_size_that_fits() -> None:
    with pytest.raises(ValueError, match=r"365,560 games.*--format balanced --games-per-entrant"):
        planner.plan("round-robin", "doubles", 40, seats=4)


def test_precision_falls_with_the_square_root_of_the_games_and_the_small_sample_term() -> None:
    one = planner.plan("balanced", "moon", 100, seats=3, games_per_entrant=24)
    four = planner.plan("balanced", "moon", 100, seats=3, games_per_entrant=96)
    c = planner.FEW_RESULTS[(3, False)]
    assert c > 0
    # 24 and 96 games are 48 and 192 pairwise results at 3 seats
    assert four.half_width == pytest.approx(one.half_width / 2 * (1 + c / 192) / (1 + c / 48))
    assert four.half_width < one.half_width / 2  # faster than 1 / sqrt(games) at first
    partners = planner.plan("balanced", "passing", 100, seats=4, partnerships=True)
    alone = planner.plan("balanced", "passing", 100, seats=4)
    assert partners.half_width > alone.half_width


@pytest.mark.parametrize(("seats", "partnerships"), [(2, False), (3, False), (4, False), (4, True)])
def test_the_correction_falls_with_the_results_to_its_large_sample_value(
    seats: int, partnerships: bool
) -> None:
    key = (seats, partnerships)
    corrections = [
        planner.correction("balanced", r, seats=seats, partnerships=partnerships)
        for r in (24, 48, 96, 192, 960, 10**9)
    ]
    assert corrections == sorted(corrections, reverse=True)
    assert corrections[-1] == pytest.approx(planner.CORRECTION[key], rel=1e-6)
    widths = [
        planner.half_width("balanced", "doubles", g, seats=seats, partnerships=partnerships)
        for g in range(1, 400)
    ]
    assert all(a > b for a, b in pairwise(widths))


@pytest.mark.parametrize(
    ("format", "seats", "partnerships", "games", "elo"),
    [
        # the simulation's SD (0.5 a result, an unmeasured game) at rows of bench/README.md:
        # CORRECTION x (1 + c / results) x 1.96 x 0.5 / sqrt(results) x 695, x2 in partnerships,
        # x1.05 a Swiss
        ("balanced", 2, False, 24, 208.0),
        ("balanced", 3, False, 48, 95.4),
        ("balanced", 4, False, 192, 39.2),
        ("balanced", 4, True, 24, 490.2),
        ("swiss", 4, True, 96, 165.0),
    ],
)
def test_half_widths_at_known_points(
    format: str, seats: int, partnerships: bool, games: int, elo: float
) -> None:
    got = planner.half_width(format, "simulated", games, seats=seats, partnerships=partnerships)
    assert got == pytest.approx(elo, abs=0.5)


def test_games_per_entrant_for_reaches_the_precision_asked_for() -> None:
    for wanted in (20.0, 40.0, 80.0):
        g = planner.games_per_entrant_for("balanced", "moon", 1000, wanted, seats=3)
        assert g % 3 == 0
        assert planner.plan("balanced", "moon", 1000, seats=3, games_per_entrant=g).half_width <= (
            wanted
        )
        fewer = planner.plan("balanced", "moon", 1000, seats=3, games_per_entrant=g - 3)
        assert g == 3 or fewer.half_width > wanted
    for wanted in (100.0, 250.0, 600.0):  # where the small-sample term is large
        g = planner.games_per_entrant_for(
            "swiss", "passing", 200, wanted, seats=4, partnerships=True
        )
        width = partial(planner.half_width, "swiss", "passing", seats=4, partnerships=True)
        assert width(g) <= wanted and (g == 4 or width(g - 4) > wanted)


def test_duration_with_instant_bots_and_at_the_full_move_time() -> None:
    p = planner.plan(
        "balanced", "moon", 30, seats=3, games_per_entrant=30, concurrency=10, move_seconds=2.0
    )
    moves = planner.MOVES_PER_GAME[("moon", 3, False)]
    assert p.seconds == pytest.approx(p.games * moves * planner.REFEREE_SECONDS_PER_MOVE)
    assert p.full_seconds == pytest.approx(p.games / 10 * moves * 2.0)
    text = "\n".join(p.lines())
    assert "300 (30 per entrant)" in text
    assert "with instant bots" in text and "at the full move time (2 s)" in text
    assert "estimate is unmeasured" not in text  # 30 games: the simulation measured from 24
    few = planner.plan("balanced", "moon", 30, seats=3, games_per_entrant=12)
    assert f"below {planner.FEW_GAMES} games per entrant the estimate is unmeasured" in "\n".join(
        few.lines()
    )


def test_a_swiss_is_rounds_of_tables_and_wider_than_a_balanced_one_by_its_factor() -> None:
    p = planner.plan("swiss", "passing", 13, seats=2, rounds=5)
    assert p.games == 5 * 6 * 2  # 6 tables a round (one bye), both rotations
    assert p.games_per_entrant == pytest.approx(60 * 2 / 13)
    balanced = planner.half_width("balanced", "passing", p.games_per_entrant, seats=2)
    factor = planner.SWISS_FACTOR
    assert factor > 1
    assert p.half_width == pytest.approx(balanced * factor)
    assert "games: 60 in 5 rounds (9.2 per entrant)" in p.lines()
    assert f"{factor:.2f}x a balanced tournament's of as many games" in p.lines()[3]
    sized = planner.plan("swiss", "passing", 12, seats=3, games_per_entrant=30)
    assert (sized.rounds, sized.games, sized.games_per_entrant) == (10, 120, 30)


def test_a_knockout_is_the_range_of_its_ties_sets() -> None:
    p = planner.plan("knockout", "passing", 16, seats=2, sets=1, max_sets=3)
    assert (p.games, p.games_high) == (15 * 2, 15 * 3 * 2)  # 15 matches, 1-3 sets of 2 games
    assert "games: 30 to 90 (as its ties are decided)" in p.lines()
    assert "precision: none (a knockout ranks by elimination)" in p.lines()
    fixed = planner.plan("knockout", "passing", 5, seats=4)
    assert (fixed.games, fixed.games_high) == (2 * 4, 2 * 4)  # a table of 4, then the final


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"format": "ladder"}, r"^format: expected one of"),
        ({"format": "swiss"}, r"^rounds: a Swiss needs its rounds or its games per entrant"),
        (
            {"format": "knockout", "partnerships": True, "seats": 4},
            r"^format: a knockout eliminates",
        ),
        ({"seats": 5}, r"^seats: expected 2 to 4"),
        ({"partnerships": True, "seats": 3}, r"^partnerships: need 4 seats"),
        ({"entrants": 2, "seats": 3}, r"^entrants: 2 cannot fill"),
        ({"games_per_entrant": 0}, r"^games_per_entrant: must be at least 1"),
    ],
)
def test_bad_sizes_are_refused_naming_the_field(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {"format": "balanced", "entrants": 10, "seats": 2} | kwargs
    with pytest.raises(ValueError, match=message):
        planner.plan(str(args.pop("format")), "straight", int(str(args.pop("entrants"))), **args)  # type: ignore[arg-type]


def test_the_planner_is_pure() -> None:
    """The contract: the tournaments package imports no store, network or play module."""
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    code = (
        "import sys, domino_arena.server.tournaments.planner\n"
        "print(sorted(m for m in sys.modules if m.startswith('domino_arena.server.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    for layer in ("store", "play", "net", "ladder", "cli", "web"):
        assert f"domino_arena.server.{layer}" not in out

"""The repeat-deal check on hand-made rows: what counts, the seat correction, the p-values.

Rows are built as the arena stores them (``tests/fakes/tournaments.py``); outcomes come from a
seeded ``random.Random``, so every run sees the same tournaments.
"""

from __future__ import annotations

import dataclasses
import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domino_arena.server.stats.repeat_deals import (
    FLAG_BELOW,
    MIN_DEALS,
    gain_p,
    game_scores,
    repeat_deal_checks,
)
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.tournaments.scheduler import DealMode, round_robin
from tests.fakes.tournaments import memorizing_rows, two_seat_row

BOTS = ("ann", "bob", "cid", "dan", "eve", "fay")


def simulated(
    seat0_wins: float,
    *,
    seed: int,
    deals: DealMode = DealMode.DUPLICATE,
    games_per_pairing: int = 6,
    memory: dict[str, float] | None = None,
) -> list[StoredMatch]:
    """A round robin of ``BOTS``: seat 0 wins with chance ``seat0_wins``; a bot in ``memory``
    wins the later rotations of a deal with that chance instead."""
    rng = random.Random(seed)
    memory = memory or {}
    seen: set[tuple[str, int]] = set()
    rows = []
    schedule = round_robin(BOTS, 2, games_per_pairing=games_per_pairing, deals=deals)
    for g in schedule:
        winner = 0 if rng.random() < seat0_wins else 1
        for seat, bot in enumerate(g.seats):
            if bot in memory and (bot, g.deal_id) in seen:
                winner = seat if rng.random() < memory[bot] else 1 - seat
        seen.update((bot, g.deal_id) for bot in g.seats)
        rows.append(two_seat_row("t", g.index, (g.seats[0], g.seats[1]), winner, deal_id=g.deal_id))
    return rows


def test_a_bot_that_wins_what_it_has_seen_is_flagged_and_the_others_are_not() -> None:
    checks = {
        c.bot: c
        for c in repeat_deal_checks(memorizing_rows("t"), ["alice", "bob", "carol", "dave"])
    }
    alice = checks["alice"]
    assert (alice.deals, alice.first_score, alice.later_score) == (12, 0.0, 1.0)
    assert math.isclose(alice.gain, 1.0)
    assert alice.p_value == pytest.approx(gain_p([1.0] * 12, [1] * 12)) and alice.flagged
    assert alice.p_value < 1e-6
    assert not any(checks[b].flagged for b in ("bob", "carol", "dave"))
    assert checks["carol"].gain == 0 and checks["carol"].p_value == 0.5


def test_a_strong_seat_advantage_is_taken_out_not_taken_for_memory() -> None:
    # Seat 0 wins 85% of games: without the correction the last entrant (who always meets
    # the others first in seat 1, then in seat 0) would look like it learns.
    for seed in range(5):
        checks = repeat_deal_checks(simulated(0.85, seed=seed), BOTS)
        assert not any(c.flagged for c in checks), checks
        fay = next(c for c in checks if c.bot == "fay")
        assert fay.later_score - fay.first_score > 0.4  # the raw scores do favour her
        assert abs(fay.gain) < 0.3


def test_the_memorizing_bot_is_found_in_a_pool_with_a_seat_advantage() -> None:
    for seed in range(3):
        rows = simulated(0.7, seed=seed, games_per_pairing=10, memory={"cid": 0.95})
        checks = {c.bot: c for c in repeat_deal_checks(rows, BOTS)}
        assert checks["cid"].flagged, checks["cid"]
        assert checks["cid"].p_value < FLAG_BELOW
        assert [b for b, c in checks.items() if c.flagged] == ["cid"]


def test_spread_deals_are_checked_as_duplicate_ones() -> None:
    rows = simulated(0.5, seed=3, deals=DealMode.SPREAD, games_per_pairing=10, memory={"eve": 1.0})
    checks = {c.bot: c for c in repeat_deal_checks(rows, BOTS)}
    assert checks["eve"].deals == 5 * 10 and checks["eve"].flagged


def test_fresh_deals_give_no_deal_to_check() -> None:
    rows = simulated(0.5, seed=1, deals=DealMode.FRESH, memory={"ann": 1.0})
    for check in repeat_deal_checks(rows, BOTS):
        assert (check.deals, check.p_value, check.flagged) == (0, 1.0, False)
        assert (check.first_score, check.later_score, check.gain) == (0.0, 0.0, 0.0)


def test_too_few_deals_give_p_one_and_voided_games_do_not_count() -> None:
    rows = memorizing_rows("t", deals=MIN_DEALS)
    alice = next(c for c in repeat_deal_checks(rows, ["alice"]))
    assert alice.deals == MIN_DEALS and alice.flagged
    # Void the second game of one of alice's deals: that deal no longer counts.
    voided = [
        dataclasses.replace(m, termination="void", winner=None) if m.game_index == 1 else m
        for m in rows
    ]
    alice = next(c for c in repeat_deal_checks(voided, ["alice"]))
    assert (alice.deals, alice.p_value, alice.flagged) == (MIN_DEALS - 1, 1.0, False)


def test_a_draw_scores_a_half_and_partners_share_their_side_s_score() -> None:
    draw = two_seat_row("t", 0, ("ann", "bob"), None)
    assert game_scores(draw) == (0.5, 0.5)
    partners = dataclasses.replace(
        draw,
        options={"players": 4, "partnerships": True, "target_rule": "gamerules"},
        seats=("ann", "bob", "cid", "dan"),
        side_of_seat=(0, 1, 0, 1),
        scores=(20, 101),
        winner=1,
        faults=(0, 0, 0, 0),
    )
    assert game_scores(partners) == (0.0, 1.0, 0.0, 1.0)


def test_equal_results_in_two_seats_are_no_evidence() -> None:
    """A bot that beats a weak one in both seats of every deal, in a pool where seat 0 wins
    70%: no seat moves a score that is always 1, so it gains nothing."""
    rows = []
    for deal in range(40):
        for rotation, seats in enumerate((("ann", "bob"), ("bob", "ann"))):
            winner = seats.index("ann")
            index = 2 * deal + rotation
            rows.append(two_seat_row("t", index, (seats[0], seats[1]), winner))
            # cid and dan set the seat means: seat 0 wins 70% of their games
            seat0 = (deal * 2 + rotation) % 10 < 7
            rows.append(
                two_seat_row(
                    "t",
                    1000 + index,
                    ("cid", "dan") if rotation == 0 else ("dan", "cid"),
                    0 if seat0 else 1,
                    deal_id=500 + deal,
                )
            )
    ann = next(c for c in repeat_deal_checks(rows, ["ann"]))
    assert (ann.deals, ann.gain, ann.p_value, ann.flagged) == (40, 0.0, 0.5, False)


def test_gain_p_values() -> None:
    assert gain_p([], []) == 1.0
    assert gain_p([0.0, 0.0], [1, 1]) == 0.5
    assert gain_p([1.0, -1.0], [1, 1]) == 0.5
    # Twelve deals won back from a loss: z = 12 / sqrt(12 / 2), the tail erfc(z / sqrt 2) / 2.
    assert gain_p([1.0] * 12, [1] * 12) == pytest.approx(0.5 * math.erfc(math.sqrt(12)))
    # Three later games per deal average out: the bound is smaller, the same gain counts more.
    assert gain_p([0.5] * 12, [3] * 12) < gain_p([0.5] * 12, [1] * 12)


@given(st.lists(st.floats(-2, 2, allow_nan=False), max_size=40))
def test_gain_p_is_a_probability_and_its_tails_add_up(values: list[float]) -> None:
    p = gain_p(values, [1] * len(values))
    q = gain_p([-v for v in values], [1] * len(values))
    assert 0 <= p <= 1 and 0 <= q <= 1
    assert p + q == pytest.approx(1.0) if values else p == q == 1.0


@given(st.lists(st.floats(0.001, 2), min_size=1, max_size=30))
def test_more_gain_never_raises_the_p_value(values: list[float]) -> None:
    k = [1] * (len(values) + 1)
    assert gain_p([*values, 1.0], k) <= gain_p([*values, -1.0], k)

"""The match core (sdk/match/core.py) with no I/O at all: every transition, driven by hand.

The core is told what happened (a reply and the seconds it took, a timeout, a drop) and says
what is due next; nothing here sleeps, opens a socket or reads a clock.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest

from domino_arena.sdk.match.core import MatchCore, TurnError, substitute_action
from domino_arena.sdk.match.decision import Decision
from domino_arena.sdk.match.notices import (
    FaultNotice,
    HandEndNotice,
    Outgoing,
    Step,
    StepNotice,
)
from domino_arena.sdk.match.records import replay
from domino_arena.sdk.match.results import FaultKind, FaultPolicy, MatchResult, Termination
from domino_arena.sdk.rules import (
    CHANCE,
    DEAL,
    DOUBLE_SIX,
    PASS,
    Discard,
    LogEntry,
    Play,
    make_game,
)
from domino_arena.server.play.timecontrol import TimeControl

CLOCK = TimeControl(move=1.0, bank=10.0, grace=0.05)
PASSING = make_game("passing", players=2)


def core(
    policy: FaultPolicy | None = FaultPolicy.SUBSTITUTE,
    *,
    clock: TimeControl | None = CLOCK,
    **kw: int,
) -> MatchCore:
    options: dict[str, Any] = {"seed": 3, "first_seat": 0, "max_deals": 1000, "max_strikes": 3}
    options.update(kw)
    return MatchCore(
        PASSING, ["a", "b"], time_control=clock, fault_policy=policy, match_id="m", **options
    )


def due(match: MatchCore) -> Decision:
    decision = match.next_decision()
    assert decision is not None
    return decision


def bad_tile(decision: Decision) -> Play:
    return Play(next(t for t in DOUBLE_SIX if t not in decision.observation.hand))


def test_the_core_says_whose_decision_is_due_and_deals_between_hands() -> None:
    match = core()
    decision = due(match)
    assert decision.seat == 0 and decision.step == 0
    assert decision.observation == match.state.observe(0)
    assert match.next_decision() == decision, "asking again gives the same decision"
    assert match.take() == [], "the first hand is dealt with the game: nothing to tell yet"
    while not match.state.is_chance():
        decision = due(match)
        match.reply(match.request().turn, decision.observation.legal_actions[0], 0.0)
    match.take()
    assert match.state.hand_results and match.state.deal_number == 1
    due(match)  # the deal is the core's own step, taken when the next decision is asked
    items = match.take()
    deal = items[-1]
    assert isinstance(deal, Step) and (deal.seat, deal.action, deal.think_ms) == (
        CHANCE,
        DEAL,
        None,
    )
    assert deal.before.is_chance() and deal.after.deal_number == 2
    told = StepNotice(LogEntry(CHANCE, DEAL), deal.after.scores, 2)
    assert items[:-1] == [Outgoing(0, told), Outgoing(1, told)]
    assert match.take() == [], "take forgets what it returned"


def test_a_clean_reply_is_played_charged_and_told_to_every_seat() -> None:
    match = core()
    decision = due(match)
    match.take()
    request = match.request()
    assert (request.seat, request.turn, request.step) == (0, 1, 0)
    assert (request.move_left, request.bank_left, request.grace) == (1.0, 10.0, 0.05)
    assert request.limit == pytest.approx(11.05)
    action = decision.observation.legal_actions[0]
    assert match.reply(request.turn, action, 1.5) is None
    assert match.banks == [9.5, 10.0], "half a second over the move time comes off the bank"
    items = match.take()
    assert items[:2] == [
        Outgoing(s, StepNotice(match.state.history[-1], (0, 0), 1)) for s in (0, 1)
    ]
    step = items[-1]
    assert isinstance(step, Step) and (step.seat, step.action, step.think_ms) == (0, action, 1500.0)
    assert due(match).seat == 1


def test_the_time_of_a_decision_adds_up_over_its_requests() -> None:
    match = core(clock=TimeControl(move=1.0, bank=2.0, grace=0.05))
    decision = due(match)
    first = match.request()
    match.dropped(first.turn, 1.4)  # the seat went away 1.4 s in: that time counts
    second = match.request()
    assert second.turn == first.turn + 1
    assert second.move_left == 0.0 and second.bank_left == pytest.approx(1.6)
    assert second.limit == pytest.approx(1.65)
    match.reply(second.turn, decision.observation.legal_actions[0], 0.5)
    assert match.banks[0] == pytest.approx(1.1), "1.9 s in all: 0.9 s from the bank"
    step = match.take()[-1]
    assert isinstance(step, Step) and step.think_ms == 1900.0


def test_a_reply_that_is_not_an_action_is_malformed() -> None:
    match = core(FaultPolicy.FORFEIT)
    due(match)
    fault = match.reply(match.request().turn, "play 6-6", 0.1)
    assert fault is not None
    assert (fault.kind, fault.reason, fault.rule) == (
        FaultKind.MALFORMED,
        "not an action: 'play 6-6'",
        "",
    )
    assert fault.forfeited and match.next_decision() is None
    result = match.result
    assert result is not None and result.termination is Termination.FORFEIT
    assert (result.winner, result.faulted_seat, result.fault) == (1, 0, FaultKind.MALFORMED)
    assert match.take() == [Outgoing(0, FaultNotice(1, FaultKind.MALFORMED, fault.reason, 1, True))]


def test_a_malformed_reply_keeps_the_drivers_reason() -> None:
    match = core(FaultPolicy.FORFEIT)
    due(match)
    fault = match.malformed(match.request().turn, "action: no tile 9-9", 0.0)
    assert (fault.kind, fault.reason) == (FaultKind.MALFORMED, "action: no tile 9-9")


def test_an_illegal_action_is_refused_with_the_engines_reason() -> None:
    match = core(FaultPolicy.FORFEIT)
    decision = due(match)
    action = bad_tile(decision)
    fault = match.reply(match.request().turn, action, 0.2)
    assert fault is not None and fault.kind is FaultKind.ILLEGAL
    with pytest.raises(Exception) as refused:
        match.state.apply(action)
    assert fault.reason == str(refused.value)
    assert fault.rule and fault.rule in fault.reason


def test_a_timeout_names_the_limit_and_drains_the_bank() -> None:
    match = core(FaultPolicy.FORFEIT)
    due(match)
    request = match.request()
    fault = match.timeout(request.turn, request.limit)
    assert fault.kind is FaultKind.TIMEOUT
    assert fault.reason == "no reply within 11.05 s (move 1 s + bank 10 s + grace 0.05 s)"
    assert match.banks[0] == 0.0


def test_a_disconnection_takes_the_last_turn_or_one_of_its_own() -> None:
    match = core()
    due(match)
    request = match.request()
    match.dropped(request.turn, 0.3)
    fault = match.disconnected("disconnected, and not back within 10 s")
    assert (fault.kind, fault.turn, fault.strikes, fault.forfeited) == (
        FaultKind.DISCONNECTED,
        request.turn,
        1,
        False,
    )
    due(match)  # the substitute was played; seat 1 is to move
    match.reply(match.request().turn, due(match).observation.legal_actions[0], 0.0)
    assert due(match).seat == 0
    fault = match.disconnected("gone before its request")
    assert fault.turn == request.turn + 2, "a decision with no request gets a turn of its own"
    assert match.turn == fault.turn


def test_substitutes_and_strikes_up_to_the_forfeit() -> None:
    match = core(max_strikes=2)
    decision = due(match)
    match.take()
    first = match.reply(match.request().turn, bad_tile(decision), 0.25)
    assert first is not None and (first.strikes, first.forfeited) == (1, False)
    before = match.state
    assert match.take() == [Outgoing(0, first.notice())], "the substitute waits for the ask"
    after_fault = due(match)
    items = match.take()
    step = items[-1]
    assert isinstance(step, Step) and step.before is before
    assert step.action == substitute_action(before, 3, first.turn) and step.think_ms == 250.0
    assert after_fault.seat == 1
    match.reply(match.request().turn, after_fault.observation.legal_actions[0], 0.0)
    assert due(match).seat == 0
    second = match.reply(match.request().turn, "nonsense", 0.0)
    assert second is not None and (second.strikes, second.forfeited) == (2, True)
    assert match.next_decision() is None
    result = match.result
    assert result is not None and result.termination is Termination.FORFEIT
    assert result.detail == (
        "seat 0 (a) forfeits after 2 faults: malformed at turn 3: not an action: 'nonsense'"
    )
    assert [f.kind for f in match.faults] == [FaultKind.ILLEGAL, FaultKind.MALFORMED]
    record = match.record()
    assert [s.substituted for s in record.steps] == [
        i == first.step for i in range(len(record.steps))
    ]
    assert record.fault_policy == {"policy": "substitute", "max_strikes": 2}
    assert replay(record).ok, str(replay(record))


def test_stale_and_unknown_turns_are_refused() -> None:
    match = core()
    decision = due(match)
    with pytest.raises(TurnError, match="turn 1 is not the open request"):
        match.reply(1, decision.observation.legal_actions[0], 0.0)
    request = match.request()
    with pytest.raises(TurnError, match="turn 1 is still open"):
        match.request()
    with pytest.raises(TurnError, match="turn 1 is still open"):
        match.disconnected("gone")
    with pytest.raises(TurnError, match=r"turn 0 is not the open request \(turn 1\)"):
        match.timeout(0, 1.0)
    match.reply(request.turn, decision.observation.legal_actions[0], 0.0)
    due(match)
    match.request()
    with pytest.raises(TurnError, match=r"turn 1 is not the open request \(turn 2\)"):
        match.reply(request.turn, decision.observation.legal_actions[0], 0.0)


def test_turns_number_every_request_through_the_match() -> None:
    match = core()
    turns = []
    while (decision := match.next_decision()) is not None:
        request = match.request()
        turns.append(request.turn)
        match.reply(request.turn, decision.observation.legal_actions[0], 0.0)
    assert turns == list(range(1, len(turns) + 1))
    result = match.result
    assert result is not None and result.termination is Termination.NORMAL
    assert result.outcome == match.state.outcome()
    hands = [
        i for i in match.take() if isinstance(i, Outgoing) and isinstance(i.notice, HandEndNotice)
    ]
    assert len(hands) == 2 * len(match.state.hand_results), "every hand end goes to every seat"
    assert replay(match.record()).ok


def play_out(match: MatchCore) -> MatchResult:
    while (decision := match.next_decision()) is not None:
        request = match.request()
        match.reply(request.turn, decision.observation.legal_actions[0], 0.0)
    assert match.result is not None
    return match.result


def test_the_deal_cap_adjudicates_the_game_by_its_scores() -> None:
    match = core(max_deals=1)
    result = play_out(match)
    state = match.state
    assert state.deal_number == 1 and state.is_chance() and state.outcome() is None
    assert result.termination is Termination.ADJUDICATED and result.termination.rated
    assert result.scores == state.scores
    top = max(state.scores)
    assert state.scores.count(top) == 1, "this seed's first deal has a leader"
    assert result.winner == state.scores.index(top)
    winner = result.winner
    assert result.detail == (
        "adjudicated: no winner by the rules after 1 deal, the referee's cap (max_deals); "
        f"scores {state.scores[0]}/{state.scores[1]}: seat {winner} ({'ab'[winner]}) has the "
        "highest score and wins"
    )
    record = match.record()
    assert record.result.termination is Termination.ADJUDICATED
    assert record.result.winner == winner and record.result.detail == result.detail
    assert replay(record).ok


def test_a_tie_at_the_top_at_the_cap_is_a_draw_between_the_tied_sides() -> None:
    for seed in range(300):
        match = MatchCore(make_game("moon"), "abc", seed=seed, first_seat=0, max_deals=1)
        result = play_out(match)
        top = max(result.scores)
        if result.termination is Termination.ADJUDICATED and result.scores.count(top) == 2:
            break
    else:
        pytest.fail("no two-way tie at the top after one Moon deal in 300 seeds")
    level = [f"seat {s} ({'abc'[s]})" for s in range(3) if result.scores[s] == top]
    assert result.winner is None
    assert f"{level[0]} and {level[1]} share the highest score, a draw" in result.detail
    assert replay(match.record()).ok


def test_replay_checks_an_adjudication_against_the_scores_and_where_play_stopped() -> None:
    match = core(max_deals=1)
    play_out(match)
    record = match.record()
    assert record.result.winner is not None
    wrong = dataclasses.replace(
        record, result=dataclasses.replace(record.result, winner=1 - record.result.winner)
    )
    assert not replay(wrong).ok and "winner" in (replay(wrong).error or "")
    cut = dataclasses.replace(record, steps=record.steps[:-3])
    report = replay(cut)
    assert not report.ok
    assert "an adjudicated game ends where a deal is due" in (report.error or "")


def test_with_no_cap_three_passers_deal_again_for_as_long_as_they_pass() -> None:
    match = MatchCore(make_game("moon"), "abc", seed=4, first_seat=0, max_deals=None)
    while match.state.deal_number < 50:
        decision = match.next_decision()
        assert decision is not None, "the rules never end a game of void deals"
        match.reply(match.request().turn, PASS, 0.0)
    assert match.result is None and match.state.scores == (0, 0, 0)


def test_untimed_play_has_no_limits_and_no_think_times() -> None:
    match = core(None, clock=None)
    decision = due(match)
    request = match.request()
    assert (request.move_left, request.bank_left, request.limit) == (math.inf,) * 3
    match.reply(request.turn, decision.observation.legal_actions[0], None)
    step = match.take()[-1]
    assert isinstance(step, Step) and step.think_ms is None
    due(match)
    fault = match.reply(match.request().turn, "x", None)
    assert fault is not None and fault.forfeited, "with no policy the first fault forfeits"
    assert match.record().fault_policy is None


def test_stop_ends_the_match_with_nobody_winning() -> None:
    match = core()
    due(match)
    match.request()
    result = match.stop(Termination.ABORTED, "aborted: shutdown")
    assert (result.termination, result.winner) == (Termination.ABORTED, None)
    assert match.next_decision() is None
    assert replay(match.record()).ok


def test_each_seat_sees_only_its_own_moon_discard() -> None:
    match = MatchCore(make_game("moon"), "abc", seed=1, first_seat=0, max_deals=10)
    while (decision := match.next_decision()) is not None:
        legal = decision.observation.legal_actions
        discards = [a for a in legal if isinstance(a, Discard)]
        match.reply(match.request().turn, discards[0] if discards else legal[0], None)
        items = match.take()
        if discards:
            seen = {i.seat: i.notice for i in items if isinstance(i, Outgoing)}
            assert all(isinstance(n, StepNotice) for n in seen.values())
            shown = {s: n.step.action for s, n in seen.items() if isinstance(n, StepNotice)}
            assert shown[decision.seat] == discards[0]
            assert {shown[s] for s in shown if s != decision.seat} == {Discard(None)}
            return
    pytest.fail("no discard in the game")


def test_the_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="expected 2 names, one per seat, got 1"):
        MatchCore(PASSING, ["a"], seed=1, max_deals=None)
    with pytest.raises(ValueError, match="max_strikes must be 1 or more, got 0"):
        MatchCore(PASSING, ["a", "b"], seed=1, max_deals=None, max_strikes=0)
    with pytest.raises(ValueError, match="first_seat 2 is not a seat of a 2-player game"):
        MatchCore(PASSING, ["a", "b"], seed=1, first_seat=2, max_deals=None)

"""The result enums, a match result, a bot's reply and shared events on the wire (sdk/wire/).

Each of Termination, FaultKind and FaultPolicy maps to its wire enum in one place; these pin
that every member has a distinct wire value and comes back, and that what has no member
(unspecified, a value from a newer version) is told apart rather than guessed.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from domino_arena.sdk.match.bot_errors import BotError
from domino_arena.sdk.match.results import FaultKind, FaultPolicy, Termination
from domino_arena.sdk.rules import DRAW, Bid, LogEntry
from domino_arena.sdk.wire import (
    EventEncoder,
    action_to_proto,
    bot_error_to_proto,
    events_of_entries,
    fault_kind_from_proto,
    fault_kind_to_proto,
    fault_policy_from_proto,
    fault_policy_to_proto,
    match_result_to_proto,
    ms,
    reply_action,
    termination_from_proto,
    termination_to_proto,
)
from domino_arena.v1 import referee_pb2 as pb


def test_every_result_enum_member_round_trips_through_a_distinct_wire_value() -> None:
    terminations = [termination_to_proto(t) for t in Termination]
    kinds = [fault_kind_to_proto(k) for k in FaultKind]
    policies = [fault_policy_to_proto(p) for p in FaultPolicy]
    for values in (terminations, kinds, policies):
        assert len(set(values)) == len(values) and 0 not in values
    assert [termination_from_proto(v) for v in terminations] == list(Termination)
    assert [fault_kind_from_proto(v) for v in kinds] == list(FaultKind)
    assert [fault_policy_from_proto(v) for v in policies] == list(FaultPolicy)
    assert termination_to_proto(Termination.FORFEIT) == pb.TERMINATION_FORFEIT
    assert fault_kind_to_proto(FaultKind.TIMEOUT) == pb.FAULT_KIND_TIMEOUT


def test_unspecified_and_unknown_values_have_no_member_but_the_policys_default() -> None:
    assert termination_from_proto(pb.TERMINATION_UNSPECIFIED) is None
    assert termination_from_proto(99) is None
    assert fault_kind_from_proto(pb.FAULT_KIND_UNSPECIFIED) is None
    assert fault_kind_from_proto(99) is None
    assert fault_kind_to_proto(None) == pb.FAULT_KIND_UNSPECIFIED
    assert fault_policy_from_proto(pb.FAULT_POLICY_UNSPECIFIED) is FaultPolicy.SUBSTITUTE
    assert fault_policy_from_proto(99) is None


@dataclass(frozen=True)
class Result:
    termination: Termination
    winner: int | None
    scores: tuple[int, ...]
    faulted_seat: int | None = None
    fault: FaultKind | None = None
    detail: str = ""


def test_a_match_result_has_its_wire_form() -> None:
    forfeit = Result(Termination.FORFEIT, 1, (3, 9), faulted_seat=0, fault=FaultKind.ILLEGAL)
    assert match_result_to_proto(forfeit, (0, 1)) == pb.MatchResult(
        termination=pb.TERMINATION_FORFEIT,
        winner=1,
        scores=[3, 9],
        side_of_seat=[0, 1],
        faulted_seat=0,
        fault=pb.FAULT_KIND_ILLEGAL,
    )
    void = match_result_to_proto(Result(Termination.VOID, None, (0, 0), detail="ours"), (0, 1))
    assert (void.winner, void.faulted_seat, void.fault) == (-1, -1, pb.FAULT_KIND_UNSPECIFIED)
    assert void.detail == "ours"


def test_a_reply_gives_its_action_or_the_words_sent_back() -> None:
    assert reply_action(pb.ActionReply(action=action_to_proto(Bid(5)))) == Bid(5)
    assert reply_action(pb.ActionReply()) == "ActionReply.action is missing"
    broken = pb.ActionReply()
    broken.action.play.SetInParent()
    assert reply_action(broken) == "action.play.tile: missing; expected the tile to play"


def test_a_reply_with_an_error_is_the_bots_error_and_with_both_is_malformed() -> None:
    error = pb.BotError(type="ValueError", message="no tile")
    assert reply_action(pb.ActionReply(error=error)) == BotError("ValueError", "no tile")
    both = pb.ActionReply(error=error, action=action_to_proto(Bid(5)))
    assert reply_action(both) == "ActionReply sets both action and error; expected one of them"
    assert bot_error_to_proto(BotError("KeyError", "x")) == pb.BotError(
        type="KeyError", message="x"
    )


def test_an_event_encoder_shares_an_event_only_for_the_very_same_step() -> None:
    encoder = EventEncoder()
    step, scores = LogEntry(0, DRAW), (1, 2)
    first = encoder.encode(step, scores, 3)
    assert encoder.encode(step, scores, 3) is first
    assert first == pb.Event(step=first.step, scores=[1, 2], deal=3)
    assert encoder.encode(LogEntry(0, DRAW), scores, 3) is not first  # equal, not the same
    assert encoder.encode(step, tuple([1, 2]), 3) is not first  # equal scores, other object
    assert EventEncoder().encode(step, scores, 4).deal == 4


def test_an_events_entry_is_its_message_in_a_request_and_reads_back_in_order() -> None:
    encoder = EventEncoder()
    step, scores = LogEntry(0, DRAW), (1, 2)
    entry = encoder.encode_entry(step, scores, 3)
    assert encoder.encode_entry(step, scores, 3) is entry  # serialized once per step
    second = encoder.encode_entry(LogEntry(1, Bid(5)), (4, 0), 3)
    request = pb.ActionRequest(turn=7)
    request.MergeFromString(entry + second)
    assert list(request.events) == [
        encoder.encode(step, scores, 3),
        pb.Event.FromString(second[2:]),
    ]
    assert request.turn == 7
    assert list(events_of_entries([entry, second])) == list(request.events)
    assert list(events_of_entries([])) == []


@pytest.mark.parametrize(
    ("seconds", "expected"), [(1.0, 1000), (0.0004, 0), (0.0006, 1), (-0.2, 0)]
)
def test_seconds_become_whole_milliseconds_never_below_zero(seconds: float, expected: int) -> None:
    assert ms(seconds) == expected

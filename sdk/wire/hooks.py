"""The bot hooks' values (:mod:`domino_arena.sdk.bot`) <-> the messages that carry them.

The gRPC client (:mod:`domino_arena.sdk.client.matches`) and the stdio host
(:mod:`domino_arena.sdk.stdio.host`) turn ``MatchStart``, ``HandEnd``, ``Fault`` and
``MatchEnd`` into the values a bot's hooks receive; :class:`~domino_arena.sdk.stdio.ExecBot`
goes the other way, turning the hooks local play calls into the messages a child process reads.
Both directions live here so the two stay each other's inverse. :class:`History` keeps the
current deal's public steps from the events the messages carry (protocol version 2): a
request's observation comes without them.
"""

from __future__ import annotations

from collections.abc import Sequence

from domino_arena.sdk.bot import (
    FaultInfo,
    HandEndInfo,
    MatchEndInfo,
    MatchEvent,
    MatchStartInfo,
    TimeLimits,
)
from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import CHANCE, Game, LogEntry
from domino_arena.v1 import referee_pb2

from .events import step_from_proto
from .games import game_from_proto, game_to_proto
from .observations import observation_from_proto, observation_to_proto
from .results import (
    fault_kind_from_proto,
    fault_kind_to_proto,
    fault_policy_from_proto,
    fault_policy_to_proto,
    hand_result_from_proto,
    outcome_from_proto,
    termination_from_proto,
    termination_to_proto,
)
from .timecontrol import time_limits_from_proto


def time_limits_to_proto(limits: TimeLimits) -> referee_pb2.TimeControl:
    """Return the ``TimeControl`` of a match's time limits (milliseconds both sides)."""
    return referee_pb2.TimeControl(
        move_ms=limits.move_ms, bank_ms=limits.bank_ms, grace_ms=limits.grace_ms
    )


def match_start_to_proto(info: MatchStartInfo) -> referee_pb2.MatchStart:
    """Return the ``MatchStart`` that tells a seat what ``info`` says."""
    start = referee_pb2.MatchStart(
        match_id=info.match_id,
        game=game_to_proto(info.game),
        seat=info.seat,
        partners=info.partners,
        players=info.players,
        time_control=time_limits_to_proto(info.time_limits),
        fault_policy=fault_policy_to_proto(info.fault_policy),
        max_strikes=info.max_strikes,
        resumed=info.resumed,
        people=info.people,
    )
    if info.snapshot is not None:
        start.snapshot.CopyFrom(observation_to_proto(info.snapshot))
    if info.bot_seed is not None:
        start.bot_seed = info.bot_seed
    return start


def match_start_from_proto(start: referee_pb2.MatchStart) -> MatchStartInfo:
    """Return the ``on_match_start`` value of a ``MatchStart`` (an unspecified fault policy is
    the proto's default, substitute).

    Raises:
        ConversionError: its game or snapshot cannot be read.
    """
    snapshot = None
    if start.HasField("snapshot"):
        snapshot = observation_from_proto(start.snapshot, "match_start.snapshot")
    return MatchStartInfo(
        match_id=start.match_id,
        game=game_from_proto(start.game, "match_start.game"),
        seat=start.seat,
        partners=tuple(start.partners),
        players=tuple(start.players),
        time_limits=time_limits_from_proto(start.time_control),
        fault_policy=fault_policy_from_proto(start.fault_policy) or FaultPolicy.SUBSTITUTE,
        max_strikes=start.max_strikes,
        resumed=start.resumed,
        snapshot=snapshot,
        bot_seed=start.bot_seed if start.HasField("bot_seed") else None,
        people=tuple(start.people),
    )


def hand_end_from_proto(hand: referee_pb2.HandEnd) -> HandEndInfo:
    """Return the ``on_hand_end`` value of a ``HandEnd``.

    Raises:
        ConversionError: its kind of end is unspecified or unknown.
    """
    return HandEndInfo(hand.match_id, hand_result_from_proto(hand), tuple(hand.scores))


def fault_to_proto(info: FaultInfo) -> referee_pb2.Fault:
    """Return the ``Fault`` that tells a seat of ``info``."""
    return referee_pb2.Fault(
        match_id=info.match_id,
        turn=info.turn,
        kind=fault_kind_to_proto(info.kind),
        reason=info.reason,
        strikes=info.strikes,
        forfeited=info.forfeited,
    )


def fault_from_proto(fault: referee_pb2.Fault) -> FaultInfo:
    """Return the ``on_fault`` value of a ``Fault``."""
    return FaultInfo(
        match_id=fault.match_id,
        turn=fault.turn,
        kind=fault_kind_from_proto(fault.kind),
        reason=fault.reason,
        strikes=fault.strikes,
        forfeited=fault.forfeited,
    )


def match_end_to_proto(info: MatchEndInfo) -> referee_pb2.MatchEnd:
    """Return the ``MatchEnd`` that tells a seat of ``info``."""
    termination = referee_pb2.TERMINATION_UNSPECIFIED
    if info.termination is not None:
        termination = termination_to_proto(info.termination)
    result = referee_pb2.MatchResult(
        termination=termination,
        winner=-1 if info.winner is None else info.winner,
        scores=info.scores,
        side_of_seat=info.side_of_seat,
        faulted_seat=-1 if info.faulted_seat is None else info.faulted_seat,
        fault=fault_kind_to_proto(info.fault),
        detail=info.detail,
    )
    return referee_pb2.MatchEnd(match_id=info.match_id, result=result)


def match_end_from_proto(end: referee_pb2.MatchEnd, game: Game | None, seat: int) -> MatchEndInfo:
    """Return the ``on_match_end`` value of a ``MatchEnd`` for ``seat`` (-1 when the match was
    never started here); the outcome is read when ``game`` is known and the result is rated.

    Raises:
        ConversionError: the winner is not a side of ``game``.
    """
    result = end.result
    termination = termination_from_proto(result.termination)
    outcome = None
    if game is not None and termination is not None and termination.rated:
        outcome = outcome_from_proto(result, game)
    return MatchEndInfo(
        match_id=end.match_id,
        seat=seat,
        termination=termination,
        winner=result.winner if result.winner >= 0 else None,
        scores=tuple(result.scores),
        side_of_seat=tuple(result.side_of_seat),
        faulted_seat=result.faulted_seat if result.faulted_seat >= 0 else None,
        fault=fault_kind_from_proto(result.fault),
        detail=result.detail,
        outcome=outcome,
    )


class History:
    """The public steps of a match's current deal, kept from the events its messages carry."""

    __slots__ = ("match_id", "steps")

    def __init__(self, match_id: str) -> None:
        self.match_id = match_id
        self.steps: list[LogEntry] = []

    def restart(self, steps: Sequence[LogEntry]) -> None:
        """Start again from a snapshot's history (a resumed seat)."""
        self.steps = list(steps)

    def add(self, events: Sequence[referee_pb2.Event], holder: str) -> list[MatchEvent]:
        """Add the steps of ``events`` and return each as an ``on_event`` value.

        ``holder`` names the message that carried them, for errors ("" for an ``Event`` sent
        on its own).

        Raises:
            ConversionError: a step cannot be read (the steps before it are kept).
        """
        out: list[MatchEvent] = []
        for index, event in enumerate(events):
            where = f"{holder}.events[{index}].step" if holder else "event.step"
            step = step_from_proto(event.step, where)
            if step.seat == CHANCE:
                self.steps.clear()  # a deal starts a new history
            else:
                self.steps.append(step)
            out.append(MatchEvent(self.match_id, step, tuple(event.scores), event.deal))
        return out

"""How hands and matches ended <-> ``HandEnd``, ``MatchResult`` and their enums.

The enums of :mod:`domino_arena.sdk.match.results` (Termination, FaultKind, FaultPolicy) and
:class:`~domino_arena.sdk.rules.HandEnd` are mapped to their wire values here and nowhere else:
the referee, the admin API, the spectators' stream and the SDK client all convert through these.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Protocol

from domino_arena.sdk.match.results import FaultKind, FaultPolicy, Termination
from domino_arena.sdk.rules import Game, HandEnd, HandResult, Outcome
from domino_arena.v1 import referee_pb2

from .common import ConversionError

_HAND_END_KIND: Final = {
    HandEnd.DOMINO: referee_pb2.HAND_END_KIND_DOMINO,
    HandEnd.BLOCKED: referee_pb2.HAND_END_KIND_BLOCKED,
    HandEnd.PASSED_OUT: referee_pb2.HAND_END_KIND_PASSED_OUT,
    HandEnd.TRICKS: referee_pb2.HAND_END_KIND_TRICKS,
    HandEnd.VOID: referee_pb2.HAND_END_KIND_VOID,
    HandEnd.TARGET: referee_pb2.HAND_END_KIND_TARGET,
}
_HAND_END_OF: Final[dict[int, HandEnd]] = {int(code): end for end, code in _HAND_END_KIND.items()}

_TERMINATION: Final[dict[Termination, referee_pb2.Termination.ValueType]] = {
    Termination.NORMAL: referee_pb2.TERMINATION_NORMAL,
    Termination.FORFEIT: referee_pb2.TERMINATION_FORFEIT,
    Termination.VOID: referee_pb2.TERMINATION_VOID,
    Termination.ABORTED: referee_pb2.TERMINATION_ABORTED,
    Termination.ADJUDICATED: referee_pb2.TERMINATION_ADJUDICATED,
}
_TERMINATION_OF: Final[dict[int, Termination]] = {int(v): t for t, v in _TERMINATION.items()}

_FAULT_KIND: Final[dict[FaultKind, referee_pb2.FaultKind.ValueType]] = {
    FaultKind.TIMEOUT: referee_pb2.FAULT_KIND_TIMEOUT,
    FaultKind.ILLEGAL: referee_pb2.FAULT_KIND_ILLEGAL,
    FaultKind.MALFORMED: referee_pb2.FAULT_KIND_MALFORMED,
    FaultKind.DISCONNECTED: referee_pb2.FAULT_KIND_DISCONNECTED,
    FaultKind.BOT_ERROR: referee_pb2.FAULT_KIND_BOT_ERROR,
}
_FAULT_KIND_OF: Final[dict[int, FaultKind]] = {int(v): k for k, v in _FAULT_KIND.items()}

_FAULT_POLICY: Final[dict[FaultPolicy, referee_pb2.FaultPolicy.ValueType]] = {
    FaultPolicy.FORFEIT: referee_pb2.FAULT_POLICY_FORFEIT,
    FaultPolicy.SUBSTITUTE: referee_pb2.FAULT_POLICY_SUBSTITUTE,
}
_FAULT_POLICY_OF: Final[dict[int, FaultPolicy]] = {
    referee_pb2.FAULT_POLICY_UNSPECIFIED: FaultPolicy.SUBSTITUTE,  # the proto's stated default
    **{int(v): p for p, v in _FAULT_POLICY.items()},
}


# -- termination, fault kind, fault policy --------------------------------------------------------


def termination_to_proto(termination: Termination) -> referee_pb2.Termination.ValueType:
    """Return the wire enum value of how a match ended."""
    return _TERMINATION[termination]


def termination_from_proto(value: int) -> Termination | None:
    """Return how a match ended from its wire value; None when unspecified or unknown."""
    return _TERMINATION_OF.get(value)


def fault_kind_to_proto(kind: FaultKind | None) -> referee_pb2.FaultKind.ValueType:
    """Return the wire enum value of a fault kind; None (no fault) is ``UNSPECIFIED``."""
    return referee_pb2.FAULT_KIND_UNSPECIFIED if kind is None else _FAULT_KIND[kind]


def fault_kind_from_proto(value: int) -> FaultKind | None:
    """Return the fault kind of a wire value; None when unspecified (no fault) or unknown."""
    return _FAULT_KIND_OF.get(value)


def fault_policy_to_proto(policy: FaultPolicy) -> referee_pb2.FaultPolicy.ValueType:
    """Return the wire enum value of a fault policy."""
    return _FAULT_POLICY[policy]


def fault_policy_from_proto(value: int) -> FaultPolicy | None:
    """Return the fault policy of a wire value (unspecified is substitute, the proto's
    default); None for a value this version does not know, which the caller refuses or
    reads as its own default."""
    return _FAULT_POLICY_OF.get(value)


# -- hand results and outcomes --------------------------------------------------------------------


def hand_end_kind(end: HandEnd) -> referee_pb2.HandEndKind.ValueType:
    """Return the wire enum value of how a hand ended."""
    return _HAND_END_KIND[end]


def hand_end_from_kind(kind: int, where: str = "hand_end.end") -> HandEnd:
    """Return how a hand ended from its wire enum value.

    Raises:
        ConversionError: the value is unspecified or unknown.
    """
    end = _HAND_END_OF.get(kind)
    if end is None:
        problem = "missing" if kind == 0 else f"unknown value {kind}"
        raise ConversionError(where, problem, "a HandEndKind")
    return end


def hand_result_to_proto(
    result: HandResult, scores: Sequence[int], match_id: str = ""
) -> referee_pb2.HandEnd:
    """Return the ``HandEnd`` message of one scored hand; ``scores`` are the totals after it."""
    return referee_pb2.HandEnd(
        match_id=match_id,
        deal=result.deal,
        end=_HAND_END_KIND[result.end],
        points=result.points,
        scores=scores,
        detail=result.detail,
    )


def hand_result_from_proto(message: referee_pb2.HandEnd, where: str = "hand_end") -> HandResult:
    """Return the scored hand a ``HandEnd`` message reports (its ``scores`` are read directly).

    Raises:
        ConversionError: the kind of end is unspecified or unknown.
    """
    end = hand_end_from_kind(message.end, f"{where}.end")
    return HandResult(message.deal, end, tuple(message.points), message.detail)


def outcome_from_proto(message: referee_pb2.MatchResult, game: Game) -> Outcome | None:
    """Return the outcome a ``MatchResult`` reports, or None when no side won (void, aborted).

    A forfeit has a winner too; ``Outcome.detail`` is the referee's detail text.

    Raises:
        ConversionError: the winner is not a side of ``game``.
    """
    winner = message.winner
    if winner < 0:
        return None
    if winner >= len(game.sides):
        raise ConversionError(
            "match_result.winner", str(winner), f"a side 0-{len(game.sides) - 1} or -1"
        )
    return Outcome(
        winner=winner, scores=tuple(message.scores), sides=game.sides, detail=message.detail
    )


# -- match results --------------------------------------------------------------------------------


class MatchResultFields(Protocol):
    """What the wire carries of a match's end; the referee's ``MatchResult`` has these fields.

    A protocol, so the SDK converts the server's result without importing the server.
    """

    @property
    def termination(self) -> Termination: ...
    @property
    def winner(self) -> int | None: ...
    @property
    def scores(self) -> tuple[int, ...]: ...
    @property
    def faulted_seat(self) -> int | None: ...
    @property
    def fault(self) -> FaultKind | None: ...
    @property
    def detail(self) -> str: ...


def match_result_to_proto(
    result: MatchResultFields, side_of_seat: Sequence[int]
) -> referee_pb2.MatchResult:
    """Return the wire form of a match result; ``side_of_seat`` is the game's seat -> side."""
    return referee_pb2.MatchResult(
        termination=_TERMINATION[result.termination],
        winner=-1 if result.winner is None else result.winner,
        scores=result.scores,
        side_of_seat=side_of_seat,
        faulted_seat=-1 if result.faulted_seat is None else result.faulted_seat,
        fault=fault_kind_to_proto(result.fault),
        detail=result.detail,
    )

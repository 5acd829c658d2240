"""A bot's own error (its ``choose`` raised): the text every page shows, and the fault the match
core charges for it, in the core and in local play (docs/referee.md, "Faults")."""

from __future__ import annotations

from domino_arena.sdk.local import play_game
from domino_arena.sdk.match.bot_errors import MAX_MESSAGE, MAX_TYPE, BotError, escape, shown
from domino_arena.sdk.match.core import MatchCore
from domino_arena.sdk.match.notices import FaultNotice, Outgoing
from domino_arena.sdk.match.records import replay
from domino_arena.sdk.match.results import FaultKind, FaultPolicy, Termination
from domino_arena.sdk.rules import make_game
from tests.fakes.bots import CRASH_MESSAGE, Crashing, FirstLegal

PASSING = make_game("passing", players=2)


def test_the_reason_is_the_type_and_message() -> None:
    assert BotError("ValueError", "no tile").reason == "ValueError: no tile"
    assert BotError("KeyError", "").reason == "KeyError"
    assert BotError("", "").reason == "Exception", "a reason always names a type"
    assert shown(ValueError("bad\nmove")) == "ValueError: bad\\nmove"


def test_a_hostile_error_stays_on_one_line_and_bounded() -> None:
    """Whatever a bot sends, the reason is one line of bounded length."""
    flood = "x\n\x1b[31m\\" * 10_000
    reason = BotError("Evil\r\nType" * 50, flood).reason
    assert "\n" not in reason and "\r" not in reason and "\x1b" not in reason
    assert reason.startswith("Evil\\r\\nTypeEvil")
    assert len(reason) < 10 * (MAX_TYPE + MAX_MESSAGE)
    assert reason.endswith(f"({len(flood) - MAX_MESSAGE - 40} more characters)")
    assert escape("a\\b\tc\u2028") == "a\\\\b\\tc\\u2028"


def test_the_sdk_bounds_what_it_sends_and_the_referee_keeps_it_as_sent() -> None:
    """``BotError.of`` cuts a long message itself; its note survives the referee's bound."""
    error = BotError.of(RuntimeError("y" * 5000))
    assert error.message == "y" * MAX_MESSAGE + f"... ({5000 - MAX_MESSAGE} more characters)"
    assert error.reason == f"RuntimeError: {error.message}"


def test_the_core_charges_a_bot_error_with_its_text() -> None:
    match = MatchCore(
        PASSING, ["a", "b"], seed=3, first_seat=0, max_deals=1000, fault_policy=FaultPolicy.FORFEIT
    )
    assert match.next_decision() is not None
    match.take()
    turn = match.request().turn
    fault = match.bot_error(turn, BotError("ValueError", "no tile 6-6"), 0.1)
    assert (fault.kind, fault.reason, fault.forfeited) == (
        FaultKind.BOT_ERROR,
        "ValueError: no tile 6-6",
        True,
    )
    assert match.take() == [
        Outgoing(0, FaultNotice(turn, FaultKind.BOT_ERROR, "ValueError: no tile 6-6", 1, True))
    ]
    result = match.result
    assert result is not None and result.termination is Termination.FORFEIT
    assert result.fault is FaultKind.BOT_ERROR and result.faulted_seat == 0
    assert result.detail == "seat 0 (a) forfeits: bot error at turn 1: ValueError: no tile 6-6"


def test_local_play_charges_a_crash_as_a_bot_error_and_plays_on() -> None:
    """Under ``substitute`` a bot whose every other ``choose`` raises plays on; each crash is
    a ``bot_error`` in the record, which replays."""
    played = play_game(
        PASSING,
        [Crashing(every=2), FirstLegal()],
        seed=4,
        fault_policy=FaultPolicy.SUBSTITUTE,
        max_strikes=3,
    )
    faults = played.record.faults
    assert [(f.seat, f.kind, f.reason) for f in faults] == [
        (0, FaultKind.BOT_ERROR, f"ValueError: {CRASH_MESSAGE}")
    ] * 3
    assert played.result.termination is Termination.FORFEIT
    assert played.result.fault is FaultKind.BOT_ERROR
    assert f"bot error at turn {faults[-1].turn}: ValueError: {CRASH_MESSAGE}" in (
        played.result.detail
    )
    assert replay(played.record).ok

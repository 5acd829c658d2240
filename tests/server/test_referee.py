"""The referee core (server/referee.py) against fake seats, on trio's MockClock.

Each misbehaving seat must end the match exactly as the fault policy says (docs/referee.md: faults)
and leave a record that names the fault and still replays; a failure of the referee's own voids
the match and charges nobody; shutdown tells every seat and lets the cancellation through. Time
is virtual: ``MockClock(autojump_threshold=0)`` jumps to the next deadline as soon as every task
waits, so a bot that "thinks" for a minute costs nothing and deadlines are exact.
"""

from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import pytest
import trio
from trio.testing import MockClock

from domino_arena.sdk.match.core import substitute_action
from domino_arena.sdk.match.notices import Step
from domino_arena.sdk.match.records import (
    MatchRecord,
    RecordFault,
    forfeit_winner,
    parse_record,
    record_lines,
    replay,
    write_record,
)
from domino_arena.sdk.match.results import FaultKind, FaultPolicy, Termination
from domino_arena.sdk.rules import (
    CHANCE,
    Discard,
    Game,
    GameState,
    IllegalActionError,
    LogEntry,
    configurations,
    make_game,
)
from domino_arena.sdk.rules.state import public_entry
from domino_arena.server.play.referee import NOTICE_TIMEOUT, MatchReport, play_match
from domino_arena.server.play.seats import Malformed, Seat
from domino_arena.server.play.timecontrol import TimeControl

from ..fakes.seats import (
    CrashSeat,
    EventBugSeat,
    FakeSeat,
    IllegalSeat,
    LateReplySeat,
    MalformedSeat,
    QueuedSlowSeat,
    ReconnectSeat,
    SilentSeat,
    SlowSeat,
    StuckFinishSeat,
)

T = TypeVar("T")

CLOCK = TimeControl(move=1.0, bank=10.0, grace=0.05)
SEED = 3
FORFEIT = FaultPolicy.FORFEIT
SUBSTITUTE = FaultPolicy.SUBSTITUTE


def run(fn: Callable[[], Awaitable[T]]) -> T:
    """Run ``fn`` under a fresh MockClock that starts at 0 and jumps whenever all tasks wait."""
    return trio.run(fn, clock=MockClock(autojump_threshold=0))


@dataclasses.dataclass
class Played:
    report: MatchReport
    ended_at: float
    """Virtual seconds from the start to the end of the match (seats told included)."""
    steps: list[tuple[Step, float]]
    """Each step passed to ``on_step``, with the virtual time it was applied."""

    @property
    def record(self) -> MatchRecord:
        return self.report.record


def play(
    seats: Sequence[Seat],
    game: Game | None = None,
    *,
    policy: FaultPolicy = FORFEIT,
    clock: TimeControl = CLOCK,
    seed: int = SEED,
    **options: Any,
) -> Played:
    """Play one match on the MockClock, seat 0 first unless ``first_seat`` says otherwise."""
    the_game = game or make_game("passing")
    options.setdefault("first_seat", 0)
    steps: list[tuple[Step, float]] = []

    async def main() -> Played:
        report = await play_match(
            the_game,
            seats,
            match_id="match-1",
            seed=seed,
            time_control=clock,
            fault_policy=policy,
            on_step=lambda step: steps.append((step, trio.current_time())),
            **options,
        )
        return Played(report, trio.current_time(), steps)

    return run(main)


def text_of(record: MatchRecord) -> str:
    out = io.StringIO()
    write_record(record, out)
    return out.getvalue()


def assert_sound(record: MatchRecord) -> None:
    """The record survives writing and reading, and replays step by step."""
    assert parse_record(text_of(record)) == record
    report = replay(record)
    assert report.ok, str(report)


def state_at(record: MatchRecord, step: int) -> GameState:
    """Return the position before step ``step`` of ``record``."""
    state = make_game(record.game, **record.options).new_game(
        record.seed, first_seat=record.first_seat
    )
    for recorded in record.steps[:step]:
        state = state.apply(recorded.action)
    return state


# -- whole matches ----------------------------------------------------------------------------

GAMES = list(configurations())


@pytest.mark.parametrize("game", GAMES, ids=[g.describe() for g in GAMES])
def test_good_seats_play_every_configuration_to_the_end(game: Game) -> None:
    seats = [FakeSeat(f"bot{i}", seed=i) for i in range(game.num_players)]
    played = play(seats, game, first_seat=None)
    result, record = played.report.result, played.record

    assert result.termination is Termination.NORMAL
    assert result.outcome is not None
    assert (result.winner, result.scores) == (result.outcome.winner, result.outcome.scores)
    assert played.report.faults == ()
    assert_sound(record)
    final = replay(record).state
    assert final is not None and final.outcome() == result.outcome
    assert record.seats == tuple(f"bot{i}" for i in range(game.num_players))
    assert record.match_id == "match-1"
    assert record.time_control == {"move_ms": 1000, "bank_ms": 10000, "grace_ms": 50}
    assert record.fault_policy == {"policy": "forfeit", "max_strikes": 3}
    assert all((s.think_ms is None) == (s.seat == CHANCE) for s in record.steps)

    # Turn numbers go up by one per request through the whole match.
    requests = sorted(r.turn for seat in seats for r in seat.requests)
    assert requests == list(range(1, len(requests) + 1))
    assert len(requests) == sum(1 for s in record.steps if s.seat != CHANCE)

    history = final.history
    for i, seat in enumerate(seats):
        info, snapshot = seat.starts[0]
        assert len(seat.starts) == 1 and snapshot is None
        assert (info.seat, info.match_id, info.players) == (i, "match-1", record.seats)
        # A seat is asked with its own observation of the position, nothing more.
        mine = [step.before.observe(i) for step, _ in played.steps if step.seat == i]
        assert [r.observation for r in seat.requests] == mine
        # Every seat sees every step, as public_entry shows it to that seat.
        assert [step for step, _, _ in seat.events] == [public_entry(e, i) for e in history]
        assert [deal for _, _, deal in seat.events] == [
            step.after.deal_number for step, _ in played.steps
        ]
        assert seat.events[-1][1] == result.scores
        assert [hand for hand, _ in seat.hand_ends] == list(final.hand_results)
        assert seat.finishes == [result]
        assert seat.faults == []
    assert [step.index for step, _ in played.steps] == list(range(len(history)))
    assert [step.think_ms for step, _ in played.steps] == [s.think_ms for s in record.steps]


def test_other_seats_moon_discards_stay_hidden() -> None:
    seats = [FakeSeat(f"bot{i}", seed=i) for i in range(3)]
    played = play(seats, make_game("moon"))
    final = replay(played.record).state
    assert final is not None
    discards = [(k, e) for k, e in enumerate(final.history) if isinstance(e.action, Discard)]
    assert discards
    for i, seat in enumerate(seats):
        seen = [step for step, _, _ in seat.events]
        for k, entry in discards:
            assert seen[k].action == (entry.action if entry.seat == i else Discard(None))


# -- the clock --------------------------------------------------------------------------------


def test_the_bank_pays_for_overruns_until_a_timeout() -> None:
    slow = SlowSeat(delay=1.5)
    played = play([slow, FakeSeat()], clock=TimeControl(move=1.0, bank=2.0, grace=0.05))
    assert [(r.move, r.bank) for r in slow.requests] == [
        (1.0, 2.0),
        (1.0, 1.5),
        (1.0, 1.0),
        (1.0, 0.5),
        (1.0, 0.0),
    ]
    [fault] = played.report.faults
    assert (fault.kind, fault.seat, fault.turn) == (FaultKind.TIMEOUT, 0, slow.requests[-1].turn)
    assert fault.reason == "no reply within 1.05 s (move 1 s + bank 0 s + grace 0.05 s)"
    assert played.ended_at == pytest.approx(slow.requests[-1].sent + 1.05)
    mine = [s.think_ms for s in played.record.steps if s.seat == 0]
    assert mine == [1500.0] * 4
    assert {s.think_ms for s in played.record.steps if s.seat == 1} == {0.0}


def test_time_within_the_move_leaves_the_bank_alone() -> None:
    slow = SlowSeat(delay=0.9)
    played = play([slow, FakeSeat()])
    assert played.report.result.termination is Termination.NORMAL
    assert {r.bank for r in slow.requests} == {10.0}
    assert {s.think_ms for s in played.record.steps if s.seat == 0} == {900.0}


def test_a_seat_that_queues_events_hears_every_step_as_an_awaited_seat_does() -> None:
    """``queue_event`` (a remote bot's seat) is the same notice as ``event``, without the await."""
    queued = [QueuedSlowSeat(0.0, seed=1), QueuedSlowSeat(0.0, seed=2)]
    awaited = [SlowSeat(0.0, seed=1), SlowSeat(0.0, seed=2)]
    played = play(queued)
    assert played.record == play(awaited).record
    for mine, theirs in zip(queued, awaited, strict=True):
        assert mine.events == theirs.events and mine.events
        assert "event" not in mine.calls
        assert mine.calls.count("queue_event") == theirs.calls.count("event")


def test_replies_at_the_edge_of_their_deadline_charge_nothing_to_the_next_request() -> None:
    """After a reply the referee leaves its deadline until the next request moves it; a reply
    just inside the deadline must not leave a timeout behind for the seat asked next."""
    clock = TimeControl(move=1.0, bank=0.0, grace=0.05)
    edge = QueuedSlowSeat(delay=1.049)
    quick = QueuedSlowSeat(delay=0.0, seed=4)
    played = play([edge, quick], clock=clock)
    assert played.report.result.termination is Termination.NORMAL
    assert played.report.faults == ()
    assert {s.think_ms for s in played.record.steps if s.seat == 0} == {1049.0}
    assert {s.think_ms for s in played.record.steps if s.seat == 1} == {0.0}
    # and the same one step later: the reply comes a hair after the deadline, a timeout
    late = QueuedSlowSeat(delay=1.0505)
    played = play([late, QueuedSlowSeat(delay=0.0, seed=4)], clock=clock)
    [fault] = played.report.faults
    assert (fault.kind, fault.seat, fault.turn) == (FaultKind.TIMEOUT, 0, 1)


def test_a_deadline_left_after_a_reply_never_cancels_a_notice_that_takes_time() -> None:
    """A seat that is awaited for its events (and takes a while) after a reply just inside the
    deadline: the referee lifts the deadline before awaiting it, so nothing is cancelled."""

    class SlowToHear(SlowSeat):
        async def event(self, step: LogEntry, scores: tuple[int, ...], deal: int) -> None:
            await trio.sleep(0.01)
            await super().event(step, scores, deal)

    clock = TimeControl(move=1.0, bank=0.0, grace=0.05)
    played = play([SlowSeat(delay=1.049), SlowToHear(0.0, seed=4)], clock=clock)
    assert played.report.result.termination is Termination.NORMAL
    assert played.report.faults == ()


def test_the_deadline_is_move_plus_bank_plus_grace() -> None:
    silent = SilentSeat(from_request=2)
    played = play([silent, FakeSeat()])
    second = silent.requests[1]
    assert second.sent == 0.0
    assert played.ended_at == pytest.approx(11.05)
    assert played.report.result.detail == (
        "seat 0 (silent) forfeits: timeout at turn 3: "
        "no reply within 11.05 s (move 1 s + bank 10 s + grace 0.05 s)"
    )


# -- each fault, under each policy --------------------------------------------------------------

MALFORMED = Malformed("action: no tile 9-9 (docs/rules.md 0.1)")

FAULTS: list[tuple[str, Callable[[int], FakeSeat], FaultKind, str | None]] = [
    ("slow", lambda k: SlowSeat(60.0, from_request=k), FaultKind.TIMEOUT, None),
    ("silent", lambda k: SilentSeat(from_request=k), FaultKind.TIMEOUT, None),
    ("illegal", lambda k: IllegalSeat(from_request=k), FaultKind.ILLEGAL, None),
    (
        "malformed",
        lambda k: MalformedSeat(MALFORMED, from_request=k),
        FaultKind.MALFORMED,
        MALFORMED.reason,
    ),
    (
        "not-an-action",
        lambda k: MalformedSeat("play 6-6", from_request=k),
        FaultKind.MALFORMED,
        "not an action: 'play 6-6'",
    ),
    (
        "crash",
        lambda k: CrashSeat(from_request=k),
        FaultKind.DISCONNECTED,
        "disconnected, and not back within 10 s",
    ),
]
FAULT_IDS = [name for name, *_ in FAULTS]


def expected_reason(
    kind: FaultKind,
    reason: str | None,
    record: MatchRecord,
    *,
    seat: FakeSeat,
    step: int,
    deadline: float,
) -> str:
    """The reason the referee must give: fixed text, the engine's own words, or the clock's."""
    if reason is not None:
        return reason
    if kind is FaultKind.TIMEOUT:
        return (
            f"no reply within {deadline:g} s (move 1 s + bank {deadline - 1.05:g} s + grace 0.05 s)"
        )
    _, bad = seat.replies[-1]
    with pytest.raises(IllegalActionError) as refused:
        state_at(record, step).apply(bad)  # type: ignore[arg-type]
    return str(refused.value)


@pytest.mark.parametrize(("name", "make", "kind", "reason"), FAULTS, ids=FAULT_IDS)
def test_under_forfeit_the_first_fault_loses_the_match(
    name: str, make: Callable[[int], FakeSeat], kind: FaultKind, reason: str | None
) -> None:
    bad, good = make(3), FakeSeat()
    played = play([bad, good], policy=FORFEIT)
    result, record = played.report.result, played.record

    [fault] = played.report.faults
    assert (fault.seat, fault.kind, fault.strikes, fault.forfeited) == (0, kind, 1, True)
    assert fault.step == len(record.steps)
    assert fault.reason == expected_reason(
        kind, reason, record, seat=bad, step=fault.step, deadline=11.05
    )
    assert result.termination is Termination.FORFEIT
    assert (result.winner, result.faulted_seat, result.fault) == (1, 0, kind)
    assert (
        result.detail
        == f"seat 0 ({bad.name}) forfeits: {kind.value} at turn {fault.turn}: {fault.reason}"
    )
    assert result.scores == replay(record).state.scores  # type: ignore[union-attr]
    # The bot is told when it can be reached; the other seat is charged nothing.
    if bad.connected:
        assert [(n.turn, n.kind, n.reason, n.strikes, n.forfeited) for n in bad.faults] == [
            (fault.turn, kind, fault.reason, 1, True)
        ]
        assert bad.finishes == [result]
    else:
        assert bad.faults == []  # it is gone for good: nobody to tell
    assert good.faults == [] and good.finishes == [result]
    # The record says it all and replays.
    assert record.result.termination is Termination.FORFEIT
    assert record.faults == (RecordFault(0, fault.turn, fault.step, kind, fault.reason, 1, True),)
    assert not any(s.substituted for s in record.steps)
    assert_sound(record)


@pytest.mark.parametrize(("name", "make", "kind", "reason"), FAULTS, ids=FAULT_IDS)
def test_under_substitute_the_referee_plays_until_the_last_strike(
    name: str, make: Callable[[int], FakeSeat], kind: FaultKind, reason: str | None
) -> None:
    bad, good = make(2), FakeSeat()
    played = play([bad, good], policy=SUBSTITUTE)
    result, record, faults = played.report.result, played.record, played.report.faults

    assert [(f.seat, f.kind, f.strikes, f.forfeited) for f in faults] == [
        (0, kind, 1, False),
        (0, kind, 2, False),
        (0, kind, 3, True),
    ]
    assert [f.turn for f in faults] == sorted({f.turn for f in faults})
    # The first timeout spends the bank, so later ones come sooner.
    deadlines = [11.05, 1.05, 1.05] if kind is FaultKind.TIMEOUT else [0.0] * 3
    for fault, deadline in zip(faults, deadlines, strict=True):
        if kind is not FaultKind.ILLEGAL:
            assert fault.reason == expected_reason(
                kind, reason, record, seat=bad, step=fault.step, deadline=deadline
            )
    # Each strike but the last was answered with the seeded substitute move.
    for fault in faults[:2]:
        step = record.steps[fault.step]
        assert step.substituted and step.seat == 0
        assert step.action == substitute_action(state_at(record, fault.step), SEED, fault.turn)
    assert [i for i, s in enumerate(record.steps) if s.substituted] == [f.step for f in faults[:2]]
    assert faults[2].step == len(record.steps)
    assert result.termination is Termination.FORFEIT
    assert (result.winner, result.faulted_seat, result.fault) == (1, 0, kind)
    if kind is not FaultKind.DISCONNECTED:
        assert [(n.kind, n.strikes, n.forfeited) for n in bad.faults] == [
            (kind, 1, False),
            (kind, 2, False),
            (kind, 3, True),
        ]
        assert [n.reason for n in bad.faults] == [f.reason for f in faults]
    assert good.faults == []
    assert [f.to_record() for f in faults] == list(record.faults)
    assert_sound(record)


def test_an_illegal_action_is_refused_with_the_engines_reason() -> None:
    bad = IllegalSeat(from_request=2)
    played = play([bad, FakeSeat()], policy=SUBSTITUTE)
    for fault in played.report.faults:
        reply = next(r for t, r in bad.replies if t == fault.turn)
        with pytest.raises(IllegalActionError) as refused:
            state_at(played.record, fault.step).apply(reply)  # type: ignore[arg-type]
        assert fault.reason == str(refused.value)
        assert fault.reason.startswith(f"illegal action '{reply}': docs/rules.md ")
    assert len(played.report.faults) == 3


@pytest.mark.parametrize("strikes", [1, 2, 5])
def test_max_strikes_sets_how_many_faults_a_seat_survives(strikes: int) -> None:
    played = play([IllegalSeat(), FakeSeat()], policy=SUBSTITUTE, max_strikes=strikes)
    faults = played.report.faults
    assert [f.strikes for f in faults] == list(range(1, strikes + 1))
    assert [f.forfeited for f in faults] == [False] * (strikes - 1) + [True]
    assert sum(s.substituted for s in played.record.steps) == strikes - 1
    assert played.record.fault_policy == {"policy": "substitute", "max_strikes": strikes}


def test_a_seat_that_faults_less_than_k_times_plays_on() -> None:
    class TwoBadMoves(IllegalSeat):
        async def answer(self, k: int, turn: int, observation: Any) -> Any:
            if k in (2, 5):
                return await super().answer(k, turn, observation)
            return self.bot.choose(observation)

    bad = TwoBadMoves(from_request=1)
    played = play([bad, FakeSeat()], policy=SUBSTITUTE)
    assert played.report.result.termination is Termination.NORMAL
    assert [(f.kind, f.strikes, f.forfeited) for f in played.report.faults] == [
        (FaultKind.ILLEGAL, 1, False),
        (FaultKind.ILLEGAL, 2, False),
    ]
    assert [(n.strikes, n.forfeited) for n in bad.faults] == [(1, False), (2, False)]
    assert_sound(played.record)


# -- forfeits with more than two sides ----------------------------------------------------------


def test_forfeit_winner_rule() -> None:
    assert forfeit_winner([10, 20], 1) == 0
    assert forfeit_winner([10, 20], 0) == 1
    assert forfeit_winner([5, 9, 12], 2) == 1  # the best of the others
    assert forfeit_winner([5, 9, 9], 0) == 1  # a tie goes to the lowest side
    assert forfeit_winner([50, 0, 0, 0], 0) == 1  # the forfeiting side loses even when ahead
    assert forfeit_winner([-3, -1, 4], 2) == 1
    with pytest.raises(ValueError, match="at least two sides"):
        forfeit_winner([4], 0)


@pytest.mark.parametrize(
    ("bad_seat", "from_request", "scores", "winner"),
    [
        (0, 10, (0, 0, 0), 1),  # all level: the lowest other side
        (0, 15, (0, 22, 0), 1),
        (1, 20, (37, 0, 30), 0),
    ],
)
def test_a_forfeit_among_three_goes_to_the_best_other_side(
    bad_seat: int, from_request: int, scores: tuple[int, ...], winner: int
) -> None:
    seats: list[FakeSeat] = [FakeSeat("a", 0), FakeSeat("b", 1), FakeSeat("c", 2)]
    seats[bad_seat] = SilentSeat(from_request)
    played = play(seats, make_game("passing", players=3))
    result = played.report.result
    assert result.termination is Termination.FORFEIT
    assert (result.scores, result.winner, result.faulted_seat) == (scores, winner, bad_seat)
    assert_sound(played.record)


def test_a_partner_forfeits_for_the_team() -> None:
    game = make_game("passing", players=4, partnerships=True)
    seats: list[FakeSeat] = [FakeSeat(f"p{i}", i) for i in range(4)]
    seats[2] = IllegalSeat(from_request=2)
    played = play(seats, game)
    result = played.report.result
    assert (result.termination, result.faulted_seat, result.winner) == (
        Termination.FORFEIT,
        2,
        1,
    )
    assert all(seat.finishes == [result] for seat in seats)
    assert_sound(played.record)


# -- disconnections -----------------------------------------------------------------------------


def test_a_seat_back_within_the_grace_resumes_from_a_snapshot() -> None:
    flaky = ReconnectSeat(drop_at=2, back_after=4.0)
    played = play([flaky, FakeSeat()], policy=FORFEIT)
    assert played.report.result.termination is Termination.NORMAL
    assert played.report.faults == ()
    dropped, asked_again = flaky.requests[1], flaky.requests[2]
    # The same decision is asked again, under a new turn number, once the bot is back.
    assert asked_again.observation == dropped.observation
    assert asked_again.turn == dropped.turn + 1
    assert flaky.back_at == dropped.sent + 4.0
    assert asked_again.sent == flaky.back_at
    [(first, none), (again, snapshot)] = flaky.starts
    assert none is None and snapshot == dropped.observation
    assert again == first
    # The wait is not charged: the bank is whole and the move took no time.
    assert (asked_again.move, asked_again.bank) == (1.0, 10.0)
    step = next(
        i
        for i, (s, _) in enumerate(played.steps)
        if s.seat == 0 and s.before.observe(0) == dropped.observation
    )
    assert played.record.steps[step].think_ms == 0.0
    assert_sound(played.record)


def test_reconnect_grace_is_a_parameter() -> None:
    flaky = ReconnectSeat(drop_at=2, back_after=4.0)
    played = play([flaky, FakeSeat()], reconnect_grace=3.0)
    [fault] = played.report.faults
    assert (fault.kind, fault.reason) == (
        FaultKind.DISCONNECTED,
        "disconnected, and not back within 3 s",
    )
    assert played.ended_at == flaky.requests[1].sent + 3.0


def test_an_absent_seat_gets_no_grace_but_its_opponent_keeps_it() -> None:
    """A tournament's absent bot was waited for already: its seat faults at once, while a
    present seat that drops mid-match still has the whole reconnect grace."""
    gone = CrashSeat(from_request=0)
    played = play([gone, FakeSeat()], policy=SUBSTITUTE, max_strikes=2, absent=[0])
    assert [(f.seat, f.kind, f.reason) for f in played.report.faults] == [
        (0, FaultKind.DISCONNECTED, "disconnected, and not back within 0 s")
    ] * 2
    assert played.ended_at == 0.0
    assert played.report.result.faulted_seat == 0

    flaky = ReconnectSeat(drop_at=2, back_after=4.0, name="flaky-1")
    played = play([CrashSeat(from_request=0), flaky], policy=SUBSTITUTE, absent=[0])
    assert flaky.back_at is not None  # came back within the default 10 s
    assert {f.seat for f in played.report.faults} == {0}


def test_a_seat_listed_absent_but_connected_at_the_start_keeps_its_grace() -> None:
    """The bot connected between the tournament's look and the match start: it is present."""
    flaky = ReconnectSeat(drop_at=2, back_after=4.0)
    played = play([flaky, FakeSeat()], absent=[0])
    assert played.report.faults == ()
    assert flaky.back_at == flaky.requests[1].sent + 4.0


def test_a_seat_back_too_late_forfeits() -> None:
    flaky = ReconnectSeat(drop_at=3, back_after=10.5)
    played = play([flaky, FakeSeat()], policy=FORFEIT)
    [fault] = played.report.faults
    assert (fault.kind, fault.turn, fault.forfeited) == (
        FaultKind.DISCONNECTED,
        flaky.requests[2].turn,
        True,
    )
    assert fault.reason == "disconnected, and not back within 10 s"
    assert played.ended_at == flaky.requests[2].sent + 10.0
    assert flaky.back_at is None and flaky.faults == []
    assert played.report.result.winner == 1
    assert_sound(played.record)


def test_a_seat_back_after_its_disconnection_fault_is_told_of_it() -> None:
    flaky = ReconnectSeat(drop_at=2, back_after=12.0)
    played = play([flaky, FakeSeat()], policy=SUBSTITUTE)
    assert played.report.result.termination is Termination.NORMAL
    [fault] = played.report.faults
    assert (fault.kind, fault.strikes, fault.forfeited) == (FaultKind.DISCONNECTED, 1, False)
    assert played.record.steps[fault.step].substituted
    # Away when it was charged, it hears of it right after its snapshot, before its request.
    assert [(n.turn, n.kind, n.strikes) for n in flaky.faults] == [
        (fault.turn, FaultKind.DISCONNECTED, 1)
    ]
    resumed = flaky.calls.index("start", 1)
    assert flaky.calls[resumed : resumed + 3] == ["start", "fault", "request"]
    assert flaky.back_at == flaky.requests[1].sent + 12.0
    assert_sound(played.record)


def test_a_seat_missing_at_the_start_joins_when_it_is_needed() -> None:
    late = ReconnectSeat(drop_at=0, back_after=2.0)
    played = play([FakeSeat(), late], policy=FORFEIT)
    assert played.report.result.termination is Termination.NORMAL
    assert late.calls[:2] == ["start", "reconnected"]
    [(_, snapshot)] = late.starts
    assert snapshot == late.requests[0].observation
    assert late.back_at == 2.0
    # Steps it missed while away are in its snapshot, not replayed as events.
    assert len(late.events) == len(played.record.steps) - 1
    assert late.finishes == [played.report.result]


def test_a_seat_that_drops_between_its_turns_resumes_at_its_next_turn() -> None:
    class DropsOnEvent(ReconnectSeat):
        async def event(self, step: LogEntry, scores: tuple[int, ...], deal: int) -> None:
            if len(self.events) == 3 and not self.dropped:
                self.dropped, self.connected = True, False
                self.dropped_at = trio.current_time()
            await super().event(step, scores, deal)

    flaky = DropsOnEvent(drop_at=-1, back_after=1.0, seed=1)
    played = play([FakeSeat(), flaky], policy=FORFEIT)
    assert played.report.result.termination is Termination.NORMAL
    assert played.report.faults == ()
    # No notices while it is away: the next thing it hears is its snapshot, then the request.
    failed = [i for i, call in enumerate(flaky.calls) if call == "event"][3]
    assert flaky.calls[failed + 1 : failed + 4] == ["reconnected", "start", "request"]
    [_, (_, snapshot)] = flaky.starts
    resumed_at = next(r for r in flaky.requests if r.sent == flaky.back_at)
    assert snapshot == resumed_at.observation
    assert len(flaky.events) < len(played.record.steps)
    assert_sound(played.record)


def test_a_seat_that_never_connects_is_disconnected() -> None:
    played = play([CrashSeat(from_request=0), FakeSeat()])
    [fault] = played.report.faults
    assert (fault.kind, fault.step, fault.turn) == (FaultKind.DISCONNECTED, 0, 1)
    assert played.ended_at == 10.0
    assert played.report.result.winner == 1


# -- late replies -------------------------------------------------------------------------------


def test_a_late_reply_for_an_old_turn_is_dropped() -> None:
    late = LateReplySeat(slow_request=2)
    played = play([late, FakeSeat()], policy=SUBSTITUTE)
    assert played.report.result.termination is Termination.NORMAL
    [fault] = played.report.faults
    assert (fault.kind, fault.turn) == (FaultKind.TIMEOUT, late.requests[1].turn)
    # The stale reply reached the seat at its next request and was dropped there.
    assert [turn for turn, _ in late.dropped] == [fault.turn]
    # Every reply the referee got answers the request it was given.
    assert [turn for turn, _ in late.replies] == [r.turn for r in late.requests if r.k != 2]
    mine = [s.action for s in played.record.steps if s.seat == 0 and not s.substituted]
    assert mine == [reply for _, reply in late.replies]
    assert_sound(played.record)


def test_a_seat_that_passes_stale_replies_on_cannot_make_an_illegal_step() -> None:
    late = LateReplySeat(slow_request=2, drop_stale=False)
    played = play([late, FakeSeat()], policy=SUBSTITUTE)
    faults = played.report.faults
    assert [f.kind for f in faults] == [FaultKind.TIMEOUT, FaultKind.ILLEGAL, FaultKind.ILLEGAL]
    for fault in faults[1:]:
        stale = next(reply for turn, reply in late.replies if turn == fault.turn)
        with pytest.raises(IllegalActionError) as refused:
            state_at(played.record, fault.step).apply(stale)  # type: ignore[arg-type]
        assert fault.reason == str(refused.value)
    assert_sound(played.record)  # every step the referee accepted was legal where it was played


# -- failures of ours, and shutdown -------------------------------------------------------------


def test_a_referee_failure_voids_the_match_and_charges_nobody() -> None:
    good, buggy = FakeSeat(), EventBugSeat(at_event=5)
    played = play([good, buggy], policy=SUBSTITUTE)
    result = played.report.result
    assert result.termination is Termination.VOID
    assert result.winner is None and result.faulted_seat is None and result.fault is None
    assert result.detail == "void: the referee failed (RuntimeError: bug in the seat: event)"
    assert played.report.faults == ()
    assert good.faults == [] and buggy.faults == []
    assert good.finishes == [result] and buggy.finishes == [result]
    record = played.record
    assert (record.result.termination, record.result.winner) == ("void", None)
    assert len(record.steps) == 5
    assert_sound(record)


def test_one_void_match_does_not_stop_its_neighbour() -> None:
    reports: dict[str, MatchReport] = {}

    async def one(name: str, seats: Sequence[Seat]) -> None:
        reports[name] = await play_match(
            make_game("passing"),
            seats,
            match_id=name,
            seed=SEED,
            time_control=CLOCK,
            fault_policy=FORFEIT,
        )

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(one, "broken", [FakeSeat(), EventBugSeat(at_event=3)])
            nursery.start_soon(one, "fine", [SlowSeat(0.5), FakeSeat()])

    run(main)
    assert reports["broken"].result.termination is Termination.VOID
    assert reports["fine"].result.termination is Termination.NORMAL
    assert_sound(reports["fine"].record)


def test_a_match_with_no_winner_in_max_deals_is_adjudicated() -> None:
    played = play([FakeSeat(), FakeSeat()], max_deals=1)
    result = played.report.result
    assert result.termination is Termination.ADJUDICATED
    assert result.detail.startswith("adjudicated: no winner by the rules after 1 deal, ")
    assert played.record.result.termination is Termination.ADJUDICATED
    assert len(played.record.result.hands) == 1
    assert_sound(played.record)


def test_cancellation_tells_every_seat_and_propagates() -> None:
    thinking, stuck = SilentSeat(from_request=2), StuckFinishSeat()
    slow_clock = TimeControl(move=100.0, bank=0.0, grace=0.0)
    finished = False

    async def main() -> float:
        nonlocal finished
        with trio.move_on_after(30.0) as scope:
            await play_match(
                make_game("passing"),
                [thinking, stuck],
                match_id="m",
                seed=SEED,
                time_control=slow_clock,
                fault_policy=FORFEIT,
                first_seat=0,
            )
            finished = True
        assert scope.cancelled_caught
        return trio.current_time()

    ended_at = run(main)
    assert not finished
    assert [r.termination for r in thinking.finishes] == [Termination.ABORTED]
    assert [r.termination for r in stuck.finishes] == [Termination.ABORTED]
    assert thinking.finishes[0].winner is None
    # A seat that never takes the news holds the shutdown up for NOTICE_TIMEOUT at most.
    assert ended_at == pytest.approx(30.0 + NOTICE_TIMEOUT)


def test_arguments_that_do_not_fit_are_refused_before_anything_is_sent() -> None:
    seat = FakeSeat()
    with pytest.raises(ValueError, match="needs 2 seats, got 1"):
        play([seat])
    with pytest.raises(ValueError, match="max_strikes must be 1 or more, got 0"):
        play([seat, FakeSeat()], max_strikes=0)
    with pytest.raises(ValueError, match="first_seat 5 is not a seat"):
        play([seat, FakeSeat()], first_seat=5)
    assert seat.calls == []


# -- records of refereed matches (format 2) -----------------------------------------------------


def forfeited_record() -> MatchRecord:
    return play([IllegalSeat(from_request=2), FakeSeat()], policy=SUBSTITUTE).record


def test_a_refereed_record_writes_its_faults_and_termination() -> None:
    record = forfeited_record()
    objects = [json.loads(line) for line in record_lines(record)]
    header, result = objects[0], objects[-1]
    assert header["format"] == 2
    assert header["match_id"] == "match-1"
    assert header["fault_policy"] == {"policy": "substitute", "max_strikes": 3}
    steps = objects[1 : 1 + len(record.steps)]
    faults = objects[1 + len(record.steps) : -1]
    assert [s["index"] for s in steps] == list(range(len(record.steps)))
    assert [s.get("substituted", False) for s in steps] == [s.substituted for s in record.steps]
    assert [f["type"] for f in faults] == ["fault"] * 3
    assert set(faults[0]) == {
        "type",
        "seat",
        "turn",
        "step",
        "kind",
        "reason",
        "strikes",
        "forfeited",
    }
    assert [f["kind"] for f in faults] == ["illegal"] * 3
    assert (result["termination"], result["winner"]) == ("forfeit", 1)


def test_replay_checks_the_forfeit() -> None:
    record = forfeited_record()
    last = len(record.steps) + len(record.faults) + 2
    wrong = dataclasses.replace(record, result=dataclasses.replace(record.result, winner=0))
    assert str(replay(wrong)) == (
        f"result (line {last}): 'winner' differs: the record has 0, the engine has 1"
    )
    faults = list(record.faults)
    faults[-1] = dataclasses.replace(faults[-1], seat=1)
    assert str(replay(dataclasses.replace(record, faults=tuple(faults)))) == (
        f"fault (line {last - 1}): charged to seat 1 at step {faults[-1].step}, "
        "but seat 0 was to move"
    )
    steps = list(record.steps)
    k = record.faults[0].step
    steps[k] = dataclasses.replace(steps[k], substituted=False)
    assert str(replay(dataclasses.replace(record, steps=tuple(steps)))).startswith(
        f"fault (line {len(steps) + 2}): seat 0 kept its seat, so the referee played step {k}"
    )
    steps[k] = dataclasses.replace(steps[k], substituted=True)
    steps[k + 1] = dataclasses.replace(steps[k + 1], substituted=True)
    assert str(replay(dataclasses.replace(record, steps=tuple(steps)))) == (
        f"step {k + 1} (line {k + 3}): substituted, but no fault is charged there"
    )
    normal = dataclasses.replace(record.result, termination=Termination.NORMAL)
    assert not replay(dataclasses.replace(record, result=normal)).ok


def test_format_1_records_still_read_and_replay_but_know_no_faults() -> None:
    record = play([FakeSeat(), FakeSeat()]).record
    objects = [json.loads(line) for line in record_lines(record)]
    for key in ("match_id", "fault_policy"):
        del objects[0][key]
    objects[0]["format"] = 1
    old = parse_record("".join(json.dumps(o) + "\n" for o in objects))
    assert old.format_version == 1 and old.faults == ()
    assert replay(old).ok
    objects[-1]["termination"] = "void"
    with pytest.raises(ValueError, match="unknown field 'termination'"):
        parse_record("".join(json.dumps(o) + "\n" for o in objects))


def test_the_record_reads_back_the_referees_words() -> None:
    # One vocabulary: a record's termination and fault kinds read back as the referee's enums.
    record = play([SilentSeat(), FakeSeat()]).report.record
    parsed = parse_record("".join(line + "\n" for line in record_lines(record)))
    assert parsed.result.termination is Termination.FORFEIT
    assert [fault.kind for fault in parsed.faults] == [FaultKind.TIMEOUT]
    assert all(type(fault.kind) is FaultKind for fault in parsed.faults)


def test_replay_refuses_a_winner_for_a_void_match() -> None:
    record = play([FakeSeat(), EventBugSeat(at_event=5)]).record
    assert replay(record).ok
    claimed = dataclasses.replace(record, result=dataclasses.replace(record.result, winner=0))
    assert str(replay(claimed)) == (
        f"result (line {len(record.steps) + 2}): 'winner' differs: the record has 0, "
        "the engine has null"
    )
    with pytest.raises(ValueError, match="a void match has no winner"):
        parse_record(text_of(claimed))

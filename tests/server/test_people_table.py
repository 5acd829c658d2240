"""People's seats without the network (docs/people.md): the human clock of a person's seat
beside the bots' practice clock, and the tickets: one connection each, the bounds, the expiry.

Time is trio's MockClock (or a fake clock the table reads), so a 91 s timeout and a 30 s
connect window cost nothing.
"""

from __future__ import annotations

import io

import pytest
import trio

from domino_arena.sdk.match.records import parse_record, replay, write_record
from domino_arena.sdk.match.results import FaultKind, FaultPolicy
from domino_arena.sdk.rules import make_game
from domino_arena.server.play.match_spec import FinishedMatch, MatchSpec
from domino_arena.server.play.people import BoundError, PeopleBounds, Table, human_clock
from domino_arena.server.play.referee import MatchReport, play_match
from domino_arena.server.play.timecontrol import TimeControl
from tests.fakes.clocks import FakeClock, run_virtual
from tests.fakes.seats import FakeSeat, SilentSeat

BOTS_CLOCK = TimeControl(move=1.0, bank=10.0, grace=0.05)


def spec_of(*bots: str) -> MatchSpec:
    return MatchSpec(game=make_game("straight"), bots=bots, seed=3, rated=False)


def test_a_person_plays_on_the_human_clock_and_the_bots_on_theirs() -> None:
    bot, person = FakeSeat("house:greedy"), SilentSeat(from_request=1, name="person:ann")

    async def main() -> tuple[float, MatchReport]:
        report = await play_match(
            make_game("straight"),
            [bot, person],
            match_id="m",
            seed=3,
            time_control=BOTS_CLOCK,
            fault_policy=FaultPolicy.SUBSTITUTE,
            first_seat=1,
            seat_clocks={1: human_clock(0)},
        )
        return trio.current_time(), report

    ended, report = run_virtual(main)
    assert ended > 91.0
    assert bot.starts[0][0].time_control == BOTS_CLOCK
    assert person.starts[0][0].time_control == human_clock(0) == TimeControl(60.0, 30.0, 1.0)
    assert (bot.requests[0].move, bot.requests[0].bank) == (1.0, 10.0)
    assert (person.requests[0].move, person.requests[0].bank) == (60.0, 30.0)
    first = report.faults[0]
    assert (first.seat, first.kind) == (1, FaultKind.TIMEOUT)
    assert "no reply within 91 s (move 60 s + bank 30 s + grace 1 s)" in first.reason
    record = report.record
    assert record.time_control == {
        "move_ms": 1000,
        "bank_ms": 10_000,
        "grace_ms": 50,
        "seats": {"1": {"move_ms": 60_000, "bank_ms": 30_000, "grace_ms": 1000}},
    }
    out = io.StringIO()
    write_record(record, out)
    assert replay(parse_record(out.getvalue())).ok


def test_a_course_sets_the_persons_move_time() -> None:
    assert human_clock(15_000) == TimeControl(15.0, 30.0, 1.0)
    spec = MatchSpec(
        game=make_game("straight"),
        bots=("person:ann", "house:random"),
        seed=1,
        person_time=human_clock(15_000),
    )
    assert spec.seat_clocks() == {0: human_clock(15_000)}
    assert spec_of("a", "b").seat_clocks() == {}


def test_a_ticket_admits_one_connection_with_its_own_token() -> None:
    table = Table(clock=FakeClock())
    ticket = table.open(spec_of("person:ann", "house:greedy"), 0, "default", "ann")
    assert ticket.seat_name == "person:ann#1"
    assert ticket.spec.bots == ("person:ann", "house:greedy")
    assert ticket.spec.streams == ("person:ann#1", "house:greedy")
    assert table.admit("person:ann#1", "not-the-token") == "wrong token for seat 'person:ann#1'"
    assert table.admit("person:ann#1", ticket.token) is None
    assert table.admit("person:ann#1", ticket.token) == (
        "seat 'person:ann#1' is taken: a seat token admits one connection"
    )
    assert table.admit("person:ann#9", ticket.token) == (
        "no seat 'person:ann#9' is waiting: its match is over or its ticket expired"
    )


def test_a_ticket_expires_at_connect_by() -> None:
    clock = FakeClock()
    table = Table(PeopleBounds(connect_seconds=30), clock=clock)
    ticket = table.open(spec_of("house:greedy", "person:ann"), 1, "default", "ann")
    clock.now = 30.5
    assert table.admit(ticket.seat_name, ticket.token) == (
        f"seat '{ticket.seat_name}' expired: it did not connect by its connect_by"
    )


def test_a_seat_that_never_connects_drops_its_match() -> None:
    table = Table(PeopleBounds(connect_seconds=30), clock=trio.current_time)
    played: list[MatchSpec] = []

    async def never(name: str) -> None:
        await trio.sleep_forever()

    async def play(spec: MatchSpec) -> FinishedMatch:
        played.append(spec)
        raise AssertionError("a dropped match is never played")

    async def main() -> tuple[float, FinishedMatch | None]:
        ticket = table.open(spec_of("person:ann", "house:greedy"), 0, "default", "ann")
        result = await table.seat_and_play(ticket, never, play)
        return trio.current_time(), result

    ended, result = run_virtual(main)
    assert ended == pytest.approx(30.0)
    assert result is None
    assert not played
    assert not table.tickets
    assert not table.per_person


def test_a_connected_seat_plays_and_frees_its_ticket() -> None:
    table = Table(clock=trio.current_time)
    played: list[MatchSpec] = []

    async def main() -> None:
        ticket = table.open(spec_of("person:ann", "house:greedy"), 0, "default", "ann")
        connected = trio.Event()

        async def wait_connected(name: str) -> None:
            assert name == ticket.seat_name
            await connected.wait()

        async def play(spec: MatchSpec) -> FinishedMatch:
            played.append(spec)
            assert ticket.seat_name in table.tickets  # counted until the match is over
            raise RuntimeError("the database is gone")  # logged; the ticket is freed anyway

        async with trio.open_nursery() as nursery:
            nursery.start_soon(table.seat_and_play, ticket, wait_connected, play)
            await trio.sleep(5)
            assert table.admit(ticket.seat_name, ticket.token) is None
            connected.set()

    run_virtual(main)
    assert [spec.streams for spec in played] == [("person:ann#1", "house:greedy")]
    assert not table.tickets


def test_the_bounds_name_themselves() -> None:
    table = Table(PeopleBounds(per_person=2, total=3), clock=FakeClock())
    spec = spec_of("person:ann", "house:greedy")
    table.open(spec, 0, "default", "ann")
    table.open(spec, 0, "default", "ann")
    with pytest.raises(
        BoundError, match=r"^people\.per_person: 'ann' has 2 matches .*per_person=2"
    ):
        table.open(spec, 0, "default", "ann")
    table.open(spec, 0, "other", "ann")  # another course's ann is another person
    with pytest.raises(BoundError, match=r"^people\.total: 3 matches .*total=3"):
        table.open(spec, 0, "default", "bob")
    first = table.tickets["person:ann#1"]
    table.close(first)
    assert table.open(spec, 0, "default", "bob").seat_name == "person:bob#4"

"""Tournaments in courses: baselines seated (never waited for), the seating rule, entrant
policies and scheduled starts (the arena, on trio's MockClock), and regrading.

Like test_tournament.py: a real SQLite storage and lobby, the fake ``play`` of tests/fakes (or,
for the regrade, one that plays real games in-process with deterministic bots).
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import zlib
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
import trio
from trio.testing import MockClock

from domino_arena.bots import RandomBot
from domino_arena.sdk.local import play_game
from domino_arena.sdk.match.records.writing import record_lines
from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import Game, make_game
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.net.lobby import Connection, Lobby
from domino_arena.server.play.arena import Arena
from domino_arena.server.play.match_spec import FinishedMatch, MatchSpec
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.stats.regrades import fresh_deals, index_ranges, regrade_summary
from domino_arena.server.store.bots import BotState, StoredBot
from domino_arena.server.store.tournaments import StoredTournament, TournamentState
from domino_arena.server.tournaments.lifecycle import (
    TournamentError,
    match_spec,
    new_tournament,
    schedule_of,
)
from domino_arena.server.tournaments.lifecycle.director import Director
from domino_arena.server.tournaments.lifecycle.regrade import RegradeError, regrade_of
from domino_arena.server.tournaments.lifecycle.runner import TournamentRunner
from domino_arena.server.tournaments.lifecycle.start import cancelled_reason, chosen_entrants
from tests.fakes.play import FakePlay, no_seats

TWO: Game = make_game("passing", players=2)
THREE: Game = make_game("passing", players=3)
COURSE = "cs101"
OWNED = {"ann1": "ann", "ann2": "ann", "bob1": "bob", "cid1": "cid", "dan1": "dan"}


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[RatedStorage]:
    store = RatedStorage(f"sqlite:///{tmp_path / 'arena.db'}")
    store.open()
    store.create_course(COURSE, baselines=(("greedy", 1500.0),))
    for name, owner in OWNED.items():
        store.create_bot(name, course=COURSE, owner=owner)
    yield store
    store.close()


def tournament(
    entrants: tuple[str, ...], *, game: Game = TWO, **options: object
) -> StoredTournament:
    settings: dict[str, object] = {
        "time_control": TimeControl(),
        "fault_policy": FaultPolicy.FORFEIT,
        "concurrency": 4,
        "wait_seconds": 30.0,
        "seed": 11,
        "course": COURSE,
        "owners": OWNED,
    }
    settings.update(options)
    settings.setdefault("known_bots", OWNED)
    return new_tournament(
        name="course cup",
        game=game,
        entrants=entrants,
        **settings,  # type: ignore[arg-type]
    )


def connect(lobby: Lobby, *names: str) -> None:
    for name in names:
        lobby.connect(Connection(name, ["passing"]))


# -- the row ------------------------------------------------------------------------------------


def test_baselines_are_seated_as_house_entrants_with_the_course_and_owners() -> None:
    t = tournament(("ann1", "bob1"), baselines=(("greedy", 1500.0), ("random", 1000)))
    assert t.entrants == ("ann1", "bob1", "house:greedy", "house:random")
    assert t.baselines == (("greedy", 1500.0), ("random", 1000.0))
    assert t.owners == {"ann1": "ann", "bob1": "bob"}  # a snapshot of the entrants' owners
    assert t.course == COURSE
    assert {match_spec(t, g).course for g in schedule_of(t)} == {COURSE}
    with pytest.raises(TournamentError, match="baselines"):
        tournament(("ann1", "bob1"), baselines=(("greedy", 1.0), ("greedy", 2.0)))
    with pytest.raises(TournamentError, match="unknown bot"):
        tournament(("ann1", "house:greedy"))  # a house seat is named by `baselines` alone


def test_the_seating_rule_and_start_at_are_checked_at_creation() -> None:
    with pytest.raises(TournamentError, match=r"same-owner seating rule.*ann"):
        tournament(("ann1", "ann2", "bob1"), game=THREE)
    allowed = tournament(("ann1", "ann2", "bob1"), game=THREE, allow_same_owner_tables=True)
    assert len(schedule_of(allowed)) == 3
    ruled = tournament(("ann1", "ann2", "bob1", "cid1"), game=THREE)
    assert all(not {"ann1", "ann2"} <= set(g.seats) for g in schedule_of(ruled))
    assert len(schedule_of(ruled)) == 2 * 3  # (ann1, bob1, cid1) and (ann2, bob1, cid1)
    past = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1)
    with pytest.raises(TournamentError, match=r"start_at: .* is past"):
        tournament(("ann1", "bob1"), start_at=past)
    with pytest.raises(TournamentError, match="entrant_policy"):
        tournament(("ann1", "bob1"), entrant_policy="everyone")
    # Entrants chosen at the start: too few listed now is no error, and no schedule yet.
    later = tournament((), entrant_policy="connected", start_at=past + dt.timedelta(hours=1))
    assert schedule_of(later) == []


def test_house_seats_are_never_waited_for(storage: RatedStorage) -> None:
    t = tournament(("ann1", "bob1"), baselines=(("greedy", 1500.0),), wait_seconds=600.0)
    storage.add_tournament(t)
    lobby = Lobby()
    connect(lobby, "ann1", "bob1")
    play = FakePlay(duration=1.0, storage=storage)

    async def main() -> None:
        state = await TournamentRunner(t, storage=storage, play=play, lobby=lobby).run()
        assert state is TournamentState.FINISHED

    trio.run(main, clock=MockClock(autojump_threshold=0))
    assert len(play.calls) == len(schedule_of(t)) == 6
    assert all(spec.absent == () for spec in play.specs)
    assert max(start for start, _ in play.calls) < 600  # no game waited for house:greedy


# -- entrant policies and scheduled starts ------------------------------------------------------


def _bot(name: str, owner: str, minute: int, state: BotState = BotState.ENABLED) -> StoredBot:
    created = dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(minutes=minute)
    return StoredBot(name, state, created, created, course=COURSE, owner=owner)


def test_the_entrant_policies_choose_at_the_start() -> None:
    bots = [
        _bot("ann1", "ann", 1),
        _bot("ann2", "ann", 5),
        _bot("bob1", "bob", 2),
        _bot("bob2", "bob", 7, BotState.DISABLED),
        _bot("cid1", "", 3),
        dataclasses.replace(_bot("eve1", "eve", 9), course="other"),
    ]
    future = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)
    base = tournament(("cid1",), entrant_policy="latest", start_at=future, known_bots=["cid1"])
    base = dataclasses.replace(
        base, baselines=(("greedy", 1.0),), entrants=("cid1", "house:greedy")
    )
    entrants, owners = chosen_entrants(base, bots, connected={"bob1"})
    assert entrants == ("ann2", "bob1", "house:greedy")  # latest enabled per owner, in course
    assert owners == {"ann2": "ann", "bob1": "bob"}
    connected = dataclasses.replace(base, entrant_policy="connected")
    entrants, _ = chosen_entrants(connected, bots, connected={"bob1", "ann1", "eve1", "bob2"})
    assert entrants == ("cid1", "ann1", "bob1", "house:greedy")  # listed first, then connected


def test_a_scheduled_tournament_starts_at_its_time_with_the_bots_connected_then(
    storage: RatedStorage,
) -> None:
    start_at = dt.datetime.now(dt.UTC) + dt.timedelta(hours=2)
    t = tournament(("dan1",), entrant_policy="connected", start_at=start_at)
    four = make_game("passing", players=4)
    too_few = tournament((), entrant_policy="connected", start_at=start_at, game=four)
    storage.add_tournament(t)
    storage.add_tournament(too_few)
    lobby = Lobby()
    arena = Arena(storage, lobby=lobby, seats=no_seats)
    director = Director(arena)
    play = FakePlay(duration=1.0, storage=storage)
    arena.play = play  # type: ignore[method-assign]

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            arena.nursery = nursery
            await director.resume_tournaments()  # as at a restart: both are scheduled
            assert director.scheduled == {t.id, too_few.id}
            await trio.sleep(3600)
            connect(lobby, "ann1", "bob1", "dan1")  # cid1 never connects
            await trio.sleep(3600 - 100)  # a margin for the real time the test takes
            assert play.calls == []
            while director.tournaments or director.scheduled:
                await trio.sleep(1)
            arena.nursery = None

    trio.run(main, clock=MockClock(autojump_threshold=0))
    row = storage.tournament(t.id)
    assert row is not None and row.state is TournamentState.FINISHED
    assert row.entrants == ("dan1", "ann1", "bob1")
    assert row.owners == {"dan1": "dan", "ann1": "ann", "bob1": "bob"}
    assert play.calls[0][0] >= 7100  # not before its time (threads let MockClock jump after)
    assert {bot for spec in play.specs for bot in spec.bots} == {"dan1", "ann1", "bob1"}
    cancelled = storage.tournament(too_few.id)
    assert cancelled is not None and cancelled.state is TournamentState.CANCELLED
    reason = cancelled_reason(cancelled)
    assert reason.startswith("cancelled at its start: entrant policy connected chose 3 entrant")
    assert "needs at least 4" in reason or "at least 4" in reason


def test_a_tournament_started_by_hand_is_not_started_again_at_its_time(
    storage: RatedStorage,
) -> None:
    start_at = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=5)
    t = tournament(("ann1", "bob1"), start_at=start_at)
    storage.add_tournament(t)
    storage.set_tournament_state(t.id, TournamentState.CANCELLED)
    arena = Arena(storage, lobby=Lobby(), seats=no_seats)
    director = Director(arena)
    play = FakePlay(storage=storage)
    arena.play = play  # type: ignore[method-assign]

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            arena.nursery = nursery
            director._schedule(nursery, t)
            await trio.sleep(600)
            for _ in range(10_000):  # the worker thread's read lets MockClock jump meanwhile
                if not director.scheduled:
                    break
                await trio.sleep(1)
            assert not director.scheduled and not director.tournaments

    trio.run(main, clock=MockClock(autojump_threshold=0))
    assert play.calls == []


# -- regrade ------------------------------------------------------------------------------------


def deterministic_play(
    storage: RatedStorage, played: list[MatchSpec]
) -> Callable[[MatchSpec], Awaitable[FinishedMatch]]:
    """Play each match in-process: every bot a RandomBot seeded by its name and the deal, so a
    game of the same bots on the same deal is the same game (the record names no match id)."""

    async def play(spec: MatchSpec) -> FinishedMatch:
        played.append(spec)
        bots = [RandomBot(zlib.crc32(f"{name}/{spec.seed}".encode())) for name in spec.bots]
        local = play_game(spec.game, bots, spec.seed, names=spec.bots, timer=None)
        record = "".join(line + "\n" for line in record_lines(local.record))
        finished = FinishedMatch(spec, local.result, record, (0,) * len(spec.bots))
        storage.save_match(finished.to_row())
        return finished

    return play


def test_a_regrade_carries_the_games_without_the_replaced_bot_and_replays_the_rest(
    storage: RatedStorage,
) -> None:
    storage.create_bot("cid2", course=COURSE, owner="cid")
    original = tournament(("ann1", "bob1", "cid1"), games_per_pairing=2, rated=False)
    storage.add_tournament(original)
    lobby = Lobby()
    connect(lobby, "ann1", "bob1", "cid1", "cid2")
    first: list[MatchSpec] = []
    again: list[MatchSpec] = []

    async def run(t: StoredTournament, played: list[MatchSpec]) -> None:
        runner = TournamentRunner(
            t, storage=storage, play=deterministic_play(storage, played), lobby=lobby
        )
        assert await runner.run() is TournamentState.FINISHED

    with pytest.raises(RegradeError, match="finished"):
        regrade_of(original, {"cid1": "cid2"}, course_bots=OWNED)
    trio.run(run, original, first, clock=MockClock(autojump_threshold=0))
    finished = storage.tournament(original.id)
    assert finished is not None
    with pytest.raises(RegradeError, match="not a bot entrant"):
        regrade_of(finished, {"dan1": "cid2"}, course_bots={**OWNED, "cid2": "cid"})
    with pytest.raises(RegradeError, match="entrant already"):
        regrade_of(finished, {"cid1": "bob1"}, course_bots=OWNED)
    with pytest.raises(RegradeError, match="belongs to 'ann', not to 'cid'"):
        regrade_of(finished, {"cid1": "ann2"}, course_bots=OWNED)
    regrade = regrade_of(finished, {"cid1": "cid2"}, course_bots={**OWNED, "cid2": "cid"})
    assert regrade.entrants == ("ann1", "bob1", "cid2")
    assert (regrade.seed, regrade.seed_salt, regrade.seed_commitment) == (
        finished.seed,
        finished.seed_salt,
        finished.seed_commitment,
    )
    assert regrade.regrade_of == finished.id and regrade.replaced == (("cid1", "cid2"),)
    assert not regrade.rated
    storage.add_tournament(regrade)
    trio.run(run, regrade, again, clock=MockClock(autojump_threshold=0))

    before = {m.game_index: m for m in storage.matches(100, tournament_id=finished.id)}
    after = {m.game_index: m for m in storage.matches(100, tournament_id=regrade.id)}
    assert set(after) == set(before) == set(range(12))
    replayed = {spec.game_index for spec in again}
    for index, old in before.items():
        new = after[index]
        assert (new.deal_id, new.rotation, new.seed) == (old.deal_id, old.rotation, old.seed)
        assert new.seats == tuple("cid2" if s == "cid1" else s for s in old.seats)
        assert new.course == COURSE and not new.rated
        if "cid1" in old.seats:
            assert index in replayed and new.carried_from is None
        else:  # carried over: the same game, not played again
            assert index not in replayed
            assert new.carried_from == old.id
            assert new.record == old.record is not None
            assert (new.termination, new.winner, new.scores) == (
                old.termination,
                old.winner,
                old.scores,
            )
    assert len(replayed) == 8  # ann1-cid1 and bob1-cid1: 2 deals x 2 rotations each
    # Resuming the regrade copies nothing twice.
    row = storage.tournament(regrade.id)
    assert row is not None and row.state is TournamentState.FINISHED


def test_a_regrade_on_fresh_deals_replays_on_new_deals_and_carries_the_rest_as_they_were(
    storage: RatedStorage,
) -> None:
    storage.create_bot("cid2", course=COURSE, owner="cid")
    original = tournament(("ann1", "bob1", "cid1"), games_per_pairing=2, rated=False)
    storage.add_tournament(original)
    lobby = Lobby()
    connect(lobby, "ann1", "bob1", "cid1", "cid2")

    async def run(t: StoredTournament) -> None:
        runner = TournamentRunner(
            t, storage=storage, play=deterministic_play(storage, []), lobby=lobby
        )
        assert await runner.run() is TournamentState.FINISHED

    trio.run(run, original, clock=MockClock(autojump_threshold=0))
    finished = storage.tournament(original.id)
    assert finished is not None
    owned = {**OWNED, "cid2": "cid"}
    same = regrade_of(finished, {"cid1": "cid2"}, course_bots=owned)
    regrade = regrade_of(finished, {"cid1": "cid2"}, course_bots=owned, fresh_deals=True)
    assert not fresh_deals(same, finished) and fresh_deals(regrade, finished)
    assert regrade.seed != finished.seed and regrade.seed_commitment != finished.seed_commitment
    storage.add_tournament(regrade)
    trio.run(run, regrade, clock=MockClock(autojump_threshold=0))

    before = {m.game_index or 0: m for m in storage.matches(100, tournament_id=finished.id)}
    after = {m.game_index or 0: m for m in storage.matches(100, tournament_id=regrade.id)}
    for index, old in before.items():
        new = after[index]
        if "cid1" in old.seats:  # the new version's games: dealt anew
            assert new.carried_from is None and new.seed != old.seed
            assert new.seed == match_spec(regrade, schedule_of(regrade)[index]).seed
        else:
            assert new.carried_from == old.id and new.seed == old.seed
    carried = sorted(i for i, m in after.items() if m.carried_from)
    assert regrade_summary(regrade, finished, carried) == {
        "of": finished.id,
        "replaced": [{"bot": "cid1", "by": "cid2"}],
        "fresh_deals": True,
        "carried": 4,
        "carried_games": index_ranges(carried),
    }
    assert index_ranges([7, 0, 1, 2, 5]) == "0-2, 5, 7" and index_ranges([]) == "none"


# -- the store ----------------------------------------------------------------------------------


def test_entrants_are_set_once_and_tournaments_list_by_course(storage: RatedStorage) -> None:
    later = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)
    t = tournament((), entrant_policy="latest", start_at=later)
    other = tournament(("ann1", "bob1"), course="default")
    storage.add_tournament(t)
    storage.add_tournament(other)
    row = storage.set_tournament_entrants(t.id, ("ann2", "bob1"), {"ann2": "ann", "bob1": "bob"})
    assert row.entrants == ("ann2", "bob1") and row.owners == {"ann2": "ann", "bob1": "bob"}
    assert row.start_at == later.replace(
        microsecond=row.start_at.microsecond if row.start_at else 0
    )
    storage.set_tournament_state(t.id, TournamentState.RUNNING)
    with pytest.raises(ValueError, match="is running: its entrants are set once"):
        storage.set_tournament_entrants(t.id, ("ann1", "bob1"), None)
    assert [x.id for x in storage.tournaments(course=COURSE)] == [t.id]
    assert [x.id for x in storage.tournaments(course="default")] == [other.id]
    assert {x.id for x in storage.tournaments()} == {t.id, other.id}
    assert storage.tournaments([TournamentState.CREATED], course=COURSE) == []


def test_the_director_refuses_a_baseline_its_arena_does_not_host(storage: RatedStorage) -> None:
    t = tournament(("ann1", "bob1"), baselines=(("oracle", 2000.0),))
    arena = Arena(storage, lobby=Lobby(), seats=no_seats, house={"greedy": RandomBot})
    director = Director(arena)
    with pytest.raises(ValueError, match="hosts no house bot oracle"):
        asyncio.run(director.create_tournament(t, False))
    assert storage.tournament(t.id) is None


class RecordingNursery:
    """Stands for the arena's trio nursery where only the asyncio side is under test."""

    def __init__(self) -> None:
        self.started: list[str] = []

    def start_soon(self, *args: object, name: str = "") -> None:
        self.started.append(name)


def test_a_start_by_hand_chooses_the_entrants_or_cancels(storage: RatedStorage) -> None:
    later = dt.datetime.now(dt.UTC) + dt.timedelta(days=1)
    latest = tournament((), entrant_policy="latest", start_at=later)
    four = make_game("passing", players=4)
    too_few = tournament((), entrant_policy="connected", game=four, start_at=later)
    storage.add_tournament(latest)
    storage.add_tournament(too_few)
    lobby = Lobby()
    connect(lobby, "ann1", "bob1")
    arena = Arena(storage, lobby=lobby, seats=no_seats)
    director = Director(arena)
    nursery = RecordingNursery()
    arena.nursery = nursery  # type: ignore[assignment]
    asyncio.run(director.start_tournament(latest.id))
    row = storage.tournament(latest.id)
    assert row is not None and row.state is TournamentState.RUNNING
    assert row.entrants == ("ann2", "bob1", "cid1", "dan1")  # each owner's latest
    assert nursery.started == [f"tournament {latest.id}"]
    assert director.tournaments[latest.id].t.entrants == row.entrants
    with pytest.raises(ValueError, match="was cancelled at its start: entrant policy connected"):
        asyncio.run(director.start_tournament(too_few.id))
    cancelled = storage.tournament(too_few.id)
    assert cancelled is not None and cancelled.state is TournamentState.CANCELLED
    assert cancelled.entrants == ()
    assert schedule_of(cancelled) == []  # the admin API can still show it

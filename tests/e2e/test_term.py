"""A whole term on a fresh referee, through the real protocol (docs/courses.md).

The admin creates a course with frozen baselines and gives its organizer token to the teacher;
the teacher makes invite codes; twenty students' bots register with them (eight students hand in
two versions); the students' bots connect as raw gRPC clients written from the proto (first
legal action: deterministic); a tournament scheduled a moment ahead takes each owner's latest
version and the baselines; the grades list every owner with their paired result against greedy;
and a regrade against a new version of one bot carries every game without it over exactly and
replays the rest on the same deals and seats, and grading it with its original counts each
carried game once.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import grpc
import pytest

from domino_arena.bots import HOSTED_BOTS
from domino_arena.sdk.match.records import parse_record, replay
from domino_arena.sdk.rules import make_game
from domino_arena.sdk.wire import game_to_proto
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.play import house
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.referee_server import WAIT, BearerToken, RawBot, Referee, first_legal

COURSE: Final = "ai101"
OWNERS: Final = tuple(f"student{n:02d}" for n in range(1, 13))
TWO_VERSIONS: Final = OWNERS[:8]
"""These hand in a second version: 12 + 8 = 20 bots registered."""
POLL: Final = 0.05
TERM_WAIT: Final = 240.0
"""The tournament's 182 games through the real referee; generous for a loaded CI machine."""
GAME: Final = make_game("passing", target_rule="pagat")
CLOCK: Final = pb.TimeControl(move_ms=30_000, bank_ms=60_000, grace_ms=1000)


@dataclass
class Term:
    referee: Referee
    organizer: admin_pb_grpc.AdminServiceStub
    registration: admin_pb_grpc.RegistrationServiceStub
    tokens: dict[str, str]
    bots: list[RawBot]
    tournament: admin_pb.Tournament
    owner_tokens: dict[str, str]
    """Each owner's token, from its first registration (docs/courses.md: owners)."""

    def connect(self, name: str) -> None:
        self.bots.append(
            self.referee.connect(name, self.tokens[name], first_legal, games=("passing",))
        )


def wait_finished(stub: admin_pb_grpc.AdminServiceStub, tournament_id: str) -> admin_pb.Tournament:
    """Ask every POLL s until the tournament stops running; fail after TERM_WAIT s."""
    deadline = time.monotonic() + TERM_WAIT
    pause = threading.Event()  # never set: its timed wait is the pause between two questions
    request = admin_pb.GetTournamentRequest(tournament_id=tournament_id)
    while True:
        t = stub.GetTournament(request, timeout=WAIT)
        if t.state not in (admin_pb.TOURNAMENT_STATE_CREATED, admin_pb.TOURNAMENT_STATE_RUNNING):
            return t
        assert time.monotonic() < deadline, f"tournament {tournament_id} still {t.state}"
        pause.wait(POLL)


def records(stub: admin_pb_grpc.AdminServiceStub, tournament_id: str) -> dict[int, str]:
    """Every stored game of the tournament: game index -> record."""
    listed = stub.ListMatches(
        admin_pb.ListMatchesRequest(tournament_id=tournament_id, limit=1000), timeout=WAIT
    )
    found = {}
    for summary in listed.matches:
        match = stub.GetMatch(admin_pb.GetMatchRequest(match_id=summary.match_id), timeout=WAIT)
        found[summary.game_index] = match.record
    return found


@pytest.fixture(scope="module")
def term(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Term]:
    path: Path = tmp_path_factory.mktemp("term") / "referee.db"
    storage = RatedStorage(f"sqlite:///{path}")
    storage.open()
    hosted = house.provided()
    house.provide(HOSTED_BOTS)
    referee = Referee(storage)
    bots: list[RawBot] = []
    try:
        course = referee.admin.CreateCourse(
            admin_pb.CreateCourseRequest(
                name=COURSE,
                title="AI 101",
                baselines=[
                    admin_pb.Baseline(bot="greedy", rating=1500),
                    admin_pb.Baseline(bot="random", rating=1000),
                ],
            ),
            timeout=WAIT,
        )
        organizer = admin_pb_grpc.AdminServiceStub(
            grpc.intercept_channel(referee.channel, BearerToken(course.organizer_token))
        )
        registration = admin_pb_grpc.RegistrationServiceStub(referee.channel)
        invites = organizer.CreateInvites(
            admin_pb.CreateInvitesRequest(count=len(OWNERS)), timeout=WAIT
        )
        assert len(invites.invites) == len(OWNERS)
        tokens: dict[str, str] = {}
        owner_tokens: dict[str, str] = {}
        for owner, invite in zip(OWNERS, invites.invites, strict=True):
            versions = ("v1", "v2") if owner in TWO_VERSIONS else ("v1",)
            for version in versions:
                name = f"{owner}-{version}"
                registered = (
                    admin_pb.RegisterBotRequest(name=name, owner_token=owner_tokens[owner])
                    if owner in owner_tokens  # a later version: the owner token, never a name
                    else admin_pb.RegisterBotRequest(
                        invite_code=invite.code, name=name, owner=owner
                    )
                )
                answer = registration.RegisterBot(registered, timeout=WAIT)
                assert answer.bot.course == COURSE and answer.bot.owner == owner
                tokens[name] = answer.token
                owner_tokens.setdefault(owner, answer.owner_token)
        assert len(tokens) == 20
        term = Term(
            referee, organizer, registration, tokens, bots, admin_pb.Tournament(), owner_tokens
        )
        for name in tokens:
            term.connect(name)
        start_at = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=1)
        request = admin_pb.CreateTournamentRequest(
            name="term tournament",
            game=game_to_proto(GAME),
            baselines=["greedy", "random"],
            entrant_policy=admin_pb.ENTRANT_POLICY_LATEST,
            time_control=CLOCK,
            concurrency=8,
            seed=2027,
        )
        request.start_at.FromDatetime(start_at)
        created = organizer.CreateTournament(request, timeout=WAIT)
        assert created.state == admin_pb.TOURNAMENT_STATE_CREATED and created.course == COURSE
        term.tournament = wait_finished(organizer, created.id)
        yield term
    finally:
        for bot in bots:
            bot.close()
        referee.close()
        house.provide(hosted)
        storage.close()


def test_the_scheduled_tournament_seats_each_owners_latest_version_and_the_baselines(
    term: Term,
) -> None:
    t = term.tournament
    assert t.state == admin_pb.TOURNAMENT_STATE_FINISHED, t
    latest = {f"{o}-v2" if o in TWO_VERSIONS else f"{o}-v1" for o in OWNERS}
    assert set(t.entrants) == latest | {"house:greedy", "house:random"}
    assert t.progress.done == t.progress.total == 14 * 13  # every pair, both seatings
    listed = term.organizer.ListMatches(
        admin_pb.ListMatchesRequest(tournament_id=t.id, limit=1000), timeout=WAIT
    )
    assert len(listed.matches) == t.progress.total
    assert all(m.course == COURSE for m in listed.matches)
    assert not any(m.faults and any(m.faults) for m in listed.matches)


def test_the_grades_list_every_owner_with_the_result_against_greedy(term: Term) -> None:
    grades = term.organizer.GetGrades(
        admin_pb.GetGradesRequest(tournament_ids=[term.tournament.id], bootstrap_rounds=50),
        timeout=120,
    )
    assert grades.course == COURSE and grades.game == "passing"
    assert {g.owner for g in grades.grades} == set(OWNERS)
    assert {b.bot: b.rating for b in grades.baselines} == {"greedy": 1500, "random": 1000}
    for grade in grades.grades:
        assert grade.games == 2 * 13  # one pair of games against each of the 13 others
        assert grade.rating_low <= grade.rating <= grade.rating_high
        against = {b.baseline: b for b in grade.baselines}
        greedy = against["greedy"]
        assert greedy.games == 2 and greedy.verdict in ("better", "worse", "not significant")
        assert 0 <= greedy.p_value <= 1 and 0 <= greedy.los <= 1
    # First-legal bots against the greedy baseline at its fixed rating: every student bot is
    # rated below greedy's anchor.
    assert all(g.rating < 1500 for g in grades.grades)


def test_a_regrade_carries_the_other_games_over_exactly_and_replays_the_new_versions(
    term: Term,
) -> None:
    original = term.tournament
    owner = OWNERS[-1]  # one version so far: hands in v2 after the deadline
    new = f"{owner}-v2"
    answer = term.registration.RegisterBot(
        admin_pb.RegisterBotRequest(name=new, owner_token=term.owner_tokens[owner]),
        timeout=WAIT,
    )
    assert answer.bot.owner == owner
    term.tokens[new] = answer.token
    term.connect(new)
    old = f"{owner}-v1"
    regrade = term.organizer.RegradeTournament(
        admin_pb.RegradeTournamentRequest(
            tournament_id=original.id, replace=[admin_pb.Replacement(bot=old, by=new)], start=True
        ),
        timeout=WAIT,
    )
    assert regrade.regrade_of == original.id and regrade.id != original.id
    assert [e if e != old else new for e in original.entrants] == list(regrade.entrants)
    finished = wait_finished(term.organizer, regrade.id)
    assert finished.state == admin_pb.TOURNAMENT_STATE_FINISHED, finished
    before, after = records(term.organizer, original.id), records(term.organizer, regrade.id)
    assert sorted(before) == sorted(after)
    replayed = 0
    for index, record in before.items():
        header = json.loads(record.splitlines()[0])
        again = json.loads(after[index].splitlines()[0])
        assert again["seed"] == header["seed"], index  # the same deal
        if old in header["seats"]:
            replayed += 1
            assert again["seats"] == [new if s == old else s for s in header["seats"]]
            assert replay(parse_record(after[index])).ok
        else:
            assert after[index] == record, f"game {index} was not carried over as played"
    assert replayed == 2 * 13
    status = term.organizer.GetTournament(
        admin_pb.GetTournamentRequest(tournament_id=regrade.id), timeout=WAIT
    )
    assert len(status.carried) == len(before) - replayed and not status.fresh_deals
    both = term.organizer.GetGrades(
        admin_pb.GetGradesRequest(tournament_ids=[original.id, regrade.id], bootstrap_rounds=20),
        timeout=120,
    )
    (note,) = both.regrades
    assert note.carried == note.counted_once == len(status.carried)
    rows = {g.bot: g for g in both.grades}
    assert rows[new].games == rows[old].games == 2 * 13  # not 28 for 14, as once
    assert both.games == len(before) + replayed


def test_the_tournaments_standings_are_anchored_at_the_frozen_baselines(term: Term) -> None:
    answer = term.organizer.GetStandings(
        admin_pb.GetStandingsRequest(
            tournament_id=term.tournament.id, batch=True, bootstrap_rounds=20
        ),
        timeout=120,
    )
    batch = answer.batch
    assert {(b.bot, b.rating) for b in batch.fixed} == {
        ("house:greedy", 1500),
        ("house:random", 1000),
    }
    assert batch.anchor == ""
    rows = {row.bot: row for row in batch.rows}
    assert rows["house:greedy"].rating == pytest.approx(1500)
    assert rows["house:random"].rating == pytest.approx(1000)
    assert len(rows) == 14

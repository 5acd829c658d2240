"""An organizer token of one course cannot read or change another course: every AdminService
method, over real gRPC (the servicers of tests/fakes/admin_server.py on a real SQLite storage).

Two courses, ``cs-a`` and ``cs-b``, each with bots (connected), stored matches (rated, so
both have ratings), a finished tournament, an invite and a running ladder. The organizer of
``cs-a`` then calls every method of the service (the list is the service descriptor's, so a new
method fails :func:`test_every_method_has_cases` until it has cases here) in the ways that could
reach ``cs-b``: a listing shows none of its objects, its names and ids get exactly the answer of
names and ids that exist nowhere (NOT_FOUND, or INVALID_ARGUMENT where an unknown entrant is a bad
field), a ``course: cs-b`` field is PERMISSION_DENIED, and the admin-only calls are
PERMISSION_DENIED; after every call nothing of ``cs-b`` changed.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import grpc
import pytest
from google.protobuf import text_format

from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import make_game
from domino_arena.sdk.wire import game_to_proto
from domino_arena.server.hosting.spec.submissions import Submission
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.net.lobby import Connection
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store import hosted
from domino_arena.server.store.tournaments import TournamentState
from domino_arena.server.tournaments.lifecycle import new_tournament
from domino_arena.v1 import admin_pb2 as admin_pb
from tests.fakes.admin_server import AdminServer, FakeArena, FakeLadder, refused, stored_match
from tests.fakes.referee_server import WAIT

A: Final = "cs-a"
B: Final = "cs-b"
B_BOTS: Final = ("b1", "b2")
A_BOTS: Final = ("a1", "a2")
B_MATCH: Final = "match-b"
B_TOURNAMENT: Final = "tournament-b"
PASSING: Final = game_to_proto(make_game("passing"))


@dataclass
class World:
    server: AdminServer
    arena: FakeArena
    storage: RatedStorage
    a_token: str
    b_invite: str

    def call(self, method: str, request: Any) -> Any:
        stub = getattr(self.server.admin, method)
        return stub(request, metadata=(("authorization", f"Bearer {self.a_token}"),), timeout=WAIT)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'scope.db'}")
    storage.open()
    a_token = storage.create_course(A).token
    storage.create_course(B, baselines=(("greedy", 1500.0),))
    for course, names in ((A, A_BOTS), (B, B_BOTS)):
        for name in names:
            storage.create_bot(name, course=course, owner=f"{name}-owner")
    for index, (course, bots) in enumerate(((A, A_BOTS), (B, B_BOTS))):
        match_id = B_MATCH if course == B else "match-a"
        row = stored_match(match_id, (bots[0], bots[1]), 0, minute=index)
        storage.save_match(dataclasses.replace(row, course=course))
    t = new_tournament(
        name="b cup",
        game=make_game("passing"),
        entrants=B_BOTS,
        known_bots=B_BOTS,
        time_control=TimeControl(),
        fault_policy=FaultPolicy.FORFEIT,
        seed=3,
        tournament_id=B_TOURNAMENT,
    )
    storage.add_tournament(dataclasses.replace(t, course=B))
    storage.set_tournament_state(B_TOURNAMENT, TournamentState.FINISHED)
    b_invite = storage.create_invites(B, 1)[0].invite.id
    data = b"b1's archive"  # a hosted version of b1 and its log of match-b
    version = Submission("python", "b.py:B", data, hashlib.sha256(data).hexdigest(), 1, 1)
    hosted.add_version(storage.engine, "b1", version, submitter="x", games=(), now=t.created)
    hosted.record_match_log(storage.engine, B_MATCH, "b1", 1, "b1", crashed=False, now=t.created)
    arena = FakeArena(storage)
    arena.ladders[B, "passing"] = FakeLadder(
        make_game("passing"), TimeControl(), FaultPolicy.FORFEIT, 3, 1000, 2, 7, course=B
    )
    server = AdminServer(arena)
    for name in (*A_BOTS, *B_BOTS):
        connection = Connection(name, ["passing"])
        server.call(lambda c=connection: arena.lobby.connect(c))  # type: ignore[misc]
    try:
        yield World(server, arena, storage, a_token, b_invite)
    finally:
        server.close()
        storage.close()


def state_of_b(world: World) -> Any:
    """Everything of course B that a call could change."""
    storage = world.storage
    bots = [
        (b.name, b.state, b.token_issued, b.owner)
        for b in storage.bots(include_deleted=True, course=B)
    ]
    t = storage.tournament(B_TOURNAMENT)
    return (
        bots,
        storage.course(B),
        storage.invites(B),
        [m.id for m in storage.matches(course=B, records=False)],
        None if t is None else (t.state, t.name, t.entrants, t.course),
        sorted(key for key in world.arena.ladders if key[0] == B),
        [t.id for t in storage.tournaments() if t.course == B],
        [m.id for m in storage.matches(bot="b1", records=False)],
        storage.owners(B),
        hosted.versions(storage.engine, "b1"),
        hosted.match_logs(storage.engine, B_MATCH),
    )


# -- the cases ------------------------------------------------------------------------------------

Check = Callable[[Any], None]


@dataclass(frozen=True)
class Case:
    method: str
    request: Any
    status: grpc.StatusCode | None = None
    """The refusal expected; None: the call succeeds and ``shows_none`` checks its answer."""
    shows_none: Check | None = None


def _no_b_text(answer: Any) -> None:
    """No name or id of course B anywhere in the answer."""
    text = str(answer)
    for secret in (*B_BOTS, B_MATCH, B_TOURNAMENT, B, "b1-owner"):
        assert secret not in text, (secret, text)


def _denied(method: str, request: Any) -> Case:
    return Case(method, request, grpc.StatusCode.PERMISSION_DENIED)


def _missing(method: str, request: Any) -> Case:
    return Case(method, request, grpc.StatusCode.NOT_FOUND)


def _listing(method: str, request: Any) -> Case:
    return Case(method, request, None, _no_b_text)


CASES: Final[list[Case]] = [
    _missing("RunMatch", admin_pb.RunMatchRequest(game=PASSING, bots=list(B_BOTS))),
    _missing("RunMatch", admin_pb.RunMatchRequest(game=PASSING, bots=["a1", "b1"])),
    _denied("RunMatch", admin_pb.RunMatchRequest(game=PASSING, bots=list(A_BOTS), course=B)),
    _listing("ListConnected", admin_pb.ListConnectedRequest()),
    _denied("ListConnected", admin_pb.ListConnectedRequest(course=B)),
    _denied(
        "CreateTournament",
        admin_pb.CreateTournamentRequest(game=PASSING, entrants=list(A_BOTS), course=B),
    ),
    _missing(
        "CreateTournament", admin_pb.CreateTournamentRequest(game=PASSING, entrants=list(B_BOTS))
    ),
    _missing("StartTournament", admin_pb.StartTournamentRequest(tournament_id=B_TOURNAMENT)),
    _missing("PauseTournament", admin_pb.PauseTournamentRequest(tournament_id=B_TOURNAMENT)),
    _missing("CancelTournament", admin_pb.CancelTournamentRequest(tournament_id=B_TOURNAMENT)),
    _missing("GetTournament", admin_pb.GetTournamentRequest(tournament_id=B_TOURNAMENT)),
    _listing("ListTournaments", admin_pb.ListTournamentsRequest()),
    _denied("ListTournaments", admin_pb.ListTournamentsRequest(course=B)),
    _missing(
        "CreateComparison",
        admin_pb.CreateComparisonRequest(game=PASSING, candidate="b1", baseline="b2"),
    ),
    _listing(
        "GetStandings",
        admin_pb.GetStandingsRequest(game="passing", head_to_head=True, repeat_deals=True),
    ),
    _denied("GetStandings", admin_pb.GetStandingsRequest(game="passing", course=B)),
    _missing("GetStandings", admin_pb.GetStandingsRequest(tournament_id=B_TOURNAMENT)),
    _listing("ListMatches", admin_pb.ListMatchesRequest()),
    _listing("ListMatches", admin_pb.ListMatchesRequest(bot="b1")),
    _denied("ListMatches", admin_pb.ListMatchesRequest(course=B)),
    _missing("ListMatches", admin_pb.ListMatchesRequest(tournament_id=B_TOURNAMENT)),
    _missing("GetMatch", admin_pb.GetMatchRequest(match_id=B_MATCH)),
    _denied("StartLadder", admin_pb.StartLadderRequest(game=PASSING, course=B)),
    _denied("StopLadder", admin_pb.StopLadderRequest(game="passing", course=B)),
    _missing("StopLadder", admin_pb.StopLadderRequest(game="passing")),
    _listing("ListLadders", admin_pb.ListLaddersRequest()),
    _denied("ListLadders", admin_pb.ListLaddersRequest(course=B)),
    _denied("CreateBot", admin_pb.CreateBotRequest(name="intruder", course=B)),
    _listing("ListBots", admin_pb.ListBotsRequest(include_deleted=True)),
    _denied("ListBots", admin_pb.ListBotsRequest(course=B)),
    _missing("RotateBotToken", admin_pb.RotateBotTokenRequest(name="b1")),
    _missing("DisableBot", admin_pb.DisableBotRequest(name="b1")),
    _missing("EnableBot", admin_pb.EnableBotRequest(name="b1")),
    _missing("DeleteBot", admin_pb.DeleteBotRequest(name="b1")),
    _missing("CheckBot", admin_pb.CheckBotRequest(bot="b1")),
    _missing("PracticeMatch", admin_pb.PracticeMatchRequest(bot="b1", game=PASSING)),
    _denied("CreateCourse", admin_pb.CreateCourseRequest(name="cs-c")),
    _denied("CreateCourse", admin_pb.CreateCourseRequest(name=B)),
    _denied("RotateOrganizerToken", admin_pb.RotateOrganizerTokenRequest(course=B)),
    _denied("RotateOrganizerToken", admin_pb.RotateOrganizerTokenRequest(course=A)),
    _listing("ListCourses", admin_pb.ListCoursesRequest()),
    _denied("GetCourse", admin_pb.GetCourseRequest(course=B)),
    _denied("UpdateCourse", admin_pb.UpdateCourseRequest(course=B, title="taken over")),
    _denied("CreateInvites", admin_pb.CreateInvitesRequest(course=B, count=1)),
    _listing("ListInvites", admin_pb.ListInvitesRequest()),
    _denied("ListInvites", admin_pb.ListInvitesRequest(course=B)),
    _missing("RevokeInvite", admin_pb.RevokeInviteRequest(id="B_INVITE")),
    _missing(
        "RegradeTournament",
        admin_pb.RegradeTournamentRequest(
            tournament_id=B_TOURNAMENT, replace=[admin_pb.Replacement(bot="b1", by="a1")]
        ),
    ),
    _missing("GetGrades", admin_pb.GetGradesRequest(tournament_ids=[B_TOURNAMENT])),
    _listing("ListOwners", admin_pb.ListOwnersRequest()),
    _denied("ListOwners", admin_pb.ListOwnersRequest(course=B)),
    _missing("DisableOwner", admin_pb.OwnerRequest(name="b1-owner")),
    _denied("DisableOwner", admin_pb.OwnerRequest(course=B, name="b1-owner")),
    _missing("EnableOwner", admin_pb.OwnerRequest(name="b1-owner")),
    _denied("EnableOwner", admin_pb.OwnerRequest(course=B, name="b1-owner")),
    _missing("IssueOwnerToken", admin_pb.OwnerRequest(name="b1-owner")),
    _denied("IssueOwnerToken", admin_pb.OwnerRequest(course=B, name="b1-owner")),
    _missing("ListBotVersions", admin_pb.ListBotVersionsRequest(name="b1")),
    _missing("GetMatchLog", admin_pb.GetMatchLogRequest(match_id=B_MATCH)),
    _missing("GetMatchLog", admin_pb.GetMatchLogRequest(match_id=B_MATCH, bot="b1")),
    _missing("GetAnalysis", admin_pb.GetAnalysisRequest(match_id=B_MATCH)),
    _missing("AnalyseMatch", admin_pb.AnalyseMatchRequest(match_id=B_MATCH)),
    _missing("AnalyseMatch", admin_pb.AnalyseMatchRequest(match_id=B_MATCH, seats=[7])),
    _missing("AnalyseTournament", admin_pb.AnalyseTournamentRequest(tournament_id=B_TOURNAMENT)),
]


def _case_id(case: Case) -> str:
    fields = ",".join(f"{f.name}" for f, _ in case.request.ListFields())
    outcome = "listing" if case.status is None else case.status.name.lower()
    return f"{case.method}-{outcome}-{fields or 'empty'}"


def _param(case: Case) -> Any:
    return pytest.param(case, id=_case_id(case))


def test_every_method_has_cases() -> None:
    methods = admin_pb.DESCRIPTOR.services_by_name["AdminService"].methods
    assert sorted({m.name for m in methods}) == sorted({case.method for case in CASES})


@pytest.mark.parametrize("case", [_param(case) for case in CASES])
def test_an_organizer_cannot_read_or_change_another_course(world: World, case: Case) -> None:
    request = case.request
    if case.method == "RevokeInvite":
        request = admin_pb.RevokeInviteRequest(id=world.b_invite)
    before = state_of_b(world)
    if case.status is None:
        answer = world.call(case.method, request)
        assert case.shows_none is not None
        case.shows_none(answer)
    else:
        code, details = refused(lambda: world.call(case.method, request))
        if case.status is grpc.StatusCode.NOT_FOUND:
            _answered_as_if_missing(world, case.method, request, code, details)
        else:
            assert code is case.status, details
    assert state_of_b(world) == before


GHOSTS: Final = {
    "b1": "zz1",
    "b2": "zz2",
    B_TOURNAMENT: "tournament-z",
    B_MATCH: "match-z",
    "b1-owner": "zz-owner",
}
"""B's names and ids, and names and ids that exist nowhere, to compare their answers."""


def _answered_as_if_missing(
    world: World, method: str, request: Any, code: grpc.StatusCode, details: str
) -> None:
    """B's name or id gets exactly the answer of one that does not exist (NOT_FOUND, or
    INVALID_ARGUMENT where a missing one is a bad field, as an unknown entrant is)."""
    ghosts = dict(GHOSTS)
    if method == "RevokeInvite":
        ghosts[world.b_invite] = "000000000000"
    text = text_format.MessageToString(request)
    for real, ghost in ghosts.items():
        text = text.replace(f'"{real}"', f'"{ghost}"')
    ghost_request = text_format.Parse(text, type(request)())
    ghost_code, ghost_details = refused(lambda: world.call(method, ghost_request))
    for real, ghost in ghosts.items():
        ghost_details = ghost_details.replace(ghost, real)
    assert (code, details) == (ghost_code, ghost_details)
    assert code in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT), details


# -- what the organizer sees of its own course ---------------------------------------------------


def test_the_organizer_sees_and_manages_its_own_course(world: World) -> None:
    bots = world.call("ListBots", admin_pb.ListBotsRequest()).bots
    assert [(b.name, b.course, b.owner) for b in bots] == [
        ("a1", A, "a1-owner"),
        ("a2", A, "a2-owner"),
    ]
    connected = world.call("ListConnected", admin_pb.ListConnectedRequest()).bots
    assert sorted(b.name for b in connected) == list(A_BOTS)
    matches = world.call("ListMatches", admin_pb.ListMatchesRequest()).matches
    assert [(m.match_id, m.course) for m in matches] == [("match-a", A)]
    rows = world.call("GetStandings", admin_pb.GetStandingsRequest(game="passing")).rows
    assert sorted(r.bot for r in rows) == list(A_BOTS)
    created = world.call("CreateBot", admin_pb.CreateBotRequest(name="a3", owner="ann"))
    assert (created.bot.course, created.bot.owner) == (A, "ann")
    assert world.call("GetCourse", admin_pb.GetCourseRequest()).name == A
    assert [c.name for c in world.call("ListCourses", admin_pb.ListCoursesRequest()).courses] == [A]
    world.call("StartLadder", admin_pb.StartLadderRequest(game=PASSING))
    ladders = world.call("ListLadders", admin_pb.ListLaddersRequest()).ladders
    assert [ladder.course for ladder in ladders] == [A]
    assert (A, "passing") in world.arena.ladders and (B, "passing") in world.arena.ladders
    world.call("StopLadder", admin_pb.StopLadderRequest(game="passing"))
    assert (B, "passing") in world.arena.ladders


def test_run_match_is_stored_in_the_course_of_its_bots(world: World) -> None:
    world.call("RunMatch", admin_pb.RunMatchRequest(game=PASSING, bots=list(A_BOTS)))
    assert [spec.course for spec in world.arena.specs] == [A]
    admin = (("authorization", "Bearer s3cret-admin-token"),)
    world.server.admin.RunMatch(
        admin_pb.RunMatchRequest(game=PASSING, bots=list(B_BOTS)), metadata=admin, timeout=WAIT
    )
    assert [spec.course for spec in world.arena.specs] == [A, B]
    code, details = refused(
        lambda: world.server.admin.RunMatch(
            admin_pb.RunMatchRequest(game=PASSING, bots=["a1", "b1"]), metadata=admin
        )
    )
    assert code is grpc.StatusCode.INVALID_ARGUMENT
    assert details == (
        "bots: they belong to different courses (a1: cs-a, b1: cs-b); a match is played within "
        "one course"
    )
    code, details = refused(
        lambda: world.server.admin.RunMatch(
            admin_pb.RunMatchRequest(game=PASSING, bots=["a1", "a2"], course=B), metadata=admin
        )
    )
    assert code is grpc.StatusCode.INVALID_ARGUMENT
    assert details.startswith("bots[0]: bot 'a1' belongs to course 'cs-a', not 'cs-b'")


def test_the_admin_sees_every_course(world: World) -> None:
    admin = (("authorization", "Bearer s3cret-admin-token"),)
    bots = world.server.admin.ListBots(admin_pb.ListBotsRequest(), metadata=admin).bots
    assert {b.name for b in bots} == {*A_BOTS, *B_BOTS}
    only_b = world.server.admin.ListBots(admin_pb.ListBotsRequest(course=B), metadata=admin).bots
    assert [b.name for b in only_b] == list(B_BOTS)
    ladders = world.server.admin.ListLadders(admin_pb.ListLaddersRequest(), metadata=admin)
    assert [ladder.course for ladder in ladders.ladders] == [B]

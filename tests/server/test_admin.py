"""The admin API over real gRPC: the servicers on a grpc.aio server on port 0, a fake arena.

The servicer's dependencies are the small :class:`~domino_arena.server.net.admin.AdminArena`
and :class:`~domino_arena.server.net.admin_tournaments.TournamentDirector` protocols;
:class:`FakeArena` implements both over a real :class:`RatedStorage` (a SQLite file) and a
real :class:`Lobby`, and records what it was asked, so every RPC is checked at the wire: the
token, each refusal with its status and message, and the answers (the harness is in
tests/fakes/admin_server.py).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import grpc
import pytest

from domino_arena.sdk.rules import make_game
from domino_arena.sdk.wire import game_from_proto, game_to_proto
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.net.admin_requests import check_token
from domino_arena.server.net.lobby import Connection
from domino_arena.server.play.provable import commitment_of
from domino_arena.server.store.tournaments import TournamentState
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import games_pb2
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.admin_server import TOKEN, AdminServer, FakeArena, refused, stored_match
from tests.fakes.referee_server import WAIT

BOTS: Final = ("alice", "bob", "carol", "dave")
AUTH: Final = (("authorization", f"Bearer {TOKEN}"),)


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[RatedStorage]:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'admin.db'}")
    storage.open()
    for name in BOTS:
        storage.add_bot(name)
    yield storage
    storage.close()


@pytest.fixture
def arena(storage: RatedStorage) -> FakeArena:
    return FakeArena(storage)


@pytest.fixture
def server(arena: FakeArena) -> Iterator[AdminServer]:
    server = AdminServer(arena)
    yield server
    server.close()


# -- the token ------------------------------------------------------------------------------------


ALL_CALLS: Final[list[tuple[str, Any]]] = [
    ("RunMatch", admin_pb.RunMatchRequest()),
    ("ListConnected", admin_pb.ListConnectedRequest()),
    ("CreateTournament", admin_pb.CreateTournamentRequest()),
    ("StartTournament", admin_pb.StartTournamentRequest(tournament_id="x")),
    ("PauseTournament", admin_pb.PauseTournamentRequest(tournament_id="x")),
    ("CancelTournament", admin_pb.CancelTournamentRequest(tournament_id="x")),
    ("GetTournament", admin_pb.GetTournamentRequest(tournament_id="x")),
    ("ListTournaments", admin_pb.ListTournamentsRequest()),
    ("GetStandings", admin_pb.GetStandingsRequest(game="moon")),
    ("ListMatches", admin_pb.ListMatchesRequest()),
    ("GetMatch", admin_pb.GetMatchRequest(match_id="x")),
    ("StartLadder", admin_pb.StartLadderRequest()),
    ("StopLadder", admin_pb.StopLadderRequest(game="moon")),
    ("ListLadders", admin_pb.ListLaddersRequest()),
    ("CreateBot", admin_pb.CreateBotRequest(name="zed")),
    ("ListBots", admin_pb.ListBotsRequest()),
    ("RotateBotToken", admin_pb.RotateBotTokenRequest(name="alice")),
    ("DisableBot", admin_pb.DisableBotRequest(name="alice")),
    ("EnableBot", admin_pb.EnableBotRequest(name="alice")),
    ("DeleteBot", admin_pb.DeleteBotRequest(name="alice")),
    ("CreateComparison", admin_pb.CreateComparisonRequest()),
    ("CheckBot", admin_pb.CheckBotRequest(bot="alice")),
    ("PracticeMatch", admin_pb.PracticeMatchRequest(bot="alice")),
    ("CreateCourse", admin_pb.CreateCourseRequest(name="cs101")),
    ("RotateOrganizerToken", admin_pb.RotateOrganizerTokenRequest(course="cs101")),
    ("ListCourses", admin_pb.ListCoursesRequest()),
    ("GetCourse", admin_pb.GetCourseRequest(course="default")),
    ("UpdateCourse", admin_pb.UpdateCourseRequest(course="default", title="t")),
    ("CreateInvites", admin_pb.CreateInvitesRequest(count=1)),
    ("ListInvites", admin_pb.ListInvitesRequest()),
    ("RevokeInvite", admin_pb.RevokeInviteRequest(id="x")),
    ("RegradeTournament", admin_pb.RegradeTournamentRequest(tournament_id="x")),
    ("GetGrades", admin_pb.GetGradesRequest(tournament_ids=["x"])),
    ("ListOwners", admin_pb.ListOwnersRequest()),
    ("DisableOwner", admin_pb.OwnerRequest(name="x")),
    ("EnableOwner", admin_pb.OwnerRequest(name="x")),
    ("IssueOwnerToken", admin_pb.OwnerRequest(name="x")),
    ("ListBotVersions", admin_pb.ListBotVersionsRequest(name="alice")),
    ("GetMatchLog", admin_pb.GetMatchLogRequest(match_id="x")),
    ("GetAnalysis", admin_pb.GetAnalysisRequest(match_id="x")),
    ("AnalyseMatch", admin_pb.AnalyseMatchRequest(match_id="x")),
    ("AnalyseTournament", admin_pb.AnalyseTournamentRequest(tournament_id="x")),
]


def test_every_rpc_of_the_service_is_checked_for_the_token() -> None:
    methods = admin_pb.DESCRIPTOR.services_by_name["AdminService"].methods
    assert sorted(m.name for m in methods) == sorted(name for name, _ in ALL_CALLS)


@pytest.mark.parametrize(
    ("metadata", "words"),
    [
        ((), "admin token missing: send call metadata 'authorization: Bearer <token>'"),
        ((("authorization", TOKEN),), "admin token missing: the authorization metadata is not"),
        ((("authorization", "Bearer "),), "admin token missing"),
        ((("authorization", "Bearer wrong"),), "wrong admin token"),
        ((("authorization", f"Bearer {TOKEN}x"),), "wrong admin token"),
    ],
    ids=["none", "no-scheme", "empty", "wrong", "longer"],
)
@pytest.mark.parametrize(("method", "request_"), ALL_CALLS, ids=[name for name, _ in ALL_CALLS])
def test_a_call_without_the_right_token_is_refused_and_changes_nothing(
    server: AdminServer,
    arena: FakeArena,
    *,
    method: str,
    request_: Any,
    metadata: tuple[tuple[str, str], ...],
    words: str,
) -> None:
    stub = getattr(server.admin, method)
    code, details = refused(lambda: stub(request_, metadata=metadata, timeout=WAIT))
    assert code is grpc.StatusCode.UNAUTHENTICATED
    assert details.startswith(words)
    assert arena.calls == [] and arena.specs == []
    bots = arena.storage.bots(include_deleted=True)
    assert [(b.name, b.state.value, b.token_issued) for b in bots] == [
        (b.name, "enabled", b.created) for b in bots
    ]
    assert [b.name for b in bots] == sorted(BOTS)


def test_a_referee_without_a_token_refuses_every_call() -> None:
    with pytest.raises(Exception, match="has no admin token set") as info:
        check_token([("authorization", "Bearer anything")], "")
    assert "closed" in str(info.value)


def test_the_token_scheme_is_case_insensitive_and_bytes_are_read() -> None:
    check_token([("Authorization", f"bearer {TOKEN}")], TOKEN)
    check_token([("authorization", f"Bearer {TOKEN}".encode())], TOKEN)


# -- matches --------------------------------------------------------------------------------------


def test_run_match_checks_the_request_then_asks_the_arena(
    server: AdminServer, arena: FakeArena
) -> None:
    passing = game_to_proto(make_game("passing"))
    request = admin_pb.RunMatchRequest(game=passing, bots=["alice", "bob"])
    code, details = refused(lambda: server.admin.RunMatch(request, metadata=AUTH, timeout=WAIT))
    assert (code, details) == (grpc.StatusCode.FAILED_PRECONDITION, "bot 'alice' is not connected")
    server.call(lambda: arena.lobby.connect(Connection("alice", ["passing"])))
    server.call(lambda: arena.lobby.connect(Connection("bob", ["passing", "moon"])))
    request.has_seed, request.seed = True, 42
    response = server.admin.RunMatch(request, metadata=AUTH, timeout=WAIT)
    (spec,) = arena.specs
    assert (spec.bots, spec.seed, spec.game.name) == (("alice", "bob"), 42, "passing")
    assert response.match_id == spec.match_id
    assert response.result.termination == pb.TERMINATION_NORMAL
    assert response.result.side_of_seat == [0, 1]
    assert response.record == '{"fake": true}\n'
    listed = server.admin.ListConnected(admin_pb.ListConnectedRequest(), metadata=AUTH)
    assert {b.name: list(b.games) for b in listed.bots} == {
        "alice": ["passing"],
        "bob": ["moon", "passing"],
    }


@pytest.mark.parametrize(
    ("request_", "words"),
    [
        (admin_pb.RunMatchRequest(bots=["alice", "bob"]), "game: missing"),
        (
            admin_pb.RunMatchRequest(game=game_to_proto(make_game("passing")), bots=["alice"]),
            "bots: Passing Game, 2 players, to 101 needs 2 bots, one per seat, got 1",
        ),
        (
            admin_pb.RunMatchRequest(
                game=game_to_proto(make_game("passing")),
                bots=["alice", "bob"],
                has_seed=True,
                seed=2**63,
            ),
            f"seed: must be from 0 to {2**63 - 1}, got {2**63}",
        ),
        (
            admin_pb.RunMatchRequest(
                game=game_to_proto(make_game("passing")),
                bots=["alice", "bob"],
                fault_policy=pb.FaultPolicy.ValueType(9),
            ),
            "fault_policy: unknown value 9",
        ),
    ],
    ids=["no-game", "seats", "seed", "policy"],
)
def test_run_match_refuses_a_bad_request_naming_the_field(
    server: AdminServer, arena: FakeArena, request_: admin_pb.RunMatchRequest, words: str
) -> None:
    server.call(lambda: arena.lobby.connect(Connection("alice", ["passing"])))
    server.call(lambda: arena.lobby.connect(Connection("bob", ["passing"])))
    code, details = refused(lambda: server.admin.RunMatch(request_, metadata=AUTH, timeout=WAIT))
    assert code is grpc.StatusCode.INVALID_ARGUMENT
    assert details.startswith(words)
    assert arena.specs == []


def test_list_matches_filters_and_get_match_returns_the_record(
    server: AdminServer, storage: RatedStorage
) -> None:
    storage.save_match(stored_match("m1", ("alice", "bob"), 0, minute=1))
    storage.save_match(stored_match("m2", ("carol", "bob"), 1, minute=2))
    storage.save_match(stored_match("m3", ("alice", "carol"), None, termination="void", minute=3))

    def ids(**filters: Any) -> list[str]:
        response = server.admin.ListMatches(
            admin_pb.ListMatchesRequest(**filters), metadata=AUTH, timeout=WAIT
        )
        return [m.match_id for m in response.matches]

    assert ids() == ["m3", "m2", "m1"]
    assert ids(bot="alice") == ["m3", "m1"]
    assert ids(game="passing", limit=2) == ["m3", "m2"]
    assert ids(game="moon") == []
    got = server.admin.GetMatch(admin_pb.GetMatchRequest(match_id="m2"), metadata=AUTH)
    assert got.record == '{"header": true}\n'
    summary = got.match
    assert (list(summary.bots), summary.result.winner, list(summary.result.scores)) == (
        ["carol", "bob"],
        1,
        [20, 101],
    )
    assert summary.game.WhichOneof("game") == "passing"
    assert summary.game_index == -1 and summary.tournament_id == "" and summary.rated
    assert (summary.deal_id, summary.rotation) == (-1, -1)
    assert summary.created.ToDatetime(dt.UTC) == dt.datetime(2026, 1, 1, 12, 2, tzinfo=dt.UTC)
    void = server.admin.GetMatch(admin_pb.GetMatchRequest(match_id="m3"), metadata=AUTH).match
    assert void.result.termination == pb.TERMINATION_VOID and void.result.winner == -1


@pytest.mark.parametrize(
    ("method", "request_", "code", "words"),
    [
        ("GetMatch", admin_pb.GetMatchRequest(), "INVALID_ARGUMENT", "match_id: missing"),
        (
            "GetMatch",
            admin_pb.GetMatchRequest(match_id="nope"),
            "NOT_FOUND",
            "no stored match has id 'nope'",
        ),
        (
            "ListMatches",
            admin_pb.ListMatchesRequest(limit=1001),
            "INVALID_ARGUMENT",
            "limit: must be at most 1000, got 1001",
        ),
        (
            "ListMatches",
            admin_pb.ListMatchesRequest(game="chess"),
            "INVALID_ARGUMENT",
            "game: unknown game 'chess'; expected one of doubles, moon, passing, straight",
        ),
        (
            "ListMatches",
            admin_pb.ListMatchesRequest(tournament_id="nope"),
            "NOT_FOUND",
            "no tournament has id 'nope'",
        ),
        (
            "GetStandings",
            admin_pb.GetStandingsRequest(),
            "INVALID_ARGUMENT",
            "game: missing; expected one of doubles, moon, passing, straight",
        ),
        (
            "GetTournament",
            admin_pb.GetTournamentRequest(),
            "INVALID_ARGUMENT",
            "tournament_id: missing",
        ),
        (
            "GetTournament",
            admin_pb.GetTournamentRequest(tournament_id="nope"),
            "NOT_FOUND",
            "no tournament has id 'nope'",
        ),
        (
            "ListTournaments",
            admin_pb.ListTournamentsRequest(states=[admin_pb.TOURNAMENT_STATE_UNSPECIFIED]),
            "INVALID_ARGUMENT",
            "states[0]: unknown value 0",
        ),
        (
            "StopLadder",
            admin_pb.StopLadderRequest(game="moon"),
            "NOT_FOUND",
            "no moon ladder is running",
        ),
        (
            "StartLadder",
            admin_pb.StartLadderRequest(),
            "INVALID_ARGUMENT",
            "game: missing; expected a game configuration",
        ),
    ],
)
def test_bad_requests_are_refused_with_a_precise_status(
    server: AdminServer, method: str, request_: Any, code: str, words: str
) -> None:
    stub = getattr(server.admin, method)
    got, details = refused(lambda: stub(request_, metadata=AUTH, timeout=WAIT))
    assert got.name == code
    assert details.startswith(words)


# -- tournaments ----------------------------------------------------------------------------------


def create(server: AdminServer, **fields: Any) -> admin_pb.Tournament:
    fields.setdefault("game", game_to_proto(make_game("passing")))
    fields.setdefault("entrants", ["alice", "bob", "carol"])
    return server.admin.CreateTournament(
        admin_pb.CreateTournamentRequest(**fields), metadata=AUTH, timeout=WAIT
    )


def test_create_tournament_applies_the_defaults(server: AdminServer, arena: FakeArena) -> None:
    t = create(server, name="spring cup", seed=5)
    assert t.name == "spring cup"
    assert t.state == admin_pb.TOURNAMENT_STATE_CREATED
    assert (t.deals, t.rated, t.games_per_pairing) == (admin_pb.DEAL_MODE_DUPLICATE, True, 1)
    # Provable deals: the commitment is published, the seed and salt wait for the end.
    assert not t.HasField("seed") and not t.seed_salt and t.deal_scheme == 2
    stored = arena.storage.tournament(t.id)
    assert stored is not None and stored.seed == 5
    assert t.seed_commitment == commitment_of(5, stored.seed_salt)
    assert t.max_strikes == 3 and t.fault_policy == pb.FAULT_POLICY_SUBSTITUTE
    assert t.max_deals == 1000 and stored.max_deals == 1000
    assert (t.time_control.move_ms, t.time_control.bank_ms) == (1000, 10_000)
    assert list(t.entrants) == ["alice", "bob", "carol"]
    assert t.progress.total > 0 and t.progress.done == 0
    assert arena.calls == [("create", t.id)]


def test_create_tournament_takes_every_setting_and_can_start(
    server: AdminServer, arena: FakeArena
) -> None:
    t = create(
        server,
        game=game_to_proto(make_game("moon")),
        games_per_pairing=2,
        deals=admin_pb.DEAL_MODE_SPREAD,
        time_control=pb.TimeControl(move_ms=500, bank_ms=5000, grace_ms=100),
        fault_policy=pb.FAULT_POLICY_FORFEIT,
        max_strikes=2,
        max_deals=60,
        concurrency=3,
        wait_ms=2500,
        rated=False,
        start=True,
    )
    assert t.max_deals == 60
    assert t.name.startswith("Three-Player Moon, 3 players, to 21, ")
    assert (t.games_per_pairing, t.deals, t.rated) == (2, admin_pb.DEAL_MODE_SPREAD, False)
    assert (t.fault_policy, t.max_strikes, t.concurrency, t.wait_ms) == (
        pb.FAULT_POLICY_FORFEIT,
        2,
        3,
        2500,
    )
    assert t.time_control == pb.TimeControl(move_ms=500, bank_ms=5000, grace_ms=100)
    assert t.state == admin_pb.TOURNAMENT_STATE_RUNNING
    assert t.progress.running == 1
    assert arena.calls == [("create", t.id), ("start", t.id)]


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"game": None}, "game: missing"),
        ({"entrants": ["alice", "zed", "carol"]}, "entrants: unknown bot(s) zed"),
        ({"entrants": ["alice", "alice"]}, "entrants: alice entered more than once"),
        ({"entrants": ["alice"]}, "entrants: Passing Game, 2 players, to 101 needs at least 2"),
        ({"seed": 2**63}, f"seed: must be from 0 to {2**63 - 1}, got {2**63}"),
        (
            {"game": games_pb2.GameConfig(passing=games_pb2.PassingOptions(players=9))},
            "game.passing.players: 9; expected a number of players: 2, 3, 4",
        ),
    ],
    ids=["no-game", "unknown-bot", "twice", "too-few", "seed", "players"],
)
def test_create_tournament_refuses_an_impossible_request(
    server: AdminServer, arena: FakeArena, fields: dict[str, Any], words: str
) -> None:
    code, details = refused(lambda: create(server, **fields))
    assert code is grpc.StatusCode.INVALID_ARGUMENT, details
    assert details.startswith(words)
    assert arena.calls == []


def test_the_tournament_life_cycle_is_checked_at_each_step(
    server: AdminServer, arena: FakeArena
) -> None:
    t = create(server)

    def act(method: str) -> admin_pb.Tournament:
        stub = getattr(server.admin, method)
        request = getattr(admin_pb, f"{method}Request")(tournament_id=t.id)
        answer: admin_pb.Tournament = stub(request, metadata=AUTH, timeout=WAIT)
        return answer

    def refusal(method: str) -> str:
        code, details = refused(lambda: act(method))
        assert code is grpc.StatusCode.FAILED_PRECONDITION, details
        return details

    assert refusal("PauseTournament") == (
        f"tournament {t.id} is created: only a running tournament can pause"
    )
    assert act("StartTournament").state == admin_pb.TOURNAMENT_STATE_RUNNING
    assert refusal("StartTournament") == f"tournament {t.id} is running already"
    paused = act("PauseTournament")
    assert paused.state == admin_pb.TOURNAMENT_STATE_PAUSED
    running = act("StartTournament")
    assert running.state == admin_pb.TOURNAMENT_STATE_RUNNING  # resumed
    for shown in (t, paused, running):  # not over: the commitment alone
        assert not shown.HasField("seed") and not shown.seed_salt and shown.seed_commitment
    cancelled = act("CancelTournament")
    assert cancelled.state == admin_pb.TOURNAMENT_STATE_CANCELLED
    stored = arena.storage.tournament(t.id)
    assert stored is not None  # over: the seed and salt are revealed, and fit the commitment
    assert (cancelled.seed, cancelled.seed_salt) == (stored.seed, stored.seed_salt)
    assert cancelled.seed_commitment == commitment_of(stored.seed, stored.seed_salt)
    assert refusal("CancelTournament") == f"tournament {t.id} is cancelled already"
    assert refusal("StartTournament").startswith(f"tournament {t.id} is cancelled: only")
    assert arena.calls == [
        ("create", t.id),
        ("start", t.id),
        ("pause", t.id),
        ("start", t.id),
        ("cancel", t.id),
    ]


def test_a_running_tournament_without_a_live_runner_can_be_resumed(
    server: AdminServer, arena: FakeArena, storage: RatedStorage
) -> None:
    """After a crash the row says RUNNING but nothing runs it: start must resume it."""
    t = create(server)
    storage.set_tournament_state(t.id, TournamentState.RUNNING)
    started = server.admin.StartTournament(
        admin_pb.StartTournamentRequest(tournament_id=t.id), metadata=AUTH, timeout=WAIT
    )
    assert started.state == admin_pb.TOURNAMENT_STATE_RUNNING
    assert arena.calls[-1] == ("start", t.id)


def test_get_tournament_gives_results_and_crosstable_list_gives_every_one(
    server: AdminServer, storage: RatedStorage
) -> None:
    t = create(server, entrants=["alice", "bob", "carol"])
    games = [
        stored_match("g0", ("alice", "bob"), 0, tournament_id=t.id, game_index=0, minute=1),
        stored_match("g1", ("bob", "carol"), 0, tournament_id=t.id, game_index=1, minute=2),
        stored_match("g2", ("alice", "carol"), 1, tournament_id=t.id, game_index=2, minute=3),
        stored_match(
            "g3",
            ("carol", "bob"),
            None,
            termination="void",
            tournament_id=t.id,
            game_index=3,
            minute=4,
        ),
        stored_match("other", ("alice", "bob"), 1, minute=5),
    ]
    for game in games:
        assert storage.save_match(game)
    got = server.admin.GetTournament(
        admin_pb.GetTournamentRequest(tournament_id=t.id), metadata=AUTH, timeout=WAIT
    )
    assert got.progress.done == 4
    g3 = server.admin.GetMatch(admin_pb.GetMatchRequest(match_id="g3"), metadata=AUTH).match
    assert (g3.tournament_id, g3.game_index, g3.deal_id, g3.rotation) == (t.id, 3, 1, 1)
    table = {r.bot: (r.games, r.wins, r.draws, r.losses, r.points) for r in got.results}
    assert table == {
        "alice": (2, 1, 0, 1, 1.0),
        "bob": (2, 1, 0, 1, 1.0),
        "carol": (2, 1, 0, 1, 1.0),
    }
    assert all(not math.isclose(r.performance, 0) for r in got.results)
    crosstable = {(h.bot, h.opponent): (h.wins, h.draws, h.losses) for h in got.crosstable}
    assert crosstable[("alice", "bob")] == (1, 0, 0)
    assert crosstable[("bob", "alice")] == (0, 0, 1)
    assert crosstable[("carol", "alice")] == (1, 0, 0)
    create(server, name="second")
    listed = server.admin.ListTournaments(admin_pb.ListTournamentsRequest(), metadata=AUTH)
    assert [x.name for x in listed.tournaments] == [t.name, "second"]
    assert not listed.tournaments[0].results  # results only from GetTournament
    only_created = server.admin.ListTournaments(
        admin_pb.ListTournamentsRequest(states=[admin_pb.TOURNAMENT_STATE_RUNNING]),
        metadata=AUTH,
    )
    assert list(only_created.tournaments) == []
    in_tournament = server.admin.ListMatches(
        admin_pb.ListMatchesRequest(tournament_id=t.id), metadata=AUTH
    )
    assert [m.match_id for m in in_tournament.matches] == ["g3", "g2", "g1", "g0"]
    assert in_tournament.matches[0].game_index == 3


# -- standings and ladders ------------------------------------------------------------------------


def test_standings_rank_by_rating_with_head_to_head(
    server: AdminServer, storage: RatedStorage
) -> None:
    storage.save_match(stored_match("a", ("alice", "bob"), 0, minute=1))
    storage.save_match(stored_match("b", ("alice", "carol"), 0, minute=2))
    storage.save_match(stored_match("c", ("bob", "carol"), 1, minute=3))
    storage.save_match(stored_match("d", ("bob", "carol"), 0, minute=4, rated=False))
    response = server.admin.GetStandings(
        admin_pb.GetStandingsRequest(game="passing", head_to_head=True), metadata=AUTH
    )
    assert response.game == "passing"
    rows = [(r.rank, r.bot, r.games, r.wins, r.losses) for r in response.rows]
    assert rows == [(1, "alice", 2, 2, 0), (2, "carol", 2, 1, 1), (3, "bob", 2, 0, 2)]
    assert response.rows[0].rating > 1500 > response.rows[2].rating
    assert all(0 < r.uncertainty < math.inf for r in response.rows)
    pairs = {(h.bot, h.opponent): (h.wins, h.draws, h.losses) for h in response.head_to_head}
    assert pairs[("carol", "bob")] == (1, 0, 0)  # the unrated game does not count
    plain = server.admin.GetStandings(admin_pb.GetStandingsRequest(game="passing"), metadata=AUTH)
    assert len(plain.rows) == 3 and not plain.head_to_head
    empty = server.admin.GetStandings(admin_pb.GetStandingsRequest(game="moon"), metadata=AUTH)
    assert list(empty.rows) == []


def test_ladders_start_list_and_stop(server: AdminServer, arena: FakeArena) -> None:
    request = admin_pb.StartLadderRequest(
        game=game_to_proto(make_game("straight")),
        fault_policy=pb.FAULT_POLICY_FORFEIT,
        concurrency=2,
        seed=9,
    )
    ladder = server.admin.StartLadder(request, metadata=AUTH, timeout=WAIT)
    assert ladder.game.WhichOneof("game") == "straight"
    assert (ladder.concurrency, ladder.seed, ladder.max_strikes) == (2, 9, 3)
    assert ladder.max_deals == 1000
    assert ladder.fault_policy == pb.FAULT_POLICY_FORFEIT
    code, details = refused(lambda: server.admin.StartLadder(request, metadata=AUTH))
    assert code is grpc.StatusCode.FAILED_PRECONDITION
    assert details == (
        "a straight ladder is running already; stop it first (domino-arena ladder stop straight)"
    )
    listed = server.admin.ListLadders(admin_pb.ListLaddersRequest(), metadata=AUTH)
    assert [x.game.WhichOneof("game") for x in listed.ladders] == ["straight"]
    arena.ladders["default", "straight"].started, arena.ladders["default", "straight"].finished = (
        7,
        5,
    )
    public = server.spectators.ListLive(admin_pb.ListLiveRequest(), timeout=WAIT).ladders
    (shown,) = public  # no token needed, and no seed: it would tell the deals to come
    assert game_from_proto(shown.game) == make_game("straight")
    assert (shown.started, shown.finished) == (7, 5)
    assert "seed" not in admin_pb.LiveLadder.DESCRIPTOR.fields_by_name
    server.admin.StopLadder(admin_pb.StopLadderRequest(game="straight"), metadata=AUTH)
    assert not server.admin.ListLadders(admin_pb.ListLaddersRequest(), metadata=AUTH).ladders
    assert arena.calls == [("start ladder", "straight"), ("stop ladder", "straight")]


def test_an_arena_refusal_becomes_a_precondition_failure(
    server: AdminServer, arena: FakeArena
) -> None:
    async def refuse(tournament_id: str) -> None:
        raise ValueError(f"tournament {tournament_id} cannot start: the referee is draining")

    t = create(server)
    arena.start_tournament = refuse  # type: ignore[method-assign]
    code, details = refused(
        lambda: server.admin.StartTournament(
            admin_pb.StartTournamentRequest(tournament_id=t.id), metadata=AUTH
        )
    )
    assert (code, details) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        f"tournament {t.id} cannot start: the referee is draining",
    )


def test_fake_arena_fields_match_the_protocol() -> None:
    """The fake must offer every member of AdminArena and of TournamentDirector (it stands for
    the arena and its director), or these tests would test nothing real."""
    from domino_arena.server.net.admin import AdminArena  # noqa: PLC0415
    from domino_arena.server.net.admin_tournaments import TournamentDirector  # noqa: PLC0415

    wanted = {
        name
        for protocol in (AdminArena, TournamentDirector)
        for name in dir(protocol)
        if not name.startswith("_")
    }
    offered = {name for name in dir(FakeArena) if not name.startswith("_")} | {
        f.name for f in dataclasses.fields(FakeArena)
    }
    assert wanted <= offered

"""The tournament RPCs in courses, at the wire: an organizer sees and changes its own course's
tournaments only; entrants and baselines come from the caller's course; start_at, entrant
policies and RegradeTournament.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from domino_arena.sdk.rules import make_game
from domino_arena.sdk.wire import game_to_proto
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.store.tournaments import TournamentState
from domino_arena.v1 import admin_pb2 as admin_pb
from tests.fakes.admin_server import TOKEN, AdminServer, FakeArena, refused
from tests.fakes.referee_server import WAIT

ADMIN: Final = (("authorization", f"Bearer {TOKEN}"),)
Metadata = tuple[tuple[str, str], ...]


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[RatedStorage]:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'admin.db'}")
    storage.open()
    yield storage
    storage.close()


@pytest.fixture
def tokens(storage: RatedStorage) -> dict[str, Metadata]:
    one = storage.create_course("c1", baselines=(("greedy", 1500.0), ("random", 1000.0)))
    two = storage.create_course("c2")
    for name, owner in (("a1", "ann"), ("a2", "ann"), ("b1", "bob"), ("b2", "bob")):
        storage.create_bot(name, course="c1", owner=owner)
    storage.create_bot("x1", course="c2", owner="xavier")
    storage.create_bot("x2", course="c2", owner="yann")
    storage.add_bot("d1")
    return {
        "c1": (("authorization", f"Bearer {one.token}"),),
        "c2": (("authorization", f"Bearer {two.token}"),),
    }


@pytest.fixture
def server(storage: RatedStorage) -> Iterator[AdminServer]:
    server = AdminServer(FakeArena(storage))
    yield server
    server.close()


def create(server: AdminServer, auth: Metadata, **fields: Any) -> admin_pb.Tournament:
    fields.setdefault("game", game_to_proto(make_game("passing")))
    fields.setdefault("entrants", ["a1", "b1"])
    return server.admin.CreateTournament(
        admin_pb.CreateTournamentRequest(**fields), metadata=auth, timeout=WAIT
    )


def code_of(call: Any) -> tuple[str, str]:
    code, details = refused(call)
    return code.name, details


def test_an_organizer_creates_in_its_course_with_its_bots_and_baselines(
    server: AdminServer, tokens: dict[str, Metadata]
) -> None:
    t = create(server, tokens["c1"], baselines=["greedy"])
    assert t.course == "c1"
    assert list(t.entrants) == ["a1", "b1", "house:greedy"]
    assert list(t.baselines) == ["greedy"]
    assert t.entrant_policy == admin_pb.ENTRANT_POLICY_LISTED
    assert not t.HasField("start_at") and t.regrade_of == ""
    # Another course's bot is as unknown as a missing one: nothing leaks.
    for entrant in ("x1", "nobody", "d1"):
        code, details = code_of(lambda e=entrant: create(server, tokens["c1"], entrants=["a1", e]))
        assert (code, details) == ("INVALID_ARGUMENT", f"entrants: unknown bot(s) {entrant}")
    code, details = code_of(lambda: create(server, tokens["c1"], course="c2"))
    assert code == "PERMISSION_DENIED" and details.startswith("course:")
    code, details = code_of(lambda: create(server, tokens["c1"], baselines=["search"]))
    assert code == "INVALID_ARGUMENT"
    assert details.startswith("baselines[0]: 'search' is not a baseline of course 'c1'")
    code, details = code_of(lambda: create(server, tokens["c2"], baselines=["greedy"]))
    assert code == "INVALID_ARGUMENT" and "its baselines: none" in details
    # The admin names a course.
    assert create(server, ADMIN, course="c2", entrants=["x1", "x2"]).course == "c2"


def test_the_seating_rule_of_the_course(server: AdminServer, tokens: dict[str, Metadata]) -> None:
    three = game_to_proto(make_game("passing", players=3))
    code, details = code_of(
        lambda: create(server, tokens["c1"], game=three, entrants=["a1", "a2", "b1"])
    )
    assert code == "INVALID_ARGUMENT" and "same-owner seating rule" in details
    t = create(server, tokens["c1"], game=three, entrants=["a1", "a2", "b1"], baselines=["greedy"])
    assert t.progress.total == 2 * 3  # the two tables without a1 and a2 together, all rotations


def test_start_at_and_entrant_policies(server: AdminServer, tokens: dict[str, Metadata]) -> None:
    past = Timestamp()
    past.FromDatetime(dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1))
    code, details = code_of(lambda: create(server, tokens["c1"], start_at=past))
    assert code == "INVALID_ARGUMENT" and details.startswith("start_at:")
    later = Timestamp()
    later.FromDatetime(dt.datetime.now(dt.UTC) + dt.timedelta(hours=1))
    t = create(
        server,
        tokens["c1"],
        entrants=[],
        start_at=later,
        entrant_policy=admin_pb.ENTRANT_POLICY_CONNECTED,
    )
    assert t.entrant_policy == admin_pb.ENTRANT_POLICY_CONNECTED
    assert t.start_at.seconds == later.seconds
    assert t.progress.total == 0  # chosen at the start
    code, details = code_of(lambda: create(server, tokens["c1"], entrant_policy=9))
    assert code == "INVALID_ARGUMENT" and details.startswith("entrant_policy:")


def test_another_courses_tournament_is_not_found_and_not_listed(
    server: AdminServer, tokens: dict[str, Metadata]
) -> None:
    mine = create(server, tokens["c1"])
    theirs = create(server, tokens["c2"], entrants=["x1", "x2"])
    calls = {
        "GetTournament": admin_pb.GetTournamentRequest(tournament_id=mine.id),
        "StartTournament": admin_pb.StartTournamentRequest(tournament_id=mine.id),
        "PauseTournament": admin_pb.PauseTournamentRequest(tournament_id=mine.id),
        "CancelTournament": admin_pb.CancelTournamentRequest(tournament_id=mine.id),
        "RegradeTournament": admin_pb.RegradeTournamentRequest(
            tournament_id=mine.id, replace=[admin_pb.Replacement(bot="a1", by="a2")]
        ),
        "GetStandings": admin_pb.GetStandingsRequest(tournament_id=mine.id),
        "ListMatches": admin_pb.ListMatchesRequest(tournament_id=mine.id),
    }
    for method, request in calls.items():
        stub = getattr(server.admin, method)
        code, details = code_of(lambda s=stub, r=request: s(r, metadata=tokens["c2"], timeout=WAIT))
        assert (method, code, details) == (
            method,
            "NOT_FOUND",
            f"no tournament has id '{mine.id}'",
        )
    listed = server.admin.ListTournaments(
        admin_pb.ListTournamentsRequest(), metadata=tokens["c2"], timeout=WAIT
    )
    assert [t.id for t in listed.tournaments] == [theirs.id]
    code, _ = code_of(
        lambda: server.admin.ListTournaments(
            admin_pb.ListTournamentsRequest(course="c1"), metadata=tokens["c2"], timeout=WAIT
        )
    )
    assert code == "PERMISSION_DENIED"
    every = server.admin.ListTournaments(admin_pb.ListTournamentsRequest(), metadata=ADMIN)
    assert {t.id for t in every.tournaments} == {mine.id, theirs.id}
    one = server.admin.ListTournaments(admin_pb.ListTournamentsRequest(course="c1"), metadata=ADMIN)
    assert [t.id for t in one.tournaments] == [mine.id]
    got = server.admin.GetTournament(
        admin_pb.GetTournamentRequest(tournament_id=mine.id), metadata=tokens["c1"], timeout=WAIT
    )
    assert got.id == mine.id


def test_a_comparison_goes_in_the_callers_course(
    server: AdminServer, tokens: dict[str, Metadata]
) -> None:
    request = admin_pb.CreateComparisonRequest(
        game=game_to_proto(make_game("passing")), candidate="a1", baseline="b1", max_sets=4
    )
    t = server.admin.CreateComparison(request, metadata=tokens["c1"], timeout=WAIT)
    assert t.course == "c1"
    code, details = code_of(
        lambda: server.admin.CreateComparison(request, metadata=tokens["c2"], timeout=WAIT)
    )
    assert code == "INVALID_ARGUMENT" and "a1" in details


def test_regrade_tournament(
    server: AdminServer, storage: RatedStorage, tokens: dict[str, Metadata]
) -> None:
    t = create(server, tokens["c1"], entrants=["a1", "b1"], baselines=["greedy"])

    def regrade(auth: Metadata, *pairs: tuple[str, str], **fields: Any) -> admin_pb.Tournament:
        request = admin_pb.RegradeTournamentRequest(
            tournament_id=t.id,
            replace=[admin_pb.Replacement(bot=b, by=by) for b, by in pairs],
            **fields,
        )
        return server.admin.RegradeTournament(request, metadata=auth, timeout=WAIT)

    code, details = code_of(lambda: regrade(tokens["c1"], ("a1", "a2")))
    assert code == "INVALID_ARGUMENT" and "only a finished tournament" in details
    storage.set_tournament_state(t.id, TournamentState.FINISHED)
    new = regrade(tokens["c1"], ("a1", "a2"), name="cup, a2 for a1")
    assert new.id != t.id and new.regrade_of == t.id
    assert [(r.bot, r.by) for r in new.replaced] == [("a1", "a2")]
    assert list(new.entrants) == ["a2", "b1", "house:greedy"]
    assert new.course == "c1" and not new.rated and new.name == "cup, a2 for a1"
    assert new.seed_commitment == t.seed_commitment
    assert new.state == admin_pb.TOURNAMENT_STATE_CREATED
    for pairs, words in (
        ((("a1", "x1"),), "replace: unknown bot 'x1'"),
        ((("a1", "b1"),), "replace: 'b1' is an entrant already"),
        ((("house:greedy", "a2"),), "replace: 'house:greedy' is not a bot entrant"),
        ((), "replace: expected at least one"),
        ((("a1", "a2"), ("a1", "b2")), "replace[1]: 'a1' is replaced twice"),
    ):
        code, details = code_of(lambda p=pairs: regrade(tokens["c1"], *p))
        assert code == "INVALID_ARGUMENT" and details.startswith(words), details

"""GetGrades at the wire: the gradebook of finished tournaments, scoped by the caller (the
admin, or the organizer of the tournaments' course), and every refusal with its status; a
grade scale, and CreateTournament's precision."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import grpc
import pytest

from domino_arena.sdk.rules import make_game
from domino_arena.sdk.wire import game_to_proto
from domino_arena.server.store.tournaments import TournamentState
from domino_arena.v1 import admin_pb2 as admin_pb
from tests.fakes.admin_server import TOKEN, AdminServer, refused, served_over
from tests.fakes.graded import a_term
from tests.fakes.referee_server import WAIT

ADMIN: Final = (("authorization", f"Bearer {TOKEN}"),)


@dataclasses.dataclass
class Term:
    server: AdminServer
    organizer: tuple[tuple[str, str], ...]
    stranger: tuple[tuple[str, str], ...]


@pytest.fixture
def term(tmp_path: Path) -> Iterator[Term]:
    with served_over(tmp_path / "grades.db") as server:
        storage = server.arena.storage
        mine = storage.create_course("cs101").token
        theirs = storage.create_course("cs102").token
        storage.create_bot("ace", course="cs101", owner="alice")
        storage.create_bot("eve", course="cs101", owner="evelyn")
        for tournament, matches in (
            a_term("t1", deals=12, seed=1),
            a_term("t2", deals=12, seed=2),
            a_term("moon1", deals=2, game="moon"),
            a_term("open", deals=2, state=TournamentState.RUNNING),
            a_term("x1", deals=2, course="cs102"),
        ):
            storage.add_tournament(tournament)
            for match in matches:
                assert storage.save_match(match)
        yield Term(
            server,
            (("authorization", f"Bearer {mine}"),),
            (("authorization", f"Bearer {theirs}"),),
        )


def get(term: Term, metadata: Any = ADMIN, **fields: Any) -> admin_pb.Grades:
    fields.setdefault("bootstrap_rounds", 20)
    request = admin_pb.GetGradesRequest(**fields)
    answer: admin_pb.Grades = term.server.admin.GetGrades(request, metadata=metadata, timeout=WAIT)
    return answer


def test_the_admin_and_the_organizer_get_the_same_grades(term: Term) -> None:
    grades = get(term, tournament_ids=["t1", "t2"])
    assert (grades.course, grades.game, list(grades.tournament_ids)) == (
        "cs101",
        "passing",
        ["t1", "t2"],
    )
    assert [(b.bot, b.rating) for b in grades.baselines] == [("greedy", 1500.0), ("random", 1000.0)]
    assert (grades.games, grades.rounds, grades.anonymous) == (2 * 12 * 2 * 6, 20, False)
    assert grades.made.seconds > 0
    assert [(g.owner, g.bot) for g in grades.grades] == [("alice", "ace"), ("evelyn", "eve")]
    ace = grades.grades[0]
    assert ace.rating_low < ace.rating < ace.rating_high
    assert ace.games == ace.wins + ace.draws + ace.losses == 3 * 2 * 12 * 2
    assert [b.baseline for b in ace.baselines] == ["greedy", "random"]
    assert ace.baselines[1].verdict == "better" and ace.baselines[1].sets == 24
    by_organizer = get(term, term.organizer, tournament_ids=["t1", "t2"])
    by_organizer.ClearField("made")
    grades.ClearField("made")
    assert by_organizer == grades


def test_anonymous_grades_show_aliases(term: Term) -> None:
    grades = get(term, tournament_ids=["t1"], anonymous=True)
    assert grades.anonymous
    assert [(g.owner, g.bot) for g in grades.grades] == [
        ("Student 1", "Bot 1"),
        ("Student 2", "Bot 2"),
    ]


def test_another_courses_tournament_is_not_found_as_a_missing_one_is(term: Term) -> None:
    hidden = refused(lambda: get(term, term.organizer, tournament_ids=["t1", "x1"]))
    missing = refused(lambda: get(term, term.organizer, tournament_ids=["t1", "nope"]))
    assert hidden == (grpc.StatusCode.NOT_FOUND, "tournament_ids[1]: no tournament has id 'x1'")
    assert missing == (grpc.StatusCode.NOT_FOUND, "tournament_ids[1]: no tournament has id 'nope'")
    stranger = refused(lambda: get(term, term.stranger, tournament_ids=["t1"]))
    assert stranger[0] == grpc.StatusCode.NOT_FOUND
    assert get(term, term.stranger, tournament_ids=["x1"]).course == "cs102"


@pytest.mark.parametrize(
    ("ids", "status", "message"),
    [
        ([], grpc.StatusCode.INVALID_ARGUMENT, "tournament_ids: expected at least one"),
        (["t1", "t1"], grpc.StatusCode.INVALID_ARGUMENT, "tournament_ids[1]: 't1' is listed twice"),
        (["t1", "x1"], grpc.StatusCode.INVALID_ARGUMENT, "tournament_ids[1]: 'x1' is a 'passing'"),
        (["t1", "moon1"], grpc.StatusCode.INVALID_ARGUMENT, "tournament_ids[1]: 'moon1' is a"),
        (
            ["t1", "open"],
            grpc.StatusCode.FAILED_PRECONDITION,
            "tournament_ids[1]: 'open' is running",
        ),
    ],
)
def test_requests_that_cannot_be_graded_are_refused(
    term: Term, ids: list[str], status: grpc.StatusCode, message: str
) -> None:
    code, details = refused(lambda: get(term, tournament_ids=ids))
    assert code == status
    assert details.startswith(message), details


def test_too_many_rounds_or_tournaments_are_refused(term: Term) -> None:
    code, details = refused(lambda: get(term, tournament_ids=["t1"], bootstrap_rounds=5000))
    assert (code, details) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "bootstrap_rounds: must be at most 2000, got 5000",
    )
    code, details = refused(lambda: get(term, tournament_ids=[f"t{i}" for i in range(51)]))
    assert (code, details) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "tournament_ids: at most 50 tournaments, got 51",
    )


def test_a_finished_tournament_without_counted_games_fails_its_precondition(term: Term) -> None:
    storage = term.server.arena.storage
    tournament, _ = a_term("empty", deals=1)
    storage.add_tournament(tournament)
    code, details = refused(lambda: get(term, tournament_ids=["empty"]))
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert "no rated games" in details


def test_a_wrong_token_is_unauthenticated(term: Term) -> None:
    wrong = (("authorization", "Bearer cs101:nope"),)
    code, _ = refused(lambda: get(term, wrong, tournament_ids=["t1"]))
    assert code == grpc.StatusCode.UNAUTHENTICATED


def test_a_scale_and_the_precision_requests_are_checked_at_the_wire(term: Term) -> None:
    code, details = refused(lambda: get(term, tournament_ids=["t1"], scale="A:1500,B:1600"))
    assert code is grpc.StatusCode.INVALID_ARGUMENT and details.startswith("scale entry 2")
    graded = get(term, tournament_ids=["t1"], scale="A:beats greedy,B")
    assert {(g.bot, g.status) for g in graded.grades} == {("ace", "graded"), ("eve", "graded")}
    assert graded.scale == "A:beats greedy,B" and {g.grade for g in graded.grades} <= {"A", "B"}
    term.server.arena.storage.update_course("cs101", baselines=(("greedy", 1500.0),))
    request = admin_pb.CreateTournamentRequest(
        game=game_to_proto(make_game("straight")),
        entrants=["ace", "eve"],
        baselines=["greedy"],
        course="cs101",
        precision=120,
        games_per_pairing=3,
    )
    create = term.server.admin.CreateTournament
    code, details = refused(lambda: create(request, metadata=ADMIN, timeout=WAIT))
    assert (code, details) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "precision: give precision or games_per_pairing, not both (precision chooses the games "
        "per pairing)",
    )
    request.games_per_pairing = 0
    made = create(request, metadata=ADMIN, timeout=WAIT)
    assert made.precision.baseline_half_width <= 120
    assert made.games_per_pairing == made.precision.games_per_pairing > 1
    assert made.precision.warning == ""

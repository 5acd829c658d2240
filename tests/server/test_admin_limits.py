"""Admin input limits (issue 9, finding 8): every numeric field has a range and a refusal naming
the field, the range and the value; an oversized id is INVALID_ARGUMENT, its echo bounded."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

import grpc
import pytest

from domino_arena.sdk.rules import make_game
from domino_arena.sdk.wire import game_to_proto
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.net.admin_requests import LIMITS, MAX_ID_LENGTH
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.admin_server import TOKEN, AdminServer, FakeArena, refused
from tests.fakes.referee_server import WAIT

AUTH: Final = (("authorization", f"Bearer {TOKEN}"),)
HUGE: Final = 4294967295


@pytest.fixture
def server(tmp_path: Path) -> Iterator[AdminServer]:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'admin.db'}")
    storage.open()
    for name in ("ada", "bob"):
        storage.add_bot(name)
    server = AdminServer(FakeArena(storage))
    yield server
    server.close()
    storage.close()


def game() -> Any:
    return game_to_proto(make_game("straight"))


def tournament(**fields: Any) -> admin_pb.CreateTournamentRequest:
    return admin_pb.CreateTournamentRequest(game=game(), entrants=["ada", "bob"], **fields)


@pytest.mark.parametrize("method", ["CreateTournament", "StartLadder", "RunMatch"])
@pytest.mark.parametrize("name", ["move_ms", "bank_ms", "grace_ms"])
@pytest.mark.parametrize("past", ["just", "huge"])
def test_a_time_control_field_past_its_range_is_refused(
    server: AdminServer, method: str, name: str, past: str
) -> None:
    field = f"time_control.{name}"
    high = LIMITS[field]
    value = high + 1 if past == "just" else HUGE
    time_control = pb.TimeControl(**{name: value})
    requests: dict[str, Callable[[], Any]] = {
        "CreateTournament": lambda: tournament(time_control=time_control),
        "StartLadder": lambda: admin_pb.StartLadderRequest(game=game(), time_control=time_control),
        "RunMatch": lambda: admin_pb.RunMatchRequest(
            game=game(), bots=["ada", "bob"], time_control=time_control
        ),
    }
    request = requests[method]()
    code, details = refused(lambda: getattr(server.admin, method)(request, metadata=AUTH))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert details == f"{field}: must be at most {high}, got {value} (the range is 0-{high})"


NUMBERS: Final = [
    ("CreateTournament", "games_per_pairing", tournament),
    ("CreateTournament", "max_strikes", tournament),
    ("CreateTournament", "concurrency", tournament),
    ("CreateTournament", "wait_ms", tournament),
    ("CreateTournament", "max_deals", tournament),
    ("StartLadder", "max_deals", lambda **f: admin_pb.StartLadderRequest(game=game(), **f)),
    (
        "CreateComparison",
        "max_deals",
        lambda **f: admin_pb.CreateComparisonRequest(
            game=game(), candidate="ada", baseline="bob", **f
        ),
    ),
    (
        "RunMatch",
        "max_deals",
        lambda **f: admin_pb.RunMatchRequest(game=game(), bots=["ada", "bob"], **f),
    ),
    ("StartLadder", "max_strikes", lambda **f: admin_pb.StartLadderRequest(game=game(), **f)),
    ("StartLadder", "concurrency", lambda **f: admin_pb.StartLadderRequest(game=game(), **f)),
    (
        "RunMatch",
        "max_strikes",
        lambda **f: admin_pb.RunMatchRequest(game=game(), bots=["ada", "bob"], **f),
    ),
    ("ListMatches", "limit", admin_pb.ListMatchesRequest),
]


@pytest.mark.parametrize(("method", "field", "make"), NUMBERS)
@pytest.mark.parametrize("past", ["just", "huge"])
def test_a_number_past_its_range_is_refused_naming_field_range_and_value(
    server: AdminServer, method: str, field: str, make: Callable[..., Any], past: str
) -> None:
    high = LIMITS[field]
    value = high + 1 if past == "just" else HUGE
    code, details = refused(
        lambda: getattr(server.admin, method)(make(**{field: value}), metadata=AUTH)
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert details == f"{field}: must be at most {high}, got {value} (the range is 0-{high})"


@pytest.mark.parametrize(("method", "field", "make"), NUMBERS)
def test_a_number_at_its_limit_passes_the_range_check(
    server: AdminServer, method: str, field: str, make: Callable[..., Any]
) -> None:
    try:
        getattr(server.admin, method)(make(**{field: LIMITS[field]}), metadata=AUTH, timeout=WAIT)
    except grpc.RpcError as exc:
        error: Any = exc
        assert "must be at most" not in error.details()


@pytest.mark.parametrize(
    ("method", "request_", "field"),
    [
        ("GetMatch", admin_pb.GetMatchRequest, "match_id"),
        ("GetTournament", admin_pb.GetTournamentRequest, "tournament_id"),
        ("StartTournament", admin_pb.StartTournamentRequest, "tournament_id"),
        ("PauseTournament", admin_pb.PauseTournamentRequest, "tournament_id"),
        ("CancelTournament", admin_pb.CancelTournamentRequest, "tournament_id"),
        ("ListMatches", admin_pb.ListMatchesRequest, "tournament_id"),
    ],
)
def test_an_oversized_id_is_invalid_and_its_echo_bounded(
    server: AdminServer, method: str, request_: Any, field: str
) -> None:
    huge = "a\n" * 50_000
    code, details = refused(lambda: getattr(server.admin, method)(request_(**{field: huge})))
    assert code == grpc.StatusCode.UNAUTHENTICATED  # the token first, even for a huge id
    code, details = refused(
        lambda: getattr(server.admin, method)(request_(**{field: huge}), metadata=AUTH)
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert details.startswith(f"{field}: at most {MAX_ID_LENGTH} characters, got 100,000 ('a\\n")
    assert len(details) < 200 and "\n" not in details
    code, details = refused(
        lambda: getattr(server.admin, method)(
            request_(**{field: "b" * MAX_ID_LENGTH}), metadata=AUTH
        )
    )
    assert code == grpc.StatusCode.NOT_FOUND

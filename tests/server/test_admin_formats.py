"""CreateTournament's formats at the wire (docs/tournaments.md: formats): a balanced tournament
sized by games per entrant or by precision, a gauntlet against the course's baselines, the
refusal of a round robin too big to play, and bad values named by field."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import grpc
import pytest

from domino_arena.sdk.rules import make_game
from domino_arena.sdk.wire import game_to_proto
from domino_arena.v1 import admin_pb2 as admin_pb
from tests.fakes.admin_server import TOKEN, AdminServer, refused, served_over
from tests.fakes.referee_server import WAIT

ADMIN: Final = (("authorization", f"Bearer {TOKEN}"),)
BOTS: Final = tuple(f"bot-{i:02d}" for i in range(40))
FOUR: Final = make_game("passing", players=4)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[AdminServer]:
    with served_over(tmp_path / "formats.db") as server:
        storage = server.arena.storage
        for name in BOTS:
            storage.create_bot(name)
        storage.update_course("default", baselines=(("greedy", 1500.0), ("random", 1000.0)))
        yield server


def create(server: AdminServer, **fields: Any) -> admin_pb.Tournament:
    fields.setdefault("game", game_to_proto(FOUR))
    fields.setdefault("entrants", BOTS[:12])
    made: admin_pb.Tournament = server.admin.CreateTournament(
        admin_pb.CreateTournamentRequest(**fields), metadata=ADMIN, timeout=WAIT
    )
    return made


def test_a_balanced_tournament_is_created_with_its_size_and_balance(server: AdminServer) -> None:
    made = create(server, format="balanced", games_per_entrant=20)
    assert (made.format, made.games_per_entrant) == ("balanced", 20)
    assert made.progress.total == 12 * 20 // 4
    assert made.balance.startswith("each entrant 5 tables; pairs meet")
    got = server.admin.GetTournament(
        admin_pb.GetTournamentRequest(tournament_id=made.id), metadata=ADMIN, timeout=WAIT
    )
    assert (got.format, got.games_per_entrant, got.balance) == (
        "balanced",
        20,
        made.balance,
    )


def test_precision_sizes_a_balanced_tournament(server: AdminServer) -> None:
    made = create(server, format="balanced", precision=100, entrants=BOTS)
    assert made.format == "balanced" and made.games_per_entrant % 4 == 0
    assert made.progress.total == 40 * made.games_per_entrant // 4
    tighter = create(server, format="balanced", precision=50, entrants=BOTS)
    assert tighter.games_per_entrant > made.games_per_entrant


def test_a_gauntlet_seats_the_entrants_against_the_baselines(server: AdminServer) -> None:
    made = create(
        server,
        game=game_to_proto(make_game("passing", players=2)),
        entrants=BOTS[:6],
        baselines=["greedy", "random"],
        format="gauntlet",
    )
    assert made.format == "gauntlet" and made.games_per_entrant == 4  # 2 baselines x 2 seats
    assert made.progress.total == 6 * 4
    assert "each entrant 2 tables" in made.balance


def test_a_round_robin_too_big_is_refused_with_the_balanced_one_to_play(
    server: AdminServer,
) -> None:
    code, details = refused(lambda: create(server, entrants=BOTS))
    assert code is grpc.StatusCode.INVALID_ARGUMENT
    assert details.startswith("entrants: a round robin of 40 entrants makes 365560 games")
    assert "--format balanced --games-per-entrant 100" in details
    code, details = refused(lambda: create(server, entrants=BOTS, precision=100))
    assert code is grpc.StatusCode.INVALID_ARGUMENT
    sized = create(server, format="balanced", precision=100, entrants=BOTS)
    assert f"--games-per-entrant {sized.games_per_entrant}:" in details


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"format": "ladder"}, "format: expected one of round-robin, balanced, gauntlet, swiss"),
        ({"format": "balanced"}, "games_per_entrant: a balanced tournament needs its size"),
        ({"games_per_entrant": 8}, "games_per_entrant: a round robin plays every table"),
        ({"format": "gauntlet"}, "baselines: a 4-seat gauntlet seats each entrant with 3"),
        (
            {"format": "balanced", "precision": 100, "games_per_entrant": 8},
            "precision: give precision or games_per_entrant, not both",
        ),
        (
            {"format": "gauntlet", "precision": 100},
            "precision: sizes a round-robin, balanced or Swiss",
        ),
    ],
)
def test_bad_formats_are_refused_naming_the_field(
    server: AdminServer, fields: dict[str, Any], message: str
) -> None:
    code, details = refused(lambda: create(server, **fields))
    assert code is grpc.StatusCode.INVALID_ARGUMENT
    assert details.startswith(message), details

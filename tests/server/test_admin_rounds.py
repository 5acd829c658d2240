"""CreateTournament and GetTournament of Swiss and knockout tournaments at the wire
(docs/admin.md; docs/tournaments.md: Swiss, knockout): their size and seeding, ``seeding_from``
resolved against another tournament's official standings, the rounds and bracket read back
after a real runner played them, each refusal naming its field, and no regrade."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import grpc
import pytest

from domino_arena.sdk.rules import make_game
from domino_arena.sdk.wire import game_to_proto
from domino_arena.server.store.tournaments import TournamentState
from domino_arena.server.tournaments import planner
from domino_arena.v1 import admin_pb2 as admin_pb
from tests.fakes.admin_server import TOKEN, AdminServer, refused, served_over
from tests.fakes.referee_server import WAIT
from tests.fakes.rounds import play_to_end

ADMIN: Final = (("authorization", f"Bearer {TOKEN}"),)
BOTS: Final = tuple(f"bot-{i:02d}" for i in range(12))
TWO: Final = game_to_proto(make_game("passing", players=2))


@pytest.fixture
def server(tmp_path: Path) -> Iterator[AdminServer]:
    with served_over(tmp_path / "rounds.db") as server:
        for name in BOTS:
            server.arena.storage.create_bot(name)
        server.arena.storage.create_course("other")
        yield server


def create(server: AdminServer, **fields: Any) -> admin_pb.Tournament:
    fields.setdefault("game", TWO)
    fields.setdefault("entrants", BOTS[:8])
    made: admin_pb.Tournament = server.admin.CreateTournament(
        admin_pb.CreateTournamentRequest(**fields), metadata=ADMIN, timeout=WAIT
    )
    return made


def get(server: AdminServer, tournament_id: str) -> admin_pb.Tournament:
    got: admin_pb.Tournament = server.admin.GetTournament(
        admin_pb.GetTournamentRequest(tournament_id=tournament_id), metadata=ADMIN, timeout=WAIT
    )
    return got


def test_a_swiss_tournament_shows_its_rounds_as_they_are_played(server: AdminServer) -> None:
    made = create(server, format="swiss", rounds=3, seeding=list(reversed(BOTS[:8])))
    assert (made.format, made.rounds, made.knockout_sets) == ("swiss", 3, 0)
    assert list(made.seeding) == list(reversed(BOTS[:8]))
    assert made.progress.total == 0 and not made.played_rounds  # no round seated yet
    play_to_end(server.arena.storage, made.id, pause_after=2)
    half = get(server, made.id)
    assert len(half.played_rounds) == 1 and half.progress.total == 8  # 4 tables x 2 rotations
    first = half.played_rounds[0]
    assert (first.number, first.first_game, first.games) == (1, 0, 8)
    assert 0 < first.games_stored < 8
    # The seeding pairs the best-seeded first: bot-07 with bot-06, before any result.
    assert list(first.tables[0].entrants) == ["bot-07", "bot-06"]
    play_to_end(server.arena.storage, made.id)
    done = get(server, made.id)
    assert [r.number for r in done.played_rounds] == [1, 2, 3]
    assert [r.first_game for r in done.played_rounds] == [0, 8, 16]
    assert done.progress.total == done.progress.done == 24
    for r in done.played_rounds:
        assert r.games_stored == r.games == 8 and not r.byes
        for table in r.tables:
            assert table.games == 2 and sum(table.points) == pytest.approx(2.0)
            strong = max(table.entrants, key=lambda e: int(e[-2:]))
            assert table.points[list(table.entrants).index(strong)] == 2.0  # it wins both
    assert not done.HasField("bracket")
    listed = server.admin.ListTournaments(
        admin_pb.ListTournamentsRequest(), metadata=ADMIN, timeout=WAIT
    )
    (row,) = listed.tournaments
    assert (row.rounds, row.progress.total) == (3, 24) and not row.played_rounds


def test_a_knockout_shows_its_bracket_and_champion(server: AdminServer) -> None:
    made = create(server, format="knockout", knockout_sets=1, knockout_max_sets=3)
    assert (made.knockout_sets, made.knockout_max_sets, made.rounds) == (1, 3, 0)
    play_to_end(server.arena.storage, made.id)
    done = get(server, made.id)
    assert [len(r.tables) for r in done.played_rounds] == [4, 2, 1]
    bracket = done.bracket
    assert [len(stage.ties) for stage in bracket.stages] == [4, 2, 1]
    first = bracket.stages[0].ties[0]
    assert list(first.entrants) == ["bot-00", "bot-07"]  # seeds 1 and 8, in entrants order
    assert (list(first.out), first.decided_by, first.sets) == (["bot-00"], "points", 1)
    assert bracket.champion == "bot-07"
    assert bracket.final_order[0] == "bot-07" and len(bracket.final_order) == 2
    assert done.progress.total == done.progress.done == 7 * 2


def test_seeding_from_orders_the_entrants_by_that_tournaments_standings(
    server: AdminServer,
) -> None:
    # Seeded strongest first, the first round seats bot-07 with bot-06: bot-07 alone wins all
    # its games (unseeded, the master seed's shuffle may keep them apart, leaving two unbeaten).
    seeding = list(reversed(BOTS[2:8]))
    swiss = create(server, format="swiss", rounds=3, entrants=BOTS[2:8], seeding=seeding)
    play_to_end(server.arena.storage, swiss.id)
    made = create(server, format="knockout", entrants=BOTS[:8], seeding_from=swiss.id)
    # The six it played, in the order of its results, then the two it did not, listed order.
    ranked = [row.bot for row in get(server, swiss.id).results]
    assert sorted(ranked) == list(BOTS[2:8]) and ranked[0] == "bot-07"
    assert list(made.seeding) == [*ranked, "bot-00", "bot-01"]
    assert list(get(server, made.id).seeding) == list(made.seeding)


def test_a_swiss_or_knockout_tournament_is_not_regraded(server: AdminServer) -> None:
    made = create(server, format="knockout", entrants=BOTS[:4])
    play_to_end(server.arena.storage, made.id)
    assert server.arena.storage.tournament(made.id).state is TournamentState.FINISHED  # type: ignore[union-attr]
    code, details = refused(
        lambda: server.admin.RegradeTournament(
            admin_pb.RegradeTournamentRequest(tournament_id=made.id), metadata=ADMIN, timeout=WAIT
        )
    )
    assert code is grpc.StatusCode.FAILED_PRECONDITION
    assert details.startswith(f"tournament_id: {made.id} is a knockout tournament: its rounds")
    assert "a regrade could not replay them" in details


@pytest.mark.parametrize(
    ("fields", "code", "message"),
    [
        ({"rounds": 3}, "INVALID_ARGUMENT", "rounds, knockout_sets: only a Swiss (rounds)"),
        ({"format": "swiss"}, "INVALID_ARGUMENT", "rounds: a Swiss tournament needs its size"),
        ({"format": "swiss", "rounds": 1001}, "INVALID_ARGUMENT", "rounds: expected 1-1000"),
        (
            {"format": "swiss", "rounds": 2, "knockout_sets": 2},
            "INVALID_ARGUMENT",
            "knockout_sets: a Swiss tournament plays rounds, not ties",
        ),
        (
            {"format": "knockout", "rounds": 2},
            "INVALID_ARGUMENT",
            "rounds, games_per_entrant: a knockout plays until its champion",
        ),
        (
            {"format": "knockout", "knockout_sets": 3, "knockout_max_sets": 2},
            "INVALID_ARGUMENT",
            "knockout_max_sets: expected at least knockout_sets (3), got 2",
        ),
        (
            {"format": "knockout", "knockout_sets": 16},
            "INVALID_ARGUMENT",
            "knockout_sets: max_sets: expected from sets (16) to 15",
        ),
        (
            {"format": "knockout", "seeding": ["bot-00", "bot-01"]},
            "INVALID_ARGUMENT",
            "seeding: expected every listed entrant once, best first",
        ),
        (
            {"seeding": list(BOTS[:8])},
            "INVALID_ARGUMENT",
            "seeding: only a Swiss or knockout tournament is seeded",
        ),
        (
            {"format": "knockout", "seeding_from": "nosuchid"},
            "INVALID_ARGUMENT",
            "seeding_from: course 'default' has no tournament with id 'nosuchid'",
        ),
        (
            {"format": "knockout", "seeding_from": "x", "seeding": list(BOTS[:8])},
            "INVALID_ARGUMENT",
            "seeding_from: give seeding or seeding_from, not both",
        ),
        (
            {"seeding_from": "x"},
            "INVALID_ARGUMENT",
            "seeding_from: only a Swiss or knockout tournament is seeded, not a round-robin one",
        ),
        (
            {
                "format": "knockout",
                "seeding_from": "x",
                "entrant_policy": admin_pb.ENTRANT_POLICY_LATEST,
            },
            "INVALID_ARGUMENT",
            "seeding_from: the entrants are chosen when it starts (entrant_policy latest)",
        ),
    ],
)
def test_bad_rounds_and_seedings_are_refused_naming_the_field(
    server: AdminServer, fields: dict[str, Any], code: str, message: str
) -> None:
    status, details = refused(lambda: create(server, **fields))
    assert status is getattr(grpc.StatusCode, code)
    assert details.startswith(message), details


def test_seeding_from_another_courses_tournament_is_unknown(server: AdminServer) -> None:
    storage = server.arena.storage
    for name in ("far-00", "far-01"):
        storage.create_bot(name, course="other")
    other = create(server, entrants=["far-00", "far-01"], course="other")
    status, details = refused(lambda: create(server, format="knockout", seeding_from=other.id))
    assert status is grpc.StatusCode.INVALID_ARGUMENT
    assert details == f"seeding_from: course 'default' has no tournament with id '{other.id}'"


def test_a_swiss_sized_by_precision_plays_the_planners_rounds(server: AdminServer) -> None:
    """``precision`` sizes a Swiss as the planner does (``planner.games_per_entrant_for``): a
    tighter interval asks for more rounds; with ``rounds`` too it is refused."""
    wide = create(server, format="swiss", precision=400)
    narrow = create(server, format="swiss", precision=200)
    assert 1 <= wide.rounds < narrow.rounds
    expected = planner.games_per_entrant_for("swiss", "passing", 8, 200, seats=2)
    assert narrow.rounds == planner.tables_per_entrant(expected, 2)
    status, details = refused(lambda: create(server, format="swiss", precision=200, rounds=3))
    assert status is grpc.StatusCode.INVALID_ARGUMENT
    assert details.startswith("precision: give precision or rounds, not both"), details
    status, details = refused(lambda: create(server, format="swiss", precision=1))
    assert status is grpc.StatusCode.INVALID_ARGUMENT  # the range every format's precision has
    assert details.startswith("precision: expected 5 to 1000 Elo, got 1"), details

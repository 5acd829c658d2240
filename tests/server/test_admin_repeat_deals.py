"""The repeat-deal check in the admin API: GetTournament's ``repeat_deals`` (one per entrant)
and GetStandings' when asked for (one per bot with games in the pool), over real gRPC and a real
SQLite storage (tests/fakes/admin_server.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from domino_arena.sdk.rules import make_game
from domino_arena.sdk.wire import game_to_proto
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.v1 import admin_pb2 as admin_pb
from tests.fakes.admin_server import TOKEN, AdminServer, FakeArena
from tests.fakes.referee_server import WAIT
from tests.fakes.tournaments import memorizing_rows

BOTS: Final = ("alice", "bob", "carol", "dave", "erin")
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
def server(storage: RatedStorage) -> Iterator[AdminServer]:
    server = AdminServer(FakeArena(storage))
    yield server
    server.close()


def create(server: AdminServer) -> admin_pb.Tournament:
    return server.admin.CreateTournament(
        admin_pb.CreateTournamentRequest(
            name="cup", game=game_to_proto(make_game("passing")), entrants=list(BOTS)
        ),
        metadata=AUTH,
        timeout=WAIT,
    )


def test_get_tournament_checks_every_entrant(server: AdminServer, storage: RatedStorage) -> None:
    t = create(server)
    for row in memorizing_rows(t.id):
        assert storage.save_match(row)
    got = server.admin.GetTournament(
        admin_pb.GetTournamentRequest(tournament_id=t.id), metadata=AUTH, timeout=WAIT
    )
    checks = {c.bot: c for c in got.repeat_deals}
    assert [c.bot for c in got.repeat_deals] == sorted(BOTS)
    alice = checks["alice"]
    assert (alice.deals, alice.first_score, alice.later_score) == (12, 0.0, 1.0)
    assert alice.gain == pytest.approx(1.0)
    assert 0 < alice.p_value < 1e-6 and alice.flagged
    assert [c.bot for c in got.repeat_deals if c.flagged] == ["alice"]
    erin = checks["erin"]  # entered, never played
    assert (erin.deals, erin.p_value, erin.flagged) == (0, 1.0, False)
    listed = server.admin.ListTournaments(admin_pb.ListTournamentsRequest(), metadata=AUTH)
    assert not listed.tournaments[0].repeat_deals  # GetTournament only


def test_get_standings_checks_the_pool_when_asked(
    server: AdminServer, storage: RatedStorage
) -> None:
    for row in memorizing_rows(create(server).id):
        assert storage.save_match(row)
    plain = server.admin.GetStandings(admin_pb.GetStandingsRequest(game="passing"), metadata=AUTH)
    assert len(plain.rows) == 4 and not plain.repeat_deals
    asked = server.admin.GetStandings(
        admin_pb.GetStandingsRequest(game="passing", repeat_deals=True), metadata=AUTH
    )
    assert [c.bot for c in asked.repeat_deals] == ["alice", "bob", "carol", "dave"]
    assert [c.bot for c in asked.repeat_deals if c.flagged] == ["alice"]
    empty = server.admin.GetStandings(
        admin_pb.GetStandingsRequest(game="moon", repeat_deals=True), metadata=AUTH
    )
    assert list(empty.repeat_deals) == []


def test_get_tournament_keeps_its_tables_until_another_game_is_stored(
    server: AdminServer, storage: RatedStorage
) -> None:
    """GetTournament's tables come from every game of the tournament: they are kept between
    calls (server/ladder/kept.py) and computed again once a new game is stored."""
    t = create(server)
    rows = memorizing_rows(t.id)
    request = admin_pb.GetTournamentRequest(tournament_id=t.id)

    def games() -> dict[str, int]:
        got = server.admin.GetTournament(request, metadata=AUTH, timeout=WAIT)
        return {r.bot: r.games for r in got.results}

    for row in rows[:-2]:
        assert storage.save_match(row)
    first = games()
    assert first == games()
    assert storage.save_match(rows[-2])  # a game of the last deal: "dave" against "bob"
    second = games()
    assert sum(second.values()) == sum(first.values()) + 2
    assert second["dave"] == first["dave"] + 1 and second["bob"] == first["bob"] + 1

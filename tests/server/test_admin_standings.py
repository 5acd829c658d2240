"""GetStandings' official standings (``batch``) at the wire: the batch fit of a pool or a
tournament, with bootstrap intervals, the seat advantage, the LOS matrix and precise refusals.

The games are drawn under the fit's own model from known strengths (seeded), stored as the
arena stores them, so the answer can be checked against the truth as well as for its shape.
"""

from __future__ import annotations

import dataclasses
import math
import random
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest

from domino_arena.sdk.rules import make_game
from domino_arena.server.ladder.fit import MODEL
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.v1 import admin_pb2 as admin_pb
from tests.fakes.admin_server import TOKEN, AdminServer, FakeArena, refused, stored_match
from tests.fakes.referee_server import WAIT

AUTH: Final = (("authorization", f"Bearer {TOKEN}"),)
STRENGTH: Final = {"alice": 200.0, "bob": 0.0, "carol": -200.0}
GAMES: Final = 240


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database of the drawn games, filled once per module (each test copies it)."""
    path = tmp_path_factory.mktemp("standings") / "standings.db"
    storage = RatedStorage(f"sqlite:///{path}")
    storage.open()
    for name in STRENGTH:
        storage.add_bot(name)
    rng = random.Random(11)
    bots = list(STRENGTH)
    for n in range(GAMES):
        pair = rng.sample(bots, 2)
        p_first = 1 / (1 + 10 ** ((STRENGTH[pair[1]] - STRENGTH[pair[0]]) / 400))
        winner = 0 if rng.random() < p_first else 1
        match = stored_match(f"m{n}", (pair[0], pair[1]), winner, minute=n % 60)
        storage.save_match(dataclasses.replace(match, seed=n, record=None))
    storage.close()
    return path


@pytest.fixture
def server(filled: Path, tmp_path: Path) -> Iterator[AdminServer]:
    copy = tmp_path / "standings.db"
    shutil.copy(filled, copy)
    storage = RatedStorage(f"sqlite:///{copy}")
    storage.open()
    served = AdminServer(FakeArena(storage))
    yield served
    served.close()
    storage.close()


def standings(server: AdminServer, **fields: Any) -> admin_pb.GetStandingsResponse:
    fields.setdefault("game", "passing")
    request = admin_pb.GetStandingsRequest(batch=True, **fields)
    response: admin_pb.GetStandingsResponse = server.admin.GetStandings(
        request, metadata=AUTH, timeout=WAIT
    )
    return response


def test_the_batch_fit_ranks_the_pool_with_intervals_seats_and_los(server: AdminServer) -> None:
    batch = standings(server, los=True, bootstrap_rounds=60).batch
    assert (batch.model, batch.games, batch.sets, batch.rounds) == (MODEL, GAMES, GAMES, 60)
    assert (batch.pool, batch.players, batch.anchor, list(batch.other_pools)) == (
        "passing 2p",
        2,
        "",
        [],
    )
    assert [r.bot for r in batch.rows] == ["alice", "bob", "carol"]
    assert [r.rank for r in batch.rows] == [1, 2, 3]
    assert sum(r.games for r in batch.rows) == 2 * GAMES
    assert sum(r.rating for r in batch.rows) / 3 == pytest.approx(1500)
    for row in batch.rows:
        assert row.low < row.rating < row.high
        truth = 1500 + STRENGTH[row.bot]
        assert row.low - 60 < truth < row.high + 60, (row, truth)  # near, if not within
    assert [(s.seat, s.label) for s in batch.seats] == [(1, "seat 1")]
    assert batch.seats[0].low <= batch.seats[0].elo <= batch.seats[0].high
    assert [row.bot for row in batch.los] == ["alice", "bob", "carol"]
    los = [list(row.los) for row in batch.los]
    assert [los[i][i] for i in range(3)] == [0.5, 0.5, 0.5]
    assert los[0][2] > 0.95 and los[2][0] < 0.05
    assert los[0][1] == pytest.approx(1 - los[1][0])


def test_without_los_or_batch_the_answer_has_neither(server: AdminServer) -> None:
    assert not standings(server).batch.los
    plain = server.admin.GetStandings(
        admin_pb.GetStandingsRequest(game="passing"), metadata=AUTH, timeout=WAIT
    )
    assert not plain.HasField("batch") and len(plain.rows) == 3


def test_an_anchor_holds_a_bot_at_its_rating(server: AdminServer) -> None:
    batch = standings(server, anchor="bob", anchor_rating=1000, bootstrap_rounds=20).batch
    rows = {r.bot: r for r in batch.rows}
    assert rows["bob"].rating == pytest.approx(1000)
    assert (batch.anchor, batch.anchor_rating) == ("bob", 1000)
    free = {r.bot: r.rating for r in standings(server, bootstrap_rounds=20).batch.rows}
    assert rows["alice"].rating - rows["bob"].rating == pytest.approx(
        free["alice"] - free["bob"], abs=1e-3
    )
    at_zero = standings(server, anchor="bob", anchor_rating=0, bootstrap_rounds=20).batch
    assert {r.bot: r.rating for r in at_zero.rows}["bob"] == pytest.approx(0), "0 is a rating"
    assert standings(server, anchor="bob", bootstrap_rounds=20).batch.anchor_rating == 1500


def test_the_same_games_give_the_same_numbers(server: AdminServer) -> None:
    first = standings(server, bootstrap_rounds=20).batch
    again = standings(server, bootstrap_rounds=20).batch
    assert first == again


@pytest.mark.parametrize(
    ("fields", "code", "words"),
    [
        ({"anchor": "zed"}, "INVALID_ARGUMENT", "anchor: 'zed' played none of the games"),
        ({"players": 5}, "INVALID_ARGUMENT", "players: must be 2 to 4"),
        ({"players": 2, "partnerships": True}, "INVALID_ARGUMENT", "partnerships: only 4-player"),
        ({"players": 3}, "INVALID_ARGUMENT", "players: no passing 3p games to fit; there are: "),
        ({"bootstrap_rounds": 5000}, "INVALID_ARGUMENT", "bootstrap_rounds: must be at most 2000"),
        ({"anchor_rating": math.inf}, "INVALID_ARGUMENT", "anchor_rating: must be a finite"),
        ({"game": "moon"}, "FAILED_PRECONDITION", "moon: no rated games to fit yet"),
        ({"tournament_id": "nope", "game": ""}, "NOT_FOUND", "no tournament has id 'nope'"),
    ],
)
def test_bad_batch_requests_are_refused_naming_the_field(
    server: AdminServer, fields: dict[str, Any], code: str, words: str
) -> None:
    got, details = refused(lambda: standings(server, **fields))
    assert got.name == code
    assert details.startswith(words), details


def test_a_partnership_pool_has_its_pair_table(server: AdminServer) -> None:
    storage = server.arena.storage
    storage.add_bot("dave")
    options = make_game("passing", players=4, partnerships=True).options()
    rng = random.Random(5)
    bots = ["alice", "bob", "carol", "dave"]
    for n in range(60):
        rng.shuffle(bots)
        base = stored_match(f"p{n}", ("x", "y"), rng.randrange(2), minute=n % 60)
        storage.save_match(
            dataclasses.replace(
                base,
                seats=tuple(bots),
                side_of_seat=(0, 1, 0, 1),
                faults=(0, 0, 0, 0),
                options=options,
                seed=n,
                record=None,
            )
        )
    whole = standings(server, bootstrap_rounds=10).batch
    assert whole.pool == "passing 2p" and list(whole.other_pools) == ["passing 4p partnerships"]
    assert not whole.pairs
    batch = standings(server, players=4, partnerships=True, bootstrap_rounds=10).batch
    assert (batch.pool, batch.players, batch.games) == ("passing 4p partnerships", 4, 60)
    assert list(batch.other_pools) == ["passing 2p"]
    # Only the sides' difference is measured in partnership play: one line, not one per seat.
    (side,) = batch.seats
    label = "the first starter's side (seats 0 and 2 against 1 and 3)"
    assert (side.seat, side.label) == (0, label)
    assert side.low < side.elo < side.high
    pairs = {(p.first, p.second): p for p in batch.pairs}
    assert sum(p.games for p in pairs.values()) == 2 * 60  # two pairs a game
    assert all(p.first < p.second for p in pairs.values())
    assert all(0 <= p.score <= 1 and 0 < p.expected < 1 for p in pairs.values())


def test_a_newcomer_with_one_win_is_provisional_one_sided_and_below_the_table(
    server: AdminServer,
) -> None:
    match = stored_match("new", ("dave", "alice"), 0, minute=59)
    server.arena.storage.save_match(dataclasses.replace(match, seed=999, record=None))
    rows = standings(server, bootstrap_rounds=10).batch.rows
    assert [r.bot for r in rows] == ["alice", "bob", "carol", "dave"]
    assert [r.rank for r in rows] == [1, 2, 3, 0]
    dave = rows[-1]
    assert (dave.provisional, dave.unbounded, dave.games) == (True, True, 1)
    assert math.isinf(dave.high) and dave.rating_text == f"≥ {dave.low:.0f}"
    assert dave.note.startswith("provisional: 1 game, fewer than 10; one-sided:")
    assert not any(r.provisional or r.unbounded or r.note for r in rows[:3])
    assert [r.rating_text for r in rows[:3]] == [f"{r.rating:.0f}" for r in rows[:3]]

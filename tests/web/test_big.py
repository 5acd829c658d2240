"""A tournament with more games than a page: its games and deal sets are paged, its tables are
computed from every stored game (and again once another game is stored)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest
from starlette.testclient import TestClient

from domino_arena.server.ladder.batch import point_table
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.ladder.results import counted_games, entrant_results
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.tournaments.lifecycle import schedule_of
from domino_arena.server.web.app import create_app
from tests.fakes.web import START, a_tournament

ENTRANTS: Final = ("ann", "bob", "cat", "dan", "eve")
TOTAL: Final = 40
"""Games of the cup: 10 pairings, 4 games each (2 deals under both rotations)."""
STORED: Final = 37


@dataclasses.dataclass
class Big:
    storage: RatedStorage
    client: TestClient
    rest: list[StoredMatch]


def game(t_id: str, n: int, seats: tuple[str, ...], deal: int, rotation: int) -> StoredMatch:
    return StoredMatch(
        id=f"g{n:03d}",
        game="passing",
        options={},
        seats=seats,
        seed=deal + 1,
        termination="normal",
        winner=n % 2,
        scores=(100, 40 + n) if n % 2 == 0 else (40 + n, 100),
        faulted_seat=None,
        fault=None,
        detail="",
        record=None,
        created=START + dt.timedelta(minutes=n // 2),
        tournament_id=t_id,
        game_index=n,
        deal_id=deal,
        rotation=rotation,
        rated=True,
    )


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Big]:
    path: Path = tmp_path_factory.mktemp("big") / "big.db"
    storage = RatedStorage(f"sqlite:///{path}")
    storage.open()
    cup = dataclasses.replace(a_tournament("big cup"), entrants=ENTRANTS)
    storage.add_tournament(cup)
    schedule = schedule_of(cup)
    assert len(schedule) == TOTAL
    games = [game(cup.id, g.index, g.seats, g.deal_id, g.rotation) for g in schedule]
    for m in games[:STORED]:
        assert storage.save_match(m)
    app = create_app(storage, tournament_total=lambda t: len(schedule_of(t)))
    with TestClient(app) as client:
        yield Big(storage, client, games[STORED:])
    storage.close()


def cup_page(big: Big, query: str = "") -> dict[str, Any]:
    answer = big.client.get(f"/api/tournaments/cup{query}")
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()
    return result


def test_the_games_are_paged_newest_first_each_once(big: Big) -> None:
    want = [m.id for m in big.storage.matches(100, tournament_id="cup")]
    assert len(want) in (STORED, TOTAL)  # the last test stores the rest
    seen, page = [], 1
    while True:
        got = cup_page(big, f"?per_page=10&page={page}")
        assert (got["page"], got["per_page"]) == (page, 10)
        seen += [m["id"] for m in got["matches"]]
        if not got["has_next"]:
            break
        page += 1
    assert page == 4
    assert seen == want
    assert cup_page(big, "?page=9")["matches"] == []
    html = big.client.get("/tournaments/cup?per_page=10&page=2").text
    assert 'rel="next" href="?per_page=10&amp;page=3"' in html
    assert 'rel="prev" href="?per_page=10&amp;page=1"' in html


def test_the_deal_sets_are_paged_by_deal(big: Big) -> None:
    deals = sorted({m.deal_id or 0 for m in big.storage.matches(100, tournament_id="cup")})
    seen, page = [], 1
    while True:
        got = cup_page(big, f"?per_page=3&deals_page={page}")
        assert got["deals_page"] == page and got["deals_total"] == len(deals)
        seen += [d["deal"] for d in got["duplicates"]]
        for d in got["duplicates"]:
            assert [g["rotation"] for g in d["games"]] == sorted(g["rotation"] for g in d["games"])
        if not got["deals_has_next"]:
            break
        page += 1
    assert seen == deals
    html = big.client.get("/tournaments/cup?per_page=3&deals_page=2").text
    assert 'href="?per_page=3&amp;deals_page=3">next deals' in html
    answer = big.client.get("/api/tournaments/cup?deals_page=0")
    assert answer.status_code == 400
    assert answer.json()["error"].startswith("deals_page: expected 1 to")


def test_the_tables_count_every_stored_game_and_the_next_one_too(big: Big) -> None:
    def want() -> list[tuple[str, float, int]]:
        stored = big.storage.matches(100, tournament_id="cup", records=False)
        return [
            (r.bot, r.points, r.games)
            for r in entrant_results(ENTRANTS, counted_games(stored), point_table(stored))
        ]

    def shown(page: dict[str, Any]) -> list[tuple[str, float, int]]:
        return [(r["bot"], r["points"], r["games"]) for r in page["results"]]

    first = cup_page(big, "?per_page=5")
    assert first["progress"] == {"done": STORED, "total": TOTAL}
    assert shown(first) == want()
    assert sum(r["games"] for r in first["results"]) == 2 * STORED
    for m in big.rest:
        assert big.storage.save_match(m)
        page = cup_page(big)
        assert page["progress"]["done"] == (m.game_index or 0) + 1
        assert shown(page) == want()
    assert sum(r["games"] for r in cup_page(big)["results"]) == 2 * TOTAL


def test_a_bot_s_head_to_head_follows_its_next_match(big: Big) -> None:
    def against(bot: str, opponent: str) -> tuple[int, int, int]:
        rows = big.client.get(f"/api/bots/{bot}").json()["head_to_head"]
        [row] = [r for r in rows if r["opponent"] == opponent]
        return row["wins"], row["draws"], row["losses"]

    before = against("ann", "bob")
    assert against("ann", "bob") == before  # kept: the same answer
    newest = big.storage.matches(1)[0]
    extra = dataclasses.replace(
        newest,
        id="friendly",
        seats=("ann", "bob"),
        tournament_id=None,
        game_index=None,
        deal_id=None,
        rotation=None,
        winner=0,
        scores=(100, 0),
        created=newest.created + dt.timedelta(minutes=5),
    )
    assert big.storage.save_match(extra)
    wins, draws, losses = before
    assert against("ann", "bob") == (wins + 1, draws, losses)
    assert against("bob", "ann") == (losses, draws, wins + 1)

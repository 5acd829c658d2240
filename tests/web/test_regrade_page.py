"""A regrade's tournament page says what it replaced, on whose deals, and which games it carried
over (docs/courses.md: deadlines and regrading); any other tournament's says nothing of it. A
graded tournament's page says how precise its grades are expected to be."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from domino_arena.server.ladder.ratings_store import RatedStorage
from tests.fakes.graded import a_regrade, a_term
from tests.fakes.web import web_app


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'arena.db'}")
    storage.open()
    storage.create_course("cs101")
    original, played = a_term(deals=2)
    regrade, replayed = a_regrade(original, played, {"eve": "eve-v2"})
    for tournament, matches in ((original, played), (regrade, replayed)):
        storage.add_tournament(tournament)
        for match in matches:
            storage.save_match(match)
    with TestClient(web_app(storage)) as client:
        yield client
    storage.close()


def test_a_regrade_page_says_what_it_replaced_and_carried(client: TestClient) -> None:
    data = client.get("/api/tournaments/t1-regrade").json()
    assert data["regrade"] == {
        "of": "t1",
        "replaced": [{"bot": "eve", "by": "eve-v2"}],
        "fresh_deals": False,
        "carried": 12,  # the 3 pairings without eve, 2 deals of 2 games each
        "carried_games": "4-11, 20-23",
    }
    page = client.get("/tournaments/t1-regrade").text
    assert 'A regrade of <a href="/tournaments/t1">tournament t1</a>' in page
    assert "their games played again on the original's deals" in page
    assert '<span class="carried">12</span> games (game 4-11, 20-23)' in page
    assert client.get("/api/tournaments/t1").json()["regrade"] is None
    assert "A regrade of" not in client.get("/tournaments/t1").text


def test_a_graded_tournament_page_states_its_expected_precision(client: TestClient) -> None:
    precision = client.get("/api/tournaments/t1").json()["precision"]
    assert precision["sets_per_baseline"] == 4 and precision["entrants"] == 4  # 4 per pairing
    assert precision["baseline_half_width"] > precision["threshold"] and precision["warning"]
    page = client.get("/tournaments/t1").text
    assert "Expected precision of its grades" in page and "(4 duplicate sets)" in page
    assert '<strong class="warning">Warning: each baseline comparison is 4 duplicate sets' in page

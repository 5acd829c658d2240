"""What the pages say the official standings don't know (docs/ratings.md): a bot with one
game is provisional, below the table, one-sided; its page shows that official row as its
rating, the live Elo beside it named as such."""

from __future__ import annotations

import html
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from domino_arena.server.ladder.ratings_store import RatedStorage
from tests.fakes.web import web_app
from tests.web.test_standings_fit import expected_fit, store_game

REGULARS = ("alice", "bob", "carol")


@pytest.fixture
def pool(tmp_path: Path) -> Iterator[tuple[RatedStorage, TestClient]]:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'marks.db'}")
    storage.open()
    for name in (*REGULARS, "newbie"):
        storage.add_bot(name)
    for n in range(36):
        first, second = REGULARS[n % 3], REGULARS[(n + 1 + n // 3 % 2) % 3]
        store_game(storage, "straight", (first, second), 100 + n, f"r{n}")
    store_game(storage, "straight", ("newbie", "alice"), 999, "new")
    with TestClient(web_app(storage)) as client:
        yield storage, client
    storage.close()


def test_a_bot_with_one_game_is_listed_below_the_table_one_sided(
    pool: tuple[RatedStorage, TestClient],
) -> None:
    storage, client = pool
    official = client.get("/api/games/straight/standings").json()["official"]
    rows = official["rows"]
    assert [r["bot"] for r in rows][-1] == "newbie"
    newbie = rows[-1]
    assert (newbie["rank"], newbie["provisional"], newbie["games"]) == (None, True, 1)
    assert [r["rank"] for r in rows[:-1]] == [1, 2, 3]
    want = expected_fit(storage, "straight").row("newbie")
    assert want is not None and newbie["text"] == want.text
    if want.unbounded:  # it won or lost its one game: a bound on one side only
        assert newbie["text"][:1] in {"≥", "≤"} and newbie["interval"] is None
    page = client.get("/games/straight/standings").text
    below = page[page.index("<h3>Not ranked</h3>") : page.index("Live Elo ladder")]
    assert ">newbie</a></td>" in below and html.escape(newbie["note"]) in below


def test_a_bots_page_shows_its_official_row_and_names_the_live_elo(
    pool: tuple[RatedStorage, TestClient],
) -> None:
    storage, client = pool
    (rating,) = client.get("/api/bots/newbie").json()["ratings"]
    assert rating["game"] == "straight"
    official = rating["official"]
    assert (official["rank"], official["provisional"], official["ranked"]) == (None, True, 3)
    assert official["pool"] == "straight 2p"
    live = storage.ratings("straight")["newbie"]
    assert (rating["live_elo"], rating["games"]) == (live.rating, 1)
    (alice,) = client.get("/api/bots/alice").json()["ratings"]
    assert alice["official"]["rank"] in {1, 2, 3} and not alice["official"]["provisional"]
    page = client.get("/bots/newbie").text
    assert f'<strong class="official-rating">{official["text"]}</strong>' in page
    assert "not ranked in the official standings (straight 2p), 1 game" in page
    assert f"Live Elo {live.rating:.0f}, moved after every game." in page
    assert "<h2>Live Elo history</h2>" in page

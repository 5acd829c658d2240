"""Every page and its JSON: what the storage holds, paged and sorted as asked, and a clear 404
or 400 for what does not exist or cannot be asked."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from domino_arena.sdk.rules import GAMES
from domino_arena.server.ladder import elo
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.ladder.results import counted_games, entrant_results
from domino_arena.server.store.matches import sides_of
from domino_arena.server.web.params import MAX_PER_PAGE
from tests.fakes.games import play_random
from tests.fakes.web import (
    BOTS,
    FORFEIT_ID,
    GAMES_PLAYED,
    HOSTILE,
    TOURNAMENT_ID,
    Site,
    match_id_of,
    stored_match_of,
    web_app,
)

PAGES = [
    "/",
    "/tournaments",
    f"/tournaments/{TOURNAMENT_ID}",
    "/matches",
    "/matches?bot=carol&game=moon",
    f"/matches/{FORFEIT_ID}",
    *(f"/games/{game}/standings" for game in GAMES),
    *(f"/bots/{bot}" for bot in BOTS),
    *(f"/matches/{match_id_of(game, n)}" for game in GAMES_PLAYED for n in (0, 1)),
]


@pytest.mark.parametrize("path", PAGES)
def test_every_page_and_its_json_answer(site: Site, path: str) -> None:
    page = site.client.get(path)
    assert page.status_code == 200, page.text
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert page.text.startswith("<!doctype html>")
    api = site.client.get("/api" + path)
    assert api.status_code == 200, api.text
    assert api.headers["content-type"] == "application/json"
    assert isinstance(api.json(), dict)
    assert f'href="/api{path.replace("&", "&amp;")}"' in page.text


def test_home_shows_the_games_the_latest_results_and_the_tournaments(site: Site) -> None:
    home = site.client.get("/api/").json()
    assert [g["name"] for g in home["games"]] == list(GAMES)
    rated = {g["name"]: g["rated_bots"] for g in home["games"]}
    assert rated == {game: len(site.storage.ratings(game)) for game in GAMES}
    assert [m["id"] for m in home["recent"]] == [m.id for m in site.storage.matches(10)]
    assert home["recent"][0]["id"] == FORFEIT_ID
    assert [t["id"] for t in home["tournaments"]] == [TOURNAMENT_ID]


def test_standings_are_the_ladder_s(site: Site) -> None:
    for game in GAMES_PLAYED:
        got = site.client.get(f"/api/games/{game}/standings").json()
        want = elo.standings(site.storage.ratings(game))
        assert [(r["bot"], r["rating"], r["games"]) for r in got["rows"]] == [
            (bot, rating.rating, rating.games) for bot, rating in want
        ]
        assert [r["rank"] for r in got["rows"]] == list(range(1, len(want) + 1))
        for row, (_, rating) in zip(got["rows"], want, strict=True):
            assert (row["wins"], row["draws"], row["losses"], row["faults"]) == (
                rating.wins,
                rating.draws,
                rating.losses,
                rating.faults,
            )
            low, high = row["interval"]
            assert low == pytest.approx(rating.rating - rating.uncertainty)
            assert high == pytest.approx(rating.rating + rating.uncertainty)
    page = site.client.get("/games/moon/standings").text
    for bot, rating in elo.standings(site.storage.ratings("moon")):
        assert f'<a href="/bots/{bot}">{bot}</a>' in page
        assert f"{rating.rating:.1f}" in page


def test_standings_sort_by_a_column_and_page(site: Site) -> None:
    by_name = site.client.get("/api/games/moon/standings?sort=bot").json()
    assert [r["bot"] for r in by_name["rows"]] == sorted(BOTS)
    by_faults = site.client.get("/api/games/passing/standings?sort=faults").json()["rows"]
    assert [r["faults"] for r in by_faults] == sorted(
        (r["faults"] for r in by_faults), reverse=True
    )
    first = site.client.get("/api/games/moon/standings?sort=bot&per_page=2").json()
    second = site.client.get("/api/games/moon/standings?sort=bot&per_page=2&page=2").json()
    assert [r["bot"] for r in first["rows"] + second["rows"]] == sorted(BOTS)
    assert (first["has_next"], second["has_next"], first["total"]) == (True, False, 3)
    page = site.client.get("/games/moon/standings?sort=bot&per_page=2").text
    assert 'href="?sort=bot&amp;per_page=2&amp;page=2"' in page
    assert 'href="?sort=rating&amp;per_page=2"' in page


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("sort=elo", "sort: unknown value 'elo'; expected one of bot, draws, faults, games"),
        ("per_page=0", f"per_page: expected 1 to {MAX_PER_PAGE}, got 0"),
        (f"per_page={MAX_PER_PAGE + 1}", f"per_page: expected 1 to {MAX_PER_PAGE}, got"),
        ("page=x", "page: expected a whole number, got 'x'"),
    ],
)
def test_a_bad_parameter_is_a_400_that_names_it(site: Site, query: str, message: str) -> None:
    api = site.client.get(f"/api/games/moon/standings?{query}")
    assert api.status_code == 400
    assert api.json()["error"].startswith(message)
    page = site.client.get(f"/games/moon/standings?{query}")
    assert page.status_code == 400
    assert "expected" in page.text


def test_the_tournament_page_shows_progress_results_and_crosstable(site: Site) -> None:
    t = site.client.get(f"/api/tournaments/{TOURNAMENT_ID}").json()
    assert t["name"] == HOSTILE
    assert t["progress"] == {"done": 2, "total": 4}
    stored = site.storage.matches(10, tournament_id=TOURNAMENT_ID)
    want = entrant_results(("alice", "bob"), counted_games(stored))
    assert [(r["bot"], r["points"], r["wins"], r["losses"]) for r in t["results"]] == [
        (r.bot, r.points, r.wins, r.losses) for r in want
    ]
    assert sorted(m["id"] for m in t["matches"]) == [match_id_of("passing", n) for n in (0, 1)]
    alice, bob = t["crosstable"]
    assert (alice["bot"], alice["against"][0], bob["against"][1]) == ("alice", None, None)
    assert alice["against"][1]["wins"] == bob["against"][0]["losses"]
    assert alice["against"][1]["wins"] + alice["against"][1]["losses"] == 2
    listed = site.client.get("/api/tournaments").json()["tournaments"]
    assert [(x["id"], x["progress"]) for x in listed] == [(TOURNAMENT_ID, {"done": 2, "total": 4})]


def test_the_tournament_page_shows_each_deal_under_every_rotation_side_by_side(
    site: Site,
) -> None:
    t = site.client.get(f"/api/tournaments/{TOURNAMENT_ID}").json()
    stored = {m.id: m for m in site.storage.matches(10, tournament_id=TOURNAMENT_ID)}
    [deal] = t["duplicates"]
    assert deal["deal"] == 0
    assert [(g["id"], g["rotation"]) for g in deal["games"]] == [
        (match_id_of("passing", 0), 0),
        (match_id_of("passing", 1), 1),
    ]
    first, second = deal["games"]
    assert (first["seats"], second["seats"]) == (["alice", "bob"], ["bob", "alice"])
    assert {stored[g["id"]].seed for g in deal["games"]} == {stored[first["id"]].seed}
    for g in deal["games"]:
        m = stored[g["id"]]
        assert g["seat_scores"] == [m.scores[side] for side in sides_of(m)]
    score = {
        bot: sum(g["seat_scores"][g["seats"].index(bot)] for g in deal["games"])
        for bot in ("alice", "bob")
    }
    want = entrant_results(("alice", "bob"), counted_games(list(stored.values())))
    assert [(r["bot"], r["points"], r["score"]) for r in deal["totals"]] == [
        (r.bot, r.points, score[r.bot]) for r in want
    ]
    page = site.client.get(f"/tournaments/{TOURNAMENT_ID}").text
    assert '<tr class="deal" data-deal="0">' in page
    for g in deal["games"]:
        assert f'<td class="rotation" data-rotation="{g["rotation"]}">' in page
        assert f'<a href="/matches/{g["id"]}">' in page
        a, b = g["seats"]
        assert f"{a} {g['seat_scores'][0]} · {b} {g['seat_scores'][1]}" in page


def test_the_bot_page_shows_its_matches_head_to_head_and_faults(site: Site) -> None:
    bob = site.client.get("/api/bots/bob").json()
    assert [m["id"] for m in bob["matches"]] == [m.id for m in site.storage.matches(20, bot="bob")]
    pairs = {(h["game"], h["opponent"]) for h in bob["head_to_head"]}
    assert ("moon", "carol") in pairs and ("passing", "alice") in pairs
    assert ("passing", "bob") not in pairs
    forfeit = site.storage.match(FORFEIT_ID)
    assert forfeit is not None
    loser = forfeit.seats[forfeit.faulted_seat or 0]
    faults = site.client.get(f"/api/bots/{loser}").json()["faults"]
    assert faults == [
        {
            "match_id": FORFEIT_ID,
            "seat": forfeit.faulted_seat,
            "step": 6,
            "kind": "timeout",
            "label": "timeout",
            "reason": f"no answer: {HOSTILE}",
            "strikes": 1,
            "forfeited": True,
        }
    ]
    assert {r["game"] for r in bob["ratings"]} == set(GAMES_PLAYED)


def test_the_bot_page_charts_its_rating_after_each_rated_game(site: Site) -> None:
    bob = site.client.get("/api/bots/bob").json()
    charted = {h["game"]: h for h in bob["rating_history"]}
    assert set(charted) == {r["game"] for r in bob["ratings"]}
    for pool, h in charted.items():
        stored = site.storage.rating_history(pool, "bob")
        assert h["games"] == len(stored) == site.storage.ratings(pool)["bob"].games
        assert h["points"] == [
            {"game": n, "rating": rating} for n, (_, rating) in enumerate(stored, start=1)
        ]
        assert h["points"][-1]["rating"] == site.storage.ratings(pool)["bob"].rating
        assert h["svg"].startswith('<svg class="rating-chart"')
        assert f"<title>bob in {pool}</title>" in h["svg"]
    page = site.client.get("/bots/bob").text
    for pool, h in charted.items():
        assert f'<figure class="rating-chart" data-game="{pool}">' in page
        assert h["svg"] in page  # the markup itself, not escaped a second time
    assert "&lt;svg" not in page


def test_the_matches_list_is_paged_and_filtered(site: Site) -> None:
    everything = [m.id for m in site.storage.matches(100)]
    pages, page = [], 1
    while True:
        got = site.client.get(f"/api/matches?per_page=3&page={page}").json()
        pages += [m["id"] for m in got["matches"]]
        if not got["has_next"]:
            break
        page += 1
    assert pages == everything
    assert page == -(-len(everything) // 3)
    moon = site.client.get("/api/matches?game=moon").json()["matches"]
    assert [m["id"] for m in moon] == [match_id_of("moon", n) for n in (1, 0)]
    carol = site.client.get("/api/matches?bot=carol").json()["matches"]
    assert all("carol" in m["seats"] for m in carol) and len(carol) == 2
    cup = site.client.get(f"/api/matches?tournament={TOURNAMENT_ID}").json()["matches"]
    assert {m["tournament_id"] for m in cup} == {TOURNAMENT_ID}
    bad = site.client.get("/api/matches?game=chess")
    assert bad.status_code == 400
    assert bad.json()["error"].startswith("game: unknown game 'chess'; expected one of ")


def test_the_match_page_shows_result_seats_scores_and_faults(site: Site) -> None:
    page = site.client.get(f"/api/matches/{FORFEIT_ID}").json()
    forfeit = site.storage.match(FORFEIT_ID)
    assert forfeit is not None
    summary = page["match"]
    assert (summary["seats"], summary["scores"], summary["termination"]) == (
        list(forfeit.seats),
        list(forfeit.scores),
        "forfeit",
    )
    winner = forfeit.seats[forfeit.winner or 0]
    assert summary["result"] == f"{winner} won by forfeit: {HOSTILE}"
    assert [(f["seat"], f["kind"], f["forfeited"]) for f in page["faults"]] == [
        (forfeit.faulted_seat, "timeout", True)
    ]
    assert summary["rating_model"] == forfeit.rating_model == "elo-pairwise-k24/1"
    assert "rated (elo-pairwise-k24/1)" in site.client.get(f"/matches/{FORFEIT_ID}").text


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/matches/nope", "no stored match has id 'nope'"),
        ("/tournaments/nope", "no tournament has id 'nope'"),
        ("/bots/nobody", "no bot is called 'nobody'"),
        ("/games/chess/standings", "no game is called 'chess'; the games are "),
        ("/no/such/page", "no page at /api/no/such/page"),
    ],
)
def test_an_unknown_id_is_a_404_that_says_what_is_missing(
    site: Site, path: str, message: str
) -> None:
    api = site.client.get("/api" + path)
    assert api.status_code == 404
    assert api.json()["error"].startswith(message)
    page = site.client.get(path)
    assert page.status_code == 404
    assert message.replace("'", "&#39;").replace("/api", "") in page.text


DOCS = Path(__file__).resolve().parents[2] / "docs" / "web.md"


@pytest.mark.parametrize("path", PAGES)
def test_every_json_key_is_documented(site: Site, path: str) -> None:
    """docs/web.md is the JSON's schema: each key of each answer is named there."""
    documented = set(re.findall(r"`([a-z_]+)`", DOCS.read_text(encoding="utf-8")))
    keys: set[str] = set()

    def walk(value: object) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                if key == "options":  # a game's options are the game's (docs/rules.md)
                    continue
                if key == "arms":  # named W, E, N, S: their tiles are what to look at
                    walk(list(inner.values()))
                else:
                    keys.add(key)
                    walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    walk(site.client.get("/api" + path).json())
    assert sorted(keys - documented) == []


def test_the_health_route_answers_once_the_database_does(tmp_path: Path) -> None:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'arena.db'}")
    storage.open()
    with TestClient(web_app(storage)) as client:
        answer = client.get("/healthz")
        assert (answer.status_code, answer.json()) == (200, {"status": "ok"})
        storage.close()  # the database goes away under the running app
        answer = client.get("/healthz")
    assert answer.status_code == 503
    assert answer.json()["status"] == "unavailable"
    assert answer.json()["error"].startswith("the database did not answer: ")


def test_standings_per_player_count_are_the_elo_of_those_games_alone(tmp_path: Path) -> None:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'counts.db'}")
    storage.open()
    for bot in BOTS:
        storage.add_bot(bot)
    start = dt.datetime(2026, 5, 6, tzinfo=dt.UTC)
    for n, players in enumerate((2, 3, 2, 3, 3)):
        result = play_random("straight", {"players": players}, seed=300 + n)
        seats = BOTS[:players] if n % 2 else tuple(reversed(BOTS[:players]))
        result = dataclasses.replace(result, record=dataclasses.replace(result.record, seats=seats))
        when = start + dt.timedelta(minutes=n)
        storage.save_match(stored_match_of(result, f"s{n}", when))
    with TestClient(web_app(storage)) as client:
        every = client.get("/api/games/straight/standings").json()
        assert every["players"] is None and every["player_counts"] == [2, 3, 4]
        assert sum(r["games"] for r in every["rows"]) == 2 * 2 + 3 * 3
        rated = storage.rated_games("straight")
        for players in (2, 3, 4):
            page = client.get(f"/api/games/straight/standings?players={players}").json()
            expected = elo.replay(g for g in rated if len(g.bots) == players)
            shown = {r["bot"]: (r["rating"], r["games"], r["wins"]) for r in page["rows"]}
            assert shown == {b: (r.rating, r.games, r.wins) for b, r in expected.items()}
            assert page["players"] == players
        assert client.get("/api/games/straight/standings?players=4").json()["rows"] == []
        html = client.get("/games/straight/standings?players=3").text
        assert "Straight Dominoes: standings, 3 players" in html
        assert 'href="?players=2"' in html
        wrong = client.get("/api/games/straight/standings?players=5")
        assert wrong.status_code == 400
        assert wrong.json()["error"] == "players: straight is played by 2, 3, 4 players, got 5"
        moon = client.get("/api/games/moon/standings").json()
        assert moon["player_counts"] == [3]
        assert "Players:" not in client.get("/games/moon/standings").text
        # a new rated game is in the next table: the kept one is stale
        more = play_random("straight", {"players": 2}, seed=399)
        more = dataclasses.replace(more, record=dataclasses.replace(more.record, seats=BOTS[:2]))
        storage.save_match(stored_match_of(more, "s9", start + dt.timedelta(hours=1)))
        page = client.get("/api/games/straight/standings?players=2").json()
        assert sum(r["games"] for r in page["rows"]) == 3 * 2
    storage.close()

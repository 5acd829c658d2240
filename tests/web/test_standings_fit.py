"""The standings page's official standings: the ladder's batch fit (ratings, 95% intervals,
seat advantage) above the Elo table, the same numbers as ``batch_standings`` of the storage,
kept until the pool's next rated game, and a note instead when the pool cannot be fitted; its
provisional and one-sided rows, and a bot page's official rating."""

from __future__ import annotations

import dataclasses
import datetime as dt
import html
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from domino_arena.server.ladder import batch
from domino_arena.server.ladder.batch import (
    BOOTSTRAP_SEED,
    MAX_BATCH_MATCHES,
    BatchStandings,
    batch_standings,
    counted,
)
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.web import standings
from tests.fakes.games import play_random
from tests.fakes.web import BOTS, ESCAPED, GAMES_PLAYED, HOSTILE, Site, stored_match_of, web_app

START = dt.datetime(2026, 6, 7, tzinfo=dt.UTC)


def expected_fit(storage: RatedStorage, game: str, players: int | None = None) -> BatchStandings:
    """What the page should show: the ladder's batch fit of the same storage."""
    chosen = counted(storage.matches(MAX_BATCH_MATCHES, game=game, records=False), ladder=True)
    if players is not None:
        chosen = [m for m in chosen if len(m.seats) == players]
    return batch_standings(
        chosen, game=game, rounds=standings.FIT_ROUNDS, seed=BOOTSTRAP_SEED, apart=True
    )


def store_game(
    storage: RatedStorage,
    game: str,
    seats: tuple[str, ...],
    seed: int,
    match_id: str,
    *,
    partnerships: bool = False,
) -> None:
    """Play one real game of ``len(seats)`` seats and store it (rated) with those bots (the
    store does not check seat names against its bots, so a name no bot may take is stored
    too: the page must not trust any)."""
    options: dict[str, Any] = {} if game == "moon" else {"players": len(seats)}
    if partnerships:
        options["partnerships"] = True
    result = play_random(game, options, seed=seed)
    result = dataclasses.replace(result, record=dataclasses.replace(result.record, seats=seats))
    when = START + dt.timedelta(minutes=seed)
    storage.save_match(stored_match_of(result, match_id, when))


@pytest.fixture
def empty(tmp_path: Path) -> Iterator[tuple[RatedStorage, TestClient]]:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'arena.db'}")
    storage.open()
    with TestClient(web_app(storage)) as client:
        yield storage, client
    storage.close()


@pytest.mark.parametrize("game", GAMES_PLAYED)
def test_the_official_standings_are_the_batch_fit_of_the_storage(site: Site, game: str) -> None:
    got = site.client.get(f"/api/games/{game}/standings").json()
    want = expected_fit(site.storage, game)
    official = got["official"]
    assert got["official_note"] is None
    assert (official["pool"], official["games"], official["rounds"]) == (
        want.label,
        want.games,
        standings.FIT_ROUNDS,
    )
    assert (official["model"], official["sets"]) == (want.point.model, want.point.units)
    assert official["rows"] == [standings.row_data(row) for row in want.table]
    seats = want.point.seat_advantage
    assert [(s["seat"], s["label"]) for s in official["seats"]] == [
        (n, f"seat {n}") for n in range(1, len(seats))
    ]
    for row in official["seats"]:
        low, high = want.spread.seat_intervals[row["seat"]]
        assert (row["elo"], row["interval"]) == (seats[row["seat"]], [low, high])
        assert row["uncertainty"] == pytest.approx((high - low) / 2)
    assert official["pairs"] == []
    assert official["other_pools"] == [key.label(game) for key in want.other_pools]

    page = site.client.get(f"/games/{game}/standings").text
    official_at, elo_at = page.index("Official standings"), page.index("Live Elo ladder")
    assert official_at < elo_at
    shown = page[official_at:elo_at]
    assert f"{want.label}: official standings ({want.point.model}; {want.games} game" in shown
    for row in want.table:
        assert (
            f'<td><a href="/bots/{row.bot}">{row.bot}</a></td>\n<td>{row.text}</td>\n'
            f"<td>{html.escape(row.interval_text)}</td>\n<td>{row.games}</td>"
        ) in shown
    assert "Seat advantage, Elo against the first starter's seat (95%)" in shown
    for row in official["seats"]:
        elo = f"{round(row['elo']):+d} Elo ± {row['uncertainty']:.0f}"
        assert f"<th>seat {row['seat']}</th><td>{elo}</td>" in shown
    assert '<table class="standings">' in page[elo_at:]


def test_a_player_count_fits_the_games_of_that_count_alone(tmp_path: Path) -> None:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'counts.db'}")
    storage.open()
    for n, players in enumerate((2, 3, 2, 3, 3, 2)):
        seats = BOTS[:players] if n % 2 else tuple(reversed(BOTS[:players]))
        store_game(storage, "straight", seats, 500 + n, f"s{n}")
    with TestClient(web_app(storage)) as client:
        every = client.get("/api/games/straight/standings").json()["official"]
        assert every["pool"] == expected_fit(storage, "straight").label
        assert sorted([every["pool"], *every["other_pools"]]) == ["straight 2p", "straight 3p"]
        for players in (2, 3):
            got = client.get(f"/api/games/straight/standings?players={players}").json()
            want = expected_fit(storage, "straight", players)
            assert got["official"]["pool"] == f"straight {players}p"
            assert [(r["bot"], r["rating"]) for r in got["official"]["rows"]] == [
                (row.bot, row.rating) for row in want.table
            ]
            assert len(got["official"]["seats"]) == players - 1
        none = client.get("/api/games/straight/standings?players=4").json()
        assert none["official"] is None
        assert none["official_note"] == "straight: no rated games to fit yet"
        page = client.get("/games/straight/standings?players=4").text
        assert "No official standings yet: straight: no rated games to fit yet." in page
    storage.close()


def test_a_partnership_pool_shows_how_each_pair_did(
    empty: tuple[RatedStorage, TestClient],
) -> None:
    storage, client = empty
    for n in range(6):
        order = ("ann", "bob", "cat", "dan") if n % 2 else ("ann", "cat", "bob", "dan")
        seats = order[n % 4 :] + order[: n % 4]
        store_game(storage, "straight", seats, 900 + n, f"t{n}", partnerships=True)
    want = expected_fit(storage, "straight", 4)
    assert want.key.partnerships and want.pairs
    got = client.get("/api/games/straight/standings?players=4").json()["official"]
    assert got["pool"] == "straight 4p partnerships"
    assert got["pairs"] == [
        {
            "first": row.partners[0],
            "second": row.partners[1],
            "games": row.games,
            "score": row.score / row.games,
            "expected": row.expected / row.games,
        }
        for row in want.pairs
    ]
    page = client.get("/games/straight/standings?players=4").text
    assert "Pairs: how each partnership did against what its members' ratings predict" in page
    for row in want.pairs:
        first, second = row.partners
        assert (
            f'<td><a href="/bots/{first}">{first}</a></td><td><a href="/bots/{second}">'
            f"{second}</a></td><td>{row.games}</td><td>{row.score / row.games:.3f}</td>"
        ) in page


def test_an_empty_pool_shows_the_note_and_the_elo_table(
    empty: tuple[RatedStorage, TestClient],
) -> None:
    _, client = empty
    got = client.get("/api/games/moon/standings").json()
    assert (got["official"], got["official_note"]) == (None, "moon: no rated games to fit yet")
    assert got["rows"] == []
    page = client.get("/games/moon/standings")
    assert page.status_code == 200
    assert "No official standings yet: moon: no rated games to fit yet." in page.text
    assert '<table class="official leaderboard">' not in page.text
    assert '<table class="standings">' in page.text
    assert "No rated games yet." in page.text


def test_a_part_that_never_met_the_rest_is_listed_unranked_and_unbounded(
    empty: tuple[RatedStorage, TestClient],
) -> None:
    storage, client = empty
    games = [("ann", "bob"), ("bob", "cat"), ("cat", "ann"), ("dan", "eve")]
    for n, seats in enumerate(games * 2):
        store_game(storage, "passing", seats, 600 + n, f"p{n}")
    want = expected_fit(storage, "passing")
    got = client.get("/api/games/passing/standings").json()
    assert got["official_note"] is None
    official = got["official"]
    assert official["rows"] == [standings.row_data(row) for row in want.table]
    assert official["games"] == 6  # the part that fixes the scale: ann, bob and cat
    dan, eve = official["rows"][-2:]
    assert (dan["bot"], dan["rating"], dan["text"], dan["games"]) == ("dan", None, "?", 2)
    assert (eve["rank"], eve["unbounded"], eve["interval"]) == (None, True, None)
    assert eve["note"].endswith("it never met the bots of this table, even through others")
    assert {r["bot"] for r in got["rows"]} == {"ann", "bob", "cat", "dan", "eve"}
    page = client.get("/games/passing/standings").text
    below = page[page.index("<h3>Not ranked</h3>") : page.index("Live Elo ladder")]
    assert '<a href="/bots/dan">dan</a></td>\n<td>?</td>\n<td>unbounded</td>' in below


def test_the_fit_is_kept_until_the_pool_s_next_rated_game(
    empty: tuple[RatedStorage, TestClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    storage, client = empty
    for n in range(3):
        store_game(storage, "doubles", BOTS[:2] if n % 2 else BOTS[1::-1], 700 + n, f"d{n}")
    fits: list[int] = []
    real = batch.batch_standings

    def counting(*args: Any, **kwargs: Any) -> BatchStandings:
        fits.append(kwargs["rounds"])
        return real(*args, **kwargs)

    monkeypatch.setattr(standings, "batch_standings", counting)
    first = client.get("/api/games/doubles/standings").json()["official"]
    for query in ("", "?sort=bot", "?page=2", "?per_page=1"):
        assert client.get(f"/api/games/doubles/standings{query}").json()["official"] == first
        client.get(f"/games/doubles/standings{query}")
    assert fits == [standings.FIT_ROUNDS]
    store_game(storage, "doubles", BOTS[:2], 710, "d9")
    again = client.get("/api/games/doubles/standings").json()["official"]
    assert fits == [standings.FIT_ROUNDS] * 2
    assert again["games"] == first["games"] + 1
    assert again == standings.official_data(expected_fit(storage, "doubles"))


def test_while_one_request_fits_the_others_get_the_kept_answer(
    empty: tuple[RatedStorage, TestClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    storage, _ = empty
    for n in range(3):
        store_game(storage, "doubles", BOTS[:2] if n % 2 else BOTS[1::-1], 720 + n, f"d{n}")
    before, _ = standings.official(storage, "doubles", None)
    assert before is not None
    store_game(storage, "doubles", BOTS[:2], 730, "d9")
    started, release = threading.Event(), threading.Event()
    real = batch.batch_standings

    def slow(*args: Any, **kwargs: Any) -> BatchStandings:
        started.set()
        assert release.wait(timeout=30)
        return real(*args, **kwargs)

    monkeypatch.setattr(standings, "batch_standings", slow)
    answers: list[dict[str, Any] | None] = []
    fitting = threading.Thread(
        target=lambda: answers.append(standings.official(storage, "doubles", None)[0])
    )
    fitting.start()
    assert started.wait(timeout=30)
    assert standings.official(storage, "doubles", None) == (before, None)  # no wait, no fit
    release.set()
    fitting.join(timeout=30)
    monkeypatch.setattr(standings, "batch_standings", real)
    after = answers[0]
    assert after is not None and after["games"] == before["games"] + 1
    assert standings.official(storage, "doubles", None) == (after, None)


def test_a_hostile_bot_name_is_escaped_in_the_official_standings(
    empty: tuple[RatedStorage, TestClient],
) -> None:
    storage, client = empty
    for n in range(3):
        seats = (HOSTILE, "bob") if n % 2 else ("bob", HOSTILE)
        store_game(storage, "straight", seats, 800 + n, f"h{n}")
    got = client.get("/api/games/straight/standings").json()
    assert HOSTILE in [r["bot"] for r in got["official"]["rows"]]
    page = client.get("/games/straight/standings").text
    assert HOSTILE not in page
    assert "<script>" not in page
    shown = page[page.index("Official standings") : page.index("Live Elo ladder")]
    assert f">{ESCAPED}</a>" in shown
    # and in either part of a pool in two parts (one fitted, the other listed apart)
    store_game(storage, "passing", (HOSTILE, "bob"), 810, "h8")
    store_game(storage, "passing", ("cat", "dan"), 811, "h9")
    rows = client.get("/api/games/passing/standings").json()["official"]["rows"]
    assert sorted(r["bot"] for r in rows) == sorted([HOSTILE, "bob", "cat", "dan"])
    page = client.get("/games/passing/standings").text
    assert HOSTILE not in page
    assert ESCAPED in page[page.index("<h3>Not ranked</h3>") : page.index("Live Elo ladder")]


# What the pages say the official standings don't know (docs/ratings.md): a bot with one game is
# provisional, below the table, one-sided; its page shows that official row as its rating, the
# live Elo beside it named as such.

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

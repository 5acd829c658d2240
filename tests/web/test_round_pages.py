"""A Swiss tournament's rounds and a knockout's bracket on the tournament page, through the app
over a real SQLite storage (rounds and games stored through the Storage API), HTML and JSON;
and a knockout of an anonymous course, whose drawing shows aliases only."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from domino_arena.server.ladder.ratings_store import RatedStorage
from tests.fakes.course_site import ANONYMOUS, ANONYMOUS_BOTS, HIDDEN, CourseSite, json_keys
from tests.fakes.round_tournaments import round_tournament, store_round
from tests.fakes.web import ESCAPED, HOSTILE, web_app

DOCS = Path(__file__).resolve().parents[2] / "docs" / "web.md"
SWISS_ID = "swiss-cup"
KNOCKOUT_ID = "ko-cup"
FINISHED_ID = "ko-done"
LONG_HIDDEN = "zelda-long-hidden-name-cut-in-a-box-xq9"


@dataclass(frozen=True)
class RoundSite:
    storage: RatedStorage
    client: TestClient


@pytest.fixture(scope="module")
def rounds_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RoundSite]:
    """A Swiss of five (one entrant hostile) two rounds in, the second playing; a knockout of
    six in its semi-finals; a knockout of three played to its champion."""
    path = tmp_path_factory.mktemp("rounds") / "arena.db"
    storage = RatedStorage(f"sqlite:///{path}")
    storage.open()
    five = ("ann", "ben", "cat", "dan", HOSTILE)
    swiss = round_tournament(SWISS_ID, five, format="swiss", rounds=3, seeding=five)
    storage.add_tournament(swiss)
    store_round(
        storage,
        swiss,
        0,
        [("ann", "ben"), ("cat", "dan")],
        {("ann", "ben"): ["ann", "ann"], ("cat", "dan"): ["dan", "cat"]},
        byes=(HOSTILE,),
    )
    store_round(
        storage,
        swiss,
        1,
        [("ann", "cat"), ("ben", HOSTILE)],
        {("ann", "cat"): ["cat"], ("ben", HOSTILE): [HOSTILE, HOSTILE]},
        byes=("dan",),
    )
    six = tuple(f"s{n}" for n in range(1, 7))
    ko = round_tournament(KNOCKOUT_ID, six, format="knockout", knockout={"sets": 1, "max_sets": 2})
    storage.add_tournament(ko)
    store_round(
        storage,
        ko,
        0,
        [("s4", "s5"), ("s3", "s6")],
        {("s4", "s5"): ["s4", "s5"], ("s3", "s6"): ["s6", "s6"]},
    )
    store_round(storage, ko, 1, [("s4", "s5")], {("s4", "s5"): ["s5", "s5"]})
    store_round(
        storage,
        ko,
        2,
        [("s1", "s5"), ("s2", "s6")],
        {("s1", "s5"): ["s1", "s1"], ("s2", "s6"): ["s6"]},
    )
    three = ("top", HOSTILE, "low")
    done = round_tournament(
        FINISHED_ID, three, format="knockout", knockout={"sets": 1, "max_sets": 1}
    )
    storage.add_tournament(done)
    store_round(storage, done, 0, [(HOSTILE, "low")], {(HOSTILE, "low"): ["low", "low"]})
    store_round(storage, done, 1, [("top", "low")], {("top", "low"): ["low", "top"]})
    with TestClient(web_app(storage)) as client:
        yield RoundSite(storage, client)
    storage.close()


def test_a_swiss_page_shows_each_round_newest_first_with_its_standings(
    rounds_site: RoundSite,
) -> None:
    page = rounds_site.client.get(f"/tournaments/{SWISS_ID}")
    assert page.status_code == 200
    text = page.text
    assert text.index("Round 2: playing, 3 of 4 games stored") < text.index("Round 1: finished")
    assert "Standings after round 2 (so far)" in text
    assert "Standings after round 1" in text
    assert "The final word is the Results table above" in text
    # The winner is marked in words as well as in bold; the unfinished table says so.
    assert '<strong class="winner"><a href="/bots/ann">ann</a> 2.0 (202), winner</strong>' in text
    assert "<td>1 of 2</td>" in text
    assert 'Byes: <a href="/bots/dan">dan</a>' in text
    data = rounds_site.client.get(f"/api/tournaments/{SWISS_ID}").json()
    assert data["format"] == "swiss" and data["rounds_planned"] == 3
    assert data["knockout"] is None and data["rounds_error"] is None
    assert [r["round"] for r in data["swiss"]] == [1, 2]
    assert data["progress"]["total"] is None  # a Swiss's games follow from its results
    standings = data["swiss"][1]["standings"]
    assert standings[0]["bot"] == HOSTILE and standings[0]["per_game"] == 1.0


def test_a_hostile_entrant_is_escaped_in_the_rounds_and_the_bracket(
    rounds_site: RoundSite,
) -> None:
    for tournament in (SWISS_ID, FINISHED_ID):
        text = rounds_site.client.get(f"/tournaments/{tournament}").text
        assert HOSTILE not in text
        assert ESCAPED in text
    svg = _svg(rounds_site.client.get(f"/tournaments/{FINISHED_ID}").text)
    root = ET.fromstring(svg)  # still well-formed
    shown = ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert any(s.startswith(HOSTILE[:12]) for s in shown)


def _svg(page: str) -> str:
    found = re.search(r'<div class="bracket-scroll"[^>]*>(<svg.*?</svg>)</div>', page, re.S)
    assert found, "no bracket drawing on the page"
    return found.group(1)


def test_a_knockout_page_draws_its_bracket_in_its_own_scrolling_box(
    rounds_site: RoundSite,
) -> None:
    text = rounds_site.client.get(f"/tournaments/{KNOCKOUT_ID}").text
    svg = _svg(text)
    root = ET.fromstring(svg)
    assert root.findtext("{http://www.w3.org/2000/svg}title", "").startswith(
        "Knockout bracket of rounds"
    )
    assert '<div class="bracket-scroll" tabindex="0" role="region"' in text
    assert "No champion yet." in text
    # The text equivalent lists every stage and tie.
    listed = text[text.index("The bracket as a list") :]
    for name in ("Quarter-finals", "Semi-finals", "Final"):
        assert f"<h3>{name}</h3>" in listed
    assert '<del><a href="/bots/s4">s4</a></del> (seed 4, 1.0 points, score 161), out' in listed
    assert "(playing: 1 of 2 games)" in listed
    data = rounds_site.client.get(f"/api/tournaments/{KNOCKOUT_ID}").json()
    assert data["swiss"] is None and data["format"] == "knockout"
    k = data["knockout"]
    assert (k["sets"], k["max_sets"], k["table_size"]) == (1, 2, 2)
    assert [tie["decided_by"] for tie in k["stages"][0]["ties"]] == ["bye", "points"] * 2


def test_a_finished_knockout_names_its_champion_at_the_right(rounds_site: RoundSite) -> None:
    text = rounds_site.client.get(f"/tournaments/{FINISHED_ID}").text
    assert 'Champion: <strong><a href="/bots/top">top</a></strong>.' in text
    root = ET.fromstring(_svg(text))
    champion = [g for g in root.iter("{http://www.w3.org/2000/svg}g")][-1]
    assert [t.text for t in champion.iter("{http://www.w3.org/2000/svg}text")] == ["top"]
    data = rounds_site.client.get(f"/api/tournaments/{FINISHED_ID}").json()
    assert data["knockout"]["champion"] == "top"
    assert data["knockout"]["final_order"] == ["top", "low"]
    # The final went level on points and score: decided on seed, and the page says so.
    assert data["knockout"]["stages"][1]["ties"][0]["decided_by"] == "seed"
    assert "on seed, level after 1 set" in text


@pytest.mark.parametrize("tournament", [SWISS_ID, KNOCKOUT_ID])
def test_every_rounds_json_key_is_documented(rounds_site: RoundSite, tournament: str) -> None:
    documented = set(re.findall(r"`([a-z_]+)`", DOCS.read_text(encoding="utf-8")))
    answer = rounds_site.client.get(f"/api/tournaments/{tournament}").json()
    assert sorted(json_keys(answer) - documented) == []


def test_an_anonymous_course_s_bracket_shows_aliases_only(course_site: CourseSite) -> None:
    storage = course_site.storage
    storage.register_bot(course_site.courses.codes[ANONYMOUS], LONG_HIDDEN, "owner-quux3")
    zelda, yorick = ANONYMOUS_BOTS[0][0], ANONYMOUS_BOTS[1][0]
    entrants = (zelda, yorick, LONG_HIDDEN)
    ko = round_tournament(
        "secret-ko",
        entrants,
        format="knockout",
        name=f"Knockout of {zelda}",
        course=ANONYMOUS,
        knockout={"sets": 1, "max_sets": 1},
    )
    storage.add_tournament(ko)
    store_round(storage, ko, 0, [(yorick, LONG_HIDDEN)], {(yorick, LONG_HIDDEN): [LONG_HIDDEN] * 2})
    for path in ("/tournaments/secret-ko", "/api/tournaments/secret-ko"):
        text = course_site.client.get(path).text
        leaks = [name for name in (*HIDDEN, LONG_HIDDEN, LONG_HIDDEN[:12]) if name in text]
        assert leaks == [], f"{path} shows {leaks}"
    svg = _svg(course_site.client.get("/tournaments/secret-ko").text)
    shown = {
        t.text
        for t in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}text")
        if "entrant" in (t.get("class") or "")
    }
    assert {"Bot 1", "Bot 2", "Bot 3"} <= shown

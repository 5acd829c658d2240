"""A comparison's tournament page: its plan, verdict, paired estimate, LLR and set scores.

The page reads the plan and the state the referee stored after the last game (the tournament
row's ``plan`` and ``verdict``), so what it shows is what ``compare`` and the admin API show.
"""

from __future__ import annotations

from pathlib import Path

from starlette.testclient import TestClient

from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import make_game
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.tournaments.lifecycle import compare
from domino_arena.server.tournaments.lifecycle.compare import SetTally, SprtPlan, new_comparison
from tests.fakes.web import web_app

BOTS = ("new", "old", "c", "d")


def test_the_page_shows_the_verdict_the_estimate_and_the_llr(tmp_path: Path) -> None:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'compare.db'}")
    storage.open()
    for bot in BOTS:
        storage.add_bot(bot)
    t = new_comparison(
        game=make_game("moon"),
        candidate="new",
        baseline="old",
        opponents=("c", "d"),
        known_bots=BOTS,
        max_sets=100,
        sprt=SprtPlan(elo0=0, elo1=20),
        time_control=TimeControl.from_ms(1000, 10_000, 50),
        fault_policy=FaultPolicy.SUBSTITUTE,
        seed=5,
    )
    storage.add_tournament(t)
    with TestClient(web_app(storage)) as client:
        fresh = client.get(f"/api/tournaments/{t.id}").json()
        assert fresh["kind"] == "compare"
        assert fresh["comparison"]["verdict"] == "running"
        assert fresh["comparison"]["sets"] == 0
        assert fresh["comparison"]["sprt"]["upper"] > 0 > fresh["comparison"]["sprt"]["lower"]

        plan = compare.plan_of(t)
        scores = (0.5, 0.75, 0.5, 0.625, 0.25, 0.75, 0.5, 0.875)
        state = compare.verdict_of(plan, 3, SetTally(scores, 1, 50), over=False)
        storage.set_tournament_verdict(t.id, state)
        page = client.get(f"/api/tournaments/{t.id}").json()["comparison"]
        assert (page["candidate"], page["baseline"], page["opponents"]) == (
            "new",
            "old",
            ["c", "d"],
        )
        assert (page["sets"], page["excluded_sets"]) == (8, 1)
        assert page["estimate"]["elo"] == state["estimate"]["elo"]
        assert page["sprt"]["llr"] == state["sprt"]["llr"]
        assert sum(count for _, count in page["distribution"]) == 8

        html = client.get(f"/tournaments/{t.id}").text
        assert "Comparison:" in html and "against c, d" in html
        assert 'data-verdict="running"' in html
        assert "8 (1 left out: a game voided or aborted)" in html
        assert f"{state['estimate']['elo']:+.1f}" in html
        assert f"{state['sprt']['llr']:+.2f} [{state['sprt']['lower']:+.2f}" in html
    storage.close()

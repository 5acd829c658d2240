"""A match's analysis on the pages (server/web/analysis_views.py, analysis_pages.py, my_bot.py):
the strip under the replay's timeline with a link and a title per decision, the marks, the
decision at the shown step (page and fragment), the seat figures; a bot's loss per decision by
game, phase and version; nothing of it where there is no analysis or on the live pages; every
text escaped; an anonymous course's names scrubbed from it.

The analyses are real (server/analysis/match.py over the stored records, a small budget:
tests/fakes/analysed.py) or, for the escaping and pure drawing, built by hand."""

from __future__ import annotations

import dataclasses
import datetime as dt
import html
import re
from pathlib import Path
from typing import Final

import pytest
from starlette.testclient import TestClient

from domino_arena.server.analysis.report import (
    ActionValue,
    Decision,
    MatchAnalysis,
    SeatSummary,
    Severity,
)
from domino_arena.server.store import analysis_jobs
from domino_arena.server.store.analyses import (
    BotAnalysis,
    analysis_progress,
    bot_analyses,
    save_analysis,
)
from domino_arena.server.web.analysis_charts import LossPoint, loss_chart
from domino_arena.server.web.analysis_pages import summary_of
from domino_arena.server.web.analysis_views import (
    BAR_MAX,
    MINUS,
    ROW,
    loss_text,
    strip,
)
from domino_arena.server.web.app import create_app
from domino_arena.server.web.live import LiveSource
from domino_arena.server.web.my_bot import MISTAKES_SHOWN, SEVERE
from domino_arena.server.web.timeline import timeline
from tests.fakes.admin_server import AdminServer, served_over, stored_match
from tests.fakes.analysed import analyse_stored, lost_by
from tests.fakes.course_site import ANONYMOUS, HIDDEN, PUBLIC, CourseSite, sign_in
from tests.fakes.live_match import MATCH_ID, start
from tests.fakes.web import (
    ESCAPED,
    FORFEIT_ID,
    HOSTILE,
    TOURNAMENT_ID,
    Site,
    a_tournament,
    match_id_of,
    web_app,
)

ANALYSED: Final = match_id_of("passing", 0)
PLAIN: Final = match_id_of("passing", 1)
BAR: Final = re.compile(
    r'<a href="\?step=(\d+)" class="an-bar[^"]*" data-step="\1"[^>]*><title>([^<]*)</title>'
)


def decision(step: int, seat: int, **changes: object) -> Decision:
    made = Decision(
        step=step,
        seat=seat,
        hand=1,
        phase="play",
        chosen="6-4",
        best="5-5",
        loss_points=3.24,
        loss_win=0.121,
        stderr=0.1,
        samples=64,
        severity=Severity.BLUNDER,
        values=(ActionValue("6-4", -1.0, 0.4), ActionValue("5-5", 2.24, 0.521)),
    )
    return dataclasses.replace(made, **changes)  # type: ignore[arg-type]


def summary(seat: int, name: str) -> SeatSummary:
    return SeatSummary(
        seat=seat,
        name=name,
        decisions=2,
        mean_loss_points=1.62,
        mean_loss_win=0.06,
        accuracy=71.0,
        severities={"blunder": 1},
        by_phase={"play": 1.62},
    )


def by_hand(match_id: str, seat: int, name: str, decisions: tuple[Decision, ...]) -> MatchAnalysis:
    return MatchAnalysis(
        match_id=match_id,
        game="passing",
        seats=(seat,),
        precision=0.05,
        seed=0,
        decisions=decisions,
        summaries=(summary(seat, name),),
        pars=(),
    )


@pytest.fixture(scope="module")
def analysed(site: Site) -> MatchAnalysis:
    """``passing-0`` analysed for both seats, for real."""
    return analyse_stored(site.storage, ANALYSED)


# -- pure -----------------------------------------------------------------------------------


def test_a_decision_says_what_was_played_what_was_better_and_the_cost() -> None:
    assert loss_text(decision(3, 0)) == (
        f"chose 6-4; 5-5 was better: {MINUS}3.2 points, {MINUS}12% win"
    )
    best = decision(3, 0, best="6-4", loss_points=0.0, loss_win=0.0, severity=None)
    assert loss_text(best) == "chose 6-4, the best"


def test_the_strip_puts_each_decision_on_its_timeline_step_as_tall_as_its_loss() -> None:
    tl = timeline(20, [0], [], 0)
    small = decision(9, 1, loss_points=0.81, severity=Severity.INACCURACY)
    drawn = strip(by_hand("m", 1, "bob", (decision(4, 1), small)), tl, ["alice", "bob"])
    (row,) = drawn["rows"]
    assert row["y"] == tl["height"] and drawn["height"] == ROW
    worst, light = row["bars"]
    assert (worst["x"], light["x"]) == (tl["pad"] + 4 * tl["unit"], tl["pad"] + 9 * tl["unit"])
    assert worst["height"] == BAR_MAX and 2 < light["height"] < BAR_MAX
    assert (worst["severe"], light["severe"]) == (True, False)
    assert worst["title"] == (
        f"Step 4, bob (seat 1), play: chose 6-4; 5-5 was better: {MINUS}3.2 points, "
        f"{MINUS}12% win (blunder)"
    )
    assert [m["step"] for m in drawn["mistakes"]] == [4, 9]


def test_the_bot_summary_weighs_each_version_s_decisions_and_orders_phases() -> None:
    def game(n: int, version: int | None, loss: float, decisions: int) -> BotAnalysis:
        figures = dataclasses.replace(
            summary(0, "ada"),
            decisions=decisions,
            mean_loss_points=loss,
            by_phase={"play": loss, "bid": 2 * loss},
        )
        played = dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(days=n)
        return BotAnalysis(f"m{n}", "moon", played, version, 0, figures, n % 2 == 0)

    newest_first = [
        game(4, 2, 0.5, 30),
        game(3, 2, 1.0, 10),
        game(2, 1, 2.0, 20),
        game(1, None, 4.0, 5),
    ]
    (moon,) = summary_of("ada", newest_first)
    assert [(v["version"], v["games"], v["decisions"]) for v in moon["versions"]] == [
        ("unversioned", 1, 5),
        ("v1", 1, 20),
        ("v2", 2, 40),
    ]
    assert moon["versions"][2]["mean_loss"] == pytest.approx((0.5 * 30 + 1.0 * 10) / 40)
    assert [p["phase"] for p in moon["phases"]] == ["bid", "play"]
    assert [p["match_id"] for p in moon["points"]] == ["m1", "m2", "m3", "m4"]
    assert moon["svg"].count("<circle") == 4 and "v2: 0.50 points lost" in moon["svg"]


def test_the_loss_chart_escapes_its_labels_and_says_when_it_is_empty() -> None:
    svg = loss_chart([LossPoint(HOSTILE, HOSTILE, 1.0)], label=HOSTILE)
    assert HOSTILE not in svg and ESCAPED in svg
    assert "no analysed games yet" in loss_chart([], label="x")


# -- the replay viewer ----------------------------------------------------------------------


def test_the_replay_draws_a_linked_titled_bar_for_every_analysed_decision(
    site: Site, analysed: MatchAnalysis
) -> None:
    page = site.client.get(f"/matches/{ANALYSED}")
    assert page.status_code == 200
    bars = BAR.findall(page.text)
    assert len(bars) == len(analysed.decisions) > 0
    expected = {(d.step, loss_text(d)) for d in analysed.decisions}
    assert {
        (int(step), html.unescape(title).split(": ", 1)[1].rsplit(" (", 1)[0])
        for step, title in bars
    } == expected
    marked = [d for d in analysed.decisions if d.severity is not None]
    assert marked, "random bots make mistakes the analysis marks"
    listed = re.findall(r'<li class="sev-(\w+)" data-step="(\d+)"><a href="\?step=\2">', page.text)
    assert [(s, int(n)) for s, n in listed] == [
        (d.severity.value, d.step)
        for d in sorted(marked, key=lambda d: (d.step, d.seat))
        if d.severity is not None
    ]
    assert page.text.count('class="analysis-figures"') == 2
    for s in analysed.summaries:
        assert f"accuracy {s.accuracy:.0f}</span>" in page.text


def test_the_shown_step_says_its_decision_in_the_page_and_the_fragment(
    site: Site, analysed: MatchAnalysis
) -> None:
    worst = max(analysed.decisions, key=lambda d: d.loss_points)
    line = f"{loss_text(worst)}"
    for path in (
        f"/matches/{ANALYSED}?step={worst.step}",
        f"/matches/{ANALYSED}/table?step={worst.step}",
    ):
        text = html.unescape(site.client.get(path).text)
        (here,) = re.findall(r'<p class="an-here[^"]*">([^\n]*)</p>', text)
        assert "Decision here:" in here and line in here, path
    data = site.client.get(f"/api/matches/{ANALYSED}?step={worst.step}").json()
    assert data["analysis"]["here"][0]["text"] == line


def test_a_match_with_no_analysis_shows_none_of_it(site: Site, analysed: MatchAnalysis) -> None:
    page = site.client.get(f"/matches/{PLAIN}?step=3").text
    for mark in ("an-bar", "analysis-figures", "an-here", "analysis-marks", "<th>Analysis</th>"):
        assert mark not in page
    assert "analysis" not in site.client.get(f"/api/matches/{PLAIN}").json()


def test_the_analysis_s_text_is_escaped(site: Site) -> None:
    hostile = by_hand(FORFEIT_ID, 0, "alice", (decision(2, 0, best=HOSTILE),))
    save_analysis(site.storage.engine, hostile)
    for path in (f"/matches/{FORFEIT_ID}?step=2", f"/matches/{FORFEIT_ID}/table?step=2"):
        text = site.client.get(path).text
        assert HOSTILE not in text and f"; {ESCAPED} was better" in text, path


def test_the_bot_page_shows_its_loss_only_when_it_has_analysed_games(
    site: Site, analysed: MatchAnalysis
) -> None:
    alice = site.client.get("/bots/alice").text
    assert 'id="analysis"' in alice and 'class="rating-chart loss-chart"' in alice
    (row,) = re.findall(r'<tr data-version="unversioned">.*?</tr>', alice)
    games = bot_analyses(site.storage.engine, "alice")  # this match's, maybe the hostile one's
    assert ANALYSED in {g.match_id for g in games}
    decisions = sum(g.summary.decisions for g in games)
    mean = sum(g.summary.mean_loss_points * g.summary.decisions for g in games) / decisions
    assert f"<td>{len(games)}</td><td>{decisions}</td>" in row
    assert f'<td class="mean-loss">{mean:.2f}</td>' in row
    assert '<tr data-phase="play">' in alice
    assert 'id="analysis"' not in site.client.get("/bots/carol").text
    assert site.client.get("/api/bots/carol").json()["analysis"] == []


# -- the live pages ---------------------------------------------------------------------------


def test_the_live_pages_never_show_an_analysis(tmp_path: Path) -> None:
    with served_over(tmp_path / "live.db") as referee:
        _live_pages_without_analysis(referee)


def _live_pages_without_analysis(referee: AdminServer) -> None:
    storage = referee.arena.storage
    storage.save_match(stored_match("stored", ("alice", "bob"), 0))
    save_analysis(storage.engine, by_hand("stored", 0, "alice", (decision(2, 0),)))
    start(referee)
    with TestClient(create_app(storage, live=LiveSource(referee.address))) as client:
        for path in (
            "/live/stored",
            f"/live/{MATCH_ID}",
            "/api/live/stored",
            f"/api/live/{MATCH_ID}",
        ):
            answer = client.get(path)
            assert answer.status_code == 200, path
            for mark in ("an-bar", "an-here", "analysis", "5-5 was better"):
                assert mark not in answer.text, (path, mark)


# -- My bot and an anonymous course ---------------------------------------------------------


def test_my_bot_lists_its_mistakes_in_a_lost_game_each_linking_its_step(
    course_site: CourseSite,
) -> None:
    storage, courses = course_site.storage, course_site.courses
    match_id, seat = lost_by(storage, "ada-bot", courses.matches[PUBLIC])
    analysis = analyse_stored(storage, match_id, seats=[seat])
    marked = sorted((d for d in analysis.decisions if d.severity in SEVERE), key=lambda d: d.step)
    assert marked, "a random bot that lost made mistakes the analysis marks"
    client = TestClient(web_app(storage), follow_redirects=False)
    sign_in(client, PUBLIC, "me", bot="ada-bot", token=courses.tokens["ada-bot"])
    data = client.get(f"/api/courses/{PUBLIC}/me").json()
    (game,) = [g for g in data["lost_games"] if g["match_id"] == match_id]
    assert [(m["step"], m["text"]) for m in game["mistakes"]] == [
        (d.step, loss_text(d)) for d in marked[:MISTAKES_SHOWN]
    ]
    assert game["more"] == max(len(marked) - MISTAKES_SHOWN, 0)
    page = client.get(f"/courses/{PUBLIC}/me").text
    for d in marked[:MISTAKES_SHOWN]:
        assert f'<a class="step" href="/matches/{match_id}?step={d.step}#replay">' in page
    # bea-bot has no analysed game: no section.
    other = TestClient(web_app(storage), follow_redirects=False)
    sign_in(other, PUBLIC, "me", bot="bea-bot", token=courses.tokens["bea-bot"])
    assert 'id="mistakes"' not in other.get(f"/courses/{PUBLIC}/me").text


def test_an_anonymous_course_s_names_stay_hidden_in_its_analysis(
    course_site: CourseSite,
) -> None:
    match_id = course_site.courses.matches[ANONYMOUS][0]
    analyse_stored(course_site.storage, match_id)
    page = course_site.client.get(f"/matches/{match_id}?step=2").text
    assert "an-bar" in page
    for name in HIDDEN:
        assert name not in page


def test_a_tournament_shows_how_far_its_analysis_has_got(
    site: Site, analysed: MatchAnalysis
) -> None:
    engine = site.storage.engine
    analysed_now, total = analysis_progress(engine, TOURNAMENT_ID)
    assert analysed_now == 1 and total > 1
    page = site.client.get(f"/tournaments/{TOURNAMENT_ID}").text
    assert f"Analysis of its decisions: 1 of {total} matches analysed</p>" in page

    queued = analysis_jobs.queue_tournament(engine, TOURNAMENT_ID, precision=1.0)
    assert queued == total - 1
    page = site.client.get(f"/tournaments/{TOURNAMENT_ID}").text
    assert f"1 of {total} matches analysed; {queued} waiting, 0 running</p>" in page
    data = site.client.get(f"/api/tournaments/{TOURNAMENT_ID}").json()
    assert data["analysis_progress"] == {
        "analysed": 1,
        "total": total,
        "waiting": queued,
        "running": 0,
        "failed": 0,
    }


def test_a_tournament_never_analysed_says_nothing_of_it(site: Site) -> None:
    plain = dataclasses.replace(a_tournament("Plain cup"), id="plain-cup")
    site.storage.add_tournament(plain)
    assert site.client.get("/api/tournaments/plain-cup").json()["analysis_progress"] is None
    page = site.client.get("/tournaments/plain-cup").text
    assert "Plain cup" in page and "analysis-progress" not in page

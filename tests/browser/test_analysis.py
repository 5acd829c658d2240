"""A match's analysis in Chromium: a student signed in to "My bot" sees the mistakes of their
bot in a game it lost (a real analysis, tests/fakes/analysed.py), follows one to the replay at
its step, where the decision's line says what it played and what was better; clicking a mark
of the strip under the timeline moves the table to that step in place (static/replay.js), and
the step's line follows. The pages fit a phone and pass axe, light and dark (looks.py)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from domino_arena.server.analysis.report import MatchAnalysis
from domino_arena.server.web.analysis_views import loss_text
from domino_arena.server.web.my_bot import MISTAKES_SHOWN, SEVERE
from tests.browser.conftest import CourseServer
from tests.browser.looks import look_at
from tests.browser.student import sign_in
from tests.fakes.analysed import analyse_stored, lost_by
from tests.fakes.course_site import PUBLIC


@pytest.fixture(scope="module")
def lost(course_server: CourseServer) -> MatchAnalysis:
    """ada-bot's seat of a game it lost, analysed and stored before any page is asked for."""
    storage = course_server.storage
    match_id, seat = lost_by(storage, "ada-bot", course_server.courses.matches[PUBLIC])
    return analyse_stored(storage, match_id, seats=[seat])


def test_a_student_follows_a_mistake_to_its_step_and_the_marks_move_the_table(
    course_server: CourseServer, lost: MatchAnalysis, page: Page
) -> None:
    marked = sorted((d for d in lost.decisions if d.severity in SEVERE), key=lambda d: d.step)
    assert len(marked) >= 2, "a random bot that lost made mistakes the analysis marks"
    sign_in(page, course_server, "ada-bot")
    game = page.locator(f'#mistakes li[data-match="{lost.match_id}"]')
    expect(game).to_be_visible()
    steps = game.locator("a.step")
    expect(steps).to_have_count(min(len(marked), MISTAKES_SHOWN))
    first = marked[0]
    expect(game.locator(f'li[data-step="{first.step}"]')).to_contain_text(loss_text(first))

    steps.first.click()
    replay = page.locator("#replay")
    expect(replay).to_have_attribute("data-step", str(first.step))
    expect(page.locator(".an-here")).to_contain_text(loss_text(first))
    expect(page.locator(f'a.an-bar[data-step="{first.step}"]')).to_have_count(1)

    other = marked[-1]  # beyond the list maybe, on the strip always
    mark = page.locator(f'#timeline a.an-bar[data-step="{other.step}"]')
    expect(mark.locator("title")).to_contain_text(loss_text(other))
    mark.scroll_into_view_if_needed()
    mark.click()
    expect(replay).to_have_attribute("data-step", str(other.step))
    expect(page.locator("#replay-title")).to_contain_text(f"step {other.step} of")
    expect(page.locator(".an-here")).to_contain_text(loss_text(other))
    assert page.url.endswith(f"?step={other.step}")  # followed in place, the URL kept in step
    wrong = look_at(page, "match-analysis")
    assert wrong == [], "\n\n".join(wrong)


def test_the_student_s_page_with_mistakes_fits_a_phone_and_passes_axe(
    course_server: CourseServer, lost: MatchAnalysis, page: Page
) -> None:
    sign_in(page, course_server, "ada-bot")
    expect(page.locator("#mistakes")).to_be_visible()
    wrong = look_at(page, "course-me-mistakes")
    assert wrong == [], "\n\n".join(wrong)


def test_the_bot_page_s_analysis_fits_a_phone_and_passes_axe(
    course_server: CourseServer, lost: MatchAnalysis, page: Page
) -> None:
    page.goto(f"{course_server.url}/bots/ada-bot")
    expect(page.locator("#analysis figure.loss-chart svg")).to_be_visible()
    expect(page.locator("table.analysis-versions tbody tr")).to_have_count(1)
    wrong = look_at(page, "bot-analysis")
    assert wrong == [], "\n\n".join(wrong)

"""A student signs in to "My bot" in Chromium and sees their bot's rating (the leaderboard's)
and the crash of its ``choose``, with the exception's text, one row for all its crashes."""

from __future__ import annotations

from typing import Final

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import CourseServer
from tests.browser.harness import artifacts_dir
from tests.browser.student import sign_in
from tests.fakes.bots import CRASH_MESSAGE
from tests.fakes.course_site import PUBLIC, add_crashes

CRASHES: Final = 4
"""Games in which ada-bot crashes (3 bot errors each)."""


@pytest.fixture(scope="module")
def crashed(course_server: CourseServer) -> CourseServer:
    """The course site with ada-bot's crashes stored before any page is asked for."""
    add_crashes(course_server.storage, "ada-bot", "bea-bot", CRASHES)
    return course_server


def test_a_student_sees_the_rating_and_the_crash_of_their_bot(
    crashed: CourseServer, page: Page
) -> None:
    board = page.request.get(f"{crashed.url}/api/courses/{PUBLIC}").json()["boards"][0]
    rows = board["official"]["rows"]
    (row,) = [r for r in rows if r["bot"] == "ada-bot"]

    sign_in(page, crashed, "ada-bot")
    standing = page.locator("table.standing tbody tr")
    expect(standing).to_have_count(1)
    expect(standing.locator(".rating")).to_have_text(row["text"])  # "1620", or "≥ 1400"
    ranked = sum(1 for r in rows if r["rank"] is not None)
    rank = "not ranked" if row["rank"] is None else f"{row['rank']} of {ranked}"
    expect(standing.locator(".rank")).to_have_text(rank)
    expect(page.locator("figure.rating-chart svg")).to_be_visible()

    faults = page.locator("table.faults tbody tr")
    expect(faults).to_have_count(1)
    expect(faults.locator(".reason")).to_have_text(f"bot error: ValueError: {CRASH_MESSAGE}")
    expect(faults.locator(".count")).to_have_text(str(3 * CRASHES))
    page.screenshot(path=artifacts_dir() / "course-my-bot.png", full_page=True)

    faults.locator("a.step").first.click()
    expect(page.locator("#replay")).to_be_visible()
    assert "?step=" in page.url
    expect(page.locator("table.faults")).to_contain_text(f"ValueError: {CRASH_MESSAGE}")

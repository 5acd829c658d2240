"""A student's steps in the browser that more than one browser test takes."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.browser.conftest import CourseServer
from tests.fakes.course_site import PUBLIC


def sign_in(page: Page, server: CourseServer, bot: str) -> None:
    """The student's sign-in to their bot's page of the public course (today's: bot name and
    its token), the one step a change of sign-in touches."""
    page.goto(f"{server.url}/courses/{PUBLIC}/me")
    page.get_by_label("Bot name").fill(bot)
    page.get_by_label("Token").fill(server.courses.tokens[bot])
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("h1")).to_have_text(f"My bot: {bot}")

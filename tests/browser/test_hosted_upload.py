"""A student uploads a hosted bot through the real form in Chromium, on a phone's width, and
sees the new version listed (docs/web.md: hosted bots)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import CourseServer
from tests.browser.harness import PageWatch, artifacts_dir
from tests.fakes.course_site import PUBLIC

PHONE: Final = {"width": 360, "height": 740}
BOT_SOURCE: Final = b'''"""A hosted bot: the first legal action."""
from domino_arena.sdk.bot import Bot


class FirstBot(Bot):
    def choose(self, observation):
        return observation.legal_actions[0]
'''


@pytest.fixture
def phone(browser: Browser) -> Iterator[Page]:
    """A page 360 px wide; the test fails if anything went wrong in it."""
    context = browser.new_context(viewport=PHONE)  # type: ignore[arg-type]
    page = context.new_page()
    watch = PageWatch(page)
    try:
        yield page
    finally:
        context.close()
    assert watch.problems == [], "\n".join(watch.problems)


def fits(page: Page, selector: str) -> None:
    """``selector``'s box lies within the viewport's width, and the page does not scroll
    sideways."""
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (selector, box)
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= PHONE["width"], f"the page is {wide} px wide at {PHONE['width']} px"


def test_an_uploaded_bot_is_listed_on_a_phone(course_server: CourseServer, phone: Page) -> None:
    page = phone
    page.goto(f"{course_server.url}/courses/{PUBLIC}/me")
    page.get_by_label("Bot name").fill("bea-bot")
    page.get_by_label("Token").fill(course_server.courses.tokens["bea-bot"])
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("h1")).to_have_text("My bot: bea-bot")
    expect(page.locator("ul.versions li")).to_have_text(
        "No version yet: upload one above (or run domino-arena bot submit bea-bot mybot.py)."
    )
    fits(page, "form.upload-form")

    page.get_by_label("Bot file").set_input_files(
        {"name": "firstbot.py", "mimeType": "text/x-python", "buffer": BOT_SOURCE}
    )
    page.get_by_label("Three-Player Moon").uncheck()
    page.get_by_role("button", name="Upload").click()

    version = page.locator("ul.versions li[data-version='1']")
    expect(version).to_be_visible()
    expect(version.locator(".badge")).to_have_text("being checked")
    expect(version).to_contain_text("python firstbot.py:FirstBot")
    expect(page.locator(".notice.checking")).to_contain_text("Version 1 is being checked")
    assert page.url.endswith("/me#versions")
    fits(page, "ul.versions")
    fits(page, "form.upload-form")
    page.screenshot(path=artifacts_dir() / "course-my-bot-upload.png", full_page=True)

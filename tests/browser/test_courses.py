"""The course forms in Chromium: a student registers a bot with an invite code and signs in to
its page with the token shown once; the organizer signs in, sees the bot, disables and enables
its owner and signs out."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from domino_arena.server.store.bots import BotCheck
from tests.browser.conftest import CourseServer
from tests.browser.harness import artifacts_dir
from tests.fakes.course_site import PUBLIC, PUBLIC_BOTS


def test_a_student_registers_and_the_organizer_sees_the_bot(
    course_server: CourseServer, page: Page
) -> None:
    base = f"{course_server.url}/courses/{PUBLIC}"
    page.goto(base + "/register")
    page.get_by_label("Invite code").fill(course_server.courses.codes[PUBLIC])
    page.get_by_label("Bot name").fill("web-bot")
    page.get_by_label("Owner (your student id or address)").fill("web-student")
    page.get_by_role("button", name="Register").click()
    expect(page.locator(".issued")).to_contain_text("Copy it now, it is shown once.")
    token = page.locator("#token").inner_text().strip()
    assert course_server.storage.check_bot("web-bot", token) == BotCheck.OK
    owner_token = page.locator("#owner-token").inner_text().strip()
    assert course_server.storage.owner_of_token(owner_token) is not None
    page.screenshot(path=artifacts_dir() / "course-registered.png", full_page=True)

    page.goto(base + "/me")
    page.get_by_label("Bot name").fill("web-bot")
    page.get_by_label("Token").fill(token)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("h1")).to_have_text("My bot: web-bot")
    expect(page.locator("table.faults")).to_contain_text("No faults charged to this bot.")

    page.goto(base + "/organizer")
    page.get_by_label("Organizer token").fill(course_server.courses.organizer[PUBLIC])
    page.get_by_role("button", name="Sign in").click()
    bots = page.locator("table.course-bots")
    expect(bots).to_contain_text("web-bot")
    expect(bots).to_contain_text("web-student")
    expect(page.locator(".connected-note")).to_have_text("not connected to a referee")
    assert course_server.courses.codes[PUBLIC] not in page.content()
    page.screenshot(path=artifacts_dir() / "course-organizer.png", full_page=True)

    # The organizer disables the student (no referee here: stored, refused at the next Hello).
    row = page.locator("table.owners tr", has_text="web-student")
    row.get_by_role("button", name="Disable").click()
    expect(row.locator(".owner-state")).to_have_text("disabled")
    expect(page.locator(".owner-note")).to_contain_text("refused at their next Hello")
    assert course_server.storage.check_bot("web-bot", token) == BotCheck.OWNER_DISABLED
    row.get_by_role("button", name="Enable").click()
    expect(row.locator(".owner-state")).to_have_text("enabled")
    assert course_server.storage.check_bot("web-bot", token) == BotCheck.OK
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("Organizer token")).to_be_visible()


def test_the_course_pages_load_in_the_browser(course_server: CourseServer, page: Page) -> None:
    for path, name in (
        ("/courses", "courses"),
        (f"/courses/{PUBLIC}", "course"),
        (f"/courses/{PUBLIC}/tournaments", "course-tournaments"),
    ):
        response = page.goto(course_server.url + path)
        assert response is not None and response.status == 200
        expect(page.locator("main h1")).to_be_visible()
        page.screenshot(path=artifacts_dir() / f"{name}.png", full_page=True)


def test_a_course_bot_s_page_leads_to_its_course_and_all_its_matches(
    course_server: CourseServer, page: Page
) -> None:
    """The bot's page links its course and its matches, which list the course's games."""
    ada = PUBLIC_BOTS[0][0]
    page.goto(f"{course_server.url}/bots/{ada}")
    page.get_by_role("link", name="All of its matches").click()
    expect(page).to_have_url(f"{course_server.url}/matches?bot={ada}")
    rows = page.locator("table.matches tbody tr")
    expect(rows).to_have_count(4)
    expect(rows.first).to_contain_text(ada)
    page.screenshot(path=artifacts_dir() / "course-bot-matches.png", full_page=True)
    page.locator(".course-link").get_by_role("link", name="Intro to game bots").click()
    expect(page).to_have_url(f"{course_server.url}/courses/{PUBLIC}")
    expect(page.locator("main h1")).to_contain_text("Intro to game bots")

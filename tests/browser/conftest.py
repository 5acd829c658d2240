"""The browser tests' fixtures: Chromium, the web app over the filled storage served by uvicorn,
and a page that fails its test on any console error, page error, failed request or dialog.

Reusable pieces: :func:`browser` (one Chromium per test module), :func:`page` (a fresh
1200x800 context per test, watched), and :func:`tests.browser.harness.serve`, which serves any
ASGI app (``live_site`` is it over ``tests/fakes/web.py``'s storage, once per module).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from domino_arena.server.ladder.ratings_store import RatedStorage
from tests.browser.harness import VIEWPORT, PageWatch, launch, require_chromium, serve
from tests.fakes.course_site import Courses, filled_courses
from tests.fakes.web import Site, site, web_app  # noqa: F401


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's headless Chromium (skips, or fails under CI, when it is missing).

    Per module, not per session: Playwright's sync API keeps an asyncio loop running in the
    thread while it is started, and every other test in the same worker that calls
    ``asyncio.run`` would fail; pytest tears a module's fixtures down before the next module's
    tests run."""
    executable = require_chromium()
    with sync_playwright() as playwright:
        chromium = launch(playwright, executable)
        yield chromium
        chromium.close()


@dataclass(frozen=True)
class LiveSite:
    """The filled storage (:class:`Site`) and the base URL of the web app serving it."""

    site: Site
    url: str


@pytest.fixture(scope="module")
def live_site(site: Site) -> Iterator[LiveSite]:  # noqa: F811 - the fixture of that name
    """The web app over the module's filled storage, served by uvicorn on a loopback port."""
    with serve(web_app(site.storage)) as url:
        yield LiveSite(site, url)


@dataclass(frozen=True)
class CourseServer:
    """A storage filled with courses (tests/fakes/course_site.py), what was made, and the base
    URL of the web app serving it."""

    storage: RatedStorage
    courses: Courses
    url: str


@pytest.fixture(scope="module")
def course_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CourseServer]:
    """The web app over a storage filled by ``fill_courses``, served once per test module."""
    folder = tmp_path_factory.mktemp("browser-courses")
    with filled_courses(folder) as (storage, made), serve(web_app(storage)) as url:
        yield CourseServer(storage, made, url)


@dataclass(frozen=True)
class Watched:
    """A browser page and the watch on it."""

    page: Page
    watch: PageWatch


@pytest.fixture
def watched(browser: Browser) -> Iterator[Watched]:
    """A page in a fresh context (1200x800); the test fails if anything went wrong in it."""
    context = browser.new_context(viewport=VIEWPORT)  # type: ignore[arg-type]
    page = context.new_page()
    watch = PageWatch(page)
    try:
        yield Watched(page, watch)
    finally:
        context.close()
    assert watch.problems == [], "\n".join(watch.problems)
    assert watch.dialogs == []


@pytest.fixture
def page(watched: Watched) -> Page:
    """The watched page alone (see :func:`watched`)."""
    return watched.page

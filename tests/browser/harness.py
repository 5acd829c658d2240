"""The pieces of a real-browser test: a uvicorn server for any ASGI app, Debian's Chromium driven
by Playwright, and a watch on a page that collects everything that went wrong in it.

Playwright is told to use ``/usr/bin/chromium`` (``apt-get install chromium``; ``.ci/run``
installs it): its own browser download is never used. The server listens on a socket bound
before its thread starts, so a browser may connect at once: the connection waits in the
socket's backlog until uvicorn accepts it, and no test waits for the server to come up.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

import pytest
import uvicorn
from playwright.sync_api import (
    Browser,
    ConsoleMessage,
    Dialog,
    Error,
    Page,
    Playwright,
    Request,
    Response,
)
from starlette.types import ASGIApp

CHROMIUM: Final = Path("/usr/bin/chromium")
"""Debian's Chromium (the package ``chromium``)."""
REQUIRED_ENV: Final = "DOMINO_ARENA_BROWSER_TESTS"
"""Set to ``required`` (CI does) to fail, not skip, when Chromium is missing."""
ARTIFACTS_ENV: Final = "DOMINO_ARENA_ARTIFACTS"
"""The folder the screenshots go to (default :data:`DEFAULT_ARTIFACTS`)."""
DEFAULT_ARTIFACTS: Final = Path(__file__).resolve().parents[2] / "build/artifacts/screenshots"
VIEWPORT: Final = {"width": 1200, "height": 800}
SHUTDOWN_SECONDS: Final = 10.0


def require_chromium() -> Path:
    """Return Chromium's path; skip the test when it is missing, or fail when it is required."""
    if CHROMIUM.exists():
        return CHROMIUM
    why = f"{CHROMIUM} is missing (apt-get install chromium)"
    if os.environ.get(REQUIRED_ENV) == "required":
        pytest.fail(f"{REQUIRED_ENV}=required but {why}", pytrace=False)
    pytest.skip(why)


def launch(playwright: Playwright, executable: Path = CHROMIUM) -> Browser:
    """A headless Chromium (Debian's, never a downloaded one)."""
    return playwright.chromium.launch(executable_path=str(executable), headless=True)


@contextmanager
def serve(app: ASGIApp) -> Iterator[str]:
    """Serve ``app`` with uvicorn on a free loopback port in a thread; yield its base URL
    (``http://127.0.0.1:PORT``), and stop the server when done."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    port = listener.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [listener]}, name="uvicorn", daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(SHUTDOWN_SECONDS)
        listener.close()
        if thread.is_alive():  # pragma: no cover - a hung server fails the module
            raise AssertionError(f"uvicorn did not stop within {SHUTDOWN_SECONDS} s")


class PageWatch:
    """Everything that went wrong in a page: console errors, uncaught exceptions, failed
    requests, answers of 400 and above, and any dialog (which it dismisses)."""

    def __init__(self, page: Page) -> None:
        self.problems: list[str] = []
        self.dialogs: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", self._page_error)
        page.on("requestfailed", self._request_failed)
        page.on("response", self._response)
        page.on("dialog", self._dialog)

    def take(self) -> list[str]:
        """Return the problems so far and forget them (for a test that expects one)."""
        taken, self.problems = self.problems, []
        return taken

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.problems.append(f"console error: {message.text} ({message.location['url']})")

    def _page_error(self, error: Error) -> None:
        self.problems.append(f"page error: {error.message}")

    def _request_failed(self, request: Request) -> None:
        if request.failure == "net::ERR_ABORTED":
            return  # the page navigated away first (e.g. from its icon, stepping quickly)
        self.problems.append(f"request failed: {request.url}: {request.failure}")

    def _response(self, response: Response) -> None:
        if response.status >= 400:
            self.problems.append(f"HTTP {response.status}: {response.url}")

    def _dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        self.problems.append(f"a dialog opened: {dialog.type}: {dialog.message}")
        dialog.dismiss()


def artifacts_dir() -> Path:
    """The folder for screenshots: ``$DOMINO_ARENA_ARTIFACTS``, else the repository's
    ``build/artifacts/screenshots`` (gitignored); made if missing."""
    folder = Path(os.environ.get(ARTIFACTS_ENV) or DEFAULT_ARTIFACTS)
    folder.mkdir(parents=True, exist_ok=True)
    return folder

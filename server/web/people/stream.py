"""The person's event stream: ``text/event-stream`` of one seat's view, for its owner's page.

Each event is ``event: view`` and one ``data:`` line (:func:`~..live_feed.sse_json`: ``<``,
``>`` and ``&`` escaped, so no name appears raw in the bytes) holding the view the page draws
(the seat's own view only: :meth:`~.seat.SeatClient.view`) and ``html``, the panel drawn by the
page's own template (Jinja2-escaped), which ``static/play.js`` swaps in. A view is sent when it
changes; a browser that was busy gets the latest one (a person's page needs no backlog). The
stream ends after the view that says the match is over; a comment (``: heartbeat``) keeps it
open through proxies meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from domino_arena.server.web.live_feed import sse_event, stream_until_gone
from domino_arena.server.web.people.seat import SeatClient

HEARTBEAT_SECONDS: Final = 15.0
RETRY_MS: Final = 5000
STREAMS_PER_MATCH: Final = 4
"""Event streams one match may have open (a tab or two of its owner's)."""

Render = Callable[[dict[str, Any]], str]
"""The panel's HTML for a view."""


class PlayStream(Response):
    """The views of one seat, for one browser (see the module)."""

    media_type = "text/event-stream"

    def __init__(
        self, match: SeatClient, render: Render, heartbeat_seconds: float = HEARTBEAT_SECONDS
    ) -> None:
        # Not Response.__init__: it would declare a Content-Length (of an empty body).
        self.status_code = 200
        self.background = None
        self.raw_headers = [
            (b"content-type", b"text/event-stream; charset=utf-8"),
            (b"cache-control", b"no-store"),
            (b"x-accel-buffering", b"no"),
        ]
        self.match = match
        self.draw = render
        self.heartbeat_seconds = heartbeat_seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.match.streams += 1
        try:
            await stream_until_gone(receive, send, self.raw_headers, lambda: self._body(send))
        finally:
            self.match.streams -= 1

    def event(self) -> tuple[bytes, int, bool]:
        """The view now as an event, its version, and whether it is the last."""
        view = self.match.view()
        data = {**view, "html": self.draw(view)}
        return sse_event("view", data), view["version"], view["state"] == "over"

    async def _body(self, send: Send) -> None:
        async def write(chunk: bytes, more: bool = True) -> None:
            await send({"type": "http.response.body", "body": chunk, "more_body": more})

        chunk, seen, last = self.event()
        await write(f"retry: {RETRY_MS}\n\n".encode() + chunk)
        while not last:
            if not await self.match.changed(seen, self.heartbeat_seconds):
                await write(b": heartbeat\n\n")
                continue
            chunk, seen, last = self.event()
            await write(chunk)
        await write(b"", more=False)

"""The rules every response of the web face follows, as one ASGI middleware.

Read-only but for a few forms: only GET and HEAD reach the application, and POST on the paths
``form_paths`` matches (the course forms, server/web/forms.py); anything else is a 405 naming
the methods allowed. Every response carries a strict Content-Security-Policy (scripts, styles and
images from this origin only: no inline script or style, so a stored text that slipped past
escaping could still not run), ``X-Content-Type-Options: nosniff``, a ``Referrer-Policy`` and
``X-Frame-Options``.
"""

from __future__ import annotations

import re
from typing import Final

from starlette.datastructures import MutableHeaders
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CONTENT_SECURITY_POLICY: Final = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS: Final = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}
READ_METHODS: Final = ("GET", "HEAD")


class SecurityMiddleware:
    """Refuse every method but GET and HEAD, and add :data:`SECURITY_HEADERS` to each answer."""

    def __init__(self, app: ASGIApp, form_paths: str | None = None) -> None:
        self.app = app
        self.form_paths = None if form_paths is None else re.compile(form_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers[name] = value
            await send(message)

        form = self.form_paths is not None and self.form_paths.match(scope["path"])
        if scope["method"] not in READ_METHODS and not (form and scope["method"] == "POST"):
            refusal = PlainTextResponse(
                f"method {scope['method']} is not allowed: the web face is read-only "
                f"(allowed: {', '.join(READ_METHODS)})",
                status_code=405,
                headers={"Allow": ", ".join(READ_METHODS)},
            )
            await refusal(scope, receive, send_with_headers)
            return
        await self.app(scope, receive, send_with_headers)

"""Who may see a live match on the web face: its course's live view and the browser's sessions.

A match whose live view is ``public`` is shown to anyone; ``signed-in`` only to a browser with
a current session of the match's course (a student's bot session or the organizer's: the
course pages' sessions, :mod:`.sessions`), and ``none`` to nobody (the referee does not even
send it). To any other browser a signed-in match does not exist: it is not listed, and its
page, JSON and events are a 404 like an unknown id (docs/web.md: live matches).

A session counts while it is current as the course pages count it: signed, unexpired, and
opened with the token the course holds now (rotating a token, or moving or deleting the bot,
ends it here too).
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from domino_arena.sdk.client.spectator import LiveView
from domino_arena.server.web.live import Allowed
from domino_arena.server.web.sessions import Sessions, current
from domino_arena.server.web.views import WebStorage


def allowed_for(request: Request, sessions: Sessions | None, storage: WebStorage | None) -> Allowed:
    """What ``request``'s browser may see (each course's sessions read once per request)."""
    known: dict[str, bool] = {}

    async def signed_in(course: str) -> bool:
        if sessions is None or storage is None or not course:
            return False
        if course not in known:
            known[course] = False
            for kind in ("bot", "organizer"):
                session = sessions.read(request, kind, course)
                if session is not None and await run_in_threadpool(
                    current, storage, kind, course, session
                ):
                    known[course] = True
                    break
        return known[course]

    async def allowed(course: str, view: LiveView) -> bool:
        if view is LiveView.PUBLIC:
            return True
        return view is LiveView.SIGNED_IN and await signed_in(course)

    return allowed

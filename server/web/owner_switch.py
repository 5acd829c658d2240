"""The organizer's Disable / Enable of an owner on the web (docs/web.md: the organizer's page).

One way to disable an owner, whoever asks: the referee's admin API (``DisableOwner``,
:mod:`domino_arena.server.net.admin_owners`), which stores the state and closes the owner's
bots' open streams at once. The web face is always its own process (``serve`` starts it as a
child, server/cli/web_face.py), so it cannot reach the referee's lobby in memory; when it
follows a referee (``--server``, :class:`~.live.LiveSource`) it makes the call over that
channel with the organizer's own token, so the referee checks the organizer's authority as it
does for the command line, and nothing in the web face can do more than the organizer could.

The session cookie holds no token (:mod:`.sessions`), so :class:`OrganizerTokens` keeps the
organizer token a sign-in proved, in this process's memory only, one per course (the current
one: a rotated token ends the sessions opened with the old one, and its entry with them), for
as long as a session lasts. A restart forgets it, as it forgets every session.

A web face that follows no referee stores the state itself (``set_owner_enabled``, the call
the admin API makes): nothing it could reach is serving bots, and a referee it does not follow
refuses the owner's bots at their next Hello (their open streams run on until then; the page
says so).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Final

from starlette.concurrency import run_in_threadpool

from domino_arena.sdk.client.organizer import OrganizerError
from domino_arena.server.store.owners import UnknownOwnerError
from domino_arena.server.web.live import LiveSource
from domino_arena.server.web.params import WebError
from domino_arena.server.web.sessions import SESSION_SECONDS
from domino_arena.server.web.views import WebStorage

ACTIONS: Final = {"disable": False, "enable": True}
"""The form's ``action`` field and the owner's state it asks for."""
NEXT_HELLO: Final = (
    "this web face follows no referee: a disabled owner's bots are refused at their next "
    "Hello, and a bot connected now plays on until it reconnects (disable with "
    "'domino-arena owner disable' to close its stream at once)"
)
"""What the organizer's page says when the web face has no referee (``--server``)."""
SIGN_IN_AGAIN: Final = (
    "organizer: this web face no longer holds your sign-in's token (it was restarted or the "
    "session is old): sign out, sign in again and repeat"
)


class OrganizerTokens:
    """The organizer token each course's sign-in proved, by the stamp (issue time) it had,
    in memory only (see the module); at most one per course, so at most one per stored
    course."""

    def __init__(
        self, seconds: float = SESSION_SECONDS, clock: Callable[[], float] = time.time
    ) -> None:
        self.seconds = seconds
        self.clock = clock
        self._lock = threading.Lock()
        self._held: dict[str, tuple[str, str, float]] = {}

    def keep(self, course: str, stamp: str, token: str) -> None:
        """Hold ``token`` (a sign-in just proved it) for as long as its session may last."""
        with self._lock:
            self._held[course] = (stamp, token, self.clock() + self.seconds)

    def token(self, course: str, stamp: str) -> str | None:
        """The token of ``course``'s organizer issued at ``stamp``, if still held."""
        with self._lock:
            held = self._held.get(course)
            if held is None or held[2] <= self.clock():
                self._held.pop(course, None)
                return None
            return held[1] if held[0] == stamp else None


def _refusal(live: LiveSource, owner: str, error: OrganizerError) -> WebError:
    details, code = error.message[:200], error.code
    if code == "NOT_FOUND":
        return WebError(404, details or f"owner: no owner named '{owner[:80]}'")
    if code in ("UNAUTHENTICATED", "PERMISSION_DENIED"):
        return WebError(401, f"organizer: the referee refused your token ({details})")
    if code in ("UNAVAILABLE", "DEADLINE_EXCEEDED"):
        return WebError(
            503,
            f"the referee at {live.server} cannot be reached ({code}): owner "
            f"'{owner[:80]}' is unchanged; try again",
        )
    return WebError(502, f"the referee at {live.server} answered {code}: {details}")


async def switch_owner(
    storage: WebStorage,
    live: LiveSource | None,
    token: str | None,
    course: str,
    owner: str,
    *,
    enabled: bool,
) -> None:
    """Enable or disable ``owner`` of ``course`` (already known to exist): through the
    referee's admin API with ``token`` when the web face follows one, else in the storage.

    Raises:
        WebError: 401 no token held or the referee refused it; 404 no such owner; 503 the
            referee cannot be reached (nothing changed); 502 another failure of the referee.
    """
    if live is None:
        try:
            await run_in_threadpool(storage.set_owner_enabled, course, owner, enabled)
        except UnknownOwnerError as exc:
            raise WebError(404, str(exc)) from None
        return
    if token is None:
        raise WebError(401, SIGN_IN_AGAIN)
    try:
        await live.set_owner_enabled(token, course, owner, enabled)
    except OrganizerError as exc:
        raise _refusal(live, owner, exc) from None


def unknown_owner(course: str, owner: str) -> WebError:
    """The one line for an owner that is not ``course``'s (another course's included)."""
    return WebError(404, f"owner: course '{course}' has no owner named '{owner[:80]}'")

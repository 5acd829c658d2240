"""Who may list and watch a running match: the live view of its course or tournament, and the
token of the caller (docs/spectators.md, "Live view").

A match's live view is its tournament's when set, else its course's: ``public`` (anyone),
``signed-in`` (a caller holding a token of the match's course: its organizer's or one of its
owners'; the admin; a relay), ``none`` (nobody while it runs). The caller's token rides in the
call's ``authorization: Bearer <token>`` metadata, as for the admin API; a spectator without
one sees the public matches only. The relay token (``serve --relay-token-file``) is the web
face's: it sees what any course's token would, and the web face shows each match only to the
browsers signed in to its course.

Both answers need the storage, so they are read in a worker thread and kept
:data:`CACHE_SECONDS`: a flood of watches costs the database a query per token and per course
every few seconds, and a change of a live view reaches new watches within that time.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final, Protocol

import grpc

from domino_arena.server.net.admin_requests import RequestError, bearer_token
from domino_arena.server.play.match_spec import MatchSpec
from domino_arena.server.recent import Recent
from domino_arena.server.store.bots import StoredBot
from domino_arena.server.store.courses import Aliases, StoredCourse, aliases
from domino_arena.server.store.live_views import LIVE_VIEW_NONE, LIVE_VIEW_PUBLIC
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.owners import StoredOwner
from domino_arena.server.store.tables import DEFAULT_COURSE

CACHE_SECONDS: Final = 5.0
"""How long a token's or a course's answer is kept."""
CACHE_ENTRIES: Final = 1024
"""The most answers kept (the least recently used goes first)."""

TOKEN_REFUSED: Final = (
    "watch token: not a token of this referee's courses (an organizer's or an owner's), its "
    "admin token or its relay token; a public match needs none"
)


AUDIENCE_KEY: Final = "domino-arena-audience"
"""Call metadata a relay sends beside the relay token: ``public`` when it relays to the public
(a gRPC relay), so the referee shows it what the public may see; without it, every course
(the web face, which shows each page to whom it may)."""
PUBLIC_AUDIENCE: Final = "public"


class LiveStorage(Protocol):
    """What the spectator service asks the storage."""

    def match(self, match_id: str) -> StoredMatch | None: ...
    def organizer_course(self, token: str) -> str | None: ...
    def owner_of_token(self, token: str) -> StoredOwner | None: ...
    def live_view(self, course: str, tournament_id: str | None) -> str: ...
    def course(self, name: str) -> StoredCourse | None: ...
    def bot(self, name: str) -> StoredBot | None: ...
    def bots(
        self, *, include_deleted: bool = False, course: str | None = None
    ) -> list[StoredBot]: ...


@dataclass(frozen=True, slots=True)
class CourseFace:
    """How a course shows itself to spectators who are not its own: its live view (its
    connected bots and ladders follow it) and, for an anonymous course, the aliases its bots
    go by (as on its public pages)."""

    live_view: str = LIVE_VIEW_PUBLIC
    aliases: Aliases | None = None

    def name(self, bot: str, viewer: Viewer, course: str) -> str:
        """``bot`` as ``viewer`` is shown it: its alias unless the viewer is of ``course``."""
        if self.aliases is None or viewer.member(course):
            return bot
        return self.aliases.bot(bot)


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who calls: the courses whose signed-in matches it may watch (None: every course), and
    whether it is a relay (the relay token: counted apart, see :mod:`.watch_limits`)."""

    courses: frozenset[str] | None = frozenset()
    relay: bool = False

    def member(self, course: str) -> bool:
        """Whether the caller is of ``course`` (sees its names, not its aliases)."""
        return self.courses is None or course in self.courses

    def sees(self, course: str, view: str) -> bool:
        """Whether this caller may list and watch a match of ``course`` with live ``view``."""
        if view == LIVE_VIEW_NONE:
            return False
        if view == LIVE_VIEW_PUBLIC:
            return True
        return self.courses is None or course in self.courses


ANYONE: Final = Viewer()
"""A caller without a token: the public matches only."""


class LiveAccess:
    """Resolves callers' tokens and matches' live views (see the module), cached."""

    def __init__(
        self,
        storage: LiveStorage,
        *,
        admin_token: str = "",
        relay_token: str = "",
        seconds: float = CACHE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.storage = storage
        self.admin_token = admin_token
        self.relay_token = relay_token
        self._viewers: Recent[bytes, Viewer | bool] = Recent(seconds, CACHE_ENTRIES, clock)
        """A token's viewer, or False for a token that is none of the referee's."""
        self._views: Recent[tuple[str, str | None], str] = Recent(seconds, CACHE_ENTRIES, clock)
        self._faces: Recent[str, CourseFace] = Recent(seconds, CACHE_ENTRIES, clock)
        self._bot_courses: Recent[str, str] = Recent(seconds, CACHE_ENTRIES, clock)

    async def viewer(self, metadata: Iterable[tuple[str, str | bytes]] | None) -> Viewer:
        """The caller of a ``Watch`` or ``ListLive`` by its metadata (:data:`ANYONE` without
        a token).

        Raises:
            RequestError: UNAUTHENTICATED: a token that is none of this referee's.
        """
        if not any(key.lower() == "authorization" for key, _ in metadata or ()):
            return ANYONE
        token = bearer_token(metadata)
        if self.relay_token and hmac.compare_digest(token.encode(), self.relay_token.encode()):
            audience = [v for k, v in metadata or () if k.lower() == AUDIENCE_KEY]
            public = bool(audience) and audience[0] in (PUBLIC_AUDIENCE, PUBLIC_AUDIENCE.encode())
            return Viewer(frozenset() if public else None, relay=True)
        if self.admin_token and hmac.compare_digest(token.encode(), self.admin_token.encode()):
            return Viewer(None)
        key = hashlib.sha256(token.encode()).digest()
        viewer = self._viewers.get(key)
        if viewer is None:  # a refused token is kept too: a flood of it asks once per period
            viewer = await asyncio.to_thread(self._course_viewer, token) or False
            self._viewers.put(key, viewer)
        if viewer is False:
            raise RequestError(grpc.StatusCode.UNAUTHENTICATED, TOKEN_REFUSED)
        assert isinstance(viewer, Viewer)
        return viewer

    def _course_viewer(self, token: str) -> Viewer | None:
        """The viewer of an owner's (``COURSE:NAME:SECRET``) or an organizer's
        (``COURSE:SECRET``) token, or None (a disabled owner's token watches nothing more than
        the public)."""
        if token.count(":") >= 2:
            owner = self.storage.owner_of_token(token)
            if owner is not None and owner.enabled:
                return Viewer(frozenset({owner.course}))
            return None
        course = self.storage.organizer_course(token) if ":" in token else None
        return None if course is None else Viewer(frozenset({course}))

    async def view_of(self, spec: MatchSpec) -> str:
        """The live view of the match ``spec``: its tournament's, else its course's."""
        key = (spec.course, spec.tournament_id)
        view = self._views.get(key)
        if view is None:
            view = await asyncio.to_thread(self.storage.live_view, spec.course, spec.tournament_id)
            self._views.put(key, view)
        return view

    async def face_of(self, course: str) -> CourseFace:
        """How ``course`` shows itself to others (:class:`CourseFace`)."""
        face = self._faces.get(course)
        if face is None:
            face = await asyncio.to_thread(self._face, course)
            self._faces.put(course, face)
        return face

    def _face(self, course: str) -> CourseFace:
        stored = self.storage.course(course)
        if stored is None:
            return CourseFace()
        shown = None
        if stored.anonymous:
            shown = aliases(self.storage.bots(include_deleted=True, course=course))
        return CourseFace(stored.live_view, shown)

    async def course_of_bot(self, name: str) -> str:
        """The course of bot ``name`` (a house bot, or one unknown: the default course)."""
        course = self._bot_courses.get(name)
        if course is None:
            bot = await asyncio.to_thread(self.storage.bot, name)
            course = DEFAULT_COURSE if bot is None else bot.course
            self._bot_courses.put(name, course)
        return course

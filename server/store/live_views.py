"""Who may watch a course's or a tournament's matches while they run (docs/courses.md: live
view), without the database (no SQLAlchemy here).

Pure, so the wire layer (:mod:`domino_arena.server.net.wire`, which the command line's client
imports on the light install, docs/admin.md) translates the stored values without loading the
store's tables. The store keeps them as these strings, as it keeps entrant policies.
"""

from __future__ import annotations

from typing import Final

LIVE_VIEW_PUBLIC: Final = "public"
"""Anyone may watch, with no token."""
LIVE_VIEW_SIGNED_IN: Final = "signed-in"
"""Callers with a token of the match's course (its organizer's or an enabled owner's), the
admin, and a web face holding the referee's relay token (it shows the match to browsers signed
in to that course alone)."""
LIVE_VIEW_NONE: Final = "none"
"""Nobody while it runs (its record after the end is unaffected)."""
LIVE_VIEWS: Final = (LIVE_VIEW_PUBLIC, LIVE_VIEW_SIGNED_IN, LIVE_VIEW_NONE)
"""Every live view, most open first: ``courses.live_view`` holds one, ``tournaments.live_view``
one or NULL (the course's)."""


def check_live_view(view: str, field: str = "live_view") -> str:
    """Return ``view`` if it is one of :data:`LIVE_VIEWS`.

    Raises:
        ValueError: it is not (the message names ``field`` and the values expected).
    """
    if view not in LIVE_VIEWS:
        raise ValueError(f"{field}: expected one of {', '.join(LIVE_VIEWS)}, got {view[:40]!r}")
    return view

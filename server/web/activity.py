"""The home page: the games, the default course's latest results and tournaments, and the
courses with matches in the last :data:`ACTIVE_DAYS` days, busiest first, at most
:data:`ACTIVE_COURSES` of them.

The home page's own lists are the default course's (docs/web.md: courses), so without the
active courses a course's 250 matches left it saying "No matches". One grouped count over the
window's matches (the index ``ix_matches_created``), limited, keeps it cheap however many
courses and matches there are; ``/courses`` lists them all. Every list here is limited, so the
home page costs the same on a referee of ten years.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from domino_arena.sdk.rules import GAMES
from domino_arena.server.store.courses import StoredCourse
from domino_arena.server.store.tables import DEFAULT_COURSE, MATCHES, now, utc
from domino_arena.server.web.course_links import course_url
from domino_arena.server.web.views import WebStorage, match_summary, tournament_summary

RECENT: Final = 10
"""Matches on the home page."""
HOME_TOURNAMENTS: Final = 10
"""The default course's latest tournaments on the home page (``/tournaments`` has them all)."""

ACTIVE_DAYS: Final = 14
"""A course is active when it stored a match in this many days."""
ACTIVE_COURSES: Final = 10
"""The most active courses the home page lists."""


def busiest(engine: Engine, since: dt.datetime, limit: int) -> list[tuple[str, int, dt.datetime]]:
    """The courses other than the default with matches stored since ``since``: (course,
    matches since then, the latest one's time), most matches first, at most ``limit``."""
    count = sa.func.count().label("matches")
    query = (
        sa.select(MATCHES.c.course, count, sa.func.max(MATCHES.c.created))
        .where(MATCHES.c.created >= since, MATCHES.c.course != DEFAULT_COURSE)
        .group_by(MATCHES.c.course)
        .order_by(count.desc(), MATCHES.c.course)
        .limit(limit)
    )
    with engine.connect() as connection:
        rows = connection.execute(query).all()
    return [(str(course), int(n), utc(last)) for course, n, last in rows]


def active_courses(
    engine: Engine, courses: list[StoredCourse], at: dt.datetime | None = None
) -> dict[str, Any]:
    """The home page's ``active_courses`` (each ``name``, ``title``, ``anonymous``, ``matches``
    in the window, ``last`` match, ``url``), ``active_days`` and ``active_more`` (more courses
    were active than are listed: ``/courses`` has them)."""
    since = (now() if at is None else at) - dt.timedelta(days=ACTIVE_DAYS)
    found = busiest(engine, since, ACTIVE_COURSES + 1)
    by_name = {c.name: c for c in courses}
    listed = [
        {
            "name": name,
            "title": by_name[name].title if name in by_name else "",
            "anonymous": by_name[name].anonymous if name in by_name else False,
            "matches": matches,
            "last": last.isoformat(),
            "url": course_url(name),
        }
        for name, matches, last in found[:ACTIVE_COURSES]
    ]
    return {
        "active_days": ACTIVE_DAYS,
        "active_courses": listed,
        "active_more": len(found) > ACTIVE_COURSES,
    }


def home(storage: WebStorage, at: dt.datetime | None = None) -> dict[str, Any]:
    """The games (with how many bots are rated in each), the default course's latest results
    and its latest :data:`HOME_TOURNAMENTS` tournaments (oldest first), the number of courses,
    and the courses active before ``at`` (now by default)."""
    rated = {pool: len(storage.ratings(pool)) for pool in storage.pools()}
    recent = storage.matches(RECENT, course=DEFAULT_COURSE, records=False)
    tournaments = storage.tournaments(course=DEFAULT_COURSE)
    courses = storage.courses()
    return {
        "games": [
            {"name": name, "title": kind.title, "rated_bots": rated.get(name, 0)}
            for name, kind in GAMES.items()
        ],
        "recent": [match_summary(m) for m in recent],
        "tournaments": [
            tournament_summary(storage, t, None) for t in tournaments[-HOME_TOURNAMENTS:]
        ],
        "tournaments_more": len(tournaments) > HOME_TOURNAMENTS,
        "courses": len(courses),
        **active_courses(storage.engine, courses, at),
    }

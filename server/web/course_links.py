"""Which course a page belongs to: the "Course: X" link of a tournament's, a match's, a bot's
and a live match's page, and the course ``/matches`` lists when it is filtered.

A course's work lives on the global pages too (a tournament's page answers for any course, a
bot's page for any public bot), so each of those pages names its course with a link to
``/courses/{name}`` (docs/web.md: courses). The default course has no link: a single-user
install has no other course to tell it from.

``/matches`` shows the default course, unless a filter says which course is meant: the
tournament's course for ``tournament``, the bot's for ``bot`` (so a course bot's "All of its
matches" lists them), or ``course`` itself. A bot of an anonymous course is refused there as
on its own page (:class:`~.scoped.PublicNames`): filtering by its real name would confirm it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from domino_arena.server.store.tables import DEFAULT_COURSE, HOUSE_PREFIX
from domino_arena.server.web.params import not_found
from domino_arena.server.web.scoped import PublicNames, known_course
from domino_arena.server.web.views import WebStorage

__all__ = ["bot_course", "course_link", "course_url", "matches_course", "seats_course"]


def course_url(name: str) -> str:
    """The course's leaderboard page."""
    return f"/courses/{quote(name, safe='')}"


def course_link(storage: WebStorage, name: str | None) -> dict[str, Any] | None:
    """``{name, title, url}`` of the course ``name``; None for the default course, for None
    (no single course: a house bot's matches span every course) and for a course that is gone."""
    if name is None or name == DEFAULT_COURSE:
        return None
    found = storage.course(name)
    if found is None:
        return None
    return {"name": found.name, "title": found.title, "url": course_url(found.name)}


def bot_course(storage: WebStorage, bot: str) -> str | None:
    """The course of the registered bot ``bot``; None for a house bot (it plays in every
    course) and for a name no bot is registered under (a bot of an install older than the
    bots table, whose matches are all the default course's)."""
    if bot.startswith(HOUSE_PREFIX):
        return None
    stored = storage.bot(bot)
    return None if stored is None else stored.course


def seats_course(storage: WebStorage, seats: Iterable[str], tournament_id: str | None) -> str:
    """The course of a match known only by its seats and tournament (a live match: the
    referee's stream does not say): its tournament's course, else its first registered
    bot's, else the default course."""
    if tournament_id:
        found = storage.tournament(tournament_id)
        if found is not None:
            return found.course
    for seat in seats:
        course = bot_course(storage, seat)
        if course is not None:
            return course
    return DEFAULT_COURSE


def matches_course(
    storage: WebStorage,
    names: PublicNames,
    *,
    bot: str | None,
    tournament_id: str | None,
    course: str | None,
) -> str | None:
    """The course whose matches ``/matches`` lists for these filters; None: every course
    (a house bot's matches, as its page shows them).

    Raises:
        WebError: 404 for a bot of an anonymous course (as its page), an unknown course, or an
            unknown tournament.
    """
    if bot is not None and names.hidden(bot):
        raise not_found(f"no bot is called {bot!r}")
    if course is not None:
        return known_course(storage, course).name
    if tournament_id is not None:
        found = storage.tournament(tournament_id)
        if found is None:
            raise not_found(f"no tournament has id {tournament_id!r}")
        return found.course
    if bot is not None:
        return bot_course(storage, bot)
    return DEFAULT_COURSE

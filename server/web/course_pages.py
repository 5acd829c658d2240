"""The data of the course pages (blocking reads, run in a worker thread like :mod:`.views`).

The global pages (home, tournaments, matches, standings) show the default course, as a
single-user install always did; a course's own things are under ``/courses/{name}``:
its leaderboard (the batch fit of its rated games, per game, anchored by its frozen baselines),
its tournaments and its matches. The organizer's view (here) and the student's page
(:mod:`.my_bot`) read what only their session may see (real names, faults, invites); they are
never scrubbed, and the public pages always are (:class:`~.scoped.PublicNames`, applied by the app).
"""

from __future__ import annotations

from typing import Any

from domino_arena.sdk.rules import GAMES
from domino_arena.server.store.courses import StoredCourse
from domino_arena.server.store.tables import now
from domino_arena.server.web import lists, standings, views
from domino_arena.server.web.params import Paging
from domino_arena.server.web.scoped import (
    baseline_seat,
    course_games,
    known_course,
    match_counts,
    tournament_counts,
)
from domino_arena.server.web.views import TournamentTotal, WebStorage


def course_summary(course: StoredCourse, tournaments: int = 0, matches: int = 0) -> dict[str, Any]:
    return {
        "name": course.name,
        "title": course.title,
        "anonymous": course.anonymous,
        "bots": course.bots,
        "owners": course.owners,
        "tournaments": tournaments,
        "matches": matches,
        "baselines": [
            {"bot": baseline_seat(bot), "rating": rating} for bot, rating in course.baselines
        ],
        "created": course.created.isoformat(),
    }


def courses(storage: WebStorage, paging: Paging = views.FIRST_PAGE) -> dict[str, Any]:
    """One page of the courses, by name, with their counts of bots, owners, tournaments and
    matches (counted for the page's courses alone)."""
    found = storage.courses()
    shown, has_next = lists.page_of(found, paging)
    names = [c.name for c in shown]
    run = tournament_counts(storage.engine, names)
    played = match_counts(storage.engine, names)
    return {
        "courses": [course_summary(c, run.get(c.name, 0), played.get(c.name, 0)) for c in shown],
        **lists.paged(paging, has_next, len(found)),
    }


def leaderboard(storage: WebStorage, name: str) -> dict[str, Any]:
    """The course's official standings in each game it has matches of: the batch fit of its
    rated games (:func:`.standings.official`, kept as the standings page keeps it), each row
    that is a frozen baseline marked with its fixed rating."""
    course = known_course(storage, name)
    fixed = {baseline_seat(bot): rating for bot, rating in course.baselines}
    boards = []
    for game in course_games(storage.engine, name):
        if game not in GAMES:
            continue
        fitted, note = standings.official(storage, game, None, name, course.baselines)
        if fitted is not None:
            for row in fitted["rows"]:
                rating = fixed.get(row["bot"])
                row["baseline"] = None if rating is None else rating
                row["mark"] = None if rating is None else f"baseline, fixed at {rating:.0f}"
        boards.append(
            {"game": game, "title": GAMES[game].title, "official": fitted, "official_note": note}
        )
    return {"course": course_summary(course), "boards": boards}


def course_tournaments(
    storage: WebStorage,
    name: str,
    total_of: TournamentTotal | None,
    paging: Paging = views.FIRST_PAGE,
) -> dict[str, Any]:
    """One page of the course's tournaments, oldest first (each links the tournament's own
    page)."""
    course = known_course(storage, name)
    page = lists.tournaments(storage, total_of, name, paging)
    return {"course": course_summary(course), **page}


def course_matches_page(
    storage: WebStorage,
    name: str,
    paging: Paging,
    *,
    game: str | None,
    tournament_id: str | None,
) -> dict[str, Any]:
    """One page of the course's matches, newest first."""
    course = known_course(storage, name)
    page = views.matches(
        storage, paging, bot=None, game=game, tournament_id=tournament_id, course=name
    )
    return {"course": course_summary(course), **page}


# -- behind a session ---------------------------------------------------------------------------


def organizer_view(storage: WebStorage, name: str) -> dict[str, Any]:
    """What the organizer of ``name`` sees: its invites (never a code: only its hash is
    stored) with the owners each made, its bots with owners and states, its owners with the
    invite that made each, their state and their bots (docs/courses.md: owners)."""
    course = known_course(storage, name)
    at = now()
    bots = storage.bots(include_deleted=True, course=name)
    return {
        "course": course_summary(course),
        "invites": [
            {
                "id": i.id,
                "uses": i.uses,
                "used": i.used,
                "created": i.created.isoformat(),
                "expires": None if i.expires is None else i.expires.isoformat(),
                "revoked": i.revoked,
                "usable": i.usable(at),
                "owners": list(i.owners),
            }
            for i in storage.invites(name)
        ],
        "bots": [
            {
                "name": b.name,
                "owner": b.owner,
                "state": b.state.value,
                "created": b.created.isoformat(),
            }
            for b in bots
        ],
        "owners": [
            {
                "owner": o.name,
                "bots": len(o.bots),
                "bot_names": list(o.bots),
                "invite": o.invite_id,
                "enabled": o.enabled,
                "token_issued": None if o.token_issued is None else o.token_issued.isoformat(),
            }
            for o in storage.owners(name)
        ],
    }

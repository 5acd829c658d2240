"""What an organizer sets for hosted bots: a tournament's version pins, a course's limits.

A tournament plays the versions its organizer pinned (``CreateTournament``'s ``version_pins``,
``domino-arena tournament create --pin BOT=N``) and, for each other entrant with a current
version when it starts, that version (:func:`freeze_versions`), so versions submitted while it
runs never change it (docs/tournaments.md: versions). The sandbox limits of a course's hosted
bots are set per course here and per tournament with the tournament (docs/courses.md: hosting
limits); :func:`.hosted.hosting_limits_for` layers them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from domino_arena.server.hosting.spec.limits import SandboxLimits
from domino_arena.server.store.courses import UnknownCourseError
from domino_arena.server.store.engine import writing
from domino_arena.server.store.hosted import (
    current_numbers,
    parse_pins,
    version,
    versions,
)
from domino_arena.server.store.hosted_logs import ACCEPTED
from domino_arena.server.store.tables import COURSES, TOURNAMENTS
from domino_arena.server.store.tournaments import UnknownTournamentError


def check_pins(engine: Engine, pins: Mapping[str, int]) -> None:
    """Check an organizer's pins: each names an accepted version of its bot.

    Raises:
        ValueError: ``version_pins``: which bot, which version, and what it is instead.
    """
    for bot, number in sorted(pins.items()):
        found = version(engine, bot, number) if number >= 1 else None
        if found is None:
            have = [v.number for v in versions(engine, bot)]
            known = f"its versions are {', '.join(map(str, have))}" if have else "it has none"
            raise ValueError(f"version_pins: bot {bot} has no version {number} ({known})")
        if found.status != ACCEPTED:
            raise ValueError(
                f"version_pins: bot {bot} v{number} is {found.status}; only an accepted "
                "version may be pinned"
            )


def freeze_versions(engine: Engine, tournament_id: str) -> dict[str, int]:
    """Pin each entrant of a starting tournament that has a current version and no pin to that
    version, so versions submitted later do not change the tournament; return all its pins.
    A tournament with nothing to freeze is only read (no write lock taken at its start).

    Raises:
        UnknownTournamentError: no such tournament.
    """
    for write in (False, True):
        with writing(engine) if write else engine.connect() as connection:
            query = sa.select(TOURNAMENTS.c.entrants, TOURNAMENTS.c.version_pins).where(
                TOURNAMENTS.c.id == tournament_id
            )
            row = connection.execute(query.with_for_update() if write else query).one_or_none()
            if row is None:
                raise UnknownTournamentError(f"no tournament has id '{tournament_id}'")
            pins = parse_pins(row.version_pins)
            free = [e for e in row.entrants if e not in pins]
            frozen = current_numbers(connection, free) if free else {}
            if not frozen:
                return pins
            if write:
                pins.update(frozen)
                connection.execute(
                    TOURNAMENTS.update()
                    .where(TOURNAMENTS.c.id == tournament_id)
                    .values(version_pins=json.dumps(pins, sort_keys=True))
                )
                return pins
    raise AssertionError("unreachable")  # pragma: no cover


def check_limits(limits: Mapping[str, int]) -> dict[str, int]:
    """The limits an organizer set (0: the default, left out), checked.

    Raises:
        ValueError: a field that is no sandbox limit or a value out of its range (named).
    """
    chosen = {name: value for name, value in limits.items() if value != 0}
    SandboxLimits.parse(chosen)
    return chosen


def limits_json(limits: Mapping[str, int] | None) -> str | None:
    """A ``hosting_limits`` column's text for ``limits`` (checked; None: no limit set)."""
    chosen = check_limits(limits or {})
    return json.dumps(chosen, sort_keys=True) if chosen else None


def set_course_limits(engine: Engine, course: str, limits: Mapping[str, int] | None) -> None:
    """Set the sandbox limits of ``course``'s hosted bots (0 or missing: the default; None or
    {}: every default) for the matches started after it.

    Raises:
        UnknownCourseError: no such course.
        ValueError: a bad limit (named).
    """
    text = limits_json(limits)
    with engine.begin() as connection:
        changed = connection.execute(
            COURSES.update().where(COURSES.c.name == course).values(hosting_limits=text)
        ).rowcount
    if not changed:
        raise UnknownCourseError(f"no course is named '{course}'")


def course_limits(engine: Engine, course: str) -> dict[str, int]:
    """The limits ``course``'s organizer set ({}: the defaults)."""
    with engine.connect() as connection:
        text = connection.execute(
            sa.select(COURSES.c.hosting_limits).where(COURSES.c.name == course)
        ).scalar_one_or_none()
    return dict(json.loads(text)) if text else {}

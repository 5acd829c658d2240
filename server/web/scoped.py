"""What the web face reads of one course, and the public names of anonymous courses.

A course's matches are the store's (``matches(course=...)``); the few course-wide counts the
pages need beyond them are here.

:class:`PublicNames` is the rule of anonymous courses (``StoredCourse.anonymous``): every
public page's data passes through :meth:`PublicNames.scrub` before it is rendered or sent as
JSON, which replaces each real bot and owner name of every anonymous course by its alias
(:func:`~domino_arena.server.store.courses.aliases`) wherever it appears: a whole value, a key,
or a part of a free text (a result line, a fault's reason, a chart's label). Scrubbing the
finished data, not each field, is what makes the rule hold by construction: a field added
later is covered without anyone remembering to.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from markupsafe import Markup, escape
from sqlalchemy.engine import Engine

from domino_arena.server.store.courses import StoredCourse, aliases
from domino_arena.server.store.tables import DEFAULT_COURSE, HOUSE_PREFIX, MATCHES, TOURNAMENTS
from domino_arena.server.web.params import not_found

__all__ = ["DEFAULT_COURSE", "PublicNames", "course_games", "match_counts", "tournament_counts"]


def course_games(engine: Engine, course: str) -> list[str]:
    """The games ``course`` has stored matches of, by name."""
    query = sa.select(MATCHES.c.game).where(MATCHES.c.course == course).distinct()
    with engine.connect() as connection:
        return sorted(str(game) for game in connection.execute(query).scalars())


def match_counts(engine: Engine, courses: Collection[str]) -> dict[str, int]:
    """Stored matches of each of ``courses`` (a page of them: each is counted in the index
    ``ix_matches_course_created``)."""
    query = (
        sa.select(MATCHES.c.course, sa.func.count())
        .where(MATCHES.c.course.in_(list(courses)))
        .group_by(MATCHES.c.course)
    )
    with engine.connect() as connection:
        return {str(course): int(count) for course, count in connection.execute(query).all()}


def tournament_counts(engine: Engine, courses: Collection[str]) -> dict[str, int]:
    """Tournaments of each of ``courses``."""
    query = (
        sa.select(TOURNAMENTS.c.course, sa.func.count())
        .where(TOURNAMENTS.c.course.in_(list(courses)))
        .group_by(TOURNAMENTS.c.course)
    )
    with engine.connect() as connection:
        return {str(course): int(count) for course, count in connection.execute(query).all()}


def baseline_seat(bot: str) -> str:
    """The seat name of a frozen baseline (``random`` -> ``house:random``)."""
    return bot if bot.startswith(HOUSE_PREFIX) else HOUSE_PREFIX + bot


@dataclass(frozen=True)
class PublicNames:
    """Every real bot and owner name of the anonymous courses, and the alias shown for it.

    ``by_course`` says which course each hidden bot belongs to (a bot's page of an anonymous
    course is refused as if the bot did not exist: its URL would name it).
    """

    names: dict[str, str]
    by_course: dict[str, str]
    _pattern: re.Pattern[str] | None

    @classmethod
    def of(cls, courses: list[StoredCourse], bots_of: Callable[[str], list[Any]]) -> PublicNames:
        """The names of the anonymous ones among ``courses``; ``bots_of(course)`` lists a
        course's bots, deleted ones included (so aliases never renumber)."""
        names: dict[str, str] = {}
        by_course: dict[str, str] = {}
        for course in courses:
            if not course.anonymous:
                continue
            bots = bots_of(course.name)
            shown = aliases(bots)
            for bot in bots:
                names[bot.name] = shown.bot(bot.name)
                by_course[bot.name] = course.name
            for owner, alias in shown.owners.items():
                names[owner] = alias
        # Longest first, so a name that contains another is replaced whole.
        ordered = sorted(names, key=lambda n: (-len(n), n))
        pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        return cls(names, by_course, pattern)

    def hidden(self, bot: str) -> bool:
        """Whether ``bot`` belongs to an anonymous course (its name is never shown)."""
        return bot in self.by_course

    def text(self, value: str) -> str:
        """``value`` with every hidden name in it replaced by its alias."""
        if self._pattern is None:
            return value
        return self._pattern.sub(lambda m: self.names[m.group(0)], value)

    def scrub(self, data: Any) -> Any:
        """``data`` (JSON-ready: dicts, lists, strings, numbers) with every hidden name
        replaced, in values and keys alike."""
        if self._pattern is None:
            return data
        if isinstance(data, Markup):  # drawn markup (a chart): stays markup, its text scrubbed
            return Markup(self._pattern.sub(lambda m: escape(self.names[m.group(0)]), data))
        if isinstance(data, str):
            return self.text(data)
        if isinstance(data, dict):
            return {self.scrub(k): self.scrub(v) for k, v in data.items()}
        if isinstance(data, list | tuple):
            return [self.scrub(item) for item in data]
        return data


def public_names(storage: Any) -> PublicNames:
    """The storage's :class:`PublicNames` (read per request: a bot registered a second ago in
    an anonymous course is hidden at once)."""
    return PublicNames.of(
        storage.courses(), lambda name: storage.bots(include_deleted=True, course=name)
    )


def known_course(storage: Any, name: str) -> StoredCourse:
    """The course ``name``; a 404 naming it when there is none."""
    found: StoredCourse | None = storage.course(name)
    if found is None:
        raise not_found(f"no course is named {name[:80]!r}")
    return found

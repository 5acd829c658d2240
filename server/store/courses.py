"""Courses (or events), their organizer tokens and invite codes (docs/courses.md).

A course is a named space of bots, tournaments and ladders. Its organizer token is made like a
bot's (256 random bits, only a salted hash kept) and is written ``COURSE:SECRET``, so the
referee knows which course's hash to check without trying them all; ``default`` is the server's
own course and has no organizer token (only the admin token manages it).

An invite code is ``COURSE:ID:SECRET``: the course it registers in, a short public id (what
lists and logs name) and a secret of which only the hash is kept. Registering with a code
(:func:`.owners.register_with_invite`) checks it, uses it once and creates the owner and its
first bot in one transaction, so a code for one owner registers one however many students race
with it. A code that is wrong, expired, revoked or used up gets one answer
(:class:`InviteError`) that tells a stranger nothing about which.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from domino_arena.server.store.bots import (
    NAME_PATTERN,
    NAME_RULE,
    BotState,
    StoredBot,
    hash_token,
    new_token,
    token_matches,
)
from domino_arena.server.store.live_views import LIVE_VIEW_PUBLIC, check_live_view
from domino_arena.server.store.tables import (
    BOTS,
    COURSES,
    HOUSE_PREFIX,
    INVITES,
    OWNERS,
    now,
    utc,
)

MAX_TITLE: Final = 200
MAX_HUMAN_MOVE_MS: Final = 600_000
"""The longest time per move a course may give a person: ten minutes, as a match's move time."""
MAX_INVITES: Final = 1000
"""The most invite codes one request makes, and the most owners one code registers."""
INVITE_REFUSED: Final = "invite code not accepted: it is wrong, expired, revoked or used up"
INVITE_PATTERN: Final = re.compile(
    r"^([A-Za-z0-9][A-Za-z0-9_.-]{0,63}):([0-9a-f]{12}):([0-9a-f]{64})$"
)


class CourseError(ValueError):
    """A course request that cannot be honoured; the message names the field and the rule."""


class DuplicateCourseError(CourseError):
    """A course with that name exists already."""


class UnknownCourseError(KeyError):
    """No course has that name."""

    def __str__(self) -> str:  # KeyError would show the message quoted
        return str(self.args[0]) if self.args else ""


class UnknownInviteError(KeyError):
    """No invite has that id."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class InviteError(ValueError):
    """A registration's invite code was not accepted (:data:`INVITE_REFUSED`)."""


@dataclass(frozen=True, slots=True)
class StoredCourse:
    """One row of ``courses`` (never its organizer token)."""

    name: str
    title: str
    created: dt.datetime
    organizer_token_issued: dt.datetime | None
    """When its organizer token was made; None: it has none (the default course)."""
    anonymous: bool = False
    """Public pages show aliases instead of bot and owner names."""
    allow_same_owner_tables: bool = False
    allow_same_owner_partners: bool = False
    baselines: tuple[tuple[str, float], ...] = ()
    """Frozen baselines: (house bot name, fixed rating), by name."""
    live_view: str = LIVE_VIEW_PUBLIC
    """Who may watch its matches while they run (:data:`.live_views.LIVE_VIEWS`)."""
    hosting_limits: dict[str, int] = dataclasses.field(default_factory=dict)
    """The sandbox limits set for its hosted bots ({}: the defaults; .hosted_settings)."""
    human_move_ms: int = 0
    """A person's time per move in its practice matches (0: the default, docs/people.md)."""
    analyse_tournaments: bool = False
    """Its tournaments are analysed when they end (.analysis_jobs, docs/courses.md)."""
    bots: int = 0
    """Bots that are not deleted (filled by :func:`courses` and :func:`course`)."""
    owners: int = 0


@dataclass(frozen=True, slots=True)
class IssuedCourseToken:
    """A course and its new organizer token: the one time the token is known outside it."""

    course: StoredCourse
    token: str


@dataclass(frozen=True, slots=True)
class StoredInvite:
    """One row of ``invites`` (never its secret)."""

    id: str
    course: str
    uses: int
    used: int
    created: dt.datetime
    expires: dt.datetime | None
    revoked: bool
    owners: tuple[str, ...] = ()
    """The owners its uses made, in order (filled by :func:`invites`): code -> owner."""

    def usable(self, at: dt.datetime) -> bool:
        """Whether it may register a bot at ``at``."""
        return (
            not self.revoked
            and self.used < self.uses
            and (self.expires is None or at < self.expires)
        )


@dataclass(frozen=True, slots=True)
class IssuedInvite:
    invite: StoredInvite
    code: str


def check_course_name(name: str) -> None:
    """Raise :class:`CourseError` unless ``name`` may name a course (a bot name's rule)."""
    if not NAME_PATTERN.match(name):
        raise CourseError(f"course: bad course name {name[:80]!r}: {NAME_RULE}")


def check_baselines(baselines: tuple[tuple[str, float], ...], house: set[str]) -> None:
    """Raise :class:`CourseError` unless each baseline is a distinct house bot in ``house``."""
    seen: set[str] = set()
    for index, (bot, rating) in enumerate(baselines):
        if bot not in house:
            raise CourseError(
                f"baselines[{index}].bot: unknown house bot {bot[:80]!r}; expected one of "
                f"{', '.join(sorted(house)) or '(none: this referee hosts no house bots)'}"
            )
        if bot in seen:
            raise CourseError(f"baselines[{index}].bot: {bot!r} is listed twice")
        if not -10_000 <= rating <= 10_000:
            raise CourseError(
                f"baselines[{index}].rating: expected a rating from -10000 to 10000, got {rating}"
            )
        seen.add(bot)


def _checked_live_view(view: str) -> str:
    try:
        return check_live_view(view)
    except ValueError as exc:
        raise CourseError(str(exc)) from None


def _organizer_token(course: str) -> str:
    return f"{course}:{new_token()}"


def create_course(
    engine: Engine,
    name: str,
    *,
    title: str = "",
    anonymous: bool = False,
    allow_same_owner_tables: bool = False,
    allow_same_owner_partners: bool = False,
    baselines: tuple[tuple[str, float], ...] = (),
    live_view: str = LIVE_VIEW_PUBLIC,
) -> IssuedCourseToken:
    """Create the course ``name`` with a new organizer token (only its hash is kept).

    Raises:
        CourseError: a bad name, title or live view (baselines are the caller's to check).
        DuplicateCourseError: the name is taken.
    """
    check_course_name(name)
    title = title.strip() or name
    if len(title) > MAX_TITLE:
        raise CourseError(f"title: expected at most {MAX_TITLE} characters, got {len(title)}")
    token, stamp = _organizer_token(name), now()
    row = {
        "name": name,
        "title": title,
        "created": stamp,
        "organizer_token_hash": hash_token(token),
        "organizer_token_issued": stamp,
        "anonymous": anonymous,
        "allow_same_owner_tables": allow_same_owner_tables,
        "allow_same_owner_partners": allow_same_owner_partners,
        "baselines": _baselines_json(baselines),
        "live_view": _checked_live_view(live_view),
    }
    try:
        with engine.begin() as connection:
            connection.execute(COURSES.insert().values(row))
    except IntegrityError:
        raise DuplicateCourseError(f"course: a course named '{name}' exists already") from None
    found = course(engine, name)
    assert found is not None
    return IssuedCourseToken(found, token)


def _baselines_json(baselines: tuple[tuple[str, float], ...]) -> list[dict[str, Any]]:
    return [{"bot": bot, "rating": float(rating)} for bot, rating in sorted(baselines)]


def _counts(
    connection: sa.Connection, course_name: str | None = None
) -> dict[str, tuple[int, int]]:
    """Each course's bots that are not deleted and its owners (server/store/owners.py)."""
    bots = sa.select(BOTS.c.course, sa.func.count()).where(BOTS.c.state != BotState.DELETED.value)
    owners = sa.select(OWNERS.c.course, sa.func.count())
    if course_name is not None:
        bots = bots.where(BOTS.c.course == course_name)
        owners = owners.where(OWNERS.c.course == course_name)
    counted = {row[0]: row[1] for row in connection.execute(bots.group_by(BOTS.c.course))}
    made = {row[0]: row[1] for row in connection.execute(owners.group_by(OWNERS.c.course))}
    return {
        course: (int(counted.get(course, 0)), int(made.get(course, 0)))
        for course in {*counted, *made}
    }


def courses(engine: Engine) -> list[StoredCourse]:
    """Every course, by name, with its counts of bots and owners."""
    with engine.connect() as connection:
        rows = connection.execute(sa.select(COURSES).order_by(COURSES.c.name)).mappings().all()
        counts = _counts(connection)
    return [_stored(row, *counts.get(row["name"], (0, 0))) for row in rows]


def course(engine: Engine, name: str) -> StoredCourse | None:
    """The course ``name``, or None."""
    with engine.connect() as connection:
        row = (
            connection.execute(sa.select(COURSES).where(COURSES.c.name == name))
            .mappings()
            .one_or_none()
        )
        if row is None:
            return None
        counts = _counts(connection, name)
    return _stored(row, *counts.get(name, (0, 0)))


def _stored(row: sa.RowMapping, bots: int, owners: int) -> StoredCourse:
    issued = row["organizer_token_issued"]
    return StoredCourse(
        name=row["name"],
        title=row["title"],
        created=utc(row["created"]),
        organizer_token_issued=None if issued is None else utc(issued),
        anonymous=bool(row["anonymous"]),
        allow_same_owner_tables=bool(row["allow_same_owner_tables"]),
        allow_same_owner_partners=bool(row["allow_same_owner_partners"]),
        baselines=tuple((b["bot"], float(b["rating"])) for b in row["baselines"] or ()),
        live_view=str(row["live_view"]),
        hosting_limits=json.loads(row["hosting_limits"]) if row["hosting_limits"] else {},
        human_move_ms=int(row["human_move_ms"]),
        analyse_tournaments=bool(row["analyse_tournaments"]),
        bots=int(bots),
        owners=int(owners),
    )


def update_course(
    engine: Engine,
    name: str,
    *,
    title: str | None = None,
    anonymous: bool | None = None,
    allow_same_owner_tables: bool | None = None,
    allow_same_owner_partners: bool | None = None,
    baselines: tuple[tuple[str, float], ...] | None = None,
    live_view: str | None = None,
    human_move_ms: int | None = None,
) -> StoredCourse:
    """Change what is given of the course ``name``; return it changed. A new ``live_view``
    holds for the matches started after it (docs/courses.md: live view), as does a new
    ``human_move_ms`` (docs/people.md; 0: the default).

    Raises:
        UnknownCourseError: no such course.
        CourseError: a bad title or live view.
    """
    values: dict[str, Any] = {}
    if title is not None:
        title = title.strip() or name
        if len(title) > MAX_TITLE:
            raise CourseError(f"title: expected at most {MAX_TITLE} characters, got {len(title)}")
        values["title"] = title
    for key, value in (
        ("anonymous", anonymous),
        ("allow_same_owner_tables", allow_same_owner_tables),
        ("allow_same_owner_partners", allow_same_owner_partners),
    ):
        if value is not None:
            values[key] = value
    if baselines is not None:
        values["baselines"] = _baselines_json(baselines)
    if live_view is not None:
        values["live_view"] = _checked_live_view(live_view)
    if human_move_ms is not None:
        if not 0 <= human_move_ms <= MAX_HUMAN_MOVE_MS:
            raise CourseError(
                f"human_move_ms: must be 0-{MAX_HUMAN_MOVE_MS} (0: the default, 60 s), "
                f"got {human_move_ms}"
            )
        values["human_move_ms"] = human_move_ms
    with engine.begin() as connection:
        if values:
            changed = connection.execute(
                COURSES.update().where(COURSES.c.name == name).values(values)
            ).rowcount
        else:
            changed = connection.execute(
                sa.select(sa.func.count()).where(COURSES.c.name == name)
            ).scalar_one()
    if not changed:
        raise UnknownCourseError(f"no course is named '{name}'")
    found = course(engine, name)
    assert found is not None
    return found


def rotate_organizer_token(engine: Engine, name: str) -> IssuedCourseToken:
    """Give the course ``name`` a new organizer token; the old one stops working at once.

    Raises:
        UnknownCourseError: no such course.
    """
    token, stamp = _organizer_token(name), now()
    with engine.begin() as connection:
        changed = connection.execute(
            COURSES.update()
            .where(COURSES.c.name == name)
            .values(organizer_token_hash=hash_token(token), organizer_token_issued=stamp)
        ).rowcount
    if not changed:
        raise UnknownCourseError(f"no course is named '{name}'")
    found = course(engine, name)
    assert found is not None
    return IssuedCourseToken(found, token)


def organizer_course(engine: Engine, token: str) -> str | None:
    """The course whose organizer token ``token`` is, or None (checked in constant time)."""
    name, sep, _ = token.partition(":")
    if not sep or not NAME_PATTERN.match(name):
        return None
    with engine.connect() as connection:
        stored = connection.execute(
            sa.select(COURSES.c.organizer_token_hash).where(COURSES.c.name == name)
        ).scalar_one_or_none()
    if not stored or not token_matches(token, stored):
        return None
    return str(name)


# -- invites ------------------------------------------------------------------------------------


def create_invites(
    engine: Engine,
    course_name: str,
    count: int,
    *,
    uses: int = 1,
    expires: dt.datetime | None = None,
) -> list[IssuedInvite]:
    """Make ``count`` invite codes for ``course_name``, each registering up to ``uses`` bots.

    Raises:
        CourseError: a count, uses or expiry out of range (the message names the field).
        UnknownCourseError: no such course.
    """
    if not 1 <= count <= MAX_INVITES:
        raise CourseError(f"count: expected 1-{MAX_INVITES} codes, got {count}")
    if not 1 <= uses <= MAX_INVITES:
        raise CourseError(f"uses: expected 1-{MAX_INVITES} owners per code, got {uses}")
    stamp = now()
    if expires is not None and expires <= stamp:
        raise CourseError(f"expires: expected a time in the future, got {expires.isoformat()}")
    if course(engine, course_name) is None:
        raise UnknownCourseError(f"no course is named '{course_name}'")
    issued: list[IssuedInvite] = []
    rows: list[dict[str, Any]] = []
    for _ in range(count):
        invite_id, secret = secrets.token_hex(6), new_token()
        code = f"{course_name}:{invite_id}:{secret}"
        rows.append(
            {
                "id": invite_id,
                "course": course_name,
                "code_hash": hash_token(secret),
                "uses": uses,
                "used": 0,
                "created": stamp,
                "expires": expires,
                "revoked": False,
            }
        )
        invite = StoredInvite(invite_id, course_name, uses, 0, stamp, expires, False)
        issued.append(IssuedInvite(invite, code))
    with engine.begin() as connection:
        connection.execute(INVITES.insert(), rows)
    return issued


def stored_invite(row: sa.RowMapping) -> StoredInvite:
    expires = row["expires"]
    return StoredInvite(
        id=row["id"],
        course=row["course"],
        uses=int(row["uses"]),
        used=int(row["used"]),
        created=utc(row["created"]),
        expires=None if expires is None else utc(expires),
        revoked=bool(row["revoked"]),
    )


def invites(engine: Engine, course_name: str) -> list[StoredInvite]:
    """The invites of ``course_name``, newest first."""
    with engine.connect() as connection:
        rows = (
            connection.execute(
                sa.select(INVITES)
                .where(INVITES.c.course == course_name)
                .order_by(INVITES.c.created.desc(), INVITES.c.id)
            )
            .mappings()
            .all()
        )
        made: dict[str, list[str]] = {}
        for invite_id, owner in connection.execute(
            sa.select(OWNERS.c.invite_id, OWNERS.c.name)
            .where(OWNERS.c.course == course_name, OWNERS.c.invite_id.is_not(None))
            .order_by(OWNERS.c.created, OWNERS.c.id)
        ):
            made.setdefault(invite_id, []).append(owner)
    return [
        dataclasses.replace(stored_invite(row), owners=tuple(made.get(row["id"], ())))
        for row in rows
    ]


def invite(engine: Engine, invite_id: str) -> StoredInvite | None:
    """The invite ``invite_id``, or None."""
    with engine.connect() as connection:
        row = (
            connection.execute(sa.select(INVITES).where(INVITES.c.id == invite_id))
            .mappings()
            .one_or_none()
        )
    return None if row is None else stored_invite(row)


def revoke_invite(engine: Engine, invite_id: str) -> StoredInvite:
    """Make the invite unusable (the bots it registered stay).

    Raises:
        UnknownInviteError: no such invite.
    """
    with engine.begin() as connection:
        changed = connection.execute(
            INVITES.update().where(INVITES.c.id == invite_id).values(revoked=True)
        ).rowcount
    found = invite(engine, invite_id) if changed else None
    if found is None:
        raise UnknownInviteError(f"no invite has id '{invite_id}'")
    return found


# -- public names -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Aliases:
    """The names an anonymous course shows the public: "Bot N" for a bot and "Student N" for
    an owner, numbered in order of registration (so an alias never changes once given, and
    says nothing a stranger did not know). House bots (``house:NAME``) keep their names."""

    bots: dict[str, str]
    owners: dict[str, str]

    def bot(self, name: str) -> str:
        """The alias of bot ``name`` (a name it does not know is shown as "a bot": never the
        name itself)."""
        if name.startswith(HOUSE_PREFIX):
            return name
        return self.bots.get(name, "a bot")

    def owner(self, owner: str) -> str:
        return self.owners.get(owner, "a student") if owner else ""


def aliases(bots: Sequence[StoredBot]) -> Aliases:
    """The :class:`Aliases` of a course's ``bots`` (all of them, deleted ones included, so the
    numbers stay put when a bot is deleted)."""
    ordered = sorted(bots, key=lambda b: (b.created, b.name))
    owners: dict[str, str] = {}
    for bot in ordered:
        if bot.owner and bot.owner not in owners:
            owners[bot.owner] = f"Student {len(owners) + 1}"
    return Aliases(
        bots={bot.name: f"Bot {index}" for index, bot in enumerate(ordered, start=1)},
        owners=owners,
    )

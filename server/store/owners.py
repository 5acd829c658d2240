"""The owners of a course: accounts made by an invite, each holding an owner token
(docs/courses.md: owners; docs/decisions.md: decision 18).

Using an invite creates the owner (its name unique in the course) and its first bot, and gives
the student an owner token, shown once and kept only as a salted hash (made and checked as a
bot's, :func:`.bots.hash_token`). Every later bot or version of that owner is registered with the
owner token, never by naming the owner: an invite that names an owner who exists already is
refused (the impersonation of issue 28), and the code is then not used.

An owner token is written ``COURSE:OWNER:SECRET`` (no course or owner name holds ``:``), so the
referee finds the one hash to check. The owner rotates it with the current one; the organizer
issues one (to an owner made before owners had tokens, or one who lost theirs), and disables or
enables an owner: every bot of a disabled owner is refused at Hello
(:data:`.bots.BotCheck.OWNER_DISABLED`), entered in no tournament and matched on no ladder.

A token that does not match, or names no owner, gets one answer (:data:`OWNER_TOKEN_REFUSED`)
that tells a stranger nothing about which.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Final

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from domino_arena.server.store.bots import (
    OWNER_DISABLED,
    BotState,
    IssuedToken,
    check_owner,
    create_bot,
    hash_token,
    new_token,
    token_matches,
)
from domino_arena.server.store.courses import (
    INVITE_PATTERN,
    INVITE_REFUSED,
    InviteError,
    stored_invite,
)
from domino_arena.server.store.engine import writing
from domino_arena.server.store.tables import BOTS, INVITES, OWNERS, now, utc

OWNER_TOKEN_REFUSED: Final = (
    "owner token not accepted: it is wrong or was replaced by a newer one (ask your organizer "
    "to issue a new one)"
)
_ENABLED: Final = "enabled"
_TOKEN_PATTERN: Final = re.compile(
    r"^([A-Za-z0-9][A-Za-z0-9_.-]{0,63}):([A-Za-z0-9][A-Za-z0-9_.@-]{0,63}):([0-9a-f]{64})$"
)


class OwnerTakenError(ValueError):
    """An invite named an owner the course has already: a new owner needs a new name."""


class OwnerTokenError(ValueError):
    """An owner token was not accepted (:data:`OWNER_TOKEN_REFUSED`)."""


class OwnerDisabledError(ValueError):
    """The right owner token of a disabled owner: it registers nothing until enabled."""


class UnknownOwnerError(KeyError):
    """The course has no owner of that name."""

    def __str__(self) -> str:  # KeyError would show the message quoted
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True, slots=True)
class StoredOwner:
    """One row of ``owners`` (never its token), with the names of its bots."""

    course: str
    name: str
    enabled: bool
    created: dt.datetime
    token_issued: dt.datetime | None
    """When its current owner token was made; None: it has none yet (the organizer issues one)."""
    invite_id: str | None
    """The invite whose use made it; None: made before owners (0011) or by the organizer."""
    bots: tuple[str, ...] = ()
    """Its bots that are not deleted, oldest first."""


@dataclass(frozen=True, slots=True)
class IssuedOwnerToken:
    """An owner and its new token: the one time the token is known outside it."""

    owner: StoredOwner
    token: str


def _owner_token(course: str, name: str) -> str:
    return f"{course}:{name}:{new_token()}"


def owner_refused(course: str, name: str) -> str:
    """The one line that refuses an invite naming an existing owner (impersonation)."""
    return (
        f"owner: '{name}' is already an owner of course '{course}'; an invite makes a new owner, "
        "so pick another name, or register another bot of yours with your owner token "
        "(--owner-token-file); your invite code was not used"
    )


def disabled_refusal(course: str, name: str) -> str:
    return (
        f"owner '{name}' of course '{course}' is disabled by the organizer: none of its bots may "
        "be registered or connect until it is enabled"
    )


def _stored(row: sa.RowMapping, bots: tuple[str, ...]) -> StoredOwner:
    issued = row["token_issued"]
    return StoredOwner(
        course=row["course"],
        name=row["name"],
        enabled=row["state"] != OWNER_DISABLED,
        created=utc(row["created"]),
        token_issued=None if issued is None else utc(issued),
        invite_id=row["invite_id"],
        bots=bots,
    )


def _read(connection: sa.Connection, course: str, name: str | None = None) -> list[StoredOwner]:
    query = sa.select(OWNERS).where(OWNERS.c.course == course).order_by(OWNERS.c.name)
    named = sa.select(BOTS.c.owner, BOTS.c.name).where(
        BOTS.c.course == course, BOTS.c.state != BotState.DELETED.value
    )
    if name is not None:
        query = query.where(OWNERS.c.name == name)
        named = named.where(BOTS.c.owner == name)
    bots: dict[str, list[str]] = {}
    for owner, bot in connection.execute(named.order_by(BOTS.c.created, BOTS.c.name)):
        bots.setdefault(owner, []).append(bot)
    rows = connection.execute(query).mappings().all()
    return [_stored(row, tuple(bots.get(row["name"], ()))) for row in rows]


def owners(engine: Engine, course: str) -> list[StoredOwner]:
    """Every owner of ``course``, by name, with its bots (those without bots too: the grades
    give every owner a row)."""
    with engine.connect() as connection:
        return _read(connection, course)


def owner(engine: Engine, course: str, name: str) -> StoredOwner | None:
    """The owner ``name`` of ``course``, or None."""
    with engine.connect() as connection:
        found = _read(connection, course, name)
    return found[0] if found else None


def _one(connection: sa.Connection, course: str, name: str) -> StoredOwner:
    found = _read(connection, course, name)
    if not found:
        raise UnknownOwnerError(f"owner: course '{course}' has no owner named '{name}'")
    return found[0]


def ensure_owner(connection: sa.Connection, course: str, name: str) -> None:
    """Make the owner ``name`` of ``course`` without a token unless it exists: the owner of a
    bot the admin or organizer creates for someone (they are trusted to name the owner)."""
    exists = connection.execute(
        sa.select(OWNERS.c.id).where(OWNERS.c.course == course, OWNERS.c.name == name)
    ).first()
    if exists is None:
        connection.execute(
            OWNERS.insert().values(
                course=course, name=name, token_hash="", state=_ENABLED, created=now()
            )
        )


def create_bot_for(engine: Engine, name: str, *, course: str, owner: str) -> IssuedToken:
    """Create the bot ``name`` of ``owner`` in ``course`` as the admin or organizer does
    (:func:`.bots.create_bot`), making its owner (without a token) if the course has none
    of that name, in one transaction."""
    with writing(engine) as connection:
        if owner:
            check_owner(owner)
            ensure_owner(connection, course, owner)
        return create_bot(engine, name, course=course, owner=owner, connection=connection)


def register_with_invite(engine: Engine, code: str, name: str, owner: str) -> IssuedToken:
    """Register the owner ``owner`` and its first bot ``name`` with an invite ``code``: use the
    code once, create the owner with a new owner token and the bot in the code's course, in one
    transaction. An empty ``owner`` is the bot's own name (one bot, one student).

    Returns:
        The bot, its token and the owner token (``owner_token``): each shown only this once.

    Raises:
        InviteError: the code is wrong, expired, revoked or used up (one message for all).
        OwnerTakenError: the course has an owner of that name (:func:`owner_refused`).
        BadBotNameError, BadOwnerError, DuplicateBotError: as :func:`.bots.create_bot`.
        The code is not used when any of these is raised.
    """
    match = INVITE_PATTERN.match(code.strip())
    if match is None:
        raise InviteError(INVITE_REFUSED)
    course, invite_id, secret = match.groups()
    owner = owner.strip() or name
    # The write lock first: of two registrations racing for a code, the second waits (SQLite).
    with writing(engine) as connection:
        row = (
            connection.execute(
                sa.select(INVITES).where(INVITES.c.id == invite_id).with_for_update()
            )
            .mappings()
            .one_or_none()
        )
        if row is None or row["course"] != course:
            raise InviteError(INVITE_REFUSED)
        if not token_matches(secret, row["code_hash"]) or not stored_invite(row).usable(now()):
            raise InviteError(INVITE_REFUSED)
        # Guarded increment: of two registrations racing for a code's last use, one wins.
        used = connection.execute(
            INVITES.update()
            .where(INVITES.c.id == invite_id, INVITES.c.used < INVITES.c.uses)
            .values(used=INVITES.c.used + 1)
        ).rowcount
        if not used:
            raise InviteError(INVITE_REFUSED)
        check_owner(owner)
        token, stamp = _owner_token(course, owner), now()
        taken = connection.execute(
            sa.select(OWNERS.c.id).where(OWNERS.c.course == course, OWNERS.c.name == owner)
        ).first()
        if taken is not None:
            raise OwnerTakenError(owner_refused(course, owner))
        try:  # a race on PostgreSQL: the unique constraint refuses the second (rolled back)
            connection.execute(
                OWNERS.insert().values(
                    course=course,
                    name=owner,
                    token_hash=hash_token(token),
                    token_issued=stamp,
                    state=_ENABLED,
                    invite_id=invite_id,
                    created=stamp,
                )
            )
        except IntegrityError:
            raise OwnerTakenError(owner_refused(course, owner)) from None
        issued = create_bot(engine, name, course=course, owner=owner, connection=connection)
    return IssuedToken(issued.bot, issued.token, token)


def _check(connection: sa.Connection, token: str) -> sa.RowMapping:
    """The owner row ``token`` is the token of (OwnerTokenError otherwise)."""
    match = _TOKEN_PATTERN.match(token.strip())
    if match is None:
        raise OwnerTokenError(OWNER_TOKEN_REFUSED)
    course, name, _ = match.groups()
    row = (
        connection.execute(
            sa.select(OWNERS).where(OWNERS.c.course == course, OWNERS.c.name == name)
        )
        .mappings()
        .one_or_none()
    )
    if row is None or not row["token_hash"] or not token_matches(token.strip(), row["token_hash"]):
        raise OwnerTokenError(OWNER_TOKEN_REFUSED)
    return row


def owner_of_token(engine: Engine, token: str) -> StoredOwner | None:
    """The owner whose current token ``token`` is (enabled or not), or None."""
    try:
        with engine.connect() as connection:
            row = _check(connection, token)
            return _one(connection, row["course"], row["name"])
    except OwnerTokenError:
        return None


def register_with_owner_token(engine: Engine, token: str, name: str) -> IssuedToken:
    """Register the bot ``name`` of the owner whose token ``token`` is, in its course.

    Raises:
        OwnerTokenError: the token is not an owner's current token (one message).
        OwnerDisabledError: the owner is disabled.
        BadBotNameError, DuplicateBotError: as :func:`.bots.create_bot`.
    """
    with writing(engine) as connection:
        row = _check(connection, token)
        if row["state"] == OWNER_DISABLED:
            raise OwnerDisabledError(disabled_refusal(row["course"], row["name"]))
        return create_bot(
            engine, name, course=row["course"], owner=row["name"], connection=connection
        )


def _new_token(connection: sa.Connection, course: str, name: str) -> IssuedOwnerToken:
    token = _owner_token(course, name)
    changed = connection.execute(
        OWNERS.update()
        .where(OWNERS.c.course == course, OWNERS.c.name == name)
        .values(token_hash=hash_token(token), token_issued=now())
    ).rowcount
    if not changed:
        raise UnknownOwnerError(f"owner: course '{course}' has no owner named '{name}'")
    return IssuedOwnerToken(_one(connection, course, name), token)


def rotate_owner_token(engine: Engine, token: str) -> IssuedOwnerToken:
    """A new owner token for the owner whose current token ``token`` is; the old one stops
    working at once (its bots' own tokens are not touched).

    Raises:
        OwnerTokenError: the token is not an owner's current token.
    """
    with writing(engine) as connection:
        row = _check(connection, token)
        return _new_token(connection, row["course"], row["name"])


def issue_owner_token(engine: Engine, course: str, name: str) -> IssuedOwnerToken:
    """The organizer's new owner token for the owner ``name`` of ``course`` (one made before
    owners had tokens, or one who lost theirs); the old one stops working at once.

    Raises:
        UnknownOwnerError: the course has no such owner.
    """
    with writing(engine) as connection:
        return _new_token(connection, course, name)


def set_owner_enabled(engine: Engine, course: str, name: str, enabled: bool) -> StoredOwner:
    """Enable or disable the owner ``name`` of ``course``; twice is no error. A disabled
    owner's bots are refused at Hello and entered nowhere (its bots' states are kept).

    Raises:
        UnknownOwnerError: the course has no such owner.
    """
    with writing(engine) as connection:
        connection.execute(
            OWNERS.update()
            .where(OWNERS.c.course == course, OWNERS.c.name == name)
            .values(state=_ENABLED if enabled else OWNER_DISABLED)
        )
        return _one(connection, course, name)

"""The bots the referee knows: their names, their tokens and their states.

A bot's token is shown once, when the bot is created or its token rotated, and stored only as a
salted SHA-256 hash (the text names the scheme, so it can change later without breaking old
bots). A bot is ``enabled`` (it may connect), ``disabled`` (refused until enabled; its token is
kept) or ``deleted`` (refused for good; its row stays, so its name stays taken and its matches,
tournaments and ratings still name it; its token hash is emptied, so no token matches it).

What :func:`check_bot` tells a stranger: a wrong token is "wrong token" whatever the bot's state,
so nobody without the token learns that a bot is disabled; only the right token hears "disabled".
A deleted bot is "deleted" to every token: its hash is gone, so no token can be checked, and its
name and history are public anyway (standings, match records), so saying so tells its owner why
and a stranger nothing new.
"""

from __future__ import annotations

import datetime as dt
import enum
import hashlib
import hmac
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from domino_arena.server.store.tables import BOTS, DEFAULT_COURSE, OWNERS, now, utc

NAME_PATTERN: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
"""A bot name: 1-64 letters, digits, ``_``, ``.`` or ``-``, starting with a letter or digit."""
NAME_RULE: Final = "use 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit"
""":data:`NAME_PATTERN` in words, for the errors that refuse a name."""
OWNER_PATTERN: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")
"""Who owns a bot (a student id or address): 1-64 letters, digits, ``_``, ``.``, ``-``, ``@``."""
OWNER_RULE: Final = (
    "use 1-64 letters, digits, '_', '.', '-' or '@', starting with a letter or digit"
)

# Tokens are 256 random bits, not passwords: no brute force can guess one, so a slow key
# stretch (scrypt) protects nothing and cost 50 ms of CPU and 16 MiB per login (1,000 bots
# logging in at once held 287 MiB). A salted SHA-256, as API-token stores use, suffices.
_HASH_PATTERN: Final = re.compile(r"^sha256\$([0-9a-f]{32})\$([0-9a-f]{64})$")


class BadOwnerError(ValueError):
    """An owner name outside :data:`OWNER_PATTERN`."""


class DuplicateBotError(ValueError):
    """A bot with that name exists already."""


class BadBotNameError(ValueError):
    """A bot name outside :data:`NAME_PATTERN`."""


class UnknownBotError(KeyError):
    """No bot has that name."""

    def __str__(self) -> str:  # KeyError would show the message quoted
        return str(self.args[0]) if self.args else ""


class DeletedBotError(ValueError):
    """The bot was deleted: it cannot be enabled, disabled or given a token again."""


class BotState(enum.Enum):
    """Whether a bot may connect (the ``bots.state`` column)."""

    ENABLED = "enabled"
    DISABLED = "disabled"
    DELETED = "deleted"


class BotCheck(enum.Enum):
    """The answer to "is this the bot it claims to be, and may it connect?"."""

    OK = "ok"
    UNKNOWN = "unknown bot"
    WRONG_TOKEN = "wrong token"
    DISABLED = "bot disabled"
    """The right token of a disabled bot (a wrong one is WRONG_TOKEN)."""
    DELETED = "bot deleted"
    """Any token of a deleted bot (its hash is gone)."""
    OWNER_DISABLED = "owner disabled"
    """The right token of a bot whose owner the organizer disabled (docs/courses.md: owners)."""


@dataclass(frozen=True, slots=True)
class StoredBot:
    """A bot as the referee keeps it (never its token)."""

    name: str
    state: BotState
    created: dt.datetime
    token_issued: dt.datetime | None
    """When its current token was made; None once deleted."""
    course: str = DEFAULT_COURSE
    """The course it belongs to (docs/courses.md)."""
    owner: str = ""
    """Who registered it; "" when made for nobody (by the admin or an organizer)."""
    owner_enabled: bool = True
    """False while its owner is disabled: it may not connect nor be entered anywhere."""
    allow_people: bool = False
    """Its owner lets people of its course play against it (docs/people.md)."""


@dataclass(frozen=True, slots=True)
class IssuedToken:
    """A bot and its new token: the one time the token is known outside the bot."""

    bot: StoredBot
    token: str
    owner_token: str = ""
    """Its owner's new token when this registration made the owner (docs/courses.md: owners),
    shown this once as the bot's is; "" otherwise."""


def check_owner(owner: str) -> None:
    """Raise :class:`BadOwnerError` unless ``owner`` may name a bot's owner."""
    if not OWNER_PATTERN.match(owner):
        raise BadOwnerError(f"bad owner '{owner[:80]}': {OWNER_RULE}")


def check_name(name: str) -> None:
    """Raise :class:`BadBotNameError` unless ``name`` may name a bot."""
    if not NAME_PATTERN.match(name):
        raise BadBotNameError(f"bad bot name '{name}': {NAME_RULE}")


def course_of_match(seated: Sequence[StoredBot]) -> str | None:
    """The one course of a match seating ``seated`` (the stored bots of its seats, house seats
    left out); None when it seats no stored bot. A match is played within one course: the
    admin API's RunMatch and ``domino-arena import`` refuse one that mixes courses.

    Raises:
        ValueError: they belong to different courses (each bot named with its course).
    """
    courses = {bot.course for bot in seated}
    if len(courses) > 1:
        each = ", ".join(f"{bot.name}: {bot.course}" for bot in seated)
        raise ValueError(
            f"they belong to different courses ({each}); a match is played within one course"
        )
    return courses.pop() if courses else None


def new_token() -> str:
    """Return a new secret token: 256 random bits as 64 hex digits.

    Hex, not URL-safe base64: a token that begins with ``-`` reads as an option on a command
    line (``--token -x...``), and one in 64 base64 tokens would.
    """
    return secrets.token_hex(32)


def hash_token(token: str) -> str:
    """Return the salted SHA-256 hash of ``token`` as text that names its scheme."""
    salt = secrets.token_bytes(16)
    return f"sha256${salt.hex()}${hashlib.sha256(salt + token.encode()).hexdigest()}"


def token_matches(token: str, stored: str) -> bool:
    """Say whether ``token`` hashes to ``stored`` (compared in constant time)."""
    match = _HASH_PATTERN.match(stored)
    if match is None:
        return False
    salt, expected = bytes.fromhex(match.group(1)), bytes.fromhex(match.group(2))
    return hmac.compare_digest(hashlib.sha256(salt + token.encode()).digest(), expected)


def create_bot(
    engine: Engine,
    name: str,
    *,
    course: str = DEFAULT_COURSE,
    owner: str = "",
    connection: sa.Connection | None = None,
) -> IssuedToken:
    """Create the bot ``name``, enabled; return it with its new token (only its hash is kept).

    It belongs to ``course`` (which must exist: the caller checks) and to ``owner``. With
    ``connection`` it is inserted in that transaction (a registration that also uses up an
    invite); on :class:`DuplicateBotError` that transaction is to be rolled back.

    Raises:
        BadBotNameError: ``name`` does not fit :data:`NAME_PATTERN`.
        BadOwnerError: ``owner`` does not fit :data:`OWNER_PATTERN`.
        DuplicateBotError: a bot of that name exists, or existed (a deleted bot's name stays
            taken, so its matches name one bot only).
    """
    check_name(name)
    if owner:
        check_owner(owner)
    token, stamp = new_token(), now()
    row = {
        "name": name,
        "token_hash": hash_token(token),
        "created": stamp,
        "state": BotState.ENABLED.value,
        "token_issued": stamp,
        "course": course,
        "owner": owner,
    }
    try:
        if connection is not None:  # the caller's transaction: it rolls back on the error
            connection.execute(BOTS.insert().values(row))
        else:
            with engine.begin() as new_connection:
                new_connection.execute(BOTS.insert().values(row))
    except IntegrityError:
        raise DuplicateBotError(f"a bot named '{name}' exists already") from None
    return IssuedToken(StoredBot(name, BotState.ENABLED, stamp, stamp, course, owner), token)


def add_bot(engine: Engine, name: str) -> str:
    """Create the bot ``name`` and return its new token (:func:`create_bot`'s)."""
    return create_bot(engine, name).token


def check_bot(engine: Engine, name: str, token: str, *, runner: bool = True) -> BotCheck:
    """Say whether ``token`` is the token of the bot ``name`` (its own, or its hosted runner's
    unless ``runner`` is False) and the bot may connect. The runner's token connects the bot and
    nothing more: what its owner does with the bot's token (rotate it, submit a version, read
    its logs) takes the bot's own (``runner=False``).

    A wrong token is WRONG_TOKEN whatever the state; DISABLED needs the right token; a deleted
    bot is DELETED to every token (see the module's docstring).
    """
    with engine.connect() as connection:
        found = connection.execute(
            sa.select(BOTS.c.token_hash, BOTS.c.runner_token_hash, BOTS.c.state, OWNERS.c.state)
            .select_from(_WITH_OWNER)
            .where(BOTS.c.name == name)
        ).one_or_none()
    if found is None:
        return BotCheck.UNKNOWN
    stored, runner_hash, state, owner_state = found
    runner_hash = runner_hash if runner else ""
    if state == BotState.DELETED.value:
        return BotCheck.DELETED
    # Both compared every time (each in constant time): the hosted runner's token
    # (server/store/hosted.py) is as good as the bot's own.
    own, hosted = token_matches(token, stored), token_matches(token, runner_hash)
    if not (own or hosted):
        return BotCheck.WRONG_TOKEN
    if state == BotState.DISABLED.value:
        return BotCheck.DISABLED
    return BotCheck.OWNER_DISABLED if owner_state == OWNER_DISABLED else BotCheck.OK


def bot_names(engine: Engine) -> list[str]:
    """Return the names of every bot that is not deleted (that may still play), sorted."""
    with engine.connect() as connection:
        return list(
            connection.execute(
                sa.select(BOTS.c.name)
                .where(BOTS.c.state != BotState.DELETED.value)
                .order_by(BOTS.c.name)
            ).scalars()
        )


OWNER_DISABLED: Final = "disabled"
"""``owners.state`` of an owner the organizer disabled (server/store/owners.py)."""
_WITH_OWNER: Final = BOTS.outerjoin(
    OWNERS, sa.and_(OWNERS.c.course == BOTS.c.course, OWNERS.c.name == BOTS.c.owner)
)
"""A bot and its owner's row, if it has one (an owner of "" has none)."""
_COLUMNS: Final = (
    BOTS.c.name,
    BOTS.c.state,
    BOTS.c.created,
    BOTS.c.token_issued,
    BOTS.c.course,
    BOTS.c.owner,
    OWNERS.c.state.label("owner_state"),
    BOTS.c.allow_people,
)


def _select() -> sa.Select[Any]:
    return sa.select(*_COLUMNS).select_from(_WITH_OWNER)


def _stored(mapping: sa.RowMapping) -> StoredBot:
    issued = mapping["token_issued"]
    return StoredBot(
        name=mapping["name"],
        state=BotState(mapping["state"]),
        created=utc(mapping["created"]),
        token_issued=None if issued is None else utc(issued),
        course=mapping["course"],
        owner=mapping["owner"],
        owner_enabled=mapping["owner_state"] != OWNER_DISABLED,
        allow_people=bool(mapping["allow_people"]),
    )


def bots(
    engine: Engine, *, include_deleted: bool = False, course: str | None = None
) -> list[StoredBot]:
    """Return every bot (the deleted ones too if asked; of ``course`` alone if given), by name."""
    query = _select().order_by(BOTS.c.name)
    if course is not None:
        query = query.where(BOTS.c.course == course)
    if not include_deleted:
        query = query.where(BOTS.c.state != BotState.DELETED.value)
    with engine.connect() as connection:
        return [_stored(row) for row in connection.execute(query).mappings()]


def bot(engine: Engine, name: str) -> StoredBot | None:
    """Return the bot ``name`` (deleted or not), or None."""
    with engine.connect() as connection:
        row = connection.execute(_select().where(BOTS.c.name == name)).mappings().one_or_none()
    return None if row is None else _stored(row)


def _change(
    connection: sa.Connection, name: str, refusal: str, values: dict[str, object]
) -> StoredBot:
    """Update the bot ``name`` with ``values`` unless it is deleted; return it changed.

    One UPDATE guarded by the state, so two admins racing cannot revive a deleted bot.

    Raises:
        UnknownBotError: no bot has that name.
        DeletedBotError: the bot is deleted (``refusal`` says what was refused).
    """
    changed = connection.execute(
        BOTS.update()
        .where(BOTS.c.name == name, BOTS.c.state != BotState.DELETED.value)
        .values(values)
    ).rowcount
    row = connection.execute(_select().where(BOTS.c.name == name)).mappings().one_or_none()
    if row is None:
        raise UnknownBotError(f"no bot is named '{name}'")
    if not changed:
        raise DeletedBotError(f"bot '{name}' is deleted: {refusal}")
    return _stored(row)


def rotate_token(engine: Engine, name: str) -> IssuedToken:
    """Give the bot ``name`` a new token; the old one stops matching at once. Its state stays.

    Raises:
        UnknownBotError: no bot has that name.
        DeletedBotError: the bot is deleted.
    """
    token = new_token()
    with engine.begin() as connection:
        changed = _change(
            connection,
            name,
            "a deleted bot gets no new token",
            {"token_hash": hash_token(token), "token_issued": now()},
        )
    return IssuedToken(changed, token)


def set_enabled(engine: Engine, name: str, enabled: bool) -> StoredBot:
    """Enable or disable the bot ``name`` (its token is kept); doing it twice is no error.

    Raises:
        UnknownBotError: no bot has that name.
        DeletedBotError: the bot is deleted.
    """
    state = BotState.ENABLED if enabled else BotState.DISABLED
    refusal = f"a deleted bot cannot be {state.value}"
    with engine.begin() as connection:
        return _change(connection, name, refusal, {"state": state.value})


def set_allow_people(engine: Engine, name: str, allow: bool) -> StoredBot:
    """Let people of its course play against the bot ``name``, or stop (docs/people.md).

    Raises:
        UnknownBotError: no bot has that name.
        DeletedBotError: the bot is deleted.
    """
    with engine.begin() as connection:
        return _change(connection, name, "a deleted bot cannot be changed", {"allow_people": allow})


def delete_bot(engine: Engine, name: str) -> StoredBot:
    """Delete the bot ``name`` for good: its token hash is emptied; its row (its name, and the
    matches, tournaments and ratings that name it) stays.

    Raises:
        UnknownBotError: no bot has that name.
        DeletedBotError: the bot is deleted already.
    """
    with engine.begin() as connection:
        return _change(
            connection,
            name,
            "it was deleted already",
            {
                "state": BotState.DELETED.value,
                "token_hash": "",
                "token_issued": None,
                "runner_token_hash": "",
            },
        )

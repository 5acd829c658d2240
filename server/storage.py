"""What the referee keeps: bots (with hashed tokens) and finished matches (DESIGN.md decision 12).

SQLAlchemy Core over a synchronous engine, so the same code runs on the default SQLite file and
on PostgreSQL by URL. Every call blocks: the service runs them off the event loop
(``asyncio.to_thread`` / ``trio.to_thread.run_sync``). The schema lives here, in
:data:`METADATA`, and nowhere else (issue 4 adds migrations and ratings on top of it).

A bot's token is shown once, when the bot is created, and stored only as a salted SHA-256 hash
(the text names the scheme, so it can change later without breaking old bots).

>>> storage = Storage("sqlite://")
>>> storage.open()
>>> token = storage.add_bot("alice")
>>> storage.check_bot("alice", token), storage.check_bot("alice", "guess")
(<BotCheck.OK: 'ok'>, <BotCheck.WRONG_TOKEN: 'wrong token'>)
"""

from __future__ import annotations

import datetime as dt
import enum
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, IntegrityError, NoSuchModuleError, SQLAlchemyError

DEFAULT_URL: Final = "sqlite:///domino-arena.db"
"""The database of ``serve`` and ``bot add`` unless told otherwise: a file in the current folder."""

NAME_PATTERN: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
"""A bot name: 1-64 letters, digits, ``_``, ``.`` or ``-``, starting with a letter or digit."""

MAX_SEED: Final = 2**63 - 1
"""The largest seed a match row can hold (a signed 64-bit column on every database)."""

# Tokens are 256 random bits, not passwords: no brute force can guess one, so a slow key
# stretch (scrypt) protects nothing and cost 50 ms of CPU and 16 MiB per login (1,000 bots
# logging in at once held 287 MiB). A salted SHA-256, as API-token stores use, suffices.
_HASH_PATTERN: Final = re.compile(r"^sha256\$([0-9a-f]{32})\$([0-9a-f]{64})$")

METADATA: Final = sa.MetaData()

BOTS: Final = sa.Table(
    "bots",
    METADATA,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(64), nullable=False, unique=True),
    sa.Column("token_hash", sa.String(255), nullable=False),
    sa.Column("created", sa.DateTime(timezone=True), nullable=False),
)

MATCHES: Final = sa.Table(
    "matches",
    METADATA,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("game", sa.String(32), nullable=False),
    sa.Column("options", sa.JSON, nullable=False),
    sa.Column("seats", sa.JSON, nullable=False),
    sa.Column("seed", sa.BigInteger, nullable=False),
    sa.Column("termination", sa.String(16), nullable=False),
    sa.Column("winner", sa.Integer, nullable=True),
    sa.Column("scores", sa.JSON, nullable=False),
    sa.Column("faulted_seat", sa.Integer, nullable=True),
    sa.Column("fault", sa.String(16), nullable=True),
    sa.Column("detail", sa.Text, nullable=False),
    sa.Column("record", sa.Text, nullable=True),
    sa.Column("created", sa.DateTime(timezone=True), nullable=False),
)


class StorageError(Exception):
    """The database cannot be opened or reached; the message names it (password hidden)."""


class DuplicateBotError(ValueError):
    """A bot with that name exists already."""


class BadBotNameError(ValueError):
    """A bot name outside :data:`NAME_PATTERN`."""


class BotCheck(enum.Enum):
    """The answer to "is this the bot it claims to be?"."""

    OK = "ok"
    UNKNOWN = "unknown bot"
    WRONG_TOKEN = "wrong token"


@dataclass(frozen=True, slots=True)
class StoredMatch:
    """One row of ``matches``: how a match ended, and its record when there is one."""

    id: str
    game: str
    options: dict[str, Any]
    seats: tuple[str, ...]
    seed: int
    termination: str
    """A :class:`~domino_arena.server.seats.Termination` value: normal, forfeit, void, aborted."""
    winner: int | None
    scores: tuple[int, ...]
    faulted_seat: int | None
    fault: str | None
    detail: str
    record: str | None
    """The match record as JSON Lines; None when the referee could not write one."""
    created: dt.datetime


def check_name(name: str) -> None:
    """Raise :class:`BadBotNameError` unless ``name`` may name a bot."""
    if not NAME_PATTERN.match(name):
        raise BadBotNameError(
            f"bad bot name '{name}': use 1-64 letters, digits, '_', '.' or '-', "
            "starting with a letter or digit"
        )


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


def display_url(url: str) -> str:
    """Return ``url`` fit to print: the password hidden, or the text itself if it is no URL."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


class Storage:
    """The referee's database. Build it, :meth:`open` it, then call it from any thread.

    Args:
        url: a SQLAlchemy URL, e.g. ``sqlite:///domino-arena.db`` or
            ``postgresql+psycopg://user@host/db`` (``postgresql://`` picks psycopg too).
        schema: PostgreSQL only: keep the tables in this schema (created if missing), so
            several test runs can share one database.
    """

    def __init__(self, url: str, *, schema: str | None = None) -> None:
        self.url = url
        self.schema = schema
        self._engine: Engine | None = None

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            raise RuntimeError("Storage.open() was not called")
        return self._engine

    def open(self) -> None:
        """Connect and create any missing table.

        Raises:
            StorageError: the URL is bad, its driver is missing, or the database cannot be
                reached or opened; the message names the database and the reason, in one line.
        """
        where = display_url(self.url)
        try:
            url = make_url(self.url)
            if url.drivername == "postgresql":
                url = url.set(drivername="postgresql+psycopg")
            engine = sa.create_engine(url, pool_pre_ping=True)
        except (ArgumentError, NoSuchModuleError, ImportError, ValueError) as exc:
            raise StorageError(f"cannot open the database {where}: {_reason(exc)}") from None
        if self.schema is not None:
            engine = engine.execution_options(schema_translate_map={None: self.schema})
        for attempt in (1, 2):
            try:
                with engine.begin() as connection:
                    if self.schema is not None:
                        connection.execute(sa.schema.CreateSchema(self.schema, if_not_exists=True))
                    METADATA.create_all(connection)
                break
            except SQLAlchemyError as exc:
                # Two processes opening a new database at once race to create the tables; the
                # loser's second look finds them.
                if attempt == 1 and "exist" in str(exc):
                    continue
                engine.dispose()
                raise StorageError(f"cannot open the database {where}: {_reason(exc)}") from None
        self._engine = engine

    def close(self) -> None:
        """Close every pooled connection; the storage may be opened again."""
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

    def drop(self) -> None:
        """Drop the tables (and the schema, if one was given): for tests that share a server."""
        with self.engine.begin() as connection:
            METADATA.drop_all(connection)
            if self.schema is not None:
                connection.execute(sa.schema.DropSchema(self.schema, cascade=True))

    # -- bots -----------------------------------------------------------------------------------

    def add_bot(self, name: str) -> str:
        """Create the bot ``name`` and return its new token; only its hash is kept.

        Raises:
            BadBotNameError: ``name`` does not fit :data:`NAME_PATTERN`.
            DuplicateBotError: a bot of that name exists.
        """
        check_name(name)
        token = secrets.token_urlsafe(32)
        row = {"name": name, "token_hash": hash_token(token), "created": _now()}
        try:
            with self.engine.begin() as connection:
                connection.execute(BOTS.insert().values(row))
        except IntegrityError:
            raise DuplicateBotError(f"a bot named '{name}' exists already") from None
        return token

    def check_bot(self, name: str, token: str) -> BotCheck:
        """Say whether ``token`` is the token of the bot ``name``."""
        with self.engine.connect() as connection:
            stored = connection.execute(
                sa.select(BOTS.c.token_hash).where(BOTS.c.name == name)
            ).scalar_one_or_none()
        if stored is None:
            return BotCheck.UNKNOWN
        return BotCheck.OK if token_matches(token, stored) else BotCheck.WRONG_TOKEN

    def bot_names(self) -> list[str]:
        """Return the names of every bot, sorted."""
        with self.engine.connect() as connection:
            return list(connection.execute(sa.select(BOTS.c.name).order_by(BOTS.c.name)).scalars())

    # -- matches --------------------------------------------------------------------------------

    def save_match(self, match: StoredMatch) -> None:
        """Store a finished match, all of it or nothing (one transaction)."""
        if not 0 <= match.seed <= MAX_SEED:
            raise ValueError(f"seed {match.seed} does not fit a match row (0 to {MAX_SEED})")
        with self.engine.begin() as connection:
            connection.execute(
                MATCHES.insert().values(
                    id=match.id,
                    game=match.game,
                    options=match.options,
                    seats=list(match.seats),
                    seed=match.seed,
                    termination=match.termination,
                    winner=match.winner,
                    scores=list(match.scores),
                    faulted_seat=match.faulted_seat,
                    fault=match.fault,
                    detail=match.detail,
                    record=match.record,
                    created=match.created,
                )
            )

    def match(self, match_id: str) -> StoredMatch | None:
        """Return the stored match ``match_id``, or None."""
        with self.engine.connect() as connection:
            row = connection.execute(
                sa.select(MATCHES).where(MATCHES.c.id == match_id)
            ).one_or_none()
        return None if row is None else _stored_match(row._mapping)

    def matches(self, limit: int = 100) -> list[StoredMatch]:
        """Return the latest ``limit`` matches, newest first."""
        with self.engine.connect() as connection:
            rows = connection.execute(
                sa.select(MATCHES).order_by(MATCHES.c.created.desc(), MATCHES.c.id).limit(limit)
            ).all()
        return [_stored_match(row._mapping) for row in rows]


def _stored_match(row: Any) -> StoredMatch:
    created: dt.datetime = row["created"]
    if created.tzinfo is None:  # SQLite keeps no zone; every time written here is UTC
        created = created.replace(tzinfo=dt.UTC)
    return StoredMatch(
        id=row["id"],
        game=row["game"],
        options=dict(row["options"]),
        seats=tuple(row["seats"]),
        seed=int(row["seed"]),
        termination=row["termination"],
        winner=row["winner"],
        scores=tuple(row["scores"]),
        faulted_seat=row["faulted_seat"],
        fault=row["fault"],
        detail=row["detail"],
        record=row["record"],
        created=created,
    )


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _reason(exc: BaseException) -> str:
    """The first line of what the driver said, without SQLAlchemy's background links."""
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    return first.removeprefix("(Background on this error at: ").strip()

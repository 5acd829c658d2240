"""What the referee keeps: bots, finished matches, tournaments and Elo ratings (DESIGN.md 11, 12).

SQLAlchemy Core over a synchronous engine, so the same code runs on the default SQLite file and
on PostgreSQL by URL. Every call blocks: the service runs them off the event loop
(``asyncio.to_thread`` / ``trio.to_thread.run_sync``). The schema that queries use lives here,
in :data:`METADATA`; the versioned migrations in ``migrations/`` build the same schema on a
database (a test compares the two), and :meth:`Storage.open` runs them.

A finished match and the rating change it causes are written in one transaction, and a match
is never stored twice (same id, or same tournament game): a retry after a lost acknowledgement
finds it and writes nothing (DESIGN.md decisions 11 and 12).

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
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final

import sqlalchemy as sa
from alembic.util import CommandError
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine, RowMapping, make_url
from sqlalchemy.exc import ArgumentError, IntegrityError, NoSuchModuleError, SQLAlchemyError

from domino_arena.server.ladder import elo
from domino_arena.server.store import migrations

DEFAULT_URL: Final = "sqlite:///domino-arena.db"
"""The database of ``serve`` and ``bot add`` unless told otherwise: a file in the current folder."""

NAME_PATTERN: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
"""A bot name: 1-64 letters, digits, ``_``, ``.`` or ``-``, starting with a letter or digit."""

MAX_SEED: Final = 2**63 - 1
"""The largest seed a match row can hold (a signed 64-bit column on every database)."""

RATED_TERMINATIONS: Final = frozenset({"normal", "forfeit"})
"""The endings that count for the ladder; void and aborted matches never do."""

FAULT_POLICIES: Final = frozenset({"forfeit", "substitute"})

_SCHEMA_PATTERN: Final = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

# Tokens are 256 random bits, not passwords: no brute force can guess one, so a slow key
# stretch (scrypt) protects nothing and cost 50 ms of CPU and 16 MiB per login (1,000 bots
# logging in at once held 287 MiB). A salted SHA-256, as API-token stores use, suffices.
_HASH_PATTERN: Final = re.compile(r"^sha256\$([0-9a-f]{32})\$([0-9a-f]{64})$")

# Set on a connection to make its next SQLite transaction take the write lock at BEGIN, the
# SQLite counterpart of PostgreSQL's SELECT ... FOR UPDATE.
_SQLITE_IMMEDIATE: Final = "domino_arena_sqlite_immediate"

METADATA: Final = sa.MetaData()

BOTS: Final = sa.Table(
    "bots",
    METADATA,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(64), nullable=False, unique=True),
    sa.Column("token_hash", sa.String(255), nullable=False),
    sa.Column("created", sa.DateTime(timezone=True), nullable=False),
)

TOURNAMENTS: Final = sa.Table(
    "tournaments",
    METADATA,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("game", sa.String(32), nullable=False),
    sa.Column("options", sa.JSON, nullable=False),
    sa.Column("entrants", sa.JSON, nullable=False),
    sa.Column("games_per_pairing", sa.Integer, nullable=False),
    sa.Column("duplicate_deals", sa.Boolean, nullable=False),
    sa.Column("move_ms", sa.Integer, nullable=False),
    sa.Column("bank_ms", sa.Integer, nullable=False),
    sa.Column("grace_ms", sa.Integer, nullable=False),
    sa.Column("fault_policy", sa.String(16), nullable=False),
    sa.Column("max_strikes", sa.Integer, nullable=False),
    sa.Column("concurrency", sa.Integer, nullable=False),
    sa.Column("wait_seconds", sa.Double, nullable=False),
    sa.Column("seed", sa.BigInteger, nullable=False),
    sa.Column("rated", sa.Boolean, nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("created", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated", sa.DateTime(timezone=True), nullable=False),
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
    sa.Column(
        "tournament_id",
        sa.String(64),
        sa.ForeignKey("tournaments.id", name="fk_matches_tournament"),
        nullable=True,
    ),
    sa.Column("game_index", sa.Integer, nullable=True),
    sa.Column("deal_id", sa.Integer, nullable=True),
    sa.Column("rotation", sa.Integer, nullable=True),
    sa.Column("side_of_seat", sa.JSON, nullable=False, server_default=sa.text("'[]'")),
    sa.Column("faults", sa.JSON, nullable=False, server_default=sa.text("'[]'")),
    sa.Column("rated", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.UniqueConstraint("tournament_id", "game_index", name="uq_matches_tournament_game"),
    sa.Index("ix_matches_created", "created"),
)

RATINGS: Final = sa.Table(
    "ratings",
    METADATA,
    sa.Column("pool", sa.String(32), primary_key=True),
    sa.Column("bot", sa.String(64), primary_key=True),
    sa.Column("rating", sa.Double, nullable=False),
    sa.Column("games", sa.Integer, nullable=False),
    sa.Column("wins", sa.Integer, nullable=False),
    sa.Column("draws", sa.Integer, nullable=False),
    sa.Column("losses", sa.Integer, nullable=False),
    sa.Column("faults", sa.Integer, nullable=False),
    sa.Column("information", sa.Double, nullable=False),
)
"""Each bot's current rating in each pool (a pool is a game type: the match's ``game``)."""

RATED_GAMES: Final = sa.Table(
    "rated_games",
    METADATA,
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("pool", sa.String(32), nullable=False),
    sa.Column(
        "match_id",
        sa.String(64),
        sa.ForeignKey("matches.id", name="fk_rated_games_match"),
        nullable=False,
        unique=True,
    ),
    sa.Index("ix_rated_games_pool_seq", "pool", "seq"),
)
"""The matches that moved ratings, in the order they did: replaying them gives ``ratings``."""


class StorageError(Exception):
    """The database cannot be opened or reached; the message names it (password hidden)."""


class DuplicateBotError(ValueError):
    """A bot with that name exists already."""


class BadBotNameError(ValueError):
    """A bot name outside :data:`NAME_PATTERN`."""


class DuplicateTournamentError(ValueError):
    """A tournament with that id exists already."""


class UnknownTournamentError(KeyError):
    """No tournament has that id."""

    def __str__(self) -> str:  # KeyError would show the message quoted
        return str(self.args[0]) if self.args else ""


class BotCheck(enum.Enum):
    """The answer to "is this the bot it claims to be?"."""

    OK = "ok"
    UNKNOWN = "unknown bot"
    WRONG_TOKEN = "wrong token"


class TournamentState(enum.Enum):
    """Where a tournament is in its life; only RUNNING tournaments start games."""

    CREATED = "created"
    RUNNING = "running"
    PAUSED = "paused"
    CANCELLED = "cancelled"
    FINISHED = "finished"


@dataclass(frozen=True, slots=True)
class StoredMatch:
    """One row of ``matches``: how a match ended, and its record when there is one."""

    id: str
    game: str
    options: dict[str, Any]
    seats: tuple[str, ...]
    seed: int
    termination: str
    """A :class:`~domino_arena.server.play.seats.Termination` value."""
    winner: int | None
    """The winning side, None when nobody won."""
    scores: tuple[int, ...]
    """Per side."""
    faulted_seat: int | None
    fault: str | None
    detail: str
    record: str | None
    """The match record as JSON Lines; None when the referee could not write one."""
    created: dt.datetime
    tournament_id: str | None = None
    game_index: int | None = None
    """The game's position in its tournament's schedule; unique within the tournament."""
    deal_id: int | None = None
    """Games of a tournament with the same deal id are played from the same seed."""
    rotation: int | None = None
    side_of_seat: tuple[int, ...] = ()
    """The side of each seat; empty means one side per seat, in seat order."""
    faults: tuple[int, ...] = ()
    """Faults charged to each seat; empty means none."""
    rated: bool = False
    """Counts for the Elo ladder of its game (when it ended normally or by forfeit)."""


@dataclass(frozen=True, slots=True)
class StoredTournament:
    """One row of ``tournaments``: what to play and how, and where it stands.

    Raises:
        ValueError: a field out of its range (the message names the field and the rule).
    """

    id: str
    name: str
    game: str
    options: dict[str, Any]
    entrants: tuple[str, ...]
    games_per_pairing: int
    duplicate_deals: bool
    time_control_ms: tuple[int, int, int]
    """Per-move time, bank and network grace, in milliseconds."""
    fault_policy: str
    """``forfeit`` or ``substitute`` (DESIGN.md decision 9)."""
    max_strikes: int
    concurrency: int
    """How many of its games may run at once."""
    wait_seconds: float
    """How long a game waits for absent bots before it is played without them."""
    seed: int
    rated: bool
    state: TournamentState
    created: dt.datetime
    updated: dt.datetime

    def __post_init__(self) -> None:
        if not 1 <= len(self.id) <= 64:
            raise ValueError(f"id: expected 1-64 characters, got {self.id!r}")
        if not 1 <= len(self.name) <= 200:
            raise ValueError(f"name: expected 1-200 characters, got {len(self.name)}")
        if not 1 <= len(self.game) <= 32:
            raise ValueError(f"game: expected 1-32 characters, got {self.game!r}")
        for index, entrant in enumerate(self.entrants):
            if entrant in self.entrants[:index]:
                raise ValueError(f"entrants: {entrant!r} is listed twice; expected each once")
        for field, value, low in (
            ("games_per_pairing", self.games_per_pairing, 1),
            ("max_strikes", self.max_strikes, 1),
            ("concurrency", self.concurrency, 1),
        ):
            if value < low:
                raise ValueError(f"{field}: expected at least {low}, got {value}")
        if len(self.time_control_ms) != 3 or min(self.time_control_ms) < 0:
            raise ValueError(
                "time_control_ms: expected (move, bank, grace) milliseconds, none negative, "
                f"got {self.time_control_ms!r}"
            )
        if self.fault_policy not in FAULT_POLICIES:
            raise ValueError(
                f"fault_policy: expected one of {sorted(FAULT_POLICIES)}, got {self.fault_policy!r}"
            )
        if not self.wait_seconds >= 0:
            raise ValueError(f"wait_seconds: expected at least 0, got {self.wait_seconds}")
        if not 0 <= self.seed <= MAX_SEED:
            raise ValueError(f"seed: expected 0 to {MAX_SEED}, got {self.seed}")


def check_name(name: str) -> None:
    """Raise :class:`BadBotNameError` unless ``name`` may name a bot."""
    if not NAME_PATTERN.match(name):
        raise BadBotNameError(
            f"bad bot name '{name}': use 1-64 letters, digits, '_', '.' or '-', "
            "starting with a letter or digit"
        )


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


def display_url(url: str) -> str:
    """Return ``url`` fit to print: the password hidden, or the text itself if it is no URL."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


def sides_of(match: StoredMatch) -> tuple[int, ...]:
    """Return the side of each seat of ``match`` (one side per seat when it does not say)."""
    if match.side_of_seat:
        return match.side_of_seat
    if len(match.scores) != len(match.seats):
        raise ValueError(
            f"match {match.id}: side_of_seat is empty but there are {len(match.scores)} scores "
            f"for {len(match.seats)} seats; expected the side of each seat"
        )
    return tuple(range(len(match.seats)))


def rated_game_of(match: StoredMatch) -> elo.RatedGame:
    """Return ``match`` as the ladder rates it: its standing by score and winner, forfeits last.

    Raises:
        ValueError: the match did not end normally or by forfeit, or its fields disagree (a
            forfeit without a faulted seat, a bot in two seats, ...).
    """
    if match.termination not in RATED_TERMINATIONS:
        raise ValueError(
            f"match {match.id}: termination {match.termination!r} is never rated; "
            f"expected one of {sorted(RATED_TERMINATIONS)}"
        )
    sides = sides_of(match)
    forfeited_side = None
    if match.termination == "forfeit":
        if match.faulted_seat is None or not 0 <= match.faulted_seat < len(match.seats):
            raise ValueError(
                f"match {match.id}: faulted_seat: a forfeit needs the seat that forfeited "
                f"(0..{len(match.seats) - 1}), got {match.faulted_seat}"
            )
        forfeited_side = sides[match.faulted_seat]
    return elo.RatedGame(
        bots=match.seats,
        side_of_seat=sides,
        standing=elo.standing(match.scores, match.winner, forfeited_side),
        faults=match.faults or (0,) * len(match.seats),
    )


class Storage:
    """The referee's database. Build it, :meth:`open` it, then call it from any thread.

    Args:
        url: a SQLAlchemy URL, e.g. ``sqlite:///domino-arena.db`` or
            ``postgresql+psycopg://user@host/db`` (``postgresql://`` picks psycopg too).
        schema: PostgreSQL only: keep the tables (and the migrations' version table) in this
            schema, created if missing, so several test runs can share one database.
    """

    def __init__(self, url: str, *, schema: str | None = None) -> None:
        if schema is not None and not _SCHEMA_PATTERN.match(schema):
            raise ValueError(
                f"schema: expected 1-63 lowercase letters, digits or '_', not starting with a "
                f"digit, got {schema!r}"
            )
        self.url = url
        self.schema = schema
        self._engine: Engine | None = None

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            raise RuntimeError("Storage.open() was not called")
        return self._engine

    def open(self) -> None:
        """Connect and migrate the database to the newest schema.

        A database made by the first release (no version table) is recognised and upgraded
        with its rows. Two processes opening a new database at once both succeed.

        Raises:
            StorageError: the URL is bad, its driver is missing, or the database cannot be
                reached, opened or migrated; the message names the database and the reason, in
                one line.
        """
        where = display_url(self.url)
        try:
            engine = self._create_engine()
        except (ArgumentError, NoSuchModuleError, ImportError, ValueError) as exc:
            raise StorageError(f"cannot open the database {where}: {error_reason(exc)}") from None
        attempts = 3
        for attempt in range(1, attempts + 1):
            try:
                with engine.connect() as connection:
                    self._migrate(connection)
                break
            except (SQLAlchemyError, CommandError) as exc:
                # Two processes opening a new database at once race to create the tables; the
                # loser's next look finds the winner's revision and goes on from there.
                if attempt < attempts and isinstance(exc, SQLAlchemyError) and _is_race(exc):
                    continue
                engine.dispose()
                raise StorageError(
                    f"cannot open the database {where}: {error_reason(exc)}"
                ) from None
        self._engine = engine

    def _create_engine(self) -> Engine:
        url = make_url(self.url)
        if url.drivername == "postgresql":
            url = url.set(drivername="postgresql+psycopg")
        connect_args: dict[str, Any] = {}
        if self.schema is not None:
            if not url.drivername.startswith("postgresql"):
                raise ValueError(f"schema {self.schema!r} is for PostgreSQL only")
            connect_args["options"] = f"-c search_path={self.schema}"
        engine = sa.create_engine(url, pool_pre_ping=True, connect_args=connect_args)
        if engine.dialect.name == "sqlite":
            sa.event.listen(engine, "connect", _sqlite_connect)
            sa.event.listen(engine, "begin", _sqlite_begin)
        return engine

    def _migrate(self, connection: sa.Connection) -> None:
        postgres = connection.dialect.name == "postgresql"
        # SQLite openers take the write lock as they begin, so they wait for each other
        # (a deferred BEGIN that reads and then writes fails at once when another one did).
        connection.execution_options(**{_SQLITE_IMMEDIATE: True})
        if self.schema is not None:
            connection.execute(sa.schema.CreateSchema(self.schema, if_not_exists=True))
            connection.commit()
        if postgres:
            # Openers of one database wait for each other here instead of racing.
            connection.execute(sa.select(sa.func.pg_advisory_lock(_MIGRATION_LOCK)))
            connection.commit()
        try:
            migrations.upgrade(connection)
        finally:
            if postgres and not connection.invalidated:
                connection.rollback()
                connection.execute(sa.select(sa.func.pg_advisory_unlock(_MIGRATION_LOCK)))
                connection.commit()

    def close(self) -> None:
        """Close every pooled connection; the storage may be opened again."""
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

    def drop(self) -> None:
        """Drop the tables (and the schema, if one was given): for tests that share a server."""
        with self.engine.begin() as connection:
            METADATA.drop_all(connection)
            connection.execute(sa.text(f"DROP TABLE IF EXISTS {migrations.VERSION_TABLE}"))
            if self.schema is not None:
                connection.execute(sa.schema.DropSchema(self.schema, cascade=True))

    def schema_version(self) -> str:
        """Return the migration revision the database is at (``"0002"``, ...)."""
        with self.engine.connect() as connection:
            revision = migrations.current(connection)
        if revision is None:
            raise StorageError(f"the database {display_url(self.url)} has no schema version")
        return revision

    @contextmanager
    def _writing(self) -> Iterator[sa.Connection]:
        """A transaction that takes SQLite's write lock at once (PostgreSQL locks rows)."""
        with self.engine.connect() as connection:
            connection.execution_options(**{_SQLITE_IMMEDIATE: True})
            with connection.begin():
                yield connection

    # -- bots -----------------------------------------------------------------------------------

    def add_bot(self, name: str) -> str:
        """Create the bot ``name`` and return its new token; only its hash is kept.

        Raises:
            BadBotNameError: ``name`` does not fit :data:`NAME_PATTERN`.
            DuplicateBotError: a bot of that name exists.
        """
        check_name(name)
        token = new_token()
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

    def save_match(self, match: StoredMatch) -> bool:
        """Store a finished match and, if it is rated, its bots' new ratings, in one transaction.

        Returns:
            True when written; False when the match was stored already (same id, or the same
            game of the same tournament): nothing is written then, so a retry after a commit
            whose acknowledgement was lost counts no game twice.

        Raises:
            ValueError: a field out of range, or a rated match the ladder cannot rate (the
                message says which field and why); nothing is written.
        """
        _check_match(match)
        rated = match.rated and match.termination in RATED_TERMINATIONS
        game = rated_game_of(match) if rated else None
        try:
            with self._writing() as connection:
                if _stored_already(connection, match):
                    return False
                connection.execute(MATCHES.insert().values(_match_row(match)))
                if game is not None:
                    _rate(connection, match, game)
        except IntegrityError:
            # Someone else stored it between our look and our insert: it is stored once.
            with self.engine.connect() as connection:
                if _stored_already(connection, match):
                    return False
            raise
        return True

    def match(self, match_id: str) -> StoredMatch | None:
        """Return the stored match ``match_id``, or None."""
        with self.engine.connect() as connection:
            row = connection.execute(
                sa.select(MATCHES).where(MATCHES.c.id == match_id)
            ).one_or_none()
        return None if row is None else _stored_match(row._mapping)

    def matches(
        self,
        limit: int = 100,
        *,
        tournament_id: str | None = None,
        bot: str | None = None,
        game: str | None = None,
    ) -> list[StoredMatch]:
        """Return the latest ``limit`` matches, newest first, of those that fit every filter.

        Args:
            tournament_id: only the games of this tournament.
            bot: only matches where this bot had a seat.
            game: only matches of this game type (a pool).
        """
        query = sa.select(MATCHES).order_by(MATCHES.c.created.desc(), MATCHES.c.id).limit(limit)
        if tournament_id is not None:
            query = query.where(MATCHES.c.tournament_id == tournament_id)
        if game is not None:
            query = query.where(MATCHES.c.game == game)
        with self.engine.connect() as connection:
            if bot is not None:
                query = query.where(_seated(connection, bot))
            rows = connection.execute(query).all()
        return [_stored_match(row._mapping) for row in rows]

    # -- ratings --------------------------------------------------------------------------------

    def ratings(self, pool: str) -> dict[str, elo.Rating]:
        """Return every rated bot's rating in ``pool`` (a game type), by bot name."""
        with self.engine.connect() as connection:
            rows = connection.execute(
                sa.select(RATINGS).where(RATINGS.c.pool == pool).order_by(RATINGS.c.bot)
            ).all()
        return {row.bot: _rating(row._mapping) for row in rows}

    def rated_games(self, pool: str) -> list[elo.RatedGame]:
        """Return the games rated in ``pool``, in the order they were rated."""
        query = (
            sa.select(MATCHES)
            .join(RATED_GAMES, RATED_GAMES.c.match_id == MATCHES.c.id)
            .where(RATED_GAMES.c.pool == pool)
            .order_by(RATED_GAMES.c.seq)
        )
        with self.engine.connect() as connection:
            rows = connection.execute(query).all()
        return [rated_game_of(_stored_match(row._mapping)) for row in rows]

    def recompute_ratings(self, pool: str) -> dict[str, elo.Rating]:
        """Return the ratings of ``pool`` replayed from its rated games: what it should hold."""
        return elo.replay(self.rated_games(pool))

    def pools(self) -> list[str]:
        """Return the game types that have ratings, sorted."""
        with self.engine.connect() as connection:
            return list(
                connection.execute(
                    sa.select(RATINGS.c.pool).distinct().order_by(RATINGS.c.pool)
                ).scalars()
            )

    # -- tournaments ----------------------------------------------------------------------------

    def add_tournament(self, tournament: StoredTournament) -> None:
        """Store a new tournament.

        Raises:
            DuplicateTournamentError: a tournament with its id exists.
        """
        row = {
            "id": tournament.id,
            "name": tournament.name,
            "game": tournament.game,
            "options": tournament.options,
            "entrants": list(tournament.entrants),
            "games_per_pairing": tournament.games_per_pairing,
            "duplicate_deals": tournament.duplicate_deals,
            "move_ms": tournament.time_control_ms[0],
            "bank_ms": tournament.time_control_ms[1],
            "grace_ms": tournament.time_control_ms[2],
            "fault_policy": tournament.fault_policy,
            "max_strikes": tournament.max_strikes,
            "concurrency": tournament.concurrency,
            "wait_seconds": tournament.wait_seconds,
            "seed": tournament.seed,
            "rated": tournament.rated,
            "state": tournament.state.value,
            "created": tournament.created,
            "updated": tournament.updated,
        }
        try:
            with self.engine.begin() as connection:
                connection.execute(TOURNAMENTS.insert().values(row))
        except IntegrityError:
            raise DuplicateTournamentError(
                f"a tournament with id '{tournament.id}' exists already"
            ) from None

    def tournament(self, tournament_id: str) -> StoredTournament | None:
        """Return the tournament ``tournament_id``, or None."""
        with self.engine.connect() as connection:
            row = connection.execute(
                sa.select(TOURNAMENTS).where(TOURNAMENTS.c.id == tournament_id)
            ).one_or_none()
        return None if row is None else _stored_tournament(row._mapping)

    def tournaments(
        self, states: Collection[TournamentState] | None = None
    ) -> list[StoredTournament]:
        """Return the tournaments (only those in ``states``, if given), oldest first."""
        query = sa.select(TOURNAMENTS).order_by(TOURNAMENTS.c.created, TOURNAMENTS.c.id)
        if states is not None:
            query = query.where(TOURNAMENTS.c.state.in_([state.value for state in states]))
        with self.engine.connect() as connection:
            rows = connection.execute(query).all()
        return [_stored_tournament(row._mapping) for row in rows]

    def set_tournament_state(self, tournament_id: str, state: TournamentState) -> None:
        """Set the state of the tournament ``tournament_id`` (and its ``updated`` time).

        Raises:
            UnknownTournamentError: no tournament has that id.
        """
        with self.engine.begin() as connection:
            result = connection.execute(
                TOURNAMENTS.update()
                .where(TOURNAMENTS.c.id == tournament_id)
                .values(state=state.value, updated=_now())
            )
            if result.rowcount == 0:
                raise UnknownTournamentError(f"no tournament has id '{tournament_id}'")

    def tournament_game_indexes(self, tournament_id: str) -> set[int]:
        """Return the schedule positions of the tournament's games that are stored."""
        with self.engine.connect() as connection:
            return set(
                connection.execute(
                    sa.select(MATCHES.c.game_index).where(
                        MATCHES.c.tournament_id == tournament_id,
                        MATCHES.c.game_index.is_not(None),
                    )
                ).scalars()
            )


_MIGRATION_LOCK: Final = 0x646F6D696E6F  # "domino": the advisory lock id of migrations


def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    # pysqlite would begin transactions itself, after DDL; let the "begin" event do it, so DDL
    # (the migrations) is transactional too, and enforce foreign keys as PostgreSQL does.
    dbapi_connection.isolation_level = None
    dbapi_connection.execute("PRAGMA foreign_keys=ON")
    # Write-ahead logging: readers (the admin API, the CLI, another process) never block the
    # referee's writes, nor do they wait for them. A no-op for an in-memory database.
    dbapi_connection.execute("PRAGMA journal_mode=WAL")


def _sqlite_begin(connection: sa.Connection) -> None:
    immediate = connection.get_execution_options().get(_SQLITE_IMMEDIATE, False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def _check_match(match: StoredMatch) -> None:
    if not 0 <= match.seed <= MAX_SEED:
        raise ValueError(f"seed {match.seed} does not fit a match row (0 to {MAX_SEED})")
    seats = len(match.seats)
    for field, values in (("side_of_seat", match.side_of_seat), ("faults", match.faults)):
        if values and len(values) != seats:
            raise ValueError(
                f"match {match.id}: {field}: expected one entry per seat ({seats}) or none, "
                f"got {values!r}"
            )
    if (match.tournament_id is None) != (match.game_index is None):
        raise ValueError(
            f"match {match.id}: tournament_id and game_index go together; got "
            f"tournament_id={match.tournament_id!r}, game_index={match.game_index!r}"
        )


def _stored_already(connection: sa.Connection, match: StoredMatch) -> bool:
    same = MATCHES.c.id == match.id
    if match.tournament_id is not None:
        same = sa.or_(
            same,
            sa.and_(
                MATCHES.c.tournament_id == match.tournament_id,
                MATCHES.c.game_index == match.game_index,
            ),
        )
    return connection.execute(sa.select(MATCHES.c.id).where(same).limit(1)).first() is not None


def _rate(connection: sa.Connection, match: StoredMatch, game: elo.RatedGame) -> None:
    """Move the ratings of ``game``'s bots in the pool ``match.game``, inside the caller's
    transaction: their rows are created if missing, then locked, read, rated and written."""
    pool, bots = match.game, sorted(game.bots)
    fresh = elo.Rating()
    new_rows = [{"pool": pool, "bot": bot, **_rating_values(fresh)} for bot in bots]
    insert = (
        postgresql.insert(RATINGS)
        if connection.dialect.name == "postgresql"
        else sqlite.insert(RATINGS)
    )
    connection.execute(insert.on_conflict_do_nothing(), new_rows)
    rows = connection.execute(
        sa.select(RATINGS)
        .where(RATINGS.c.pool == pool, RATINGS.c.bot.in_(bots))
        .order_by(RATINGS.c.bot)
        .with_for_update()
    ).all()
    current = {row.bot: _rating(row._mapping) for row in rows}
    for bot, rating in elo.rate_game(current, game).items():
        connection.execute(
            RATINGS.update()
            .where(RATINGS.c.pool == pool, RATINGS.c.bot == bot)
            .values(_rating_values(rating))
        )
    connection.execute(RATED_GAMES.insert().values(pool=pool, match_id=match.id))


def _seated(connection: sa.Connection, bot: str) -> sa.ColumnElement[bool]:
    """A condition: ``bot`` has a seat in the match (the seats are a JSON list)."""
    if connection.dialect.name == "postgresql":
        return sa.cast(MATCHES.c.seats, postgresql.JSONB).contains([bot])
    seats = sa.func.json_each(MATCHES.c.seats).table_valued("value")
    return sa.exists(sa.select(1).select_from(seats).where(seats.c.value == bot))


def _match_row(match: StoredMatch) -> dict[str, Any]:
    return {
        "id": match.id,
        "game": match.game,
        "options": match.options,
        "seats": list(match.seats),
        "seed": match.seed,
        "termination": match.termination,
        "winner": match.winner,
        "scores": list(match.scores),
        "faulted_seat": match.faulted_seat,
        "fault": match.fault,
        "detail": match.detail,
        "record": match.record,
        "created": match.created,
        "tournament_id": match.tournament_id,
        "game_index": match.game_index,
        "deal_id": match.deal_id,
        "rotation": match.rotation,
        "side_of_seat": list(match.side_of_seat),
        "faults": list(match.faults),
        "rated": match.rated,
    }


def _stored_match(row: RowMapping) -> StoredMatch:
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
        created=_utc(row["created"]),
        tournament_id=row["tournament_id"],
        game_index=row["game_index"],
        deal_id=row["deal_id"],
        rotation=row["rotation"],
        side_of_seat=tuple(row["side_of_seat"]),
        faults=tuple(row["faults"]),
        rated=bool(row["rated"]),
    )


def _stored_tournament(row: RowMapping) -> StoredTournament:
    return StoredTournament(
        id=row["id"],
        name=row["name"],
        game=row["game"],
        options=dict(row["options"]),
        entrants=tuple(row["entrants"]),
        games_per_pairing=row["games_per_pairing"],
        duplicate_deals=bool(row["duplicate_deals"]),
        time_control_ms=(row["move_ms"], row["bank_ms"], row["grace_ms"]),
        fault_policy=row["fault_policy"],
        max_strikes=row["max_strikes"],
        concurrency=row["concurrency"],
        wait_seconds=float(row["wait_seconds"]),
        seed=int(row["seed"]),
        rated=bool(row["rated"]),
        state=TournamentState(row["state"]),
        created=_utc(row["created"]),
        updated=_utc(row["updated"]),
    )


def _rating(row: RowMapping) -> elo.Rating:
    return elo.Rating(
        rating=float(row["rating"]),
        games=row["games"],
        wins=row["wins"],
        draws=row["draws"],
        losses=row["losses"],
        faults=row["faults"],
        information=float(row["information"]),
    )


def _rating_values(rating: elo.Rating) -> dict[str, Any]:
    return {
        "rating": rating.rating,
        "games": rating.games,
        "wins": rating.wins,
        "draws": rating.draws,
        "losses": rating.losses,
        "faults": rating.faults,
        "information": rating.information,
    }


def _utc(moment: dt.datetime) -> dt.datetime:
    if moment.tzinfo is None:  # SQLite keeps no zone; every time written here is UTC
        return moment.replace(tzinfo=dt.UTC)
    return moment


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _is_race(exc: SQLAlchemyError) -> bool:
    """Whether ``exc`` looks like another process creating the same tables at the same time."""
    text = str(exc).lower()
    return any(word in text for word in ("exist", "duplicate", "locked"))


def error_reason(exc: BaseException) -> str:
    """The first line of what the driver said, without SQLAlchemy's background links."""
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    return first.removeprefix("(Background on this error at: ").strip()

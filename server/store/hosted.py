"""Hosted bots as stored: the versions of each bot, their verdicts, which one plays a match.

A version is what an owner submitted once (docs/hosting.md): numbered 1, 2, ... per bot,
its archive never changed. It is ``checking`` until the validator runs it in its sandbox, then
``accepted`` or ``rejected`` (the report says why), and ``suspended`` once it crashed in
:data:`SUSPEND_AFTER_CRASHES` matches in a row.

Which version plays: a tournament's pinned or frozen version (:func:`version_for_match`),
else the bot's *current* version, which is its newest version that passed validation
(``accepted`` or ``suspended``) if that one is accepted. A suspended newest version therefore
takes the bot out of the arena until a newer version is accepted: the arena never falls back
by itself to an older version its owner replaced (docs/hosting.md: suspended versions).

The logs per match and the crash streak are :mod:`.hosted_logs`'s, a tournament's pins and a
course's sandbox limits :mod:`.hosted_settings`'s; the contract's names are all importable
from here (the logs' re-exported below).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from domino_arena.server.hosting.spec.limits import SandboxLimits
from domino_arena.server.hosting.spec.submissions import Submission
from domino_arena.server.store import hosted_logs
from domino_arena.server.store.bots import (
    OWNER_DISABLED,
    BotState,
    UnknownBotError,
    hash_token,
)
from domino_arena.server.store.engine import StorageError, writing
from domino_arena.server.store.hosted_logs import bounded_text
from domino_arena.server.store.tables import (
    BOT_VERSIONS,
    BOTS,
    COURSES,
    OWNERS,
    TOURNAMENTS,
    utc,
    utc_text,
)
from domino_arena.server.store.tournaments import TournamentState

# The contract (docs/hosting.md) names these here; the logs' module holds them.
CHECKING: Final = hosted_logs.CHECKING
ACCEPTED: Final = hosted_logs.ACCEPTED
REJECTED: Final = hosted_logs.REJECTED
SUSPENDED: Final = hosted_logs.SUSPENDED
STATUSES: Final = hosted_logs.STATUSES
SUSPEND_AFTER_CRASHES: Final = hosted_logs.SUSPEND_AFTER_CRASHES
MAX_LOG_BYTES: Final = hosted_logs.MAX_LOG_BYTES
UnknownVersionError = hosted_logs.UnknownVersionError
MatchLog = hosted_logs.MatchLog
record_match_log = hosted_logs.record_match_log
match_logs = hosted_logs.match_logs

MAX_VERSIONS_PER_DAY: Final = 20
"""Versions one bot may submit in any 24 hours."""
MAX_SUBMITTER: Final = 64
"""Characters of a version's ``submitter`` kept."""
MAX_ENTRY: Final = 1000
"""Characters of a version's entry (``mybot.py:MyBot``, ``./run.sh --fast``)."""
MAX_GAMES_TEXT: Final = 255
KINDS: Final = ("python", "command")
_DAY: Final = dt.timedelta(hours=24)


class VersionLimitError(StorageError):
    """A bot submitted :data:`MAX_VERSIONS_PER_DAY` versions in the last 24 hours."""


@dataclass(frozen=True, slots=True)
class BotVersion:
    """One version of a hosted bot, without its archive (:func:`version_archive`)."""

    bot: str
    number: int
    kind: str
    """``python`` or ``command`` (server/hosting/spec/submissions.py)."""
    entry: str
    games: tuple[str, ...]
    """The games it plays; empty: every game."""
    sha256: str
    unpacked_bytes: int
    files: int
    created: dt.datetime
    submitter: str
    """Who submitted it, as the server saw them (``owner ann``, ``bot ann-v1``)."""
    status: str
    """One of :data:`STATUSES`."""
    report: str
    """The validator's report, or why it was suspended (first line: the verdict in a line)."""
    crash_streak: int
    """Matches in a row it crashed in (a clean match sets it back to 0)."""


def _check_new(bot: str, submission: Submission, games: Sequence[str]) -> str:
    """The games as stored; raises ValueError naming the field of a bad version."""
    if submission.kind not in KINDS:
        raise ValueError(f"kind: expected one of {', '.join(KINDS)}, got {submission.kind!r}")
    if not 1 <= len(submission.entry) <= MAX_ENTRY:
        raise ValueError(f"entry: expected 1-{MAX_ENTRY} characters, got {len(submission.entry)}")
    if len(submission.sha256) != 64:
        raise ValueError(f"sha256: expected 64 hex digits, got {submission.sha256[:80]!r}")
    for game in games:
        if not game or "," in game or not game.isprintable():
            raise ValueError(f"games: {game[:40]!r} is not a game name")
    text = ",".join(games)
    if len(text) > MAX_GAMES_TEXT:
        raise ValueError(f"games: expected at most {MAX_GAMES_TEXT} characters in all")
    return text


def add_version(
    engine: Engine,
    bot: str,
    submission: Submission,
    *,
    submitter: str,
    games: Sequence[str],
    now: dt.datetime,
) -> BotVersion:
    """Store ``submission`` as the next version of ``bot``, ``checking``; return it.

    Raises:
        UnknownBotError: no bot of that name may take a version (unknown or deleted).
        VersionLimitError: :data:`MAX_VERSIONS_PER_DAY` versions in the 24 hours before ``now``
            (the message says when the next may be submitted).
        ValueError: a field of the submission out of its range (named).
    """
    games_text = _check_new(bot, submission, games)
    who = "".join(c if c.isprintable() else "?" for c in submitter)[:MAX_SUBMITTER]
    for _attempt in range(5):  # two submissions at once: the loser takes the next number
        try:
            with writing(engine) as connection:
                number = _next_number(connection, bot, now)
                row = {
                    "bot": bot,
                    "number": number,
                    "kind": submission.kind,
                    "entry": submission.entry,
                    "games": games_text,
                    "sha256": submission.sha256,
                    "archive": submission.archive,
                    "unpacked_bytes": submission.unpacked_bytes,
                    "files": submission.files,
                    "created": now,
                    "submitter": who,
                    "status": CHECKING,
                    "report": "",
                    "crash_streak": 0,
                }
                connection.execute(BOT_VERSIONS.insert().values(row))
        except IntegrityError:
            continue
        return _version(row)
    raise StorageError(f"bot {bot}: could not number a new version (too many at once)")


def _next_number(connection: sa.Connection, bot: str, now: dt.datetime) -> int:
    state = connection.execute(
        sa.select(BOTS.c.state).where(BOTS.c.name == bot)
    ).scalar_one_or_none()
    if state is None or state == BotState.DELETED.value:
        why = "no bot is named" if state is None else "a deleted bot takes no version:"
        raise UnknownBotError(f"{why} '{bot}'")
    recent = sorted(
        utc(moment)
        for moment in connection.execute(
            sa.select(BOT_VERSIONS.c.created).where(
                BOT_VERSIONS.c.bot == bot, BOT_VERSIONS.c.created > now - _DAY
            )
        ).scalars()
    )
    if len(recent) >= MAX_VERSIONS_PER_DAY:
        frees = recent[len(recent) - MAX_VERSIONS_PER_DAY] + _DAY
        raise VersionLimitError(
            f"bot {bot}: at most {MAX_VERSIONS_PER_DAY} versions in 24 hours; "
            f"the next may be submitted at {utc_text(frees)}"
        )
    top = connection.execute(
        sa.select(sa.func.max(BOT_VERSIONS.c.number)).where(BOT_VERSIONS.c.bot == bot)
    ).scalar_one()
    return 1 if top is None else int(top) + 1


_COLUMNS: Final = tuple(c for c in BOT_VERSIONS.c if c.name != "archive")


def _version(row: Any) -> BotVersion:
    games = row["games"]
    return BotVersion(
        bot=row["bot"],
        number=int(row["number"]),
        kind=row["kind"],
        entry=row["entry"],
        games=tuple(games.split(",")) if games else (),
        sha256=row["sha256"],
        unpacked_bytes=int(row["unpacked_bytes"]),
        files=int(row["files"]),
        created=utc(row["created"]),
        submitter=row["submitter"],
        status=row["status"],
        report=row["report"],
        crash_streak=int(row["crash_streak"]),
    )


def _select(query: sa.Select[Any], engine: Engine) -> list[BotVersion]:
    with engine.connect() as connection:
        return [_version(row) for row in connection.execute(query).mappings()]


def versions(engine: Engine, bot: str) -> list[BotVersion]:
    """Every version of ``bot``, newest first (none for an unknown bot)."""
    query = (
        sa.select(*_COLUMNS).where(BOT_VERSIONS.c.bot == bot).order_by(BOT_VERSIONS.c.number.desc())
    )
    return _select(query, engine)


def version(engine: Engine, bot: str, number: int) -> BotVersion | None:
    """Version ``number`` of ``bot``, or None."""
    query = sa.select(*_COLUMNS).where(BOT_VERSIONS.c.bot == bot, BOT_VERSIONS.c.number == number)
    found = _select(query, engine)
    return found[0] if found else None


def version_archive(engine: Engine, bot: str, number: int) -> Submission | None:
    """The stored submission of version ``number`` of ``bot`` (its archive), or None."""
    with engine.connect() as connection:
        row = (
            connection.execute(
                sa.select(BOT_VERSIONS).where(
                    BOT_VERSIONS.c.bot == bot, BOT_VERSIONS.c.number == number
                )
            )
            .mappings()
            .one_or_none()
        )
    if row is None:
        return None
    return Submission(
        kind=row["kind"],
        entry=row["entry"],
        archive=bytes(row["archive"]),
        sha256=row["sha256"],
        unpacked_bytes=int(row["unpacked_bytes"]),
        files=int(row["files"]),
    )


def checking_versions(engine: Engine) -> list[BotVersion]:
    """Every version still to be validated, oldest first (the validator's queue)."""
    query = (
        sa.select(*_COLUMNS)
        .where(BOT_VERSIONS.c.status == CHECKING)
        .order_by(BOT_VERSIONS.c.created, BOT_VERSIONS.c.bot, BOT_VERSIONS.c.number)
    )
    return _select(query, engine)


def set_verdict(engine: Engine, bot: str, number: int, *, accepted: bool, report: str) -> None:
    """Accept or reject version ``number`` of ``bot``, which is ``checking``, with its report
    (bounded as a log: :func:`bounded_text`).

    Raises:
        UnknownVersionError: no such version.
        ValueError: it has its verdict already (the message says which).
    """
    status = ACCEPTED if accepted else REJECTED
    with writing(engine) as connection:
        changed = connection.execute(
            BOT_VERSIONS.update()
            .where(
                BOT_VERSIONS.c.bot == bot,
                BOT_VERSIONS.c.number == number,
                BOT_VERSIONS.c.status == CHECKING,
            )
            .values(status=status, report=bounded_text(report))
        ).rowcount
        if changed:
            return
        found = connection.execute(
            sa.select(BOT_VERSIONS.c.status).where(
                BOT_VERSIONS.c.bot == bot, BOT_VERSIONS.c.number == number
            )
        ).scalar_one_or_none()
    if found is None:
        raise UnknownVersionError(f"bot {bot} has no version {number}")
    raise ValueError(f"bot {bot} v{number} is {found} already; only a checking version gets one")


def current_numbers(connection: sa.Connection, bots: Sequence[str] | None) -> dict[str, int]:
    """Each bot's newest version that passed validation, if it is accepted (module doc)."""
    passed = (
        sa.select(
            BOT_VERSIONS.c.bot,
            sa.func.max(BOT_VERSIONS.c.number).label("number"),
        )
        .where(BOT_VERSIONS.c.status.in_((ACCEPTED, SUSPENDED)))
        .group_by(BOT_VERSIONS.c.bot)
    )
    if bots is not None:
        passed = passed.where(BOT_VERSIONS.c.bot.in_(bots))
    newest = passed.subquery()
    rows = connection.execute(
        sa.select(newest.c.bot, newest.c.number)
        .select_from(
            newest.join(
                BOT_VERSIONS,
                sa.and_(
                    BOT_VERSIONS.c.bot == newest.c.bot,
                    BOT_VERSIONS.c.number == newest.c.number,
                ),
            )
        )
        .where(BOT_VERSIONS.c.status == ACCEPTED)
    ).all()
    return {bot: int(number) for bot, number in rows}


def latest_accepted(engine: Engine, bot: str) -> BotVersion | None:
    """The version ``bot`` plays outside pinned tournaments: its newest version that passed
    validation, if that one is not suspended (module doc); None: it is not hosted now."""
    with engine.connect() as connection:
        number = current_numbers(connection, (bot,)).get(bot)
    return None if number is None else version(engine, bot, number)


def hosted_bot_names(engine: Engine) -> list[str]:
    """The bots the runner hosts, sorted: enabled bots of enabled owners with a current version
    (:func:`latest_accepted`). A bot whose newest version is suspended is not among them, even
    where a tournament pinned an older one (module doc)."""
    with engine.connect() as connection:
        names = sorted(current_numbers(connection, None))
        if not names:
            return []
        enabled = connection.execute(
            sa.select(BOTS.c.name)
            .select_from(
                BOTS.outerjoin(
                    OWNERS,
                    sa.and_(OWNERS.c.course == BOTS.c.course, OWNERS.c.name == BOTS.c.owner),
                )
            )
            .where(
                BOTS.c.name.in_(names),
                BOTS.c.state == BotState.ENABLED.value,
                sa.or_(OWNERS.c.state.is_(None), OWNERS.c.state != OWNER_DISABLED),
            )
            .order_by(BOTS.c.name)
        ).scalars()
        return list(enabled)


def tournament_of_match(match_id: str) -> str | None:
    """The tournament id in a tournament's match id (``{tournament id}-{index:05d}``,
    server/tournaments/lifecycle/schedule.py), or None for a match id of another form."""
    tournament_id, dash, index = match_id.rpartition("-")
    if not dash or not tournament_id or len(index) < 5 or not index.isdigit():
        return None
    return tournament_id


def version_for_match(engine: Engine, bot: str, match_id: str) -> BotVersion | None:
    """The version of ``bot`` to play ``match_id``: in a tournament that has started, the one
    it pinned or froze at its start (docs/tournaments.md: versions), else the bot's current one
    (:func:`latest_accepted`). None: no hosted version plays it (none accepted; the pinned one
    suspended; or a started tournament froze none, the bot having had no accepted version then:
    a version accepted later never enters a running tournament)."""
    tournament_id = tournament_of_match(match_id)
    if tournament_id is not None:
        with engine.connect() as connection:
            found = connection.execute(
                sa.select(TOURNAMENTS.c.version_pins, TOURNAMENTS.c.state).where(
                    TOURNAMENTS.c.id == tournament_id
                )
            ).one_or_none()
        if found is not None:
            number = parse_pins(found.version_pins).get(bot)
            if number is not None:
                pinned = version(engine, bot, number)
                return pinned if pinned is not None and pinned.status == ACCEPTED else None
            if found.state != TournamentState.CREATED.value:
                return None
    return latest_accepted(engine, bot)


def parse_pins(text: str | None) -> dict[str, int]:
    """The pins of a ``tournaments.version_pins`` column ({} for NULL)."""
    if not text:
        return {}
    return {str(bot): int(number) for bot, number in json.loads(text).items()}


def hosting_limits_for(
    engine: Engine, *, course: str | None, tournament_id: str | None
) -> SandboxLimits:
    """The sandbox limits of a hosted bot in a match: each limit the tournament sets, else the
    one its course sets, else the default (docs/courses.md: hosting limits)."""
    chosen: dict[str, int] = {}
    with engine.connect() as connection:
        if course is not None:
            text = connection.execute(
                sa.select(COURSES.c.hosting_limits).where(COURSES.c.name == course)
            ).scalar_one_or_none()
            chosen.update(json.loads(text) if text else {})
        if tournament_id is not None:
            text = connection.execute(
                sa.select(TOURNAMENTS.c.hosting_limits).where(TOURNAMENTS.c.id == tournament_id)
            ).scalar_one_or_none()
            chosen.update(json.loads(text) if text else {})
    return SandboxLimits.parse(chosen)


def set_runner_token(engine: Engine, bot: str, token: str) -> None:
    """Let the hosted runner connect ``bot`` with ``token`` (kept as its salted hash) as well as
    with the bot's own token (:func:`.bots.check_bot`); "" takes the runner's token away.

    Raises:
        UnknownBotError: no bot of that name, or it is deleted.
    """
    stored = hash_token(token) if token else ""
    with engine.begin() as connection:
        changed = connection.execute(
            BOTS.update()
            .where(BOTS.c.name == bot, BOTS.c.state != BotState.DELETED.value)
            .values(runner_token_hash=stored)
        ).rowcount
    if not changed:
        raise UnknownBotError(f"no bot may be hosted as '{bot}' (unknown or deleted)")

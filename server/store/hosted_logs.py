"""The logs of hosted bots per match, and the crash streak that suspends a version.

What a hosted bot writes to stderr during a match is kept (at most :data:`MAX_LOG_BYTES`: the
head, then how much was cut) for its owner and the course's organizer (docs/hosting.md:
logs), never for other students: the RPCs that read it check who asks. A version that crashes
in :data:`SUSPEND_AFTER_CRASHES` matches in a row is suspended (server/store/hosted.py says what
that means for the matches it would play).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Final

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from domino_arena.server.store.engine import writing
from domino_arena.server.store.tables import BOT_VERSIONS, MATCH_LOGS, utc_text

SUSPEND_AFTER_CRASHES: Final = 3
"""Consecutive matches a version may crash in before it is suspended."""
MAX_LOG_BYTES: Final = 64 << 10
"""Of a bot's stderr kept per match (UTF-8), and of a version's report."""
CHECKING: Final = "checking"
ACCEPTED: Final = "accepted"
REJECTED: Final = "rejected"
SUSPENDED: Final = "suspended"
STATUSES: Final = (CHECKING, ACCEPTED, REJECTED, SUSPENDED)
"""A version's ``status``: validated yet or not, and with which verdict."""


class UnknownVersionError(KeyError):
    """The bot has no version of that number."""

    def __str__(self) -> str:  # KeyError would show the message quoted
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True, slots=True)
class MatchLog:
    """What a hosted bot wrote to stderr in one match (bounded), and whether it crashed."""

    match_id: str
    bot: str
    version: int
    text: str
    crashed: bool


def bounded_text(text: str, limit: int = MAX_LOG_BYTES) -> str:
    """``text`` storable and at most ``limit`` UTF-8 bytes: its head, then ``[... N bytes cut]``.

    NUL and lone surrogates (a database text column holds neither) become U+FFFD.
    """
    data = text.replace("\x00", "\ufffd").encode("utf-8", "replace")
    if len(data) <= limit:
        return data.decode("utf-8")
    marker_room = 40
    head = data[: limit - marker_room].decode("utf-8", "ignore")
    cut = len(data) - len(head.encode("utf-8"))
    return f"{head}\n[... {cut} bytes cut]"


def record_match_log(
    engine: Engine,
    match_id: str,
    bot: str,
    number: int,
    text: str,
    *,
    crashed: bool,
    now: dt.datetime,
) -> bool:
    """Keep what version ``number`` of ``bot`` wrote to stderr in ``match_id`` (cut to
    :data:`MAX_LOG_BYTES`: :func:`bounded_text`) and count its crash streak: a crash adds one, a
    clean match sets it to 0. Return True when this crash suspended the version now (its
    :data:`SUSPEND_AFTER_CRASHES`-th in a row; its report then says why).

    A second log of the same bot and match (a restarted runner) replaces the text, and counts
    towards the streak only if the first did not crash and this one did.

    Raises:
        UnknownVersionError: no such version.
    """
    kept = bounded_text(text)
    with writing(engine) as connection:
        current = (
            connection.execute(
                sa.select(BOT_VERSIONS.c.status, BOT_VERSIONS.c.crash_streak, BOT_VERSIONS.c.report)
                .where(BOT_VERSIONS.c.bot == bot, BOT_VERSIONS.c.number == number)
                .with_for_update()
            )
            .mappings()
            .one_or_none()
        )
        if current is None:
            raise UnknownVersionError(f"bot {bot} has no version {number}")
        before = connection.execute(
            sa.select(MATCH_LOGS.c.crashed).where(
                MATCH_LOGS.c.match_id == match_id, MATCH_LOGS.c.bot == bot
            )
        ).scalar_one_or_none()
        values = {"version": number, "text": kept, "crashed": crashed, "created": now}
        if before is None:
            connection.execute(MATCH_LOGS.insert().values(match_id=match_id, bot=bot, **values))
        else:
            connection.execute(
                MATCH_LOGS.update()
                .where(MATCH_LOGS.c.match_id == match_id, MATCH_LOGS.c.bot == bot)
                .values(values)
            )
            if before or not crashed:
                return False
        streak = int(current["crash_streak"]) + 1 if crashed else 0
        change: dict[str, object] = {"crash_streak": streak}
        suspend = current["status"] == ACCEPTED and streak >= SUSPEND_AFTER_CRASHES
        if suspend:
            change["status"] = SUSPENDED
            why = (
                f"suspended: it crashed in {streak} matches in a row (the last {match_id}, "
                f"{utc_text(now)}); its logs say why (domino-arena logs {match_id} --bot {bot}). "
                "Submit a new version to play again."
            )
            change["report"] = bounded_text(f"{why}\n\n{current['report']}".rstrip())
        connection.execute(
            BOT_VERSIONS.update()
            .where(BOT_VERSIONS.c.bot == bot, BOT_VERSIONS.c.number == number)
            .values(change)
        )
    return suspend


def match_logs(engine: Engine, match_id: str) -> list[MatchLog]:
    """The logs of the hosted bots of ``match_id``, by bot name."""
    with engine.connect() as connection:
        rows = connection.execute(
            sa.select(
                MATCH_LOGS.c.match_id,
                MATCH_LOGS.c.bot,
                MATCH_LOGS.c.version,
                MATCH_LOGS.c.text,
                MATCH_LOGS.c.crashed,
            )
            .where(MATCH_LOGS.c.match_id == match_id)
            .order_by(MATCH_LOGS.c.bot)
        ).all()
    return [MatchLog(m, b, int(v), t, bool(c)) for m, b, v, t, c in rows]

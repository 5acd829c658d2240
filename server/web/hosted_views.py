"""What the web face shows of hosted bots (docs/web.md: hosted bots; docs/hosting.md): a
bot's versions on its student's page, and the kept stderr of a match's hosted seats on the
match page, to those who may read it.

**Versions.** Newest first, each with its number, status (``checking``, ``accepted``,
``rejected``, ``suspended``), size, the first 12 hex digits of its SHA-256, when and by whom,
and the report of the compliance check or of its suspension. The page says plainly when the
latest version is suspended and when a version is still being checked.

**Logs.** A hosted seat's stderr (bounded by the runner, 64 KiB a match) is its owner's and the
course organizer's to read, never another student's nor the public's: the match page (and its
JSON) has ``logs`` only for a viewer signed in to the match's course as

- the course's organizer: every hosted seat's log;
- a student, with the bot's token: that bot's log; with the owner token: the log of every bot
  of that owner.

Anyone else gets an empty ``logs``. Every text shown is bounded here again and its control
characters replaced (the page escapes it: Jinja's autoescape).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import quote

from domino_arena.sdk.rules import GAMES
from domino_arena.server.hosting.spec.submissions import MAX_ARCHIVE_BYTES, size_text
from domino_arena.server.store import hosted
from domino_arena.server.store.hosted import SUSPEND_AFTER_CRASHES, BotVersion
from domino_arena.server.web.params import WebError
from domino_arena.server.web.sessions import OWNER_STAMP, Session, SessionStorage, current

SHA_SHOWN: Final = 12
MAX_REPORT_CHARS: Final = 16 << 10
"""A version's report shown (the validator's report is shorter)."""
MAX_LOG_CHARS: Final = 64 << 10
"""A seat's log shown (what the runner keeps of a match: 64 KiB)."""
CONTROL: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
SUSPENDED: Final = (
    f"suspended after {SUSPEND_AFTER_CRASHES} crashing matches in a row: submit a fixed version"
)
STATUS_WORDS: Final = {
    "checking": "being checked",
    "accepted": "accepted",
    "rejected": "rejected",
    "suspended": "suspended",
}


def shown_text(text: str, limit: int) -> dict[str, Any]:
    """``text`` as a page shows it: control characters (but newlines and tabs) replaced by
    U+FFFD and at most ``limit`` characters (``cut``: the rest was left off)."""
    clean = CONTROL.sub("\ufffd", text)
    return {"text": clean[:limit], "cut": len(clean) > limit}


def version_row(version: BotVersion) -> dict[str, Any]:
    """One version as the student's page lists it."""
    report = shown_text(version.report, MAX_REPORT_CHARS)
    return {
        "number": version.number,
        "kind": version.kind,
        "entry": version.entry,
        "games": list(version.games),
        "status": version.status,
        "status_text": STATUS_WORDS.get(version.status, version.status),
        "unpacked_bytes": version.unpacked_bytes,
        "size": size_text(version.unpacked_bytes),
        "files": version.files,
        "sha256": version.sha256,
        "sha": version.sha256[:SHA_SHOWN],
        "created": version.created.isoformat(),
        "submitter": version.submitter,
        "report": report["text"],
        "report_cut": report["cut"],
        "crash_streak": version.crash_streak,
    }


def hosting(engine: Any, course: str, bot: str) -> dict[str, Any]:
    """The hosted part of ``bot``'s page: its ``versions`` (newest first), ``suspended`` (what
    to do, when the latest version is suspended; else null), ``checking`` (the versions still
    being checked, as a sentence; else null) and ``upload`` (what the form needs: its
    ``action``, the ``games`` to tick, ``max_bytes``)."""
    versions = hosted.versions(engine, bot)
    checking = [v.number for v in versions if v.status == "checking"]
    return {
        "versions": [version_row(v) for v in versions],
        "suspended": f"Version {versions[0].number} is {SUSPENDED}."
        if versions and versions[0].status == "suspended"
        else None,
        "checking": None
        if not checking
        else (
            f"Version{'s' if len(checking) > 1 else ''} "
            f"{', '.join(str(n) for n in checking)} "
            f"{'are' if len(checking) > 1 else 'is'} being checked (the compliance check "
            "runs in its sandbox): reload the page for the verdict."
        ),
        "upload": {
            "action": upload_path(course, bot),
            "games": [{"name": name, "title": game.title} for name, game in GAMES.items()],
            "max_bytes": MAX_ARCHIVE_BYTES,
        },
    }


def upload_path(course: str, bot: str) -> str:
    """Where a bot's new version is posted (docs/web.md: hosted bots)."""
    return f"/courses/{quote(course, safe='')}/bots/{quote(bot, safe='')}/versions"


def uploader(storage: SessionStorage, course: str, session: Session, bot: str) -> str:
    """The owner a student's ``session`` (current, of ``course``) uploads ``bot``'s version
    as: the session's own bot, or with the owner token any bot of its owner; else a 403
    naming the rule. Blocking."""
    stored = storage.bot(bot)
    mine = storage.bot(session.name)
    if stored is None or mine is None or stored.course != course:
        raise WebError(403, f"bot: course {course!r} has no bot named {bot[:64]!r}")
    same = session.name == stored.name or (
        session.stamp.startswith(OWNER_STAMP) and mine.owner == stored.owner
    )
    if not same or not stored.owner:
        raise WebError(
            403,
            f"bot: only the owner of {stored.name!r}, signed in to its page, may upload a "
            f"version of it (you are signed in as {session.name!r})",
        )
    if not stored.owner_enabled:
        raise WebError(
            403,
            f"owner: {stored.owner!r} is disabled by the course's organizer: no new version "
            "is taken until it is enabled",
        )
    return stored.owner


# -- who reads a match's logs -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LogReader:
    """Whose logs of a course's matches a viewer may read: ``everyone``'s (the organizer) or
    those of ``bots``."""

    everyone: bool = False
    bots: frozenset[str] = frozenset()

    @property
    def anyone(self) -> bool:
        return self.everyone or bool(self.bots)


NOBODY: Final = LogReader()


def log_reader(
    storage: SessionStorage,
    course: str,
    organizer: Session | None,
    student: Session | None,
) -> LogReader:
    """The reader the request's sessions of ``course`` make (each checked to be current: a
    rotated token ends it). Blocking."""
    if organizer is not None and current(storage, "organizer", course, organizer):
        return LogReader(everyone=True)
    if student is None or not current(storage, "bot", course, student):
        return NOBODY
    if not student.stamp.startswith(OWNER_STAMP):
        return LogReader(bots=frozenset({student.name}))
    bot = storage.bot(student.name)
    owner = None if bot is None else storage.owner(course, bot.owner)
    if owner is None:
        return NOBODY
    return LogReader(bots=frozenset({student.name, *owner.bots}))


def match_logs(engine: Any, match_id: str, reader: LogReader) -> list[dict[str, Any]]:
    """The kept stderr of the match's hosted seats that ``reader`` may read, by seat bot:
    [{``bot``, ``version``, ``crashed``, ``text``, ``cut``}]. Blocking."""
    if not reader.anyone:
        return []
    return [
        {
            "bot": log.bot,
            "version": log.version,
            "crashed": log.crashed,
            **shown_text(log.text, MAX_LOG_CHARS),
        }
        for log in hosted.match_logs(engine, match_id)
        if reader.everyone or log.bot in reader.bots
    ]

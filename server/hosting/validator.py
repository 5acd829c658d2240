"""Validation before rating: each new version plays the compliance check in its sandbox.

As Kaggle runs a validation episode before an agent is rated, a submitted version is
``checking`` until it has answered the SDK's compliance check (``sdk/testing.py``: sampled
positions of every game configuration it says it plays, and one whole local game of each) from
inside the sandbox, through the stdio bridge (``sdk/stdio/exec_bot.py``). A version that passes
is ``accepted`` and may be hosted; one that fails is ``rejected`` with the check's report, which
its owner reads (``bot versions``, the bot's page), and never enters a tournament.
docs/hosting.md, "Validation".
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from collections.abc import Callable
from typing import Final

from sqlalchemy.engine import Engine

from domino_arena.sdk.stdio.exec_bot import ALL, ExecBot
from domino_arena.sdk.testing import check_bot
from domino_arena.server.logs import escape
from domino_arena.server.store import hosted

from .bundles import Bundles

LOG: Final = logging.getLogger(__name__)

POSITIONS: Final = 4
"""Positions checked per game configuration (the local check's default is 20: a version is
checked again at every submission, so the arena asks fewer and plays the whole games)."""
TIME_LIMIT: Final = 2.0
"""Seconds an answer may take in the check (a tournament's move time is usually less; the
check proves the bot answers, the clock proves it answers in time)."""
REPLY_TIMEOUT: Final = 10.0
"""Seconds the bridge waits for an answer before it gives up on the process (a busy loop)."""
REPORT_CHARS: Final = 16_000
"""The longest report kept: the check stops after the same failure repeats, so a report this
long already says what is wrong."""


class Validator:
    """Checks ``checking`` versions one at a time, in a worker thread."""

    def __init__(
        self,
        engine: Engine,
        bundles: Bundles,
        claim: Callable[[str, int], bool] | None = None,
    ) -> None:
        self.engine = engine
        self.bundles = bundles
        self.claim = claim
        """On a cluster, whether this runner checks a version (one runner does); None: all."""

    async def run(self, poll_seconds: float) -> None:
        """Check every waiting version, then look again every ``poll_seconds``; until cancelled."""
        while True:
            try:
                waiting = await asyncio.to_thread(hosted.checking_versions, self.engine)
            except Exception as error:
                LOG.warning("versions to check not looked up: %s", error)
                waiting = []
            for version in waiting:
                try:
                    await asyncio.to_thread(self._check_once, version.bot, version.number)
                except Exception:  # the next look tries again; the runner goes on hosting
                    LOG.exception("version %d of %s not checked", version.number, version.bot)
            await asyncio.sleep(poll_seconds)

    def _check_once(self, bot: str, number: int) -> None:
        if self.claim is None or self.claim(bot, number):
            self.check(bot, number)

    def check(self, bot: str, number: int) -> bool:
        """Check version ``number`` of ``bot`` and store the verdict; return it."""
        accepted, report = self._report(bot, number)
        hosted.set_verdict(self.engine, bot, number, accepted=accepted, report=report)
        LOG.info("version %d of %s %s", number, escape(bot), "accepted" if accepted else "rejected")
        return accepted

    def _report(self, bot: str, number: int) -> tuple[bool, str]:
        submission = hosted.version_archive(self.engine, bot, number)
        versions = {v.number: v for v in hosted.versions(self.engine, bot)}
        if submission is None or number not in versions:
            return False, "the version's files are missing from the database"
        games = list(versions[number].games) or None
        limits = hosted.hosting_limits_for(self.engine, course=None, tournament_id=None)
        try:
            command = self.bundles.command(submission, limits)
        except ValueError as error:
            return False, f"the version cannot run: {error}"
        player = ExecBot(
            command,
            name=bot,
            games=games or ALL,
            reply_timeout=REPLY_TIMEOUT,
            on_stderr=_not_kept,
        )
        try:  # every seat of the check is played by the one process, as in a match
            result = check_bot(player.seat, games=games, positions=POSITIONS, time_limit=TIME_LIMIT)
        except Exception as error:  # the bridge gave up on the process: the report says why
            detail = "".join(traceback.format_exception_only(error)).strip()
            return False, _bounded(f"the compliance check could not finish: {detail}")
        finally:
            player.close()
        return result.passed, _bounded(str(result))


def _not_kept(chunk: bytes) -> None:
    """Where a version's stderr goes during its check: nowhere. It is untrusted text of any
    size (a gigabyte, in tests/e2e/test_hosted_hostile.py), so it never reaches the
    referee's own stderr; the bridge keeps its last lines for the report anyway."""


def _bounded(report: str) -> str:
    if len(report) <= REPORT_CHARS:
        return report
    return report[:REPORT_CHARS] + f"\n... ({len(report) - REPORT_CHARS} more characters)"

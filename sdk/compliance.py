"""What a compliance check found: each :class:`Failure` and the :class:`ComplianceReport`.

Shared by the local check (:mod:`.testing`, ``python -m domino_arena.sdk.testing``) and the
referee's (``domino-arena check``, server/play/checking.py): the same report, and the same rule
for stopping early (:class:`Streak`): a bot that fails the same way again and again is not asked
further, and the report says why in one line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

SAME_PROBLEM_LIMIT: Final = 3
"""A check stops after this many asks in a row failed the same way (docs/writing-a-bot.md)."""

_Local = Literal["raised", "not an action", "illegal", "too slow", "hook raised", "unfinished"]
Problem = _Local | Literal["malformed", "timeout", "disconnected"]
"""What went wrong in one :class:`Failure`; the last three are the referee's (``domino-arena
check``: a reply it cannot read, none in time, the stream lost), never the local check's."""


@dataclass(frozen=True, slots=True)
class Failure:
    """One thing the bot got wrong, with everything needed to see why."""

    game: str
    """The configuration, e.g. ``"Passing Game, 3 players, to 101"``."""
    position: str
    """Which position: its id and how to rebuild it, or the local game's seed and step."""
    problem: Problem
    message: str
    """What happened, in words (the exception, the rule an illegal action breaks, ...)."""
    returned: str = ""
    """What the bot returned: the action's text, or the ``repr`` of anything else."""
    legal: tuple[str, ...] = ()
    """The legal actions it could have chosen."""
    seconds: float | None = None
    """How long it took to answer."""

    def __str__(self) -> str:
        lines = [f"{self.problem}: {self.game}, {self.position}: {self.message}"]
        if self.returned:
            lines.append(f"    returned: {self.returned}")
        if self.legal:
            lines.append(f"    legal:    {', '.join(self.legal)}")
        if self.seconds is not None:
            lines.append(f"    took:     {self.seconds:.3f} s")
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class ComplianceReport:
    """The result of :func:`check_bot`: what was checked and every failure found."""

    bot: str
    configurations: tuple[str, ...]
    positions: int
    """Positions the bot was asked about."""
    games: int
    """Local games played to the end."""
    time_limit: float
    slowest: float
    """The longest answer, in seconds, positions and local games together."""
    failures: tuple[Failure, ...]
    stopped: str = ""
    """Why the check stopped before the end (:class:`Streak`); "" when it ran to the end."""

    @property
    def passed(self) -> bool:
        return not self.failures

    def __str__(self) -> str:
        verdict = "PASSED" if self.passed else f"FAILED ({len(self.failures)} failures)"
        lines = [
            f"{self.bot}: {verdict}",
            f"  {len(self.configurations)} game configurations, {self.positions} positions, "
            f"{self.games} full games; slowest answer {self.slowest:.3f} s "
            f"(limit {self.time_limit:g} s)",
        ]
        shown = 20
        for failure in self.failures[:shown]:
            lines.append("  " + str(failure).replace("\n", "\n  "))
        if len(self.failures) > shown:
            lines.append(f"  ... and {len(self.failures) - shown} more")
        if self.stopped:
            lines.append(f"  {self.stopped}")
        return "\n".join(lines)


@dataclass
class Streak:
    """The asks in a row that failed the same way: a check stops at :data:`SAME_PROBLEM_LIMIT`.

    An ask is one position, or one whole game; one that passes ends the streak.
    """

    limit: int = SAME_PROBLEM_LIMIT
    problem: str = ""
    count: int = 0

    def add(self, failures: Sequence[Failure]) -> str:
        """Count one ask's failures; return why the check stops now ("" to go on)."""
        if not failures:
            self.problem, self.count = "", 0
            return ""
        kind = failures[-1].problem
        self.count = self.count + 1 if kind == self.problem else 1
        self.problem = kind
        if self.count < self.limit:
            return ""
        return (
            f"stopped early: {self.count} asks in a row failed the same way ({kind}); fix that "
            "first, then check again"
        )

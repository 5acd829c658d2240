"""What a hosted bot wrote to stderr, kept per match and bounded (docs/hosting.md, "Logs").

A bot process serves every match its bot plays at once, so a chunk of stderr belongs to each
match running when it was read. Each match keeps at most ``limit`` bytes: the head, then one
line saying how much was cut, so a bot printing a gigabyte costs the runner ``limit`` bytes a
match and the student still sees where it began. Between matches nothing is kept.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(slots=True)
class MatchLog:
    """The kept stderr of one match, and whether the bot's process died during it."""

    limit: int
    kept: bytearray = field(default_factory=bytearray)
    cut: int = 0
    crashed: bool = False

    def add(self, chunk: bytes) -> None:
        room = self.limit - len(self.kept)
        if room > 0:
            self.kept += chunk[:room]
        self.cut += max(0, len(chunk) - max(room, 0))

    def note(self, line: str) -> None:
        """Add the runner's own line (an exit, a restart), kept even when the log is full."""
        self.kept += f"\n[arena] {line}\n".encode()

    def text(self) -> str:
        """The log as text: undecodable bytes replaced, the cut said."""
        text = self.kept.decode("utf-8", errors="replace")
        if self.cut:
            text += f"\n[arena] ... {self.cut} more bytes of stderr not kept\n"
        return text


class MatchLogs:
    """The logs of one bot's running matches."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._logs: dict[str, MatchLog] = {}

    def _log(self, match_id: str) -> MatchLog:
        log = self._logs.get(match_id)
        if log is None:
            log = self._logs[match_id] = MatchLog(self.limit)
        return log

    def add(self, chunk: bytes, match_ids: Iterable[str]) -> None:
        for match_id in match_ids:
            self._log(match_id).add(chunk)

    def exited(self, returncode: int, match_ids: Iterable[str]) -> None:
        """The process ended while these matches ran: each is marked crashed."""
        how = f"killed by signal {-returncode}" if returncode < 0 else f"exit code {returncode}"
        for match_id in match_ids:
            log = self._log(match_id)
            log.crashed = True
            log.note(f"the bot's process ended during the match ({how})")

    def pop(self, match_id: str) -> MatchLog:
        """The finished match's log (an empty one if the bot wrote nothing)."""
        return self._logs.pop(match_id, None) or MatchLog(self.limit)

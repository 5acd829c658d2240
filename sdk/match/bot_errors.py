"""Text from a bot, made safe to show, and the error a bot reports when its ``choose`` crashed.

A bot's words reach logs, records, the admin API and web pages; each is untrusted. The one
way to show such text is here: :func:`escape` puts it on one line (backslashes, line breaks
and other control characters as Python escapes, so it can never start a log line of its own)
and :func:`bounded` cuts it, saying how much was left off. The referee's log
(``server/logs.py``) uses the same two functions.

A :class:`BotError` is what the SDK sends in ``ActionReply.error`` when the bot's ``choose``
raised (docs/referee.md, "Faults"): the exception's type and message. The referee charges it as
a ``bot_error`` fault whose reason is :attr:`BotError.reason`, "ValueError: no tile", escaped
and bounded whoever built it, so a student reads their own exception everywhere the fault
appears, and no bot can grow a record or a page with what it sends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

MAX_TYPE: Final = 100
"""The most characters of an exception's type name a fault's reason keeps."""
MAX_MESSAGE: Final = 300
"""The most characters of an exception's message the SDK sends and a fault's reason keeps."""
_NOTE: Final = 40
"""Room past :data:`MAX_MESSAGE` for the note :func:`bounded` adds, so a message the SDK
bounded reaches the reason as it was sent."""
NO_TYPE: Final = "Exception"
"""The type a reason names when the bot sent none."""


def escape(text: str) -> str:
    """Return ``text`` on one line: backslashes, control characters and line breaks escaped."""
    if text.isprintable() and "\\" not in text:
        return text
    out = []
    for char in text:
        if char == "\\":
            out.append("\\\\")
        elif char.isprintable():
            out.append(char)
        else:
            out.append(repr(char)[1:-1] if char in "\n\r\t" else f"\\u{ord(char):04x}")
    return "".join(out)


def bounded(text: str, limit: int) -> str:
    """Return ``text`` cut to ``limit`` characters, saying how many were left off."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters)"


@dataclass(frozen=True, slots=True)
class BotError:
    """What a bot's code raised while it chose: the exception's type name and message, as
    sent (unbounded); :attr:`reason` is the safe text."""

    type: str
    message: str

    @classmethod
    def of(cls, exc: BaseException) -> BotError:
        """The error of an exception ``choose`` raised, its message bounded to what a reason
        keeps (a huge message is not sent whole).

        An exception that carries a bot's own error in a ``bot_error`` attribute (a program
        over the stdio protocol reported it: :class:`~..stdio.exec_bot.BotReportedError`) is
        that error, so local play names the program's exception as the referee would."""
        carried = getattr(exc, "bot_error", None)
        if isinstance(carried, BotError):
            return cls(carried.type, bounded(carried.message, MAX_MESSAGE))
        return cls(type(exc).__name__, bounded(str(exc), MAX_MESSAGE))

    @property
    def reason(self) -> str:
        """``"TYPE: MESSAGE"`` (``"TYPE"`` alone for an empty message), each part escaped and
        bounded (:data:`MAX_TYPE` characters of the type, about :data:`MAX_MESSAGE` of the
        message), whoever sent it."""
        kind = _safe(self.type, MAX_TYPE) or NO_TYPE
        message = _safe(self.message, MAX_MESSAGE + _NOTE)
        return f"{kind}: {message}" if message else kind


def shown(exc: BaseException) -> str:
    """An exception a bot's code raised, as every fault and report shows it ("ValueError: no
    tile"): :attr:`BotError.reason` of it."""
    return BotError.of(exc).reason


def _safe(text: str, limit: int) -> str:
    """The first ``limit`` characters of ``text`` escaped, saying how many were left off (the
    cut comes first, so a flood costs nothing to escape)."""
    shown = escape(text[:limit].strip())
    return f"{shown}... ({len(text) - limit} more characters)" if len(text) > limit else shown

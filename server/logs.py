"""The referee's log: stdlib logging with timestamps and levels, as text or JSON lines.

``domino-arena serve --log-level LEVEL --log-format text|json`` calls :func:`configure`. Every
record is one line, whatever it carries: a record's message is escaped (``\\n``, ``\\r``, other
control characters and backslashes as Python escapes) and bounded to :data:`MAX_MESSAGE`
characters, so text that a client sent (a bot name, a reason, an id) can never start a line of
its own and forge a record, nor flood the log (:func:`escape` and :func:`bounded` are the
SDK's, :mod:`domino_arena.sdk.match.bot_errors`: the one way to show a bot's text). A
traceback follows its record on lines that begin with :data:`CONTINUATION`, which no record
line does. JSON lines escape by construction.

:func:`quote` shows one untrusted value repr-style and bounded, for a log line or an error
message. Secrets (bot tokens, the admin token) are never passed to a log call.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import IO, Any, Final

from domino_arena.sdk.match.bot_errors import bounded, escape

__all__ = [
    "CONTINUATION",
    "FORMATS",
    "LEVELS",
    "LOGGER",
    "LOG_BURST",
    "MAX_MESSAGE",
    "MAX_QUOTED",
    "JsonFormatter",
    "LogBudget",
    "RateLimitedLog",
    "TextFormatter",
    "bounded",
    "configure",
    "escape",
    "formatter",
    "quote",
    "unconfigure",
]

LOGGER: Final = "domino_arena"
"""The logger every referee module logs under (``domino_arena.server``, ...)."""

LEVELS: Final = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}
FORMATS: Final = ("text", "json")

MAX_MESSAGE: Final = 2000
"""The most characters of a record's message (escaped) a log line holds."""
MAX_QUOTED: Final = 80
"""The most characters of an untrusted value :func:`quote` shows."""
CONTINUATION: Final = "    | "
"""The start of a traceback's lines in the text format."""

_STANDARD: Final = frozenset(
    vars(logging.LogRecord("", 0, "", 0, "", None, None)).keys() | {"message", "asctime"}
)
"""The attributes every record has: the others are a call's ``extra`` fields."""


def quote(value: object, limit: int = MAX_QUOTED) -> str:
    """Show an untrusted value quoted, escaped and bounded: ``'ab\\ncd'``, at most ``limit``
    characters of it (the escapes of its first ``limit`` characters)."""
    text = str(value)
    shown = escape(text[:limit])
    more = f"... ({len(text) - limit} more characters)" if len(text) > limit else ""
    return f"'{shown}'{more}"


def _time(record: logging.LogRecord) -> str:
    moment = dt.datetime.fromtimestamp(record.created, dt.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _message(record: logging.LogRecord) -> str:
    try:
        text = record.getMessage()
    except Exception as exc:  # a log call with the wrong arguments still logs a line
        text = f"{record.msg!r} (unformattable: {type(exc).__name__})"
    return bounded(escape(text), MAX_MESSAGE)


def _extras(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in vars(record).items() if k not in _STANDARD and not k.startswith("_")}


def _traceback(formatter: logging.Formatter, record: logging.LogRecord) -> str:
    if record.exc_info and not record.exc_text:
        record.exc_text = formatter.formatException(record.exc_info)
    return record.exc_text or ""


class TextFormatter(logging.Formatter):
    """``TIME LEVEL LOGGER: MESSAGE key=value ...``, one line per record (see the module)."""

    def format(self, record: logging.LogRecord) -> str:
        line = f"{_time(record)} {record.levelname} {record.name}: {_message(record)}"
        extras = " ".join(f"{k}={quote(v)}" for k, v in _extras(record).items())
        if extras:
            line = f"{line} {extras}"
        trace = _traceback(self, record)
        if trace:
            line += "".join(f"\n{CONTINUATION}{escape(row)}" for row in trace.splitlines())
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``time``, ``level``, ``logger``, ``message``, then the call's
    ``extra`` fields and ``exception`` (a traceback) when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": _time(record),
            "level": record.levelname,
            "logger": record.name,
            "message": _message(record),
        }
        for key, value in _extras(record).items():
            entry.setdefault(key, value if isinstance(value, int | float | bool) else str(value))
        trace = _traceback(self, record)
        if trace:
            entry["exception"] = bounded(trace, 20 * MAX_MESSAGE)
        return json.dumps(entry, ensure_ascii=True)


def formatter(log_format: str) -> logging.Formatter:
    """Return the formatter of ``log_format`` (``text`` or ``json``)."""
    if log_format not in FORMATS:
        raise ValueError(f"log format: expected one of {', '.join(FORMATS)}, got {log_format!r}")
    return JsonFormatter() if log_format == "json" else TextFormatter()


def configure(
    level: str, log_format: str, stream: IO[str], *, node: str | None = None
) -> logging.Handler:
    """Send the referee's records at ``level`` and above to ``stream`` in ``log_format``.

    With ``node`` (a cluster's gateway or host) every record carries ``node=NAME``, so the
    lines of many processes merged in one place still say which one handled what.

    Returns the handler added, for :func:`unconfigure`.

    Raises:
        ValueError: an unknown level or format (the message names it and the choices).
    """
    if level not in LEVELS:
        raise ValueError(f"log level: expected one of {', '.join(LEVELS)}, got {level!r}")
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter(log_format))
    if node is not None:
        handler.addFilter(_NodeFilter(node))
    root = logging.getLogger(LOGGER)
    root.addHandler(handler)
    root.setLevel(LEVELS[level])
    return handler


class _NodeFilter(logging.Filter):
    """Adds the process's node name to every record (an ``extra`` field the formats show)."""

    def __init__(self, node: str) -> None:
        super().__init__()
        self.node = node

    def filter(self, record: logging.LogRecord) -> bool:
        record.node = self.node
        return True


def unconfigure(handler: logging.Handler) -> None:
    """Remove a handler :func:`configure` added."""
    logging.getLogger(LOGGER).removeHandler(handler)


LOG_BURST: Final = 5
"""The lines a :class:`LogBudget` key logs at once before it waits for its refill."""


class LogBudget:
    """At most ``burst`` lines per key, then one per ``seconds``: a client that repeats a refused
    call (a bad Hello, a flood of connections) fills no log. :meth:`allow` says whether to log
    now, and how many lines for that key it held back since the last one (for the line to say).

    Keys are bounded: past ``max_keys`` the least recently seen key is forgotten.
    """

    def __init__(
        self,
        *,
        burst: int = LOG_BURST,
        seconds: float = 60.0,
        max_keys: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.burst = burst
        self.seconds = seconds
        self.max_keys = max_keys
        self.clock = clock
        self._keys: OrderedDict[str, tuple[float, float, int]] = OrderedDict()
        """key -> (lines it may still log, when that was counted, lines held back since)."""

    def allow(self, key: str) -> tuple[bool, int]:
        """(log this line?, how many were held back before it: say so when logging)."""
        now = self.clock()
        left, then, held = self._keys.pop(key, (float(self.burst), now, 0))
        left = min(float(self.burst), left + (now - then) / self.seconds)
        allowed = left >= 1.0
        self._keys[key] = (left - 1.0, now, 0) if allowed else (left, now, held + 1)
        while len(self._keys) > self.max_keys:
            self._keys.popitem(last=False)
        return allowed, held if allowed else 0


class RateLimitedLog:
    """One kind of event logged at most once every ``interval`` seconds (the web face's
    refused connections and accept errors: few kinds, many events, summed up by a timer).
    :class:`LogBudget` is the one for events keyed by client (a budget per address).

    The first event logs its line; the others within ``interval`` are counted, and the count is
    logged once the interval is over: with the next event's line (``... (and 41 more in the last
    10 s)``), or by itself when ``schedule`` (``loop.call_later``) is given and no event comes.
    So a flood of any size writes one line per interval."""

    def __init__(
        self,
        what: str,
        interval: float = 10.0,
        *,
        clock: Callable[[], float] = time.monotonic,
        schedule: Callable[[float, Callable[[], None]], object] | None = None,
        logger: logging.Logger | None = None,
    ) -> None:
        self.what = what
        self.interval = interval
        self.clock = clock
        self.schedule = schedule
        self.logger = logger or logging.getLogger(LOGGER)
        self.held = 0
        """Events counted since the last line, not logged."""
        self._quiet_until = float("-inf")
        self._since = 0.0
        self._flush_pending = False

    def event(self, detail: str) -> None:
        """Log ``what: detail`` now, or count it if a line of this kind was logged of late."""
        now = self.clock()
        if now < self._quiet_until:
            self.held += 1
            if self.schedule is not None and not self._flush_pending:
                self._flush_pending = True
                self.schedule(self._quiet_until - now, self._flush)
            return
        line = f"{self.what}: {detail}"
        if self.held:
            line += f" (and {self.held} more in the last {now - self._since:.0f} s)"
        self._logged(now, line)

    def _flush(self) -> None:
        self._flush_pending = False
        now = self.clock()
        if self.held and now >= self._quiet_until:
            self._logged(
                now, f"{self.what}: {self.held} more in the last {now - self._since:.0f} s"
            )

    def _logged(self, now: float, line: str) -> None:
        self.logger.warning(line)
        self.held = 0
        self._since = now
        self._quiet_until = now + self.interval

"""Times given on the command line: an ISO 8601 moment with a zone, or a while from now.

One reader for every option that takes a time (``tournament create --start-at``, ``invite
create --expires``) and every one that takes a length of time (``--valid-for``), so they all
accept the same forms and refuse the same mistakes with the same words.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Final

from domino_arena.server.cli.arguments import CliError

_WHILE: Final = re.compile(r"^(\d{1,6})([smhdw])$")
_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}


def duration(option: str, text: str) -> dt.timedelta:
    """A length of time: a whole number and a unit, ``90s``, ``30m``, ``2h``, ``14d``, ``2w``.

    Raises:
        CliError: anything else, naming the option and the forms it takes.
    """
    found = _WHILE.match(text.strip())
    if found is None or int(found.group(1)) == 0:
        raise CliError(
            f"{option}: expected a length of time such as 90s, 30m, 2h, 14d or 2w, got {text!r}"
        )
    return dt.timedelta(seconds=int(found.group(1)) * _UNITS[found.group(2)])


def moment(option: str, text: str, *, now: dt.datetime | None = None) -> dt.datetime:
    """A moment: ISO 8601 with a zone (``2027-03-01T09:00Z``, ``...+01:00``) or ``+`` and a
    length of time from now (``+30m``). A time without a zone is refused: whose 9 o'clock?

    Raises:
        CliError: neither form, naming the option.
    """
    text = text.strip()
    if text.startswith("+"):
        return (now or dt.datetime.now(dt.UTC)) + duration(option, text[1:])
    try:
        parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise CliError(
            f"{option}: expected a time such as 2027-03-01T09:00Z (ISO 8601 with a zone) or "
            f"+30m, got {text[:80]!r}"
        ) from None
    if parsed.tzinfo is None:
        raise CliError(
            f"{option}: {text[:80]!r} has no time zone; add one (2027-03-01T09:00Z, or +01:00)"
        )
    return parsed.astimezone(dt.UTC)

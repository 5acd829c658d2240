"""The seat names the referee reserves, without the database (no SQLAlchemy here).

Standard library only and beneath every layer, so the pure formats (the round robin's scheduler
in ``server/tournaments``, which may not import the store) and the store's tables
(``server/store/tables.py`` re-exports it) read the one rule, and the command line's client on
the light install (docs/admin.md) tells a house seat apart without loading the store's tables.
"""

from __future__ import annotations

import re
from typing import Final

HOUSE_PREFIX: Final = "house:"
"""A seat named ``house:NAME`` is the house bot NAME hosted by the referee (practice matches,
checks, a course's frozen baselines): no registered bot can be called so (a bot name has no
':'). Every layer that tells such seats apart reads this one constant."""

PERSON_PREFIX: Final = "person:"
"""A seat named ``person:NAME`` is a person the web face seats (docs/people.md): the record
names it so, and its stream says ``person:NAME#N`` in its Hello (one ticket, one match). No
bot can be called so (a bot name has neither ':' nor '#'), and a person's seat name is checked
against the referee's tickets, never the bots' table."""

PERSON_NAME_RULE: Final = "1-64 letters, digits, '_', '.', '-' or '@'"
"""What a person's shown name may hold (``Person.name`` in admin.proto)."""

PERSON_NAME: Final = re.compile(r"[A-Za-z0-9_.@-]{1,64}")
PERSON_SEAT: Final = re.compile(r"person:([A-Za-z0-9_.@-]{1,64})#([0-9]{1,18})")
"""A person's seat name in a Hello: ``person:NAME#N``, N the referee's count of seats."""


def is_person(seat: str) -> bool:
    """Whether ``seat`` (a record's name or a stream's) is a person's."""
    return seat.startswith(PERSON_PREFIX)


def person_seat(name: str, number: int) -> str:
    """The stream name of the ``number``-th person seat, for the person ``name``."""
    return f"{PERSON_PREFIX}{name}#{number}"


def shown_seat(stream: str) -> str:
    """The name the record gives the seat of ``stream``: ``person:NAME`` for ``person:NAME#N``
    (the ``#N`` only tells one ticket from another), else ``stream`` itself."""
    matched = PERSON_SEAT.fullmatch(stream)
    return stream if matched is None else f"{PERSON_PREFIX}{matched.group(1)}"

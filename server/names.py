"""The seat names the referee reserves, without the database (no SQLAlchemy here).

Standard library only and beneath every layer, so the pure formats (the round robin's scheduler
in ``server/tournaments``, which may not import the store) and the store's tables
(``server/store/tables.py`` re-exports it) read the one rule, and the command line's client on
the light install (docs/admin.md) tells a house seat apart without loading the store's tables.
"""

from __future__ import annotations

from typing import Final

HOUSE_PREFIX: Final = "house:"
"""A seat named ``house:NAME`` is the house bot NAME hosted by the referee (practice matches,
checks, a course's frozen baselines): no registered bot can be called so (a bot name has no
':'). Every layer that tells such seats apart reads this one constant."""

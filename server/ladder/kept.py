"""Values computed from many stored rows, kept in memory between requests of the web face and
of the admin API.

A tournament's tables need every one of its games and a bot's head-to-head a thousand of its
matches; computing them takes longer than a page may, and longer than a referee can give a
``GetTournament`` asked every second while it plays (0.5 s for 3,444 games: bench/README.md,
class_bench). Stored matches never change and are
never deleted, so a stamp (their count, the newest one's id) says when a kept value is stale.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Final, Generic, TypeVar

from domino_arena.server.store.tournaments import StoredTournament
from domino_arena.server.tournaments.rounds import ADAPTIVE_FORMATS

T = TypeVar("T")


class Kept(Generic[T]):
    """Values computed from many stored rows, kept per storage and name with the stamp they
    were computed at: the same stamp gives the kept value, a new stamp computes it again.

    A stamp is what changes whenever the rows do (stored matches never change and are never
    deleted, so their count, or the newest one's id, is one). At most ``most`` names are kept
    per storage, the least recently asked for going first.
    """

    def __init__(self, most: int) -> None:
        self.most = most
        self._lock = threading.Lock()
        self._kept: weakref.WeakKeyDictionary[Any, OrderedDict[str, tuple[object, T]]] = (
            weakref.WeakKeyDictionary()
        )

    def get(self, storage: object, name: str, stamp: object, compute: Callable[[], T]) -> T:
        with self._lock:
            kept = self._kept.setdefault(storage, OrderedDict())
            if name in kept and kept[name][0] == stamp:
                kept.move_to_end(name)
                return kept[name][1]
        value = compute()
        with self._lock:
            kept = self._kept.setdefault(storage, OrderedDict())
            kept[name] = (stamp, value)
            kept.move_to_end(name)
            while len(kept) > self.most:
                kept.popitem(last=False)
        return value


_TOTALS: Final[dict[tuple[Any, ...], int]] = {}
"""Schedule lengths already computed, by what a schedule is derived from."""


def schedule_total(t: StoredTournament, total_of: Callable[[StoredTournament], int]) -> int:
    """``total_of(t)``, computed once per schedule: building the schedule of a 10,000-game
    round robin takes longer than a page may, and the same row always gives the same one.
    A Swiss or knockout tournament's total grows with its stored rounds: counted each time."""
    if t.format in ADAPTIVE_FORMATS:
        return total_of(t)
    key = (
        total_of,
        t.id,
        t.game,
        repr(sorted(t.options.items())),
        t.entrants,
        t.games_per_pairing,
        t.deals,
    )
    if key not in _TOTALS:
        if len(_TOTALS) >= 1_000:
            _TOTALS.clear()
        _TOTALS[key] = total_of(t)
    return _TOTALS[key]

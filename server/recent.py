"""Answers kept a few seconds: what a flood of the same question should cost once.

The spectators' side asks the same things over and over: whose token this is and which live
view a course has (``server/net/live_access.py``), whether a match a crowd keeps asking for is
over (a relay, ``server/net/relay.py``; the web face, ``server/web/live.py``). A
:class:`Recent` keeps each answer ``seconds`` and at most ``most`` of them, the least recently
used going first, so a flood costs one question per key and period, and no more memory than
``most`` answers. A top-level module, as ``feed.py``: the referee, relays and the web face use it.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Recent(Generic[K, V]):
    """Answers kept ``seconds`` each, at most ``most`` (see the module)."""

    def __init__(
        self, seconds: float, most: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.seconds = seconds
        self.most = most
        self.clock = clock
        self._kept: OrderedDict[K, tuple[float, V]] = OrderedDict()

    def get(self, key: K) -> V | None:
        """The answer kept for ``key`` if it is younger than ``seconds``, else None."""
        kept = self._kept.get(key)
        if kept is None or self.clock() - kept[0] >= self.seconds:
            return None
        self._kept.move_to_end(key)
        return kept[1]

    def put(self, key: K, value: V) -> None:
        """Keep ``value`` for ``key`` from now on."""
        self._kept[key] = (self.clock(), value)
        self._kept.move_to_end(key)
        while len(self._kept) > self.most:
            self._kept.popitem(last=False)

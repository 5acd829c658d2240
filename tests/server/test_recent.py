"""Answers kept a few seconds (server/recent.py), and what they spare the database: a flood of
one refused watch token is looked up once per period (server/net/live_access.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.net.admin_requests import RequestError
from domino_arena.server.net.live_access import LiveAccess
from domino_arena.server.recent import Recent


def test_an_answer_is_kept_its_seconds_and_the_least_recently_used_goes_first() -> None:
    now = [0.0]
    kept: Recent[str, int] = Recent(5.0, 2, clock=lambda: now[0])
    kept.put("a", 1)
    kept.put("b", 2)
    assert kept.get("a") == 1  # "a" is now the most recently used
    kept.put("c", 3)
    assert (kept.get("a"), kept.get("b"), kept.get("c")) == (1, None, 3)
    now[0] = 5.0
    assert kept.get("a") is None, "five seconds old: asked again"


class CountingStorage(RatedStorage):
    """The real storage, counting the organizer-token lookups."""

    lookups = 0

    def organizer_course(self, token: str) -> str | None:
        self.lookups += 1
        return super().organizer_course(token)


def test_a_flood_of_a_refused_token_asks_the_database_once_per_period(tmp_path: Path) -> None:
    storage = CountingStorage(f"sqlite:///{tmp_path / 'recent.db'}")
    storage.open()
    now = [0.0]
    access = LiveAccess(storage, clock=lambda: now[0])
    metadata = (("authorization", "Bearer course:not-a-token"),)

    async def flood(times: int) -> None:
        for _ in range(times):
            with pytest.raises(RequestError, match="watch token: not a token"):
                await access.viewer(metadata)

    try:
        asyncio.run(flood(100))
        assert storage.lookups == 1
        now[0] = 5.0
        asyncio.run(flood(1))
        assert storage.lookups == 2
    finally:
        storage.close()

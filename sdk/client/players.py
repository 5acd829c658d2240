"""Which bot object plays which match of a connection, and the threads synchronous bots think in."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Final, TypeAlias

from domino_arena.sdk.bot import AnyBot, AsyncBot, Bot
from domino_arena.sdk.rules import Observation

WORKER_THREADS: Final = 32
"""Threads that run synchronous bots' ``choose``: as many matches can think at once."""


BotFactory: TypeAlias = Callable[[], AnyBot]
BotSource: TypeAlias = AnyBot | BotFactory
"""What :func:`~domino_arena.sdk.runner.run` accepts: a bot object, or a factory (such as the
bot's class)."""


@dataclass(slots=True)
class Player:
    """A bot object and the lock that keeps its synchronous calls one at a time."""

    bot: AnyBot
    lock: asyncio.Lock


class Players:
    """Which bot object plays each match, across reconnections.

    - A bot *object* plays every match of the connection. Its calls are made one at a time (a
      lock), so it needs no thread safety, but a slow ``choose`` in one match delays the others.
      Its hooks tell the matches apart by ``match_id``.
    - A *factory* (any callable returning a bot, such as the bot's class) makes a new bot for
      each match, and the matches think in parallel. This is the recommended form for bots
      that keep state about their game.

    A match that resumes after a reconnection gets its old bot object back, hooks and all.
    """

    def __init__(self, source: BotSource) -> None:
        if isinstance(source, Bot | AsyncBot):
            self._shared: Player | None = Player(source, asyncio.Lock())
            self._factory: BotFactory | None = None
        elif callable(source):
            self._shared = None
            self._factory = source
        else:
            raise TypeError(
                f"expected a Bot, an AsyncBot or a callable returning one, got {source!r}"
            )
        self._live: dict[str, Player] = {}
        self._unclaimed: set[str] = set()
        self._threads: ThreadPoolExecutor | None = None

    async def in_thread(
        self, player: Player, function: Callable[[Observation], object], observation: Observation
    ) -> object:
        """Run ``function(observation)`` in a worker thread, holding the player's lock.

        The lock is let go when the thread is done, not when the caller stops waiting: a call
        cancelled mid-think (its match ended, the connection dropped) still keeps the next
        call to that bot waiting, so a shared bot is never called from two threads at once.
        """
        if self._threads is None:
            self._threads = ThreadPoolExecutor(WORKER_THREADS, thread_name_prefix="bot")
        loop = asyncio.get_running_loop()
        await player.lock.acquire()
        try:
            context = contextvars.copy_context()
            future = self._threads.submit(context.run, function, observation)
        except BaseException:
            player.lock.release()
            raise

        def release(_: object) -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed while the bot thought
                loop.call_soon_threadsafe(player.lock.release)

        future.add_done_callback(release)
        return await asyncio.wrap_future(future)

    def close(self) -> None:
        """Let the worker threads go once they finish what they are doing."""
        if self._threads is not None:
            self._threads.shutdown(wait=False, cancel_futures=True)
            self._threads = None

    def for_match(self, match_id: str) -> Player:
        """Return the bot for ``match_id``: its own if it had one, else a new (or the shared) one.

        Raises:
            TypeError: the factory returned something that is not a bot.
        """
        if self._shared is not None:
            return self._shared
        self._unclaimed.discard(match_id)
        player = self._live.get(match_id)
        if player is None:
            assert self._factory is not None
            bot = self._factory()
            if not isinstance(bot, Bot | AsyncBot):
                raise TypeError(f"the bot factory returned {bot!r}, not a Bot or an AsyncBot")
            player = self._live[match_id] = Player(bot, asyncio.Lock())
        return player

    def existing(self, match_id: str) -> Player | None:
        """Return the bot already playing ``match_id``, if any (never makes one)."""
        return self._shared or self._live.get(match_id)

    def release(self, match_id: str) -> None:
        """Forget the bot of a match that ended."""
        self._live.pop(match_id, None)
        self._unclaimed.discard(match_id)

    def connection_lost(self, *, welcomed: bool) -> None:
        """Keep the bots of unfinished matches for the next welcomed connection.

        A match the referee did not resume during a whole welcomed connection is not coming
        back; attempts that were refused before the welcome do not count.
        """
        if not welcomed:
            return
        for match_id in self._unclaimed:
            self._live.pop(match_id, None)
        self._unclaimed = set(self._live)

"""From asyncio into trio: run a trio job in the arena's nursery and await its result.

The gRPC handlers run in asyncio; matches, checks and tournaments run in trio, a guest on the
same thread (DESIGN.md decision 10). :func:`in_trio` starts a job in the nursery and awaits a
future it settles. The job owns itself: cancelling the awaiting call (the admin went away)
does not stop it; a job cancelled by the shutdown settles :class:`MatchAbortedError`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Final, TypeVar

import trio

SHUTTING_DOWN: Final = "referee shutting down"

T = TypeVar("T")


class NotAcceptingError(Exception):
    """The arena is starting or shutting down: no match can start."""


class MatchAbortedError(Exception):
    """The referee shut down while the match was running."""


async def in_trio(
    nursery: trio.Nursery,
    job: Callable[[], Awaitable[T]],
    *,
    aborted: str = SHUTTING_DOWN,
    name: str | None = None,
) -> T:
    """Run the trio function ``job`` in ``nursery``; return what it returns (asyncio side).

    Raises:
        MatchAbortedError: the job was cancelled (the referee shut down); ``aborted`` is its
            message.
        Exception: what ``job`` raised.
    """
    done: asyncio.Future[T] = asyncio.get_running_loop().create_future()

    async def task() -> None:
        try:
            result = await job()
        except Exception as exc:
            if not done.done():  # the loop is closing, or nobody waits any more
                done.set_exception(exc)
        except BaseException:
            if not done.done():
                done.set_exception(MatchAbortedError(aborted))
            raise
        else:
            if not done.done():
                done.set_result(result)

    nursery.start_soon(task, name=name)
    return await asyncio.shield(done)

"""From asyncio into trio: run a trio job in the arena's nursery and await its result.

The gRPC handlers run in asyncio; matches, checks and tournaments run in trio, a guest on the
same thread (docs/decisions.md: decision 10). :func:`in_trio` starts a job in the nursery and awaits
a future it settles. By default the job owns itself: cancelling the awaiting call (the admin went
away) does not stop it. A job started with ``on_caller_cancelled`` is cancelled with its caller
instead (``match run`` stopped by Ctrl-C aborts its match, docs/admin.md); a job cancelled so,
or by the shutdown, settles :class:`MatchAbortedError`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Final, TypeVar

import trio

SHUTTING_DOWN: Final = "referee shutting down"
CALLER_LEFT: Final = "cancelled: the client that started it stopped (e.g. Ctrl-C on 'match run')"
"""Why a match that was cancelled with its caller (``on_caller_cancelled``) was aborted."""

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
    on_caller_cancelled: Callable[[], None] | None = None,
) -> T:
    """Run the trio function ``job`` in ``nursery``; return what it returns (asyncio side).

    ``on_caller_cancelled``: if given, cancelling the awaiting call also cancels ``job`` (it is
    called first, while the job still runs, to say why); None lets the job run on.

    Raises:
        MatchAbortedError: the job was cancelled (the referee shut down); ``aborted`` is its
            message.
        Exception: what ``job`` raised.
    """
    done: asyncio.Future[T] = asyncio.get_running_loop().create_future()
    scope = trio.CancelScope()

    async def task() -> None:
        with scope:  # cancelled only for a caller that went away: the task ends quietly then
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
    try:
        return await asyncio.shield(done)
    except asyncio.CancelledError:
        if on_caller_cancelled is not None and not done.done():
            on_caller_cancelled()
            scope.cancel()  # trio is a guest on this thread: its scopes may be cancelled here
        raise

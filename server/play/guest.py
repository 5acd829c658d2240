"""Trio as a guest of asyncio, waiting on asyncio's own loop instead of in a thread.

``trio.lowlevel.start_guest_run`` (docs/decisions.md: decision 10) runs trio's ticks on the
host's thread but waits for trio's I/O in a worker thread: each time trio goes idle it hands
``epoll_wait`` to that thread, and each wake-up from asyncio (a reply rescheduling a match's
task) writes to trio's wake-up socket, wakes the thread, which posts the next tick back with
``call_soon_threadsafe`` (asyncio's self-pipe). Two thread switches and four system calls per
wake-up: most of the 60-100 µs that waking a trio task from asyncio costs, against a few µs for
an asyncio task.

:func:`start_guest_run` runs the same guest (trio's own run loop, its ``unrolled_run``) but
waits on the host loop instead: trio's epoll descriptor is itself pollable, so asyncio watches
it (``add_reader``) and a timer stands for trio's timeout; a wake-up from the host's thread (a
task rescheduled, a deadline moved) schedules the next tick with ``call_soon``, without any
system call. Wake-ups from other threads (``trio.to_thread``, ``TrioToken.run_sync_soon``)
still write to trio's wake-up sockets, which asyncio sees through the epoll descriptor. Every
wake-up that arrives in one asyncio loop turn (all the replies read in that turn) is carried
by one tick.

It reaches into trio's private run loop (``trio._core._run``), so it is used only where that
loop is the one it was written for (Linux's epoll); elsewhere, or if trio's internals moved,
it falls back to trio's own ``start_guest_run``. Measured on a micro benchmark (an asyncio task
and a trio task waking each other): 52 µs of CPU per round trip against 95 µs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import threading
from collections.abc import Awaitable, Callable
from typing import Any, Final

import trio

LOG: Final = logging.getLogger("domino_arena.server")

try:  # trio's private run loop: checked by _usable below
    import attrs
    from outcome import Error, Outcome, Value, capture
    from sniffio import thread_local as sniffio_library
    from trio import TrioInternalError
    from trio._core._run import GuestState, setup_runner, unrolled_run
except ImportError:  # pragma: no cover - another trio
    _IMPORTED = False
else:
    _IMPORTED = True


class _Woken(list[Any]):
    """An empty batch of I/O events that is true: trio reads a false result of its I/O wait as
    "the timeout passed" (which may autojump a MockClock), and a wake-up from the host is not
    that."""

    def __bool__(self) -> bool:
        return True


_WOKEN: Final = _Woken()

if _IMPORTED:

    @attrs.define(eq=False)
    class _LoopGuest(GuestState):
        """trio's ``GuestState`` whose waits run on the asyncio loop ``loop``."""

        loop: asyncio.AbstractEventLoop | None = None
        fd: int = -1
        """trio's epoll descriptor."""
        timer: asyncio.TimerHandle | None = None
        waiting: bool = False
        """trio is idle, waiting for I/O, a wake-up or its timeout."""
        resuming: bool = False
        """A tick is scheduled to end the wait."""
        thread: int = 0

        def guest_tick(self) -> None:
            """Run one batch of trio's tasks; then run the next at once or wait for it."""
            runner = self.runner
            prev_library, sniffio_library.name = sniffio_library.name, "trio"
            try:
                timeout = self.unrolled_run_next_send.send(self.unrolled_run_gen)
            except StopIteration:
                self._stop_waiting_for_fd()
                assert runner.main_task_outcome is not None
                self.done_callback(runner.main_task_outcome)
                return
            except TrioInternalError as exc:
                self._stop_waiting_for_fd()
                self.done_callback(Error(exc))
                return
            finally:
                sniffio_library.name = prev_library
            events: Outcome[Any] = capture(runner.io_manager.get_events, 0)
            loop = self.loop
            assert loop is not None
            if timeout <= 0 or not isinstance(events, Value) or events.value:
                self.unrolled_run_next_send = events
                runner.guest_tick_scheduled = True
                loop.call_soon(self.guest_tick)
                return
            runner.guest_tick_scheduled = False
            self.waiting = True
            if timeout != math.inf:
                self.timer = loop.call_later(timeout, self.resume, False)

        def readable(self) -> None:
            """trio's epoll descriptor has events (I/O, or a wake-up from another thread)."""
            if self.waiting:
                self.resume(True)

        def wake(self) -> None:
            """trio's ``force_wakeup``: a tick is due (a task was rescheduled, a deadline
            moved). From the host's thread, one ``call_soon`` for all the wake-ups of a loop
            turn; from another thread, trio's wake-up socket, as trio does."""
            if threading.get_ident() != self.thread:
                with contextlib.suppress(BlockingIOError):
                    self.runner.io_manager._force_wakeup.write_sock.send(b"\x00")
                return
            if self.waiting and not self.resuming:
                self.resuming = True
                assert self.loop is not None
                self.loop.call_soon(self.resume, True)

        def resume(self, woken: bool) -> None:
            """End the wait (``woken``: by I/O or a wake-up, else by the timeout) and tick."""
            self.resuming = False
            if not self.waiting:
                return
            self.waiting = False
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            events: Outcome[Any] = capture(self.runner.io_manager.get_events, 0)
            if woken and isinstance(events, Value) and not events.value:
                events = Value(_WOKEN)
            self.unrolled_run_next_send = events
            self.runner.guest_tick_scheduled = True
            self.guest_tick()

        def _stop_waiting_for_fd(self) -> None:
            assert self.loop is not None
            self.loop.remove_reader(self.fd)


TESTED_TRIO: Final = ((0, 35),)
"""The trio releases (major, minor) whose private run loop this module was written against and
tested with (tests/server/test_guest.py); pyproject.toml keeps trio below the next one."""


def _usable() -> bool:
    """Whether trio is a release this module knows, and its run loop and I/O manager the epoll
    ones."""
    if not _IMPORTED:  # pragma: no cover
        return False
    release = tuple(int(part) for part in trio.__version__.split(".")[:2] if part.isdigit())
    if release not in TESTED_TRIO:  # pragma: no cover - another trio
        return False
    from trio._core import _run  # noqa: PLC0415

    manager = getattr(_run, "TheIOManager", None)
    if manager is None or manager.__name__ != "EpollIOManager" or not attrs.has(manager):
        return False
    fields = attrs.fields_dict(manager)
    return "_epoll" in fields and "_force_wakeup" in fields


_USABLE: Final = _usable()


def start_guest_run(
    async_fn: Callable[[], Awaitable[object]],
    *,
    done_callback: Callable[[Outcome[Any]], object],
    host_uses_signal_set_wakeup_fd: bool = False,
) -> None:
    """Start ``async_fn`` as a trio guest of the running asyncio loop (as
    ``trio.lowlevel.start_guest_run`` with the loop's ``call_soon_threadsafe`` and
    ``call_soon``), its waits on the loop itself (see the module's docstring).

    ``done_callback`` gets the run's outcome, as trio's.
    """
    loop = asyncio.get_running_loop()
    if not _USABLE:  # pragma: no cover - not epoll, or another trio
        _fallback(async_fn, loop, done_callback, host_uses_signal_set_wakeup_fd)
        return
    runner = setup_runner(None, (), False, True)
    runner.is_guest = True
    runner.guest_tick_scheduled = True
    guest = _LoopGuest(
        runner=runner,
        run_sync_soon_threadsafe=loop.call_soon_threadsafe,
        run_sync_soon_not_threadsafe=loop.call_soon,
        done_callback=done_callback,
        unrolled_run_gen=unrolled_run(
            runner, async_fn, (), host_uses_signal_set_wakeup_fd=host_uses_signal_set_wakeup_fd
        ),
        loop=loop,
        fd=runner.io_manager._epoll.fileno(),
        thread=threading.get_ident(),
    )
    # trio's force_wakeup writes to this socket pair's; the guest's wake takes its place
    runner.io_manager._force_wakeup.wakeup_thread_and_signal_safe = guest.wake  # type: ignore[method-assign]
    # As trio's own: run the first ticks now, until the system nursery exists (they run no
    # user code and never wait), so the caller may use it at once.
    next_send: Any = None
    for _ in range(5):
        if runner.system_nursery is not None:
            break
        if guest.unrolled_run_gen.send(next_send) != 0:  # pragma: no cover
            raise TrioInternalError("the guest run blocked before its system nursery existed")
        next_send = []
    else:  # pragma: no cover
        raise TrioInternalError("the guest run took too many ticks to start")
    guest.unrolled_run_next_send = Value(next_send)
    loop.add_reader(guest.fd, guest.readable)
    loop.call_soon(guest.guest_tick)


def _fallback(
    async_fn: Callable[[], Awaitable[object]],
    loop: asyncio.AbstractEventLoop,
    done_callback: Callable[[Outcome[Any]], object],
    host_uses_signal_set_wakeup_fd: bool,
) -> None:
    """trio's own guest run (its waits in a worker thread)."""
    LOG.info("trio's guest run waits in a thread here (not epoll, or another trio)")
    trio.lowlevel.start_guest_run(
        async_fn,
        run_sync_soon_threadsafe=loop.call_soon_threadsafe,
        run_sync_soon_not_threadsafe=loop.call_soon,
        done_callback=done_callback,
        host_uses_signal_set_wakeup_fd=host_uses_signal_set_wakeup_fd,
    )

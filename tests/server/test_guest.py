"""trio as a guest of asyncio, waiting on asyncio's loop (server/play/guest.py).

Every way trio is woken is driven here: a task rescheduled from asyncio (a reply), a worker
thread that finishes (``trio.to_thread``, through trio's wake-up socket and its epoll
descriptor), a call from another thread (``TrioToken.run_sync_soon``), and the end of the run.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import outcome
import trio

from domino_arena.server.play import guest


def run_guest(trio_main: Any, host_main: Any) -> tuple[object, object]:
    """Run ``trio_main`` as the guest and ``host_main(trio_done)`` on asyncio; return both
    results."""

    async def main() -> tuple[object, object]:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[outcome.Outcome[object]] = loop.create_future()
        guest.start_guest_run(trio_main, done_callback=done.set_result)
        host = await host_main(done)
        return (await done).unwrap(), host

    return asyncio.run(main())


def test_tasks_woken_from_asyncio_run_each_wake_once_and_in_order() -> None:
    waiting: list[trio.lowlevel.Task] = []

    async def trio_main() -> list[int]:
        got = []
        waiting.append(trio.lowlevel.current_task())
        for _ in range(200):
            value = await trio.lowlevel.wait_task_rescheduled(lambda _: trio.lowlevel.Abort.FAILED)
            got.append(value)
            waiting.append(trio.lowlevel.current_task())
        return got

    async def host(done: asyncio.Future[Any]) -> int:
        sent = 0
        while sent < 200:
            while not waiting:
                await asyncio.sleep(0)
            trio.lowlevel.reschedule(waiting.pop(), outcome.Value(sent))
            sent += 1
        return sent

    got, sent = run_guest(trio_main, host)
    assert got == list(range(200)) and sent == 200


def test_worker_threads_and_calls_from_other_threads_wake_the_guest() -> None:
    async def trio_main() -> tuple[int, str]:
        token = trio.lowlevel.current_trio_token()
        answered = trio.Event()
        said: list[str] = []

        def say() -> None:
            said.append("hello")
            answered.set()

        def from_thread() -> None:
            token.run_sync_soon(say)

        value = await trio.to_thread.run_sync(lambda: 6 * 7)
        threading.Thread(target=from_thread).start()
        await answered.wait()
        return value, said[0]

    async def host(done: asyncio.Future[Any]) -> str:
        await asyncio.wait_for(asyncio.shield(done), 30)
        return "idle"

    assert run_guest(trio_main, host) == ((42, "hello"), "idle")


def test_a_deadline_already_passed_cancels_and_the_run_ends_with_its_outcome() -> None:
    async def trio_main() -> bool:
        with trio.move_on_at(trio.current_time()) as scope:
            await trio.sleep_forever()
        return scope.cancelled_caught

    async def host(done: asyncio.Future[Any]) -> int:
        await asyncio.shield(done)
        # The guest stopped watching trio's epoll descriptor when it ended.
        selector = asyncio.get_running_loop()._selector  # type: ignore[attr-defined]
        return len(selector.get_map())

    cancelled, watched = run_guest(trio_main, host)
    assert cancelled is True
    assert watched == 1, "only asyncio's own self-pipe is left"


def test_the_installed_trio_runs_on_the_loop_not_in_a_thread() -> None:
    """The fast path is the one in use: a trio outside ``TESTED_TRIO``, or one whose run loop
    moved, falls back to trio's own guest run, silently slower; this says so."""
    assert guest._USABLE, f"trio {trio.__version__}: guest.py falls back to the threaded run"

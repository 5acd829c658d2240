"""A bot's process: how it is started and stopped, and its stderr's tail.

Both sides of the stdio bridge start the child the same way: :func:`popen` for the synchronous
:class:`~.exec_bot.ExecBot` (a thread reads its stdout), :func:`spawn` for the asyncio
:func:`~.relay.relay`. The child gets three pipes and a session of its own
(``start_new_session``), so stopping it reaches every process it started: SIGTERM to its
process group, then SIGKILL after :data:`STOP_GRACE` seconds, and it is always reaped. With
``run_as`` (the sandbox's user, when the runner is root) it drops its groups and switches to
that uid and gid before the command runs.

A child that writes to stderr must never block on a full pipe, so stderr is drained as it comes
and handed to a callback; what is kept of it is the caller's choice (:class:`StderrTail` keeps
the last few KiB, for error messages).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from domino_arena.sdk.match.bot_errors import escape

STOP_GRACE: Final = 2.0
"""Seconds a child has to exit after SIGTERM before its process group is killed."""

CHUNK: Final = 1 << 16
"""Bytes read from a child's pipe at a time."""


@dataclass(frozen=True, slots=True)
class ChildCommand:
    """How to start a bot's process (the stdio protocol on its stdin and stdout)."""

    argv: tuple[str, ...]
    cwd: str | None = None
    env: Mapping[str, str] | None = None
    """None: inherit the caller's environment."""
    run_as: int | None = None
    """The uid (and gid) to switch to before exec: the sandbox user when the runner is root."""

    def __post_init__(self) -> None:
        if not self.argv:
            raise ValueError("ChildCommand.argv: empty; expected the command and its arguments")

    def describe(self) -> str:
        """The command as error messages show it (escaped, on one line)."""
        return escape(" ".join(self.argv))


def _options(command: ChildCommand) -> dict[str, Any]:
    """The options both spawners pass: a new session, the cwd, the environment, the user."""
    options: dict[str, Any] = {
        "cwd": command.cwd,
        "env": None if command.env is None else dict(command.env),
        "start_new_session": True,
    }
    run_as = command.run_as
    if run_as is not None:

        def drop() -> None:  # runs in the child, between fork and exec
            os.setgid(run_as)
            os.setgroups([])
            os.setuid(run_as)

        options["preexec_fn"] = drop
    return options


def popen(command: ChildCommand) -> subprocess.Popen[bytes]:
    """Start ``command`` with three pipes (unbuffered), in a session of its own.

    Raises:
        OSError: the command cannot be started (not found, not executable).
    """
    return subprocess.Popen(
        command.argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
        **_options(command),
    )


async def spawn(command: ChildCommand) -> asyncio.subprocess.Process:
    """:func:`popen` for asyncio.

    Raises:
        OSError: the command cannot be started.
    """
    return await asyncio.create_subprocess_exec(
        *command.argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=CHUNK,
        **_options(command),
    )


def _signal_group(pid: int, signum: signal.Signals) -> None:
    """Send ``signum`` to the process group the child leads (gone already: nothing to do)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signum)


def stop(process: subprocess.Popen[bytes], grace: float = STOP_GRACE) -> int:
    """Stop a child started by :func:`popen` and its group; reap it; return its status."""
    for pipe in (process.stdin,):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    _signal_group(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(grace)
    _signal_group(process.pid, signal.SIGKILL)  # whatever of the group is left
    return process.wait()


async def stop_async(process: asyncio.subprocess.Process, grace: float = STOP_GRACE) -> int:
    """Stop a child started by :func:`spawn` and its group; reap it; return its status."""
    if process.stdin is not None:
        process.stdin.close()
    _signal_group(process.pid, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), grace)
    _signal_group(process.pid, signal.SIGKILL)
    return await process.wait()


class StderrTail:
    """The last ``limit`` bytes a child wrote to stderr, for the errors that name it."""

    __slots__ = ("_kept", "limit")

    def __init__(self, limit: int = 4096) -> None:
        self.limit = limit
        self._kept = bytearray()

    def feed(self, chunk: bytes) -> None:
        kept = self._kept
        kept += chunk[-self.limit :]
        if len(kept) > self.limit:
            del kept[: len(kept) - self.limit]

    def lines(self, count: int = 10) -> list[str]:
        """The last ``count`` lines (escaped, each on one line; the first may be cut)."""
        text = self._kept.decode(errors="replace")
        return [escape(line) for line in text.splitlines()[-count:] if line.strip()]

    def shown(self, count: int = 10) -> str:
        """The last lines as an error message ends with them ("" when nothing was written)."""
        lines = self.lines(count)
        if not lines:
            return ""
        return "; its last stderr lines:\n  " + "\n  ".join(lines)


def status_text(returncode: int) -> str:
    """How a child ended, in words: "exit status 1", "killed by SIGKILL"."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"killed by {name}"
    return f"exit status {returncode}"


OnChunk = Callable[[bytes], None]
"""What receives each chunk a child writes to stderr."""

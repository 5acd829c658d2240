"""The ``domino-arena`` command as a subprocess, waited on by its output lines, never by a timer.

End-to-end tests start the referee and its bots as separate processes. :class:`Process`
collects a process's output on a thread so a test can wait for the line that says something
happened ("serving on ...", "match ended: ..."); its timeouts only bound a failure.
:func:`reserved_port` keeps a port for a referee that must come back on the same address;
:func:`memory` reads a process's memory figures (its RSS) from ``/proc``.
"""

from __future__ import annotations

import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Final

WAIT: Final = 60.0
"""Seconds a step may take before the test fails (never reached when it passes)."""


def command(*args: str) -> list[str]:
    """The ``domino-arena`` command line: the installed script, or the module if there is none."""
    script = Path(sys.executable).with_name("domino-arena")
    if script.exists():
        return [str(script), *args]
    return [sys.executable, "-m", "domino_arena.server.cli.main", *args]


class Process:
    """A subprocess whose output lines are collected by a thread, to be waited on.

    ``wait`` bounds each wait (for a line, for the exit) in seconds.
    """

    def __init__(
        self,
        args: Sequence[str],
        cwd: Path,
        env: dict[str, str] | None = None,
        *,
        wait: float = WAIT,
    ) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
        self.args = list(args)
        self.wait = wait
        self.popen = subprocess.Popen(
            self.args,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        self._new: queue.Queue[str | None] = queue.Queue()
        assert self.popen.stdout is not None
        self._reader = threading.Thread(target=self._read, args=(self.popen.stdout,), daemon=True)
        self._reader.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.heard(line.rstrip("\n"))
        self.heard(None)

    def heard(self, line: str | None) -> None:
        """Keep a line of output (None: the output ended); on the reader thread. A subclass
        that wakes others on each line extends this."""
        if line is not None:
            self.lines.append(line)
        self._new.put(line)

    def wait_line(self, fragment: str, *, context: Sequence[Process] = ()) -> str:
        """Return the next output line containing ``fragment``.

        Raises:
            AssertionError: the process ended, or ``wait`` seconds passed, without such a line;
                the message shows this process's last lines and those of ``context`` (the
                processes it was talking to).
        """
        deadline = time.monotonic() + self.wait
        while True:
            try:
                line = self._new.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                problem = f"no line with {fragment!r} from {self}"
                break
            if line is None:
                problem = f"{self} ended without a line with {fragment!r}"
                break
            if fragment in line:
                return line
        raise AssertionError("\n".join([problem, *(f"and {other}" for other in context)]))

    def finish(self) -> tuple[int, str]:
        """Wait for the process to exit; return its status and its whole output."""
        code = self.popen.wait(self.wait)
        self._reader.join(self.wait)
        return code, "\n".join(self.lines)

    def stop(self) -> None:
        """Kill the process if it still runs (the clean-up of a test, passed or failed)."""
        if self.popen.poll() is None:
            self.popen.kill()
            self.popen.wait(self.wait)

    def __str__(self) -> str:
        return f"'{' '.join(self.args[1:4])} ...' (output: {self.lines[-20:]})"


def memory(pid: int) -> dict[str, int]:
    """The figures of ``/proc/PID/status`` given in kB, in bytes (``VmRSS``, ``VmHWM``, ...),
    and ``Threads``; the tests and the benches (bench/idle_bots_bench.py, bench/soak.py) read
    a process's memory with it."""
    figures: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        parts = value.split()
        if len(parts) == 2 and parts[1] == "kB":
            figures[key] = int(parts[0]) * 1024
        elif key == "Threads":
            figures[key] = int(parts[0])
    return figures


def served_port(referee: Process, host: str = "127.0.0.1") -> int:
    """Wait for the referee's "serving on HOST:PORT" line; return the port it bound."""
    line = referee.wait_line(f"serving on {host}:")
    return int(line.rsplit(":", 1)[1])


@contextmanager
def reserved_port(host: str = "127.0.0.1") -> Iterator[int]:
    """A port the kernel chose (port 0), kept from every other process until the block ends.

    A referee killed and started again must come back on the address its bots reconnect to;
    a port probed, released and passed on could be taken by another process meanwhile. This
    socket stays bound (never listening) for the whole block, so the kernel gives the port to
    no port-0 bind and no outgoing connection, and a plain ``bind`` of it fails. The referee
    can still listen on it: grpc sets ``SO_REUSEADDR`` on its listening socket, and Linux lets
    such a socket share a port with another ``SO_REUSEADDR`` socket that is bound but does not
    listen (connections go to the listener only).
    """
    with socket.socket() as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind((host, 0))
        port: int = holder.getsockname()[1]
        yield port


def resident(pids: Iterable[int]) -> int:
    """The resident memory of ``pids`` together, in bytes (a process gone meanwhile counts 0)."""
    total = 0
    for pid in pids:
        try:
            total += memory(pid)["VmRSS"]
        except (FileNotFoundError, ProcessLookupError, KeyError):
            continue
    return total

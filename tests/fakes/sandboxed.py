"""Run a sandboxed bot for a test: a bundle from files, the child started as a bridge starts it.

The hosting tests (tests/hosting/) start real bubblewrap sandboxes. :func:`spawn` starts a
:class:`ChildCommand` the way the stdio bridge's spawner does (pipes, a new session, the
``run_as`` switch in the child before exec); :func:`bundle` makes an unpacked submission from
files through the real pack/unpack; :func:`inside` lists the host pids of every process in a
sandbox's pid namespace, so a test can show none survives.
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from domino_arena.sdk.stdio.child import ChildCommand
from domino_arena.server.hosting.spec.submissions import pack, unpack

WAIT: Final = 20.0
"""Seconds a sandbox may take before the test fails (never reached when it passes)."""


def spawn(child: ChildCommand) -> subprocess.Popen[bytes]:
    """``child`` started with pipes in a new session, as uid/gid ``run_as`` if given."""
    uid = child.run_as

    def switch() -> None:
        if uid is not None:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)

    return subprocess.Popen(
        child.argv,
        cwd=child.cwd,
        env=None if child.env is None else dict(child.env),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=switch if uid is not None else None,  # noqa: PLW1509 - the bridge's switch
    )


@dataclass(frozen=True, slots=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def explain(self) -> str:
        """What the sandbox said, for a failure message."""
        return (
            f"exit {self.returncode}\nstdout: {self.stdout[-2000:]}\nstderr: {self.stderr[-2000:]}"
        )


def run(child: ChildCommand, stdin: bytes = b"", *, timeout: float = WAIT) -> Ran:
    """Run ``child`` to its end; the process group is killed if it outlives ``timeout``."""
    started = time.monotonic()
    process = spawn(child)
    try:
        out, err = process.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, 9)
        process.communicate()
        raise AssertionError(f"the sandbox still ran after {timeout} s: {child.argv}") from None
    return Ran(
        process.returncode,
        out.decode("utf-8", "replace"),
        err.decode("utf-8", "replace"),
        time.monotonic() - started,
    )


def bundle(root: Path, files: Mapping[str, str], *, command: str = "true") -> Path:
    """An unpacked submission of ``files`` (path -> text) under ``root``, as the runner makes it."""
    source = root / "source"
    source.mkdir(parents=True)
    for name, text in files.items():
        path = source / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if text.startswith("#!"):
            path.chmod(0o755)
    into = root / "bundle"
    unpack(pack(source, command=command), into)
    return into


def inside(pid: int) -> list[int]:
    """Host pids of the processes in the pid namespace of ``pid``'s child (bubblewrap's init)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    if not children:
        return []
    namespace = os.readlink(f"/proc/{children[0]}/ns/pid")
    return in_namespace(namespace)


def in_namespace(namespace: str) -> list[int]:
    """Host pids of the live processes whose pid namespace is ``namespace`` (a ns/pid link).

    A zombie (ended, not yet reaped by the host's init) is not alive.
    """
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.readlink(f"/proc/{entry}/ns/pid") != namespace:
                    continue
                state = Path(f"/proc/{entry}/stat").read_text().rpartition(")")[2].split()[0]
            except OSError:
                continue  # gone meanwhile
            if state not in {"Z", "X"}:
                found.append(int(entry))
    return found


def wait_gone(pids: list[int], timeout: float = WAIT) -> list[int]:
    """Wait for each process to end (on a pidfd, no polling); those alive after ``timeout``."""
    alive = []
    deadline = time.monotonic() + timeout
    for pid in pids:
        try:
            descriptor = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            left = max(0.0, deadline - time.monotonic())
            readable, _, _ = select.select([descriptor], [], [], left)
            if not readable:
                alive.append(pid)
        finally:
            os.close(descriptor)
    return alive

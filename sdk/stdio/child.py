"""A child process to start: the command line a bridge runs a stdio bot with.

Kept as plain data so the sandbox (server/hosting/sandbox.py) can describe a sandboxed bot and
the bridge can start it without either importing the other's machinery.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ChildCommand:
    """What to run: started with stdin/stdout/stderr pipes in a new session, stopped by SIGTERM to
    its process group, SIGKILL after a grace period."""

    argv: tuple[str, ...]
    cwd: str | None = None
    env: Mapping[str, str] | None = None
    """None: inherit the caller's environment."""
    run_as: int | None = None
    """uid = gid to switch to before exec (the sandbox user when root)."""

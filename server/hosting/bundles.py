"""A stored version of a hosted bot, made ready to run: unpacked once, started sandboxed.

A version's files are the checked archive of its submission (``submissions.py``). The runner
and the validator need them on disk, read-only inside the sandbox: :class:`Bundles` unpacks each
version once into its own directory under the runner's work directory, named by the archive's
SHA-256 (two versions with the same files share it), and gives the sandboxed command that runs
it (docs/hosting.md, "The sandbox").
"""

from __future__ import annotations

import shlex
import shutil
import threading
from pathlib import Path

from domino_arena.sdk.stdio.child import ChildCommand

from .sandbox import python_command, sandboxed
from .spec.limits import SandboxLimits
from .spec.submissions import Submission, unpack

KIND_PYTHON = "python"
"""A Python file with a ``Bot``: run by the SDK's stdio host (``sdk/stdio/__main__.py``)."""
KIND_COMMAND = "command"
"""A folder or archive with a command that speaks the stdio protocol itself (any language)."""


def entry_argv(kind: str, entry: str) -> list[str]:
    """The command line, inside the sandbox, that runs a version of ``kind`` with ``entry``.

    Raises:
        ValueError: an unknown kind, or a command that does not split into words.
    """
    if kind == KIND_PYTHON:
        return python_command(entry)
    if kind == KIND_COMMAND:
        try:
            words = shlex.split(entry)
        except ValueError as error:
            raise ValueError(f"entry: the command does not split into words: {error}") from None
        if not words:
            raise ValueError("entry: the command is empty")
        return words
    raise ValueError(f"kind: expected '{KIND_PYTHON}' or '{KIND_COMMAND}', got {kind[:32]!r}")


class Bundles:
    """The unpacked versions under ``root``, one directory per archive (thread-safe: the
    validator's thread and the runner's loop both ask)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()

    def path(self, submission: Submission) -> Path:
        """The directory holding ``submission``'s files, unpacked on the first call."""
        target = self.root / submission.sha256
        with self._lock:
            if not target.is_dir():
                partial = self.root / f".{submission.sha256}.partial"
                shutil.rmtree(partial, ignore_errors=True)
                partial.mkdir(parents=True)
                unpack(submission, partial)
                for path in (partial, *partial.rglob("*")):  # the sandbox's user reads them
                    path.chmod(0o755 if path.is_dir() or path.stat().st_mode & 0o100 else 0o644)
                partial.rename(target)
        return target

    def command(self, submission: Submission, limits: SandboxLimits) -> ChildCommand:
        """The sandboxed command that runs ``submission`` under ``limits``."""
        argv = entry_argv(submission.kind, submission.entry)
        return sandboxed(self.path(submission), argv, limits)

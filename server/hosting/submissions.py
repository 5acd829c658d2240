"""A submitted bot as the store keeps it (a placeholder of the sandbox helper's module).

Only the types of the contract the store needs: :class:`Submission` and
:class:`SubmissionError`. The full module (pack, check, unpack) replaces this file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

MAX_ARCHIVE_BYTES: Final = 3 << 20
"""What is uploaded (fits a gRPC message)."""
MAX_UNPACKED_BYTES: Final = 64 << 20
MAX_MEMBERS: Final = 2000


class SubmissionError(ValueError):
    """A submission refused: names the member and the rule."""


@dataclass(frozen=True, slots=True)
class Submission:
    """A checked submission: its kind, entry and canonical archive."""

    kind: str
    """``python`` (entry ``mybot.py:MyBot``) or ``command`` (entry ``./run.sh``)."""
    entry: str
    archive: bytes
    """The canonical tar.gz of its files."""
    sha256: str
    """Of ``archive``."""
    unpacked_bytes: int
    files: int

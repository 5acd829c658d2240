"""The limits each hosted bot runs under, and their one check (docs/hosting.md, "The sandbox").

An organizer sets them per course or tournament as a JSON object (stored as text); a bad object
is refused with the field, the rule and what was expected, never silently clamped. The ranges
keep a sandbox able to start (Python needs some memory, files and processes) and the host safe
(a bot never gets more than a machine's worth).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Final

ADDRESS_SPACE_FACTOR: Final = 8
"""RLIMIT_AS is this many times ``memory_mb``: room for runtimes' reservations (measured: Go
needs 768 MB of address space to start, Node.js 1 GB, the JVM's defaults a quarter of the host's
memory unless given -Xmx)."""

RANGES: Final[Mapping[str, tuple[int, int]]] = {
    "memory_mb": (64, 65536),
    "cpu_seconds": (1, 7 * 24 * 3600),
    "processes": (2, 4096),
    "open_files": (16, 65536),
    "file_mb": (1, 4096),
    "scratch_mb": (1, 4096),
    "log_kb": (1, 1024),
}
"""Inclusive bounds of each limit. ``processes`` counts the sandbox's own init too."""


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """Per-bot limits; every process of the bot gets them (rlimits), the scratch is one tmpfs."""

    memory_mb: int = 512
    """Private writable memory of each process (RLIMIT_DATA: heap, arenas, thread stacks), with
    its address space capped at ``ADDRESS_SPACE_FACTOR`` times as much (RLIMIT_AS, the bound of
    shared memory). RLIMIT_AS alone would refuse Go, Node.js and the JVM at 512 MB: they
    reserve far more address space than they use."""
    cpu_seconds: int = 3600
    """CPU time of each process for its whole life (RLIMIT_CPU); the runner restarts it."""
    processes: int = 32
    """Processes and threads together, counted in the sandbox's user namespace (RLIMIT_NPROC)."""
    open_files: int = 64
    """Open file descriptors of each process (RLIMIT_NOFILE)."""
    file_mb: int = 16
    """Largest file a process may write (RLIMIT_FSIZE)."""
    scratch_mb: int = 64
    """Size of the private tmpfs at /tmp (also HOME)."""
    log_kb: int = 64
    """stderr kept per match (the store keeps at most 64 KiB of a match's: more keeps that)."""

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            low, high = RANGES[field.name]
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(
                    f"sandbox limit {field.name}: expected an integer, got {value!r:.40}"
                )
            if not low <= value <= high:
                raise ValueError(
                    f"sandbox limit {field.name}: must be between {low} and {high}, got {value}"
                )

    @classmethod
    def parse(cls, mapping: Mapping[str, object]) -> SandboxLimits:
        """Limits from an organizer's object; unnamed ones keep their defaults.

        Raises ValueError naming the field: an unknown name, a value that is not an integer or
        is outside its range (:data:`RANGES`).
        """
        if not isinstance(mapping, Mapping):
            raise ValueError(
                f"sandbox limits: expected an object of limits, got {type(mapping).__name__}"
            )
        known = [field.name for field in fields(cls)]
        for key in mapping:
            if key not in known:
                raise ValueError(
                    f"sandbox limits: unknown limit {str(key)!r:.60}, expected one of "
                    + ", ".join(known)
                )
        return cls(**mapping)  # type: ignore[arg-type]  # __post_init__ checks each value

    def to_dict(self) -> dict[str, int]:
        """The limits by name, as :meth:`parse` reads them."""
        return asdict(self)


DEFAULT_LIMITS: Final = SandboxLimits()

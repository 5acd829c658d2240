"""The sandbox's limits per hosted bot (a placeholder of the sandbox helper's module).

Only the contract's :class:`SandboxLimits` with its defaults; the full module replaces this file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """What one hosted bot may use."""

    memory_mb: int = 512
    cpu_seconds: int = 3600
    processes: int = 32
    open_files: int = 64
    file_mb: int = 16
    scratch_mb: int = 64
    log_kb: int = 64

    @classmethod
    def parse(cls, mapping: Mapping[str, object]) -> SandboxLimits:
        """The limits of ``mapping`` (missing fields: the defaults).

        Raises:
            ValueError: an unknown field or a value that is not a positive integer.
        """
        names = {field.name for field in dataclasses.fields(cls)}
        values: dict[str, int] = {}
        for key, value in mapping.items():
            if key not in names:
                raise ValueError(f"{key}: not a sandbox limit; expected one of {sorted(names)}")
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{key}: expected a positive integer, got {value!r}")
            values[key] = value
        return cls(**values)

    def to_dict(self) -> dict[str, int]:
        """The limits as a mapping of field name to value."""
        return dataclasses.asdict(self)


DEFAULT_LIMITS: Final = SandboxLimits()

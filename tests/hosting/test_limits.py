"""The sandbox limits an organizer sets: defaults, and each bad value refused by name."""

from __future__ import annotations

import pytest

from domino_arena.server.hosting.spec.limits import DEFAULT_LIMITS, RANGES, SandboxLimits


def test_the_defaults_are_documented_ones() -> None:
    assert DEFAULT_LIMITS.to_dict() == {
        "memory_mb": 512,
        "cpu_seconds": 3600,
        "processes": 32,
        "open_files": 64,
        "file_mb": 16,
        "scratch_mb": 64,
        "log_kb": 64,
    }
    assert SandboxLimits.parse({}) == DEFAULT_LIMITS


def test_parse_keeps_the_defaults_it_is_not_given() -> None:
    limits = SandboxLimits.parse({"memory_mb": 1024, "processes": 8})
    assert (limits.memory_mb, limits.processes, limits.cpu_seconds) == (1024, 8, 3600)
    assert SandboxLimits.parse(limits.to_dict()) == limits


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ({"memory": 5}, "sandbox limits: unknown limit 'memory', expected one of memory_mb, "),
        ({"memory_mb": "512"}, "sandbox limit memory_mb: expected an integer, got '512'"),
        ({"processes": True}, "sandbox limit processes: expected an integer, got True"),
        ({"cpu_seconds": 1.5}, "sandbox limit cpu_seconds: expected an integer, got 1.5"),
        ({"memory_mb": 10}, "sandbox limit memory_mb: must be between 64 and 65536, got 10"),
        ({"scratch_mb": 0}, "sandbox limit scratch_mb: must be between 1 and 4096, got 0"),
        ({"open_files": 10**9}, "sandbox limit open_files: must be between 16 and 65536, got"),
    ],
)
def test_a_bad_limit_is_refused_by_name(mapping: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError) as raised:
        SandboxLimits.parse(mapping)
    assert str(raised.value).startswith(message)


def test_parse_refuses_what_is_not_an_object() -> None:
    with pytest.raises(ValueError, match="expected an object of limits, got list"):
        SandboxLimits.parse([1, 2])  # type: ignore[arg-type]


def test_every_limit_has_a_range() -> None:
    assert set(RANGES) == set(DEFAULT_LIMITS.to_dict())

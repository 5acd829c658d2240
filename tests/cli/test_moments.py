"""The command line's one reader of times and lengths of time (server/cli/moments.py)."""

from __future__ import annotations

import datetime as dt

import pytest

from domino_arena.server.cli.arguments import CliError
from domino_arena.server.cli.moments import duration, moment

NOW = dt.datetime(2027, 3, 1, 8, 0, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90), ("30m", 1800), ("2h", 7200), ("14d", 14 * 86400), ("2w", 14 * 86400)],
)
def test_a_length_of_time_is_a_number_and_a_unit(text: str, seconds: int) -> None:
    assert duration("--valid-for", text) == dt.timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "0d", "14", "d", "1.5h", "2 days", "-3h", "1y"])
def test_anything_else_is_refused_naming_the_option(text: str) -> None:
    with pytest.raises(CliError, match=r"^--valid-for: expected a length of time"):
        duration("--valid-for", text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2027-03-01T09:00Z", dt.datetime(2027, 3, 1, 9, 0, tzinfo=dt.UTC)),
        ("2027-03-01T10:00+01:00", dt.datetime(2027, 3, 1, 9, 0, tzinfo=dt.UTC)),
        ("+30m", NOW + dt.timedelta(minutes=30)),
        ("+1d", NOW + dt.timedelta(days=1)),
    ],
)
def test_a_moment_is_iso_8601_with_a_zone_or_a_while_from_now(
    text: str, expected: dt.datetime
) -> None:
    found = moment("--start-at", text, now=NOW)
    assert found == expected and found.tzinfo == dt.UTC


def test_a_moment_without_a_zone_is_refused_saying_so() -> None:
    with pytest.raises(CliError, match="has no time zone"):
        moment("--start-at", "2027-03-01T09:00")


def test_a_moment_that_is_no_time_is_refused_with_the_forms() -> None:
    with pytest.raises(CliError, match=r"^--start-at: expected a time such as 2027-03-01T09:00Z"):
        moment("--start-at", "next monday")

"""``serve``'s stream limit options: the values reach the referee's limits, bad ones are named.

The limits themselves are tested against hostile clients in tests/server/test_stream_limits.py
and, through ``serve``, in tests/e2e/test_hostile_memory.py.
"""

from __future__ import annotations

import argparse

import pytest

from domino_arena.server.cli import relay, serve, serve_bounds
from domino_arena.server.cli.arguments import CliError
from domino_arena.server.cli.main import main
from domino_arena.server.net import limits
from domino_arena.server.net.relay import RELAY_LIMITS
from domino_arena.server.net.watch_limits import DEFAULT_WATCH_LIMITS


def limits_of(*argv: str) -> limits.StreamLimits:
    parser = argparse.ArgumentParser()
    serve.HANDLERS["serve"].add_arguments(parser)
    return serve_bounds.stream_limits(parser.parse_args(list(argv)))


def test_without_options_the_limits_are_the_defaults() -> None:
    assert limits_of() == limits.DEFAULT_LIMITS


def test_each_option_sets_its_limit() -> None:
    got = limits_of(
        "--hello-timeout", "0.25", "--max-replies-per-second", "50", "--max-outbox", "300"
    )
    assert got == limits.StreamLimits(
        hello_timeout=0.25, replies_per_second=50.0, reply_burst=100, outbox_messages=300
    )
    assert limits_of("--max-replies-per-second", "0.2").reply_burst == 1
    assert limits_of("--max-replies-per-second", "10", "--reply-burst", "7").reply_burst == 7


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--hello-timeout", "0"],
            "--hello-timeout: must be more than 0 and at most 3600 seconds, got 0",
        ),
        (
            ["--hello-timeout", "nan"],
            "--hello-timeout: must be more than 0 and at most 3600 seconds, got nan",
        ),
        (
            ["--hello-timeout", "3601"],
            "--hello-timeout: must be more than 0 and at most 3600 seconds, got 3601",
        ),
        (
            ["--max-replies-per-second", "-1"],
            "--max-replies-per-second: must be more than 0 and at most 1e+09, got -1",
        ),
        (
            ["--max-replies-per-second", "inf"],
            "--max-replies-per-second: must be more than 0 and at most 1e+09, got inf",
        ),
        (["--reply-burst", "0"], "--reply-burst: must be 1-1000000000, got 0"),
        (["--max-outbox", "0"], "--max-outbox: must be 1-1000000000, got 0"),
        (["--max-outbox", "1000000001"], "--max-outbox: must be 1-1000000000, got 1000000001"),
    ],
    ids=[
        "hello-0",
        "hello-nan",
        "hello-big",
        "rate-negative",
        "rate-inf",
        "burst-0",
        "outbox-0",
        "outbox-big",
    ],
)
def test_a_bad_value_names_the_option_and_its_range(argv: list[str], message: str) -> None:
    with pytest.raises(CliError) as caught:
        limits_of(*argv)
    assert str(caught.value) == message


def test_serve_refuses_a_bad_limit_before_it_opens_the_database(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["serve", "--db", "sqlite:////no/such/folder/x.db", "--max-outbox", "-5"])
    assert code == 2
    err = capsys.readouterr().err
    assert "--max-outbox: must be 1-1000000000, got -5" in err
    assert "cannot open the database" not in err


def test_serve_help_states_the_limit_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for option in ("--hello-timeout", "--max-replies-per-second", "--reply-burst", "--max-outbox"):
        assert option in out
    assert "bot stream limits" in out


def test_serve_and_a_relay_read_the_watcher_bounds_alike() -> None:
    serve_parser, relay_parser = argparse.ArgumentParser(), argparse.ArgumentParser()
    serve.HANDLERS["serve"].add_arguments(serve_parser)
    relay.HANDLERS["relay"].add_arguments(relay_parser)
    assert serve_bounds.watcher_limits(serve_parser.parse_args([])) == DEFAULT_WATCH_LIMITS
    got = serve_bounds.watcher_limits(
        serve_parser.parse_args(["--max-watchers-per-match", "3", "--max-relays-per-match", "1"])
    )
    assert (got.per_match, got.relays_per_match) == (3, 1)
    assert serve_bounds.watcher_limits(relay_parser.parse_args([]), relays=False) == RELAY_LIMITS
    for parser, relays in ((serve_parser, True), (relay_parser, False)):
        with pytest.raises(CliError, match="--max-watchers-per-address: must be 0-1000000000"):
            serve_bounds.watcher_limits(
                parser.parse_args(["--max-watchers-per-address", "-1"]), relays=relays
            )

"""The bounds ``serve`` runs a referee with: its bot streams' limits (docs/referee.md, "Limits")
and its spectators' (docs/spectators.md, "Limits"), with the relay token the web face watches
with. Apart from :mod:`.serve`, which composes the referee, because each option here is checked
against its range and turned into the referee's own bounds object; and the bounds of people's
matches (docs/people.md).
"""

from __future__ import annotations

import argparse
import math
from typing import Final

from domino_arena.server.cli.arguments import CliError
from domino_arena.server.net import limits, watch_limits
from domino_arena.server.play import people

MAX_HELLO_TIMEOUT: Final = 3600.0
MAX_REPLY_RATE: Final = 1e9
MAX_COUNT: Final = 10**9
"""The largest value of a count limit (``--reply-burst``, ``--max-outbox``): a bound, still."""


def stream_arguments(parser: argparse.ArgumentParser) -> None:
    """The bounds of every bot stream (docs/referee.md, "Limits"): read by :func:`stream_limits`."""
    group = parser.add_argument_group(
        "bot stream limits", "past one, the stream gets an in-band Error naming it and is closed"
    )
    group.add_argument(
        "--hello-timeout",
        type=float,
        default=limits.HELLO_TIMEOUT,
        metavar="SECONDS",
        help=f"how long a new stream has to send its Hello (default {limits.HELLO_TIMEOUT:g}; "
        f"more than 0, at most {MAX_HELLO_TIMEOUT:g})",
    )
    group.add_argument(
        "--max-replies-per-second",
        type=float,
        default=limits.REPLIES_PER_SECOND,
        metavar="N",
        help=f"the sustained rate of replies a stream may send (default "
        f"{limits.REPLIES_PER_SECOND:g}; more than 0, at most {MAX_REPLY_RATE:g})",
    )
    group.add_argument(
        "--reply-burst",
        type=int,
        metavar="N",
        help=f"replies a stream may send at once above that rate (default twice "
        f"--max-replies-per-second: {limits.REPLY_BURST}; 1-{MAX_COUNT})",
    )
    group.add_argument(
        "--max-outbox",
        type=int,
        default=limits.OUTBOX_MESSAGES,
        metavar="N",
        help=f"messages that may wait to be written to a stream that does not read (default "
        f"{limits.OUTBOX_MESSAGES}; 1-{MAX_COUNT})",
    )


def stream_limits(args: argparse.Namespace) -> limits.StreamLimits:
    """The stream limits the options ask for.

    Raises:
        CliError: a value out of its range; the message names the option and the range.
    """
    hello = args.hello_timeout
    if not (math.isfinite(hello) and 0 < hello <= MAX_HELLO_TIMEOUT):
        raise CliError(
            f"--hello-timeout: must be more than 0 and at most {MAX_HELLO_TIMEOUT:g} seconds, "
            f"got {hello:g}"
        )
    rate = args.max_replies_per_second
    if not (math.isfinite(rate) and 0 < rate <= MAX_REPLY_RATE):
        raise CliError(
            f"--max-replies-per-second: must be more than 0 and at most {MAX_REPLY_RATE:g}, "
            f"got {rate:g}"
        )
    burst = args.reply_burst
    if burst is None:  # the defaults' own ratio (limits.REPLY_BURST / limits.REPLIES_PER_SECOND)
        burst = min(MAX_COUNT, max(1, math.ceil(2 * rate)))
    for flag, value in (("--reply-burst", burst), ("--max-outbox", args.max_outbox)):
        if not 1 <= value <= MAX_COUNT:
            raise CliError(f"{flag}: must be 1-{MAX_COUNT}, got {value}")
    return limits.StreamLimits(
        outbox_messages=args.max_outbox,
        replies_per_second=rate,
        reply_burst=burst,
        hello_timeout=hello,
    )


WATCHER_FLAGS: Final = (
    ("--max-watchers", "server", "watches at once here"),
    ("--max-watchers-per-match", "per_match", "watches of one match"),
    ("--max-watchers-per-address", "per_address", "watches from one client address"),
    ("--max-relays-per-match", "relays_per_match", "relay watches (relay token) of one match"),
)
"""Each watcher bound's option, its :class:`~.watch_limits.WatchLimits` field, what it counts."""


def watcher_arguments(
    group: argparse._ArgumentGroup | argparse.ArgumentParser,
    defaults: watch_limits.WatchLimits,
    *,
    relays: bool = True,
) -> None:
    """The options of the watcher bounds (``serve``'s, a relay's without ``relays``): read by
    :func:`watcher_limits`."""
    for flag, name, what in WATCHER_FLAGS[: None if relays else -1]:
        default = getattr(defaults, name)
        group.add_argument(
            flag,
            type=int,
            default=default,
            metavar="N",
            help=f"{what} (default {default}; 0-{MAX_COUNT})",
        )


def watcher_limits(args: argparse.Namespace, *, relays: bool = True) -> watch_limits.WatchLimits:
    """The watcher bounds the options ask for (no relays counted without ``relays``).

    Raises:
        CliError: a bound out of range; the message names the option.
    """
    values = {}
    for flag, name, _ in WATCHER_FLAGS[: None if relays else -1]:
        value = getattr(args, name_of(flag))
        if not 0 <= value <= MAX_COUNT:
            raise CliError(f"{flag}: must be 0-{MAX_COUNT}, got {value}")
        values[name] = value
    return watch_limits.WatchLimits(**{"relays_per_match": 0, **values})


def name_of(flag: str) -> str:
    """The attribute argparse keeps ``flag`` under."""
    return flag.removeprefix("--").replace("-", "_")


def watch_arguments(parser: argparse.ArgumentParser) -> None:
    """The spectators' bounds and the relay token (docs/spectators.md): read by
    :func:`watching`."""
    group = parser.add_argument_group(
        "spectators",
        "past a bound a Watch ends RESOURCE_EXHAUSTED naming it; relays (the web face) are "
        "counted apart",
    )
    watcher_arguments(group, watch_limits.DEFAULT_WATCH_LIMITS)
    group.add_argument(
        "--relay-token-file",
        metavar="FILE",
        help="read the relay token from FILE (its first line): a web face holding it "
        "(web --relay-token-file) watches every course's signed-in matches; without it, one is "
        "made for this run's own web face (--web-port)",
    )


def watching(args: argparse.Namespace) -> tuple[watch_limits.WatchLimits, str | None]:
    """The watchers' bounds and the relay token given, if any.

    Raises:
        CliError: a bound out of range, or a token file that cannot be read (named).
    """
    relay = None
    if args.relay_token_file is not None:
        # The client's module (it loads rich) only when a file is given: a referee imports
        # nothing it does not serve with (tests/server/test_lazy_imports.py).
        from domino_arena.server.cli.admin_client import token_file  # noqa: PLC0415

        relay = token_file(args.relay_token_file, "--relay-token-file")
    return watcher_limits(args), relay


MAX_CONNECT_SECONDS: Final = 3600.0


def people_arguments(parser: argparse.ArgumentParser) -> None:
    """The bounds of people's matches (docs/people.md, "Bounds"): read by
    :func:`people_bounds`."""
    group = parser.add_argument_group(
        "people at the table",
        "a SeatPerson past a bound is RESOURCE_EXHAUSTED naming it (docs/people.md)",
    )
    group.add_argument(
        "--max-matches-per-person",
        type=int,
        default=people.DEFAULT_PER_PERSON,
        metavar="N",
        help=f"matches one person may have waiting or running at once (default "
        f"{people.DEFAULT_PER_PERSON}; 1-{MAX_COUNT})",
    )
    group.add_argument(
        "--max-people-matches",
        type=int,
        default=people.DEFAULT_TOTAL,
        metavar="N",
        help=f"matches with a person waiting or running on this referee at once (default "
        f"{people.DEFAULT_TOTAL}; 1-{MAX_COUNT})",
    )
    group.add_argument(
        "--seat-connect-seconds",
        type=float,
        default=people.DEFAULT_CONNECT_SECONDS,
        metavar="SECONDS",
        help=f"how long a person's seat has to connect before its match is dropped (default "
        f"{people.DEFAULT_CONNECT_SECONDS:g}; more than 0, at most {MAX_CONNECT_SECONDS:g})",
    )


def people_bounds(args: argparse.Namespace) -> people.PeopleBounds:
    """The people's bounds the options ask for.

    Raises:
        CliError: a bound out of range; the message names the option.
    """
    for flag in ("--max-matches-per-person", "--max-people-matches"):
        value = getattr(args, name_of(flag))
        if not 1 <= value <= MAX_COUNT:
            raise CliError(f"{flag}: must be 1-{MAX_COUNT}, got {value}")
    seconds = args.seat_connect_seconds
    if not 0 < seconds <= MAX_CONNECT_SECONDS:  # also refuses nan
        raise CliError(
            f"--seat-connect-seconds: must be more than 0, at most {MAX_CONNECT_SECONDS:g}, "
            f"got {seconds:g}"
        )
    return people.PeopleBounds(
        per_person=args.max_matches_per_person,
        total=args.max_people_matches,
        connect_seconds=seconds,
    )

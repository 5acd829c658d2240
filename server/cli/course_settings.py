"""A course's settings on the command line: the flags ``course create`` and ``course update``
share (title, anonymity, the seating rule, frozen baselines, the live view) and the live view's
flag and text, which ``tournament create`` and ``tournament status`` use too
(docs/courses.md: live view); the hosted bots' sandbox limits (``--bot-memory-mb`` ...) of
``course update`` and ``tournament create``, and ``tournament create``'s ``--pin BOT=N``
(docs/courses.md: hosting limits, docs/tournaments.md: versions).

The live view travels as the proto's enum; its names on the command line are the stored ones
(``public``, ``signed-in``, ``none``), translated by :mod:`domino_arena.server.net.wire` alone.
"""

from __future__ import annotations

import argparse
from typing import Any, Final

from domino_arena.server.cli.json_output import json_argument
from domino_arena.server.logs import escape
from domino_arena.server.net.wire import (
    HOSTING_LIMIT_FIELDS,
    live_view_from_proto,
    live_view_to_proto,
)
from domino_arena.server.store.live_views import LIVE_VIEWS
from domino_arena.v1 import admin_pb2

MAX_HUMAN_MOVE_SECONDS: Final = 600
"""The longest time per move a course may give a person (the referee's bound, docs/people.md)."""

LIVE_VIEW_HELP = (
    "who may watch its matches while they run: public (anyone), signed-in (callers with a "
    "token of the course, the admin, and browsers signed in to the course) or none (nobody "
    "until each ends; the records are unaffected)"
)


def live_view_argument(parser: argparse.ArgumentParser, default: str) -> None:
    """Add ``--live-view public|signed-in|none`` (read as ``args.live_view``, None if not
    given); ``default`` says what not giving it means."""
    parser.add_argument(
        "--live-view",
        choices=LIVE_VIEWS,
        metavar="|".join(LIVE_VIEWS),
        help=f"{LIVE_VIEW_HELP} (default: {default})",
    )


def live_view_of(args: argparse.Namespace) -> admin_pb2.LiveView.ValueType:
    """The protocol value of ``--live-view`` (unspecified if not given)."""
    chosen: str | None = args.live_view
    return live_view_to_proto(chosen)


def live_view_text(value: admin_pb2.LiveView.ValueType, unspecified: str) -> str:
    """A live view as the command line spells it; ``unspecified`` for none given (a
    tournament's: its course's) and ``unknown (N)`` for a value newer than this client."""
    try:
        view = live_view_from_proto(value)
    except ValueError:
        return f"unknown ({int(value)})"
    return unspecified if view is None else view


def _baseline(text: str) -> tuple[str, float]:
    bot, sep, rating = text.partition("=")
    try:
        if not sep or not bot:
            raise ValueError
        return bot, float(rating)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected HOUSE_BOT=RATING such as greedy=1500, got {text!r}"
        ) from None


def settings_arguments(parser: argparse.ArgumentParser, *, update: bool) -> None:
    """Add a course's settings to ``course create`` (``update`` False) or ``course update``
    (every flag optional, ``--no-...`` to turn one off, ``--no-baselines``)."""
    flag: Any = argparse.BooleanOptionalAction if update else "store_true"
    default = None if update else False
    parser.add_argument("--title", metavar="T", help="a title for pages (default: the name)")
    parser.add_argument(
        "--anonymous",
        action=flag,
        default=default,
        help="public pages show aliases ('Student 7') instead of bot and owner names",
    )
    parser.add_argument(
        "--allow-same-owner-tables",
        action=flag,
        default=default,
        help="two bots of one owner may sit at one 3-4 seat free-for-all table",
    )
    parser.add_argument(
        "--allow-same-owner-partners",
        action=flag,
        default=default,
        help="two bots of one owner may be partners",
    )
    parser.add_argument(
        "--baseline",
        action="append",
        type=_baseline,
        metavar="BOT=RATING",
        help="a frozen baseline: a house bot at a fixed rating, e.g. greedy=1500 (repeat it)"
        + ("; replaces the course's baselines" if update else ""),
    )
    if update:
        parser.add_argument(
            "--no-baselines", action="store_true", help="remove every frozen baseline"
        )
        parser.add_argument(
            "--human-move-seconds",
            type=float,
            metavar="N",
            help="a person's time per move in the course's practice matches, 0-600 seconds "
            "(0: the default, 60 s; docs/people.md); holds for matches seated after it",
        )
        parser.add_argument(
            "--analyse-tournaments",
            choices=("on", "off"),
            metavar="on|off",
            help="analyse every decision of each tournament of the course that ends from now "
            "on, in the referee's analysis workers (docs/courses.md: analysis; default off)",
        )
    live_view_argument(
        parser, "unchanged; it holds for matches started after it" if update else "public"
    )
    json_argument(parser, "the course")


def baselines_of(args: argparse.Namespace) -> list[admin_pb2.Baseline]:
    """The ``--baseline`` flags as ``Baseline`` messages."""
    return [admin_pb2.Baseline(bot=bot, rating=rating) for bot, rating in args.baseline or ()]


_LIMIT_HELP: Final = {
    "memory_mb": "memory of each process, MiB (64-65536; default 512)",
    "cpu_seconds": "CPU seconds of each process (default 3600)",
    "processes": "processes and threads (2-4096; default 32)",
    "open_files": "open files of each process (16-65536; default 64)",
    "file_mb": "largest file written, MiB (default 16)",
    "scratch_mb": "the private /tmp, MiB (default 64)",
    "log_kb": "stderr kept per match, KiB (default 64)",
}


def limits_arguments(parser: argparse.ArgumentParser, default: str) -> None:
    """Add ``--bot-memory-mb`` ... ``--bot-log-kb``: the hosted bots' sandbox limits (read by
    :func:`limits_of`; 0 is the default); ``default`` says what a limit not given is."""
    group = parser.add_argument_group(f"hosted bots' sandbox limits (not given: {default})")
    for field in HOSTING_LIMIT_FIELDS:
        group.add_argument(
            "--bot-" + field.replace("_", "-"),
            dest=f"bot_{field}",
            type=int,
            metavar="N",
            help=_LIMIT_HELP[field],
        )


def limits_of(args: argparse.Namespace) -> dict[str, int]:
    """The limits given (field -> value; 0: the default)."""
    chosen = {field: getattr(args, f"bot_{field}") for field in HOSTING_LIMIT_FIELDS}
    return {field: value for field, value in chosen.items() if value is not None}


def limits_text(limits: admin_pb2.HostingLimits, unset: str) -> str:
    """``memory_mb 256, cpu_seconds 60``; ``unset`` when none is set."""
    shown = [f"{f} {getattr(limits, f)}" for f in HOSTING_LIMIT_FIELDS if getattr(limits, f)]
    return ", ".join(shown) or unset


def _pin(text: str) -> tuple[str, int]:
    bot, sep, number = text.partition("=")
    try:
        if not sep or not bot or int(number) < 1:
            raise ValueError
        return bot, int(number)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected BOT=VERSION such as ann-v1=3, got {text!r}"
        ) from None


def pin_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--pin BOT=N`` (repeated; read by :func:`pins_of`)."""
    parser.add_argument(
        "--pin",
        action="append",
        type=_pin,
        metavar="BOT=N",
        help="play version N of the hosted bot BOT (an accepted one; repeat it); every other "
        "hosted entrant plays its latest accepted version at the start",
    )


def pins_of(args: argparse.Namespace) -> dict[str, int]:
    """The ``--pin`` flags as bot -> version (the last one of a bot wins)."""
    return dict(args.pin or ())


def hosted_tournament_arguments(parser: argparse.ArgumentParser) -> None:
    """``tournament create``'s hosted bots' flags: ``--pin`` and the sandbox limits."""
    pin_argument(parser)
    limits_arguments(parser, "the course's")


def hosted_tournament_fields(args: argparse.Namespace, request: Any) -> None:
    """Fill a ``CreateTournamentRequest``'s version pins and sandbox limits from the flags."""
    request.version_pins.update(pins_of(args))
    limits = limits_of(args)
    if limits:
        request.hosting_limits.CopyFrom(admin_pb2.HostingLimits(**limits))


def hosted_tournament_lines(t: Any) -> list[str]:
    """``tournament status``'s lines of a tournament's hosted versions and limits (none when it
    sets neither)."""
    lines = []
    if t.version_pins:
        pins = ", ".join(f"{bot} v{number}" for bot, number in sorted(t.version_pins.items()))
        lines.append(f"hosted versions: {escape(pins)}")
    if t.HasField("hosting_limits") and limits_text(t.hosting_limits, ""):
        lines.append(f"sandbox limits: {limits_text(t.hosting_limits, '')}")
    return lines


def merged_limits(current: admin_pb2.HostingLimits, given: dict[str, int]) -> Any:
    """A course's limits with those given changed (0: back to the default)."""
    merged = admin_pb2.HostingLimits()
    merged.CopyFrom(current)
    for field, value in given.items():
        setattr(merged, field, value)
    return merged

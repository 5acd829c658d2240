"""A course's settings on the command line: the flags ``course create`` and ``course update``
share (title, anonymity, the seating rule, frozen baselines, the live view) and the live view's
flag and text, which ``tournament create`` and ``tournament status`` use too
(docs/courses.md: live view).

The live view travels as the proto's enum; its names on the command line are the stored ones
(``public``, ``signed-in``, ``none``), translated by :mod:`domino_arena.server.net.wire` alone.
"""

from __future__ import annotations

import argparse
from typing import Any

from domino_arena.server.cli.json_output import json_argument
from domino_arena.server.net.wire import live_view_from_proto, live_view_to_proto
from domino_arena.server.store.live_views import LIVE_VIEWS
from domino_arena.v1 import admin_pb2

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
    live_view_argument(
        parser, "unchanged; it holds for matches started after it" if update else "public"
    )
    json_argument(parser, "the course")


def baselines_of(args: argparse.Namespace) -> list[admin_pb2.Baseline]:
    """The ``--baseline`` flags as ``Baseline`` messages."""
    return [admin_pb2.Baseline(bot=bot, rating=rating) for bot, rating in args.baseline or ()]

"""Hosted bots on the command line: ``bot submit``, ``bot versions`` and ``logs``; and ``bot
allow-people`` (docs/people.md), which takes the same tokens.

``bot submit NAME PATH`` packs a Python file (``mybot.py``, ``mybot.py:MyBot``), a folder or an
archive with ``--command`` (server/hosting/spec/submissions.py, the same rules the referee checks
again) and sends it as the bot's next version, authorised by the owner token
(``--owner-token-file``) or the bot's own (``--token-file``, ``$DOMINO_ARENA_TOKEN``); with
``--wait`` it polls the versions until the arena has validated it and prints the report.
``bot versions NAME`` lists them; ``logs MATCH_ID`` prints what the caller's hosted bots wrote
to stderr in a match. Both take the owner's or the bot's token like ``submit``, or, with
neither, the admin or organizer token (``--admin-token``, ``$DOMINO_ARENA_ADMIN_TOKEN``), which
sees every bot of its course (docs/hosting.md).

What the referee sends back (a bot's stderr, a report) is shown through ``logs.escape`` line by
line, so a control character a bot printed cannot drive the terminal. Client jobs of the light
install: grpc and rich are imported only when these commands run.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any, Final

from domino_arena.sdk import runner
from domino_arena.sdk.rules import GAMES
from domino_arena.server.cli.admin_client import (
    admin_call,
    console,
    enum_name,
    token_file,
)
from domino_arena.server.cli.arguments import CliError, Handler, Handlers, server_arguments
from domino_arena.server.cli.courses import registration_call
from domino_arena.server.cli.json_output import json_argument, message_json, print_json
from domino_arena.server.cli.tables import table
from domino_arena.server.hosting.spec import submissions
from domino_arena.server.logs import escape
from domino_arena.v1 import admin_pb2

POLL_SECONDS: Final = 1.0
"""How often ``--wait`` asks for the version's verdict (doubling to :data:`MAX_POLL_SECONDS`)."""
MAX_POLL_SECONDS: Final = 5.0
DEFAULT_WAIT_SECONDS: Final = 600.0
PENDING: Final = admin_pb2.BOT_VERSION_STATUS_CHECKING


def _token_arguments(parser: argparse.ArgumentParser, *, admin: bool) -> None:
    parser.add_argument(
        "--owner-token-file",
        metavar="FILE",
        help="your owner token (first line): acts for every bot of yours",
    )
    parser.add_argument(
        "--token-file",
        metavar="FILE",
        help=f"the bot's own token (first line; default ${runner.TOKEN_ENV})",
    )
    server_arguments(parser, token=admin)


def hosted_bot_actions(actions: Any) -> None:
    """Add ``submit`` and ``versions`` to ``bot``'s actions (server/cli/bots.py)."""
    submit = actions.add_parser(
        "submit",
        help="submit a new version of your bot for the arena to host (a .py file, a folder or "
        "an archive)",
        description="Pack PATH (a Python file with a Bot class, 'mybot.py' or 'mybot.py:MyBot'; "
        "or a folder or .zip/.tar.gz with --command) and submit it as the next version of the "
        "bot NAME. The arena validates it in its sandbox before it plays (docs/hosting.md).",
    )
    submit.add_argument("name", metavar="NAME", help="your bot, as 'bot register' made it")
    submit.add_argument("path", metavar="PATH", help="mybot.py[:Class], a folder or an archive")
    submit.add_argument(
        "--command",
        metavar="CMD",
        help="what runs the bot in a folder or archive: './run.sh', 'java -jar bot.jar', or a "
        "Python entry 'mybot.py:MyBot'",
    )
    submit.add_argument(
        "--games",
        metavar="G1,G2",
        help=f"the games it plays (default: all: {', '.join(sorted(GAMES))})",
    )
    submit.add_argument(
        "--wait",
        action="store_true",
        help="wait for its validation and print the report (exit 1 if rejected)",
    )
    submit.add_argument(
        "--wait-seconds",
        type=float,
        default=DEFAULT_WAIT_SECONDS,
        metavar="S",
        help=f"give up waiting after S seconds (default {DEFAULT_WAIT_SECONDS:.0f})",
    )
    _token_arguments(submit, admin=False)
    json_argument(submit, "the version")
    submit.set_defaults(bot_run=_submit)
    listed = actions.add_parser(
        "versions",
        help="a hosted bot's versions: status, size, hash, report",
        description="List the versions of the bot NAME, newest first, with your owner or bot "
        "token, or with the admin or organizer token.",
    )
    listed.add_argument("name", metavar="NAME", help="the bot")
    _token_arguments(listed, admin=True)
    json_argument(listed, "the versions")
    listed.set_defaults(bot_run=_versions)
    allow = actions.add_parser(
        "allow-people",
        help="let people of your course play against your bot (--off: stop)",
        description="Let the people of the bot's course (students, its organizer) choose the "
        "bot NAME as an opponent when they play from the browser, or stop with --off "
        "(docs/people.md). You may always play your own bots.",
    )
    allow.add_argument("name", metavar="NAME", help="your bot")
    allow.add_argument("--off", action="store_true", help="people may no longer choose it")
    _token_arguments(allow, admin=False)
    json_argument(allow, "the bot")
    allow.set_defaults(bot_run=_allow_people)


def _student_token(args: argparse.Namespace, *, required: bool) -> str | None:
    """The owner's or the bot's token the options give (None: neither, and not ``required``)."""
    if args.owner_token_file and args.token_file:
        raise CliError("give --owner-token-file or --token-file, not both")
    if args.owner_token_file:
        return token_file(args.owner_token_file, "--owner-token-file")
    if args.token_file:
        return token_file(args.token_file, "--token-file")
    from_env = os.environ.get(runner.TOKEN_ENV)
    if from_env or not required:
        return from_env or None
    raise CliError(
        f"no token: pass --owner-token-file (your owner token) or --token-file (the bot's "
        f"token), or set ${runner.TOKEN_ENV}"
    )


def _games(text: str | None) -> list[str]:
    if text is None:
        return []
    games = [g.strip() for g in text.split(",") if g.strip()]
    unknown = [g for g in games if g not in GAMES]
    if unknown or not games:
        raise CliError(f"--games: expected some of {', '.join(sorted(GAMES))}, got {text}")
    return games


def _status(version: Any) -> str:
    return enum_name(admin_pb2.BotVersionStatus, version.status, "BOT_VERSION_STATUS_")


def _submit(args: argparse.Namespace) -> int:
    games = _games(args.games)
    token = _student_token(args, required=True)
    try:
        packed = submissions.pack(Path(args.path), command=args.command)
    except submissions.SubmissionError as exc:
        raise CliError(f"bot submit: {exc}") from None
    request = admin_pb2.SubmitBotRequest(
        name=args.name,
        archive=packed.archive,
        kind=packed.kind,
        entry=packed.entry,
        games=games,
    )
    version = registration_call(args, "SubmitBot", request, token)
    if not args.json:
        print(
            f"{escape(version.bot)} v{version.number} sha256:{version.sha256[:8]} "
            f"{submissions.size_text(len(packed.archive))}, {_status(version)}"
        )
    if args.wait:
        version = _wait(args, version, token)
    if args.json:
        print_json({"version": message_json(version)})
    return 1 if version.status == admin_pb2.BOT_VERSION_STATUS_REJECTED else 0


def _allow_people(args: argparse.Namespace) -> int:
    token = _student_token(args, required=True)
    request = admin_pb2.AllowPeopleRequest(bot=args.name, allow=not args.off)
    bot = registration_call(args, "AllowPeople", request, token)
    if args.json:
        print_json({"bot": message_json(bot)})
    elif bot.allow_people:
        print(f"{escape(bot.name)}: people of course {escape(bot.course)} may play against it")
    else:
        print(f"{escape(bot.name)}: only its owner may play against it")
    return 0


def _wait(args: argparse.Namespace, version: Any, token: str | None) -> Any:
    """Poll the bot's versions until ``version`` is no longer checking; print its verdict."""
    deadline = time.monotonic() + args.wait_seconds
    pause = POLL_SECONDS
    while version.status == PENDING:
        if time.monotonic() >= deadline:
            raise CliError(
                f"v{version.number} is still checking after {args.wait_seconds:.0f} s; "
                f"see 'bot versions {args.name}' later",
                code=1,
            )
        _pause(pause)
        pause = min(pause * 2, MAX_POLL_SECONDS)
        request = admin_pb2.ListBotVersionsRequest(name=args.name)
        listed = registration_call(args, "ListBotVersions", request, token)
        version = next((v for v in listed.versions if v.number == version.number), version)
    if not args.json:
        print(f"{escape(version.bot)} v{version.number}: {_status(version)}")
        _print_text(version.report)
    return version


def _pause(seconds: float) -> None:
    """Wait between two polls of ``--wait`` (a test replaces it with the validator's work)."""
    time.sleep(seconds)


def _print_text(text: str) -> None:
    """Text the referee kept (a report, a bot's stderr), one escaped line a line."""
    for line in text.splitlines():
        print(escape(line))


def _listing(args: argparse.Namespace, method: str, request: Any) -> Any:
    """Call ``method`` with the owner's or bot's token if one is given, else the admin API."""
    token = _student_token(args, required=False)
    if token is not None:
        return registration_call(args, method, request, token)
    return admin_call(args, method, request)


def _versions(args: argparse.Namespace) -> int:
    answer = _listing(args, "ListBotVersions", admin_pb2.ListBotVersionsRequest(name=args.name))
    if args.json:
        print_json(message_json(answer))
        return 0
    if not answer.versions:
        print(f"bot '{escape(args.name)}' has no version yet ('bot submit {args.name} PATH')")
        return 0
    rows = [
        (
            f"v{v.number}",
            _status(v),
            submissions.size_text(v.unpacked_bytes),
            v.sha256[:12],
            v.created.ToDatetime().strftime("%Y-%m-%d %H:%M UTC"),
            v.submitter,
            (v.report.splitlines() or ["-"])[0][:100],
        )
        for v in answer.versions
    ]
    columns = ["version", "status", "size", "sha256", "submitted", "submitter", "report"]
    console().print(table(None, columns, rows))
    return 0


def _logs_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("match_id", metavar="MATCH_ID", help="the match")
    parser.add_argument("--bot", default="", metavar="NAME", help="only this bot's log")
    _token_arguments(parser, admin=True)
    json_argument(parser, "the logs")


def _logs(args: argparse.Namespace) -> int:
    request = admin_pb2.GetMatchLogRequest(match_id=args.match_id, bot=args.bot)
    answer = _listing(args, "GetMatchLog", request)
    if args.json:
        print_json(message_json(answer))
        return 0
    for log in answer.logs:
        crashed = ", crashed" if log.crashed else ""
        print(f"== {escape(log.bot)} v{log.version}{crashed} ==")
        _print_text(log.text)
    return 0


HANDLERS: Final[Handlers] = {"logs": Handler(_logs_arguments, _logs)}

"""``bot``: the bots and their tokens through a running referee (``create``, ``list``,
``rotate``, ``disable``, ``enable``, ``delete``: admin API calls), ``add`` (a bot written to a
database directly, with no referee), and ``run`` (a house bot playing against a referee).

A command that makes a token (``create``, ``rotate``, ``add``) prints only the token on stdout,
so ``TOKEN=$(domino-arena bot create x)`` works; what it did goes to stderr.

``bot add`` keeps its default database (``$DOMINO_ARENA_DB``, else ``sqlite:///domino-arena.db``,
the same default as ``serve``, so the two agree when run in one folder) and names the database it
wrote to, with the file's absolute path; ``bot create`` is the way when a referee runs.

Every action but ``add`` is a client job of the light install (grpc at the top here: ``main``
imports this module only when ``bot`` runs); ``add`` writes a database, so its module
(:mod:`.bot_add`) and SQLAlchemy are imported only when it runs (docs/admin.md: the light install).
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import os
import secrets
import sys
from collections.abc import Callable
from typing import Any, Final

from domino_arena.bots import HOUSE_BOTS, make_bot
from domino_arena.sdk import runner
from domino_arena.sdk.bot import Bot
from domino_arena.sdk.client import (
    AuthenticationError,
    TakenOverError,
)
from domino_arena.sdk.rules import GAMES
from domino_arena.server.cli.admin_client import (
    admin_call,
    channel_tls,
    console,
    enum_name,
    token_file,
)
from domino_arena.server.cli.arguments import (
    PROG,
    CliError,
    Handler,
    Handlers,
    course_argument,
    db_argument,
    server_arguments,
    server_extra,
)
from domino_arena.server.cli.courses import own_bot_actions
from domino_arena.server.cli.json_output import json_argument, message_json, print_json
from domino_arena.server.cli.tables import table
from domino_arena.v1 import admin_pb2


def _bot_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="bot_action", metavar="ACTION", required=True)
    for name, help_text, run in _REFEREE_ACTIONS:
        sub = actions.add_parser(name, help=help_text, description=help_text)
        if name == "list":
            sub.add_argument("--all", action="store_true", help="the deleted bots too")
            course_argument(sub, "only this course's bots")
            json_argument(sub, "the bots")
        else:
            sub.add_argument("name", metavar="NAME", help="the bot's name (letters, digits, _ . -)")
        if name == "create":
            course_argument(sub, "the course the bot belongs to")
            sub.add_argument("--owner", default="", metavar="O", help="who the bot belongs to")
        server_arguments(sub)
        sub.set_defaults(bot_run=run)
    own_bot_actions(actions)
    add = actions.add_parser(
        "add",
        help="create a bot in a database directly, with no referee (prints its token once)",
        description="Create a bot by writing the database directly (no referee is asked) and "
        "print its token; only a hash of it is kept, so it is shown this once. The database is "
        "--db's (default $DOMINO_ARENA_DB, else sqlite:///domino-arena.db in the current "
        "folder, as for 'serve'); it is named on stderr. With a referee running, use "
        "'bot create' instead: it goes through the referee's admin API.",
    )
    add.add_argument("name", metavar="NAME", help="the bot's name (letters, digits, _ . -)")
    db_argument(add)
    add.set_defaults(bot_run=_bot_add)
    play = actions.add_parser(
        "run",
        help="run a house bot, or a program of your own (--exec), against a referee",
        description="Connect a house bot (or with --exec a program speaking the stdio "
        "protocol) to a referee as the bot NAME and play every match it is seated in, until "
        "Ctrl-C or SIGTERM; reconnects after a lost connection.",
    )
    play.add_argument("name", metavar="NAME", help="the bot's name, as 'bot create' made it")
    server_arguments(play, token=False)
    play.add_argument(
        "--token",
        metavar="T",
        help="the token 'bot create' printed (default: $DOMINO_ARENA_TOKEN; a token on the "
        "command line shows in 'ps': prefer --token-file or the environment)",
    )
    play.add_argument(
        "--token-file", metavar="FILE", help="read the token from FILE (its first line)"
    )
    play.add_argument(
        "--bot",
        default="greedy",
        metavar="KIND",
        help=f"which house bot plays: {', '.join(sorted(HOUSE_BOTS))} (default greedy)",
    )
    play.add_argument(
        "--games",
        metavar="G1,G2",
        help=f"games to offer (default: all: {', '.join(sorted(GAMES))})",
    )
    play.add_argument(
        "--exec",
        metavar="CMD",
        help="play a program of your own instead, in any language, over the stdio protocol "
        "(docs/writing-a-bot.md, 'Any language'), e.g. --exec ./mybot or --exec 'java -jar "
        "bot.jar'",
    )
    play.add_argument("--seed", type=int, metavar="S", help="seed of the house bot (random)")
    play.add_argument(
        "--samples",
        type=int,
        metavar="N",
        help="search only: a fixed budget of N sampled deals per move, no clock (reproducible)",
    )
    play.set_defaults(bot_run=_bot_play)


def _bot(args: argparse.Namespace) -> int:
    run: Callable[[argparse.Namespace], int] = args.bot_run
    return run(args)


def _bot_add(args: argparse.Namespace) -> int:
    with server_extra("bot add"):
        from domino_arena.server.cli import bot_add  # noqa: PLC0415  # the extra's (docstring)
    return bot_add.run(args)


def _bot_play(args: argparse.Namespace) -> int:
    if args.bot not in HOUSE_BOTS:
        raise CliError(
            f"--bot: unknown bot '{args.bot}': expected one of {', '.join(sorted(HOUSE_BOTS))}"
        )
    try:
        make_bot(args.bot, 0, samples=args.samples)
    except ValueError as exc:
        raise CliError(f"--{exc}") from None
    if args.token and args.token_file:
        raise CliError("give --token or --token-file, not both")
    from_file = token_file(args.token_file, "--token-file") if args.token_file else None
    token = from_file or args.token or os.environ.get(runner.TOKEN_ENV)
    tls = channel_tls(args)
    if not token:
        raise CliError(
            f"no token for bot '{args.name}': pass --token-file or --token, or set "
            f"${runner.TOKEN_ENV} "
            f"(the token 'domino-arena bot create {args.name}' printed)"
        )
    games = None
    if args.games is not None:
        games = [g.strip() for g in args.games.split(",") if g.strip()]
        unknown = [g for g in games if g not in GAMES]
        if unknown or not games:
            raise CliError(
                f"--games: expected some of {', '.join(sorted(GAMES))}, got {args.games}"
            )
    if args.exec is not None:
        from domino_arena.server.cli import bot_exec  # noqa: PLC0415  # only for a program

        return bot_exec.run(args.name, token, args.exec, server=args.server, games=games, tls=tls)
    seed: int = args.seed if args.seed is not None else secrets.randbelow(10**9)
    seeds = itertools.count(seed)
    kind: str = args.bot

    def new_bot() -> Bot:
        """A fresh house bot for every match, each with its own seed."""
        return make_bot(kind, next(seeds), samples=args.samples)

    try:
        runner.run(
            new_bot,
            server=args.server,
            name=args.name,
            token=token,
            games=games,
            tls=tls or False,
        )
    except runner.BotStopped as exc:  # one line (sdk/runner.py); the user's to fix, or not
        mistake = isinstance(exc.error, (AuthenticationError, ValueError, TakenOverError))
        raise CliError(str(exc), code=2 if mistake else 1) from None
    except KeyboardInterrupt:
        pass
    return 0


# -- through the referee (the admin API) ---------------------------------------------------------


def _bot_create(args: argparse.Namespace) -> int:
    request = admin_pb2.CreateBotRequest(name=args.name, course=args.course, owner=args.owner)
    answer = admin_call(args, "CreateBot", request)
    print(
        f"{PROG}: created bot '{answer.bot.name}' on the referee at {args.server}; "
        "its token, shown only this once:",
        file=sys.stderr,
    )
    print(answer.token)
    return 0


def _bot_rotate(args: argparse.Namespace) -> int:
    answer = admin_call(args, "RotateBotToken", admin_pb2.RotateBotTokenRequest(name=args.name))
    print(
        f"{PROG}: bot '{answer.bot.name}' has a new token; the old one stopped working and its "
        "open stream was closed. The new token, shown only this once:",
        file=sys.stderr,
    )
    print(answer.token)
    return 0


def _bot_disable(args: argparse.Namespace) -> int:
    admin_call(args, "DisableBot", admin_pb2.DisableBotRequest(name=args.name))
    print(
        f"bot '{args.name}' is disabled: its open stream was closed and it cannot connect "
        f"until '{PROG} bot enable {args.name}' (its token is kept)"
    )
    return 0


def _bot_enable(args: argparse.Namespace) -> int:
    admin_call(args, "EnableBot", admin_pb2.EnableBotRequest(name=args.name))
    print(f"bot '{args.name}' is enabled: it may connect with its token")
    return 0


def _bot_delete(args: argparse.Namespace) -> int:
    admin_call(args, "DeleteBot", admin_pb2.DeleteBotRequest(name=args.name))
    print(
        f"bot '{args.name}' is deleted: its token was dropped and its open stream closed; its "
        "name stays taken and its matches, tournaments and ratings are kept"
    )
    return 0


def _bot_list(args: argparse.Namespace) -> int:
    request = admin_pb2.ListBotsRequest(include_deleted=args.all, course=args.course)
    answer = admin_call(args, "ListBots", request)
    if args.json:
        print_json(message_json(answer))
        return 0
    rows = [
        (
            bot.name,
            bot.course,
            bot.owner or "-",
            enum_name(admin_pb2.BotState, bot.state, "BOT_STATE_"),
            "yes" if bot.connected else "no",
            _when(bot.created if bot.HasField("created") else None),
            _when(bot.token_issued if bot.HasField("token_issued") else None),
        )
        for bot in answer.bots
    ]
    if not rows:
        print("no bots" + ("" if args.all else " (--all shows the deleted ones too)"))
        return 0
    columns = ["bot", "course", "owner", "state", "connected", "created", "token issued"]
    console().print(table(None, columns, rows))
    return 0


def _when(stamp: Any) -> str:
    """A ``Timestamp`` as ``2026-01-02 03:04:05 UTC``; ``-`` when unset."""
    if stamp is None:
        return "-"
    moment: dt.datetime = stamp.ToDatetime(tzinfo=dt.UTC)
    return f"{moment:%Y-%m-%d %H:%M:%S} UTC"


_REFEREE_ACTIONS: Final[tuple[tuple[str, str, Callable[[argparse.Namespace], int]], ...]] = (
    (
        "create",
        "create a bot through the referee and print its token (shown only once)",
        _bot_create,
    ),
    ("list", "the referee's bots: state, whether connected, token date", _bot_list),
    (
        "rotate",
        "give a bot a new token (printed once); the old one stops working and its stream closes",
        _bot_rotate,
    ),
    (
        "disable",
        "refuse a bot until enabled; its open stream closes (its token is kept)",
        _bot_disable,
    ),
    ("enable", "let a disabled bot connect again with its token", _bot_enable),
    (
        "delete",
        "delete a bot for good: its token is dropped, its stream closes; its history is kept",
        _bot_delete,
    ),
)
"""The actions that call the referee's admin API: name, help, what runs them."""


HANDLERS: Final[Handlers] = {"bot": Handler(_bot_arguments, _bot)}

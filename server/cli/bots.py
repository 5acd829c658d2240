"""``bot add`` (a bot's name and token in the database) and ``bot run`` (a house bot playing
remotely against a referee).

They need SQLAlchemy and the gRPC client, imported here at the top: ``main`` imports this module
only when ``bot`` runs.
"""

from __future__ import annotations

import argparse
import itertools
import os
import secrets
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Final

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from domino_arena.bots import HOUSE_BOTS, make_bot
from domino_arena.sdk import runner
from domino_arena.sdk.bot import Bot
from domino_arena.sdk.client import RefereeError, TlsConfigError, read_secret
from domino_arena.sdk.rules import GAMES
from domino_arena.server.cli.admin_client import channel_tls
from domino_arena.server.cli.arguments import (
    PROG,
    CliError,
    Handler,
    Handlers,
    db_argument,
    server_arguments,
)
from domino_arena.server.cli.serve import open_storage
from domino_arena.server.store.bots import BadBotNameError, DuplicateBotError, check_name
from domino_arena.server.store.engine import display_url


def _bot_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="bot_action", metavar="ACTION", required=True)
    add = actions.add_parser(
        "add",
        help="create a bot and print its token (shown only once)",
        description="Create a bot and print its token. Only a hash of the token is kept, "
        "so it is shown this once.",
    )
    add.add_argument("name", metavar="NAME", help="the bot's name (letters, digits, _ . -)")
    db_argument(add)
    add.set_defaults(bot_run=_bot_add)
    play = actions.add_parser(
        "run",
        help="run a house bot against a referee (until Ctrl-C)",
        description="Connect a house bot to a referee as the bot NAME and play every match "
        "it is seated in, until Ctrl-C or SIGTERM; reconnects after a lost connection.",
    )
    play.add_argument("name", metavar="NAME", help="the bot's name, as created by 'bot add'")
    server_arguments(play, token=False)
    play.add_argument(
        "--token",
        metavar="T",
        help="the token 'bot add' printed (default: $DOMINO_ARENA_TOKEN; a token on the "
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
    play.add_argument("--seed", type=int, metavar="S", help="seed of the house bot (random)")
    play.set_defaults(bot_run=_bot_play)


def _bot(args: argparse.Namespace) -> int:
    run: Callable[[argparse.Namespace], int] = args.bot_run
    return run(args)


def _bot_add(args: argparse.Namespace) -> int:
    try:
        check_name(args.name)
    except BadBotNameError as exc:
        raise CliError(str(exc)) from None
    storage = open_storage(args.db)
    try:
        token = storage.add_bot(args.name)
    except DuplicateBotError as exc:
        raise CliError(f"{exc}; pick another name") from None
    finally:
        storage.close()
    print(
        f"{PROG}: created bot '{args.name}' in the database {database_shown(args.db)}; "
        "its token, shown only this once:",
        file=sys.stderr,
    )
    print(token)
    return 0


def database_shown(url: str) -> str:
    """``url`` with its password hidden; a SQLite file also by its absolute path, since a
    relative one (the default ``sqlite:///domino-arena.db``) is in the current directory."""
    shown = display_url(url)
    try:
        parsed = make_url(url)
    except ArgumentError:
        return shown
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        path = Path(parsed.database or "")
        if not path.is_absolute():
            shown += f" (the file {path.resolve()})"
    return shown


def _bot_play(args: argparse.Namespace) -> int:
    if args.bot not in HOUSE_BOTS:
        raise CliError(
            f"--bot: unknown bot '{args.bot}': expected one of {', '.join(sorted(HOUSE_BOTS))}"
        )
    if args.token and args.token_file:
        raise CliError("give --token or --token-file, not both")
    try:
        from_file = read_secret(args.token_file, "--token-file") if args.token_file else None
    except TlsConfigError as exc:
        raise CliError(str(exc)) from None
    token = from_file or args.token or os.environ.get(runner.TOKEN_ENV)
    tls = channel_tls(args)
    if not token:
        raise CliError(
            f"no token for bot '{args.name}': pass --token-file or --token, or set "
            f"${runner.TOKEN_ENV} "
            f"(the token 'domino-arena bot add {args.name}' printed)"
        )
    games = None
    if args.games is not None:
        games = [g.strip() for g in args.games.split(",") if g.strip()]
        unknown = [g for g in games if g not in GAMES]
        if unknown or not games:
            raise CliError(
                f"--games: expected some of {', '.join(sorted(GAMES))}, got {args.games}"
            )
    seed: int = args.seed if args.seed is not None else secrets.randbelow(10**9)
    seeds = itertools.count(seed)
    kind: str = args.bot

    def new_bot() -> Bot:
        """A fresh house bot for every match, each with its own seed."""
        return make_bot(kind, next(seeds))

    try:
        runner.run(
            new_bot,
            server=args.server,
            name=args.name,
            token=token,
            games=games,
            tls=tls or False,
        )
    except RefereeError as exc:
        raise CliError(str(exc), code=1) from None
    except ValueError as exc:
        raise CliError(str(exc)) from None
    except KeyboardInterrupt:
        pass
    return 0


HANDLERS: Final[Handlers] = {"bot": Handler(_bot_arguments, _bot)}

"""What the command families share: the error they report and the arguments several of them take.

The client families (bots, courses, the admin client, follow...) import grpc and rich at their
top, the server's (serve, web, import) trio and SQLAlchemy too; this module is loaded by every
command, ``play``, ``replay`` and ``games`` included, so it imports none of them.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from domino_arena.sdk.match.seeds import check_seed
from domino_arena.sdk.rules import GAMES, Game, RulesError, game_options, make_game

PROG: Final = "domino-arena"

DEFAULT_SERVER: Final = "127.0.0.1:50051"
"""The referee the client commands talk to unless told otherwise."""
SERVER_ENV: Final = "DOMINO_ARENA_SERVER"
DB_ENV: Final = "DOMINO_ARENA_DB"
ADMIN_TOKEN_ENV: Final = "DOMINO_ARENA_ADMIN_TOKEN"
TLS_CA_ENV: Final = "DOMINO_ARENA_TLS_CA"
"""The CA file the client commands trust for the referee's certificate (implies TLS)."""
PS_WARNING: Final = "a token on the command line shows in 'ps': prefer a file or the environment"


class CliError(Exception):
    """A failure to report as one line on stderr, with exit status ``code``."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


SERVER_EXTRA: Final = "pip install 'domino-arena[server]'"
"""How to get what the light install lacks (pyproject.toml's ``server`` extra)."""


@contextlib.contextmanager
def server_extra(what: str) -> Iterator[None]:
    """Import, in the block, what ``what`` (a command) needs of the server extra.

    The light install (``pip install domino-arena``) does every client job; a command that reads
    a database or serves needs the extra (docs/admin.md: the light install). Its refusal names the
    extra, never the missing package: that may be a dependency of a dependency (trio's
    ``outcome``) that means nothing to the user.

    Raises:
        CliError: a package outside this distribution is missing.
    """
    try:
        yield
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] == "domino_arena":
            raise
        raise CliError(
            f"'{what}' reads a database or serves, so it needs the server extra: {SERVER_EXTRA}"
        ) from None


@dataclass(frozen=True, slots=True)
class Handler:
    """How a family module defines one command: its arguments and the function that runs it."""

    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


Handlers = Mapping[str, Handler]
"""A family module's ``HANDLERS``: its commands by name (the names of ``main.COMMANDS``)."""


def game_arguments(
    parser: argparse.ArgumentParser, bots_help: str | None, *, bots_required: bool = True
) -> None:
    """Add the arguments that choose a game and its seats: read by :func:`game_from_args`.

    ``bots_help`` None: no ``--bots`` (a ladder picks its own bots).
    """
    parser.add_argument("game", metavar="GAME", help=f"the game: {', '.join(sorted(GAMES))}")
    parser.add_argument(
        "--players", type=int, metavar="N", help="number of players (default: the game's)"
    )
    if bots_help is not None:
        parser.add_argument(
            "--bots", required=bots_required, default="", metavar="B1,B2[,...]", help=bots_help
        )
    parser.add_argument(
        "--partners", action="store_true", help="4 players as two teams, seats 0+2 and 1+3"
    )
    parser.add_argument("--target-rule", metavar="R", help="passing: gamerules or pagat")
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any game option (see 'domino-arena games'); may be repeated",
    )
    parser.add_argument("--seed", type=int, metavar="S", help="the seed (default: random)")


def game_from_args(args: argparse.Namespace) -> Game:
    """Build the game from its name, the shorthand flags and any ``--option KEY=VALUE``."""
    name: str = args.game
    if name not in GAMES:
        raise CliError(f"unknown game '{name}': expected one of {', '.join(sorted(GAMES))}")
    defaults = game_options(name)
    options: dict[str, Any] = {}
    for text in args.option:
        key, sep, value = text.partition("=")
        if not sep or not key:
            raise CliError(f"--option: expected KEY=VALUE, got '{text}'")
        key = key.strip().replace("-", "_")
        options[key] = _option_value(value.strip(), defaults.get(key))
    flags: list[tuple[str, str, object]] = [
        ("--players", "players", args.players),
        ("--partners", "partnerships", True if args.partners else None),
        ("--target-rule", "target_rule", args.target_rule),
    ]
    for flag, key, value in flags:
        if value is None or (key == "players" and key not in defaults):
            continue
        if key not in defaults:
            known = ", ".join(defaults) or "none"
            raise CliError(f"{flag}: {name} has no option '{key}' (its options: {known})")
        options[key] = value
    try:
        game = make_game(name, **options)
    except RulesError as exc:
        raise CliError(str(exc)) from None
    if args.players is not None and args.players != game.num_players:
        raise CliError(
            f"--players: {game.title} is played by {game.num_players} players, got {args.players}"
        )
    return game


def _option_value(text: str, default: object) -> object:
    """Read an option's text with the type of its default (unknown keys stay text)."""
    if isinstance(default, bool):
        lowered = text.lower()
        if lowered in ("true", "yes", "on", "1"):
            return True
        if lowered in ("false", "no", "off", "0"):
            return False
        return text
    if isinstance(default, int):
        try:
            return int(text)
        except ValueError:
            return text
    return text


def seat_bots(game: Game, text: str) -> list[str]:
    """The ``--bots`` of a match, one per seat of ``game``, seat 0 first."""
    names = [name.strip() for name in text.split(",")]
    if len(names) != game.num_players:
        raise CliError(
            f"--bots: {game.num_players} bots are needed, one per seat ({game.describe()}), "
            f"got {len(names)}: {text}"
        )
    return names


def check_writable(path: str) -> None:
    """Refuse a record path that cannot be written before playing, not after."""
    folder = Path(path).parent
    if not folder.is_dir():
        raise CliError(f"--record: cannot write {path}: the folder {folder} does not exist")
    if Path(path).is_dir():
        raise CliError(f"--record: cannot write {path}: it is a folder")
    if not os.access(folder, os.W_OK):
        raise CliError(f"--record: cannot write {path}: the folder {folder} is not writable")


def server_arguments(
    parser: argparse.ArgumentParser, *, token: bool = True, instead_of: str | None = None
) -> None:
    """Add ``--server`` and (for the admin API) ``--admin-token``, with their env defaults.

    ``instead_of`` (e.g. "the database"): ``--server`` has no default, so a command that reads
    the database unless told otherwise (``analyse``) asks the referee only when it is given."""
    if instead_of is None:
        default: str | None = os.environ.get(SERVER_ENV) or DEFAULT_SERVER
        text = f"the referee (default ${SERVER_ENV}, else {DEFAULT_SERVER})"
    else:
        default, text = None, f"ask the referee at HOST:PORT instead of reading {instead_of}"
    parser.add_argument("--server", default=default, metavar="HOST:PORT", help=text)
    if token:
        parser.add_argument(
            "--admin-token",
            default=os.environ.get(ADMIN_TOKEN_ENV),
            metavar="TOKEN",
            help=f"the referee's admin token (default ${ADMIN_TOKEN_ENV}; {PS_WARNING})",
        )
        parser.add_argument(
            "--admin-token-file",
            metavar="FILE",
            help="read the admin token from FILE (its first line)",
        )
    client_tls_arguments(parser)


def course_argument(parser: argparse.ArgumentParser, what: str = "the course") -> None:
    """Add ``--course C``: empty means an organizer token's own course, and with the admin
    token the default course (or every course, for a listing)."""
    parser.add_argument(
        "--course",
        default="",
        metavar="C",
        help=f"{what} (default: an organizer token's own course; with the admin token the "
        "default course, or every course for a listing)",
    )


def client_tls_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the client's TLS options: read by ``admin_client.channel_tls``."""
    group = parser.add_argument_group("TLS (when the referee serves it)")
    group.add_argument(
        "--tls",
        action="store_true",
        help="dial with TLS, checking the referee's certificate against the system's roots",
    )
    group.add_argument(
        "--tls-ca",
        metavar="FILE",
        help=f"the CA (PEM) that signed the referee's certificate; implies --tls "
        f"(default ${TLS_CA_ENV})",
    )
    group.add_argument(
        "--tls-client-cert",
        metavar="FILE",
        help="mutual TLS: this client's certificate (PEM), with --tls-client-key",
    )
    group.add_argument(
        "--tls-client-key",
        metavar="FILE",
        help="mutual TLS: this client's private key (PEM)",
    )


def db_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        default=os.environ.get(DB_ENV, "sqlite:///domino-arena.db"),
        metavar="URL",
        help=f"database URL (default ${DB_ENV}, else sqlite:///domino-arena.db; "
        "PostgreSQL: postgresql://user@host/db)",
    )


def checked_seed(value: int | None) -> int | None:
    """``--seed`` if it is a match seed (or not given), else the error of its check."""
    if value is None:
        return None
    try:
        return check_seed(value, "--seed")
    except ValueError as exc:
        raise CliError(str(exc)) from None


def positive(flag: str, value: int | None) -> int | None:
    if value is not None and value < 1:
        raise CliError(f"{flag}: must be 1 or more, got {value}")
    return value


def scores_text(scores: tuple[int, ...]) -> str:
    return "/".join(str(s) for s in scores)

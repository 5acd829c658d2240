"""The ``domino-arena`` command line.

Every subcommand is one :class:`Command` in :data:`COMMANDS`: its name, one line of help and the
family module that defines its arguments and runs it (``HANDLERS`` there). A family module is
imported only when one of its commands is given: the client families import grpc and rich at
their top, the server's (:data:`SERVER_COMMANDS`) trio and SQLAlchemy too; so ``play``,
``replay`` and ``games`` start without them, and ``--help`` lists every command without loading
any.

A user's mistake (an unknown game or bot, a bad option, a broken record) is reported as one
line on stderr, ``domino-arena: error: ...``, with exit status 2; never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, NoReturn

from domino_arena.server.cli.arguments import PROG, CliError, Handler, Handlers, server_extra


@dataclass(frozen=True, slots=True)
class Command:
    """One subcommand: its name, one line of help, and its family module in this package."""

    name: str
    help: str
    family: str


COMMANDS: Final[tuple[Command, ...]] = (
    Command("play", "play one game between house bots, in-process", "local"),
    Command("replay", "re-run a match record and check every step", "local"),
    Command("games", "list the games with their options and defaults", "local"),
    Command(
        "round-robin",
        "play a round robin of house bots in every game and print the standings",
        "serve",
    ),
    Command("serve", "run the referee: bots connect to it over gRPC", "serve"),
    Command(
        "bot",
        "bots and tokens through the referee ('bot create NAME', list, rotate, disable, enable, "
        "delete); 'bot register NAME --invite CODE' (a first bot) or '--owner-token-file F' (the "
        "next) and 'bot rotate-own' for a bot's owner; "
        "'bot add NAME --db URL' writes a database directly; 'bot run NAME' plays a house bot "
        "remotely; 'bot submit NAME PATH' hands a version to the arena to host, 'bot versions "
        "NAME' lists them",
        "bots",
    ),
    Command(
        "logs",
        "'logs MATCH_ID [--bot NAME]': what your hosted bots wrote to stderr in a match",
        "hosted",
    ),
    Command(
        "course",
        "'course create|list|show|update|rotate-token': courses, each with its organizer token",
        "courses",
    ),
    Command(
        "invite",
        "'invite create|list|revoke': invite codes with which students register bots",
        "courses",
    ),
    Command(
        "owner",
        "'owner list|disable|enable|issue-token': a course's owners (code -> owner -> bots); "
        "'owner rotate-token' for an owner's own token",
        "owners",
    ),
    Command(
        "match",
        "'match run GAME --bots A,B': run one match between bots connected to a referee",
        "admin_client",
    ),
    Command(
        "tournament",
        "'tournament create|start|pause|cancel|status|list': round robins on a referee",
        "tournaments",
    ),
    Command(
        "compare",
        "'compare A B GAME [--sprt 0,10]': is A better than B? paired duplicate sets on a referee",
        "compare",
    ),
    Command(
        "standings",
        "the official standings of a game or tournament (batch fit with intervals, seat "
        "advantage, --los) and the live Elo ladder",
        "standings",
    ),
    Command(
        "grades",
        "'grades ID... [--format csv|json] [-o FILE]': a gradebook of finished tournaments "
        "(rating with interval, record, faults, each baseline's paired comparison)",
        "grades",
    ),
    Command(
        "analyse",
        "'analyse MATCH_ID [--seat K] [--json] --db URL': every decision of a stored match "
        "evaluated (loss per decision, accuracy); 'analyse --tournament ID': queue a "
        "tournament's matches for the referee's analysis workers and show their progress; "
        "'--server HOST:PORT' instead of --db: through the admin API",
        "analyse",
    ),
    Command(
        "check",
        "'check NAME': the referee runs the compliance check on a connected bot (any "
        "language): positions and whole games through the protocol; exit 1 if it fails",
        "check",
    ),
    Command(
        "practice",
        "'practice NAME GAME [--against greedy,random]': one unrated match of a connected bot "
        "against house bots the referee hosts",
        "check",
    ),
    Command("matches", "the stored matches, newest first", "admin_client"),
    Command("record", "print or save a stored match's record", "admin_client"),
    Command(
        "verify",
        "check a finished tournament's deals against its published seed commitment",
        "verify",
    ),
    Command(
        "import",
        "'import RECORDS... [--rated] [--create-bots] [--trust-key PUB]': store matches played "
        "elsewhere from their record files (each replayed first; a match id stored already is "
        "skipped)",
        "import_records",
    ),
    Command(
        "keys",
        "'keys new --out PREFIX': the Ed25519 key pair with which 'serve --record-key' signs "
        "the records it hands out, for 'import --trust-key' elsewhere",
        "keys",
    ),
    Command("watch", "follow a running match step by step", "follow"),
    Command(
        "relay",
        "'relay --server REFEREE': serve the referee's public matches to a crowd of gRPC "
        "spectators, one watch of the referee per match",
        "relay",
    ),
    Command("web", "serve the read-only web face (standings, matches, replays)", "web"),
    Command(
        "ladder",
        "'ladder start|stop|list': continuous rated pairing of connected bots",
        "tournaments",
    ),
)


SERVER_COMMANDS: Final = frozenset({"serve", "round-robin", "web", "import", "relay"})
"""The commands that read a database or serve: they need ``domino-arena[server]``. The light
install (``pip install domino-arena``) has every other one, the client commands included
(docs/admin.md: the light install); within ``bot`` and ``verify``, ``--db`` needs the extra too,
as does ``analyse`` without ``--server`` (it reads a database)."""


def _handler(command: Command) -> Handler:
    """Import ``command``'s family module (the one lazy import) and return its handler.

    Raises:
        CliError: the family needs a package of the server extra that is not installed.
    """
    with server_extra(command.name):
        family = importlib.import_module(f"domino_arena.server.cli.{command.family}")
    handlers: Handlers = family.HANDLERS
    return handlers[command.name]


DISTRIBUTION: Final = "domino-arena"
"""The installed distribution whose version ``--version`` prints."""


def version() -> str:
    """The installed version of Domino Arena, or ``unknown`` when it is not installed (run
    from a source tree without ``pip install``)."""
    from importlib import metadata  # noqa: PLC0415

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown"


class _Version(argparse.Action):
    """``--version``: print ``domino-arena X.Y.Z`` and exit 0 (the version is looked up only
    then, so other commands never pay for it)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        print(f"{PROG} {version()}")
        parser.exit(0)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors become one-line :class:`CliError` reports."""

    def error(self, message: str) -> NoReturn:
        raise CliError(f"{message} (see '{self.prog} --help')")


if TYPE_CHECKING:  # generic only in typeshed
    _SubParsers = argparse._SubParsersAction[argparse.ArgumentParser]
else:
    _SubParsers = argparse._SubParsersAction


class _Commands(_SubParsers):
    """The subcommands; each gets its arguments from its family only when it is the one given."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.unfilled: dict[str, Command] = {}

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        assert isinstance(values, list), "a subcommand's name and its arguments"
        command = self.unfilled.pop(values[0], None)
        if command is not None:
            handler = _handler(command)
            sub = self.choices[command.name]
            handler.add_arguments(sub)
            sub.set_defaults(run=handler.run)
        super().__call__(parser, namespace, values, option_string)


def build_parser() -> argparse.ArgumentParser:
    """Return the parser of the whole command line, one subparser per :data:`COMMANDS` entry."""
    parser = _Parser(prog=PROG, description="Domino Arena: a tournament referee for domino bots.")
    parser.add_argument("--version", action=_Version, help="print the installed version and exit")
    commands = parser.add_subparsers(
        action=_Commands, dest="command", metavar="COMMAND", required=True
    )
    assert isinstance(commands, _Commands)
    for command in COMMANDS:
        commands.add_parser(command.name, help=command.help, description=command.help)
        commands.unfilled[command.name] = command
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (``sys.argv[1:]`` if None); return the exit status."""
    try:
        args = build_parser().parse_args(argv)
        run: Callable[[argparse.Namespace], int] = args.run
        return run(args)
    except CliError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return exc.code
    except SystemExit as exc:  # --help and --version print and exit through argparse
        return exc.code if isinstance(exc.code, int) else 0
    except BrokenPipeError:
        # The reader went away (`domino-arena play ... | head`): stop quietly, as cat does.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())

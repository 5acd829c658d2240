"""The ``domino-arena`` command line.

Every subcommand is one :class:`Command` in :data:`COMMANDS`: its arguments and the function
that runs it. A new subcommand (``serve``, ``tournament``) is added there and imports what it
needs inside its ``run`` function, so ``play`` and ``replay`` never load the service.

A user's mistake (an unknown game or bot, a bad option, a broken record) is reported as one
line on stderr, ``domino-arena: error: ...``, with exit status 2; never a traceback.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import os
import secrets
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, NoReturn

from domino_arena.bots import HOUSE_BOTS, UnknownBotError, UnsupportedGameError, make_bot
from domino_arena.sdk.bot import Bot
from domino_arena.sdk.local import (
    DEFAULT_MAX_DEALS,
    BotActionError,
    GameTooLongError,
    play_game,
    seat_seed,
)
from domino_arena.sdk.match.notices import Step
from domino_arena.sdk.records import RecordError, read_record, replay, write_record
from domino_arena.sdk.rules import (
    DEAL,
    GAMES,
    Game,
    GameState,
    HandResult,
    RulesError,
    game_options,
    make_game,
)
from domino_arena.server.cli.tables import standings_table, table
from domino_arena.server.play.timecontrol import TimeControl

PROG: Final = "domino-arena"


class CliError(Exception):
    """A failure to report as one line on stderr, with exit status ``code``."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors become one-line :class:`CliError` reports."""

    def error(self, message: str) -> NoReturn:
        raise CliError(f"{message} (see '{self.prog} --help')")


@dataclass(frozen=True, slots=True)
class Command:
    """One subcommand: its name, one line of help, its arguments and what it does."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


# -- play ---------------------------------------------------------------------------------------


def _game_arguments(parser: argparse.ArgumentParser, bots_help: str | None) -> None:
    """Add the arguments that choose a game and its seats: read by :func:`_game_from_args`.

    ``bots_help`` None: no ``--bots`` (a ladder picks its own bots).
    """
    parser.add_argument("game", metavar="GAME", help=f"the game: {', '.join(sorted(GAMES))}")
    parser.add_argument(
        "--players", type=int, metavar="N", help="number of players (default: the game's)"
    )
    if bots_help is not None:
        parser.add_argument("--bots", required=True, metavar="B1,B2[,...]", help=bots_help)
    parser.add_argument(
        "--partners", action="store_true", help="4 players as two teams, seats 0+2 and 1+3"
    )
    parser.add_argument("--target-rule", metavar="R", help="passing: gamerules or pagat")
    parser.add_argument(
        "-o",
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any game option (see 'domino-arena games'); may be repeated",
    )
    parser.add_argument("--seed", type=int, metavar="S", help="the seed (default: random)")


def _play_arguments(parser: argparse.ArgumentParser) -> None:
    _game_arguments(
        parser, f"one house bot per seat, seat 0 first: {', '.join(sorted(HOUSE_BOTS))}"
    )
    parser.add_argument(
        "--first-seat", type=int, metavar="K", help="seat that starts (default: from the seed)"
    )
    parser.add_argument(
        "--max-deals",
        type=int,
        default=DEFAULT_MAX_DEALS,
        metavar="N",
        help=f"give up after N deals without a winner (default: {DEFAULT_MAX_DEALS})",
    )
    parser.add_argument("--record", metavar="FILE", help="write the match record (JSON Lines)")
    parser.add_argument("--quiet", action="store_true", help="print only the seed and the result")


def _play(args: argparse.Namespace) -> int:
    game = _game_from_args(args)
    players = game.num_players
    names = [name.strip() for name in args.bots.split(",")]
    if len(names) != players:
        raise CliError(
            f"--bots: {players} bots are needed, one per seat ({game.describe()}), "
            f"got {len(names)}: {args.bots}"
        )
    seed: int = args.seed if args.seed is not None else secrets.randbelow(10**9)
    if args.max_deals < 1:
        raise CliError(f"--max-deals: must be 1 or more, got {args.max_deals}")
    if args.first_seat is not None and not 0 <= args.first_seat < players:
        raise CliError(
            f"--first-seat: {args.first_seat} is not a seat of a {players}-player game "
            f"(0 to {players - 1})"
        )
    try:
        bots = [make_bot(name, seat_seed(seed, seat)) for seat, name in enumerate(names)]
    except UnknownBotError as exc:
        raise CliError(f"--bots: {exc}") from None
    if args.record is not None:
        _check_writable(args.record)
    transcript = _Transcript(game, names, seed, quiet=args.quiet)
    try:
        result = play_game(
            game,
            bots,
            seed,
            args.first_seat,
            transcript.step,
            names=names,
            timer=None,
            max_deals=args.max_deals,
        )
    except UnsupportedGameError as exc:
        raise CliError(f"--bots: {exc}") from None
    except (BotActionError, GameTooLongError) as exc:
        raise CliError(str(exc), code=1) from None
    transcript.finish(result.state, result.record.first_seat)
    if args.record is not None:
        try:
            write_record(result.record, args.record)
        except OSError as exc:
            raise CliError(f"cannot write the record to {args.record}: {exc.strerror}") from None
        print(f"record written to {args.record}")
    return 0


def _check_writable(path: str) -> None:
    """Refuse a record path that cannot be written before playing, not after."""
    folder = Path(path).parent
    if not folder.is_dir():
        raise CliError(f"--record: cannot write {path}: the folder {folder} does not exist")
    if Path(path).is_dir():
        raise CliError(f"--record: cannot write {path}: it is a folder")
    if not os.access(folder, os.W_OK):
        raise CliError(f"--record: cannot write {path}: the folder {folder} is not writable")


def _game_from_args(args: argparse.Namespace) -> Game:
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


class _Transcript:
    """Prints a game as it is played: each deal's hands, every step, hand results, scores."""

    def __init__(self, game: Game, names: Sequence[str], seed: int, *, quiet: bool) -> None:
        self.game = game
        self.names = names
        self.seed = seed
        self.quiet = quiet

    def step(self, step: Step) -> None:
        if self.quiet:
            return
        if step.index == 0:
            self._start(step.before)
        if step.action == DEAL:
            self._deal(step.after)
        else:
            line = f"  seat {step.seat}: {step.action}"
            new_results = len(step.after.hand_results) > len(step.before.hand_results)
            if step.after.scores != step.before.scores and not new_results:
                line += f"  (scores {_scores(step.after.scores)})"
            print(line)
        for result in step.after.hand_results[len(step.before.hand_results) :]:
            self._hand_result(result, step.after.scores)

    def finish(self, state: GameState, first_seat: int) -> None:
        outcome = state.outcome()
        assert outcome is not None
        if self.quiet:
            print(f"{self.game.describe()}; seed {self.seed}, first seat {first_seat}")
        else:
            print()
        print(f"result: {outcome.result()}; {outcome.detail}")
        for side, seats in enumerate(outcome.sides):
            who = ", ".join(f"seat {s} {self.names[s]}" for s in seats)
            mark = "  winner" if side == outcome.winner else ""
            print(f"  side {side} ({who}): {outcome.scores[side]}{mark}")
        print(f"re-run with: --seed {self.seed}")

    def _start(self, state: GameState) -> None:
        print(f"{self.game.describe()}; seed {self.seed}")
        for side, seats in enumerate(self.game.sides):
            who = ", ".join(f"seat {s} {self.names[s]}" for s in seats)
            print(f"side {side}: {who}")
        self._deal(state)
        for result in state.hand_results:
            self._hand_result(result, state.scores)

    def _deal(self, state: GameState) -> None:
        print()
        first = f", seat {state.current_seat} first" if state.current_seat >= 0 else ""
        print(f"deal {state.deal_number}{first}")
        for seat in range(self.game.num_players):
            tiles = " ".join(str(t) for t in state.hand(seat))
            print(f"  hand of seat {seat}: {tiles}")

    def _hand_result(self, result: HandResult, scores: tuple[int, ...]) -> None:
        print(f"  end of deal {result.deal} ({result.end.value}): {result.detail}")
        print(f"  scores: {_scores(scores)}")


def _scores(scores: tuple[int, ...]) -> str:
    return "/".join(str(s) for s in scores)


# -- replay -------------------------------------------------------------------------------------


def _replay_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="a match record (JSON Lines)")


def _replay(args: argparse.Namespace) -> int:
    path: str = args.file
    try:
        record = read_record(path)
    except RecordError as exc:
        raise CliError(f"{path}: {exc}") from None
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror}") from None
    report = replay(record)
    print(report if report.ok else f"FAIL: {report}")
    return 0 if report.ok else 1


# -- games --------------------------------------------------------------------------------------


def _games_arguments(parser: argparse.ArgumentParser) -> None:
    del parser


def _games(args: argparse.Namespace) -> int:
    del args
    width = max(len(name) for name in GAMES)
    for name in sorted(GAMES):
        options = " ".join(
            f"{key}={_option_text(value)}" for key, value in game_options(name).items()
        )
        print(f"{name:<{width}}  {make_game(name).describe()}")
        print(f"{'':<{width}}  options: {options or 'none'}")
    return 0


def _option_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# -- round-robin ---------------------------------------------------------------------------------


def _round_robin_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--games",
        metavar="G1,G2",
        default=",".join(sorted(GAMES)),
        help=f"games to play, each with its default players (default: all: "
        f"{', '.join(sorted(GAMES))})",
    )
    parser.add_argument(
        "--players", type=int, metavar="N", help="players per game (default: each game's)"
    )
    parser.add_argument(
        "--entrants",
        metavar="E1,E2,...",
        default="greedy-1,greedy-2,random-1,random-2",
        help="entrants, each a house bot name with an optional '-suffix' "
        "(default: greedy-1,greedy-2,random-1,random-2)",
    )
    parser.add_argument(
        "--games-per-pairing", type=int, default=2, metavar="N", help="deals per table (default 2)"
    )
    parser.add_argument(
        "--concurrency", type=int, default=4, metavar="N", help="games at once (default 4)"
    )
    parser.add_argument("--seed", type=int, default=1, metavar="S", help="seed (default 1)")
    parser.add_argument(
        "--db",
        metavar="URL",
        help="keep the results in this database (default: a temporary SQLite file)",
    )


def _round_robin(args: argparse.Namespace) -> int:
    from rich.console import Console  # noqa: PLC0415

    from domino_arena.server.cli import main_job  # noqa: PLC0415
    from domino_arena.server.store.storage import StorageError  # noqa: PLC0415

    names = [n.strip() for n in args.games.split(",") if n.strip()]
    if not names:
        raise CliError(f"--games: expected some of {', '.join(sorted(GAMES))}")
    games: list[Game] = []
    for name in names:
        if name not in GAMES:
            raise CliError(f"--games: unknown game '{name}': expected {', '.join(sorted(GAMES))}")
        options = {} if args.players is None else {"players": args.players}
        try:
            games.append(make_game(name, **options))
        except RulesError as exc:
            raise CliError(f"--players: {exc}") from None
    try:
        entrants = tuple(
            main_job.entrant_of(e.strip()) for e in args.entrants.split(",") if e.strip()
        )
    except ValueError as exc:
        raise CliError(f"--entrants: {exc}") from None
    if len({e.name for e in entrants}) != len(entrants):
        raise CliError(f"--entrants: names must be unique, got {args.entrants}")
    if len(entrants) < 2:
        raise CliError(f"--entrants: a round robin needs 2 or more, got {args.entrants}")
    if args.games_per_pairing < 1:
        raise CliError(f"--games-per-pairing: must be 1 or more, got {args.games_per_pairing}")
    if args.concurrency < 1:
        raise CliError(f"--concurrency: must be 1 or more, got {args.concurrency}")
    settings = main_job.Settings(
        games=tuple(games),
        entrants=entrants,
        games_per_pairing=args.games_per_pairing,
        seed=args.seed,
        concurrency=args.concurrency,
        db_url=args.db,
    )
    console = Console(highlight=False)
    console.print(
        f"Round robin of {', '.join(e.name for e in entrants)} through the gRPC referee; "
        f"seed {args.seed}"
    )
    try:
        main_job.run(settings, console)
    except (StorageError, main_job.MainJobError) as exc:
        raise CliError(str(exc), code=1) from None
    return 0


# -- serve ---------------------------------------------------------------------------------------
# The service commands import grpc, trio and SQLAlchemy inside their functions (PLC0415), so
# that play, replay and the rest start without them (see the module docstring).

DEFAULT_SERVER: Final = "127.0.0.1:50051"
"""The referee the client commands talk to unless told otherwise."""
SERVER_ENV: Final = "DOMINO_ARENA_SERVER"
DB_ENV: Final = "DOMINO_ARENA_DB"
ADMIN_TOKEN_ENV: Final = "DOMINO_ARENA_ADMIN_TOKEN"


def _serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host", default="127.0.0.1", metavar="HOST", help="address to listen on (127.0.0.1)"
    )
    parser.add_argument(
        "--port", type=int, default=50051, metavar="PORT", help="port (50051; 0: any free port)"
    )
    _db_argument(parser)
    parser.add_argument(
        "--reconnect-grace",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long a bot that dropped mid-match has to come back (default 10)",
    )
    parser.add_argument(
        "--shutdown-grace",
        type=float,
        default=2.0,
        metavar="SECONDS",
        help="how long open calls get to end at shutdown (default 2)",
    )
    parser.add_argument(
        "--admin-token",
        default=os.environ.get(ADMIN_TOKEN_ENV),
        metavar="TOKEN",
        help=f"the admin API's token (default ${ADMIN_TOKEN_ENV}; if neither is given, a new "
        "one is made and printed at start)",
    )
    parser.add_argument(
        "--metrics-port",
        type=int,
        metavar="PORT",
        help="serve Prometheus metrics on http://HOST:PORT/metrics (0: any free port; "
        "default: no metrics server)",
    )


def _db_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        default=os.environ.get(DB_ENV, "sqlite:///domino-arena.db"),
        metavar="URL",
        help=f"database URL (default ${DB_ENV}, else sqlite:///domino-arena.db; "
        "PostgreSQL: postgresql://user@host/db)",
    )


def _open_storage(url: str) -> Any:
    from domino_arena.server.store.storage import Storage, StorageError  # noqa: PLC0415

    storage = Storage(url)
    try:
        storage.open()
    except StorageError as exc:
        raise CliError(str(exc), code=1) from None
    return storage


def _serve(args: argparse.Namespace) -> int:
    from domino_arena.server.app import Config, run  # noqa: PLC0415
    from domino_arena.server.store.storage import display_url, new_token  # noqa: PLC0415

    if not 0 <= args.port <= 65535:
        raise CliError(f"--port: must be 0-65535, got {args.port}")
    if args.reconnect_grace < 0 or args.shutdown_grace < 0:
        raise CliError("--reconnect-grace and --shutdown-grace must not be negative")
    storage = _open_storage(args.db)
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter(f"{PROG}: %(message)s"))
    root = logging.getLogger("domino_arena")
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    if args.metrics_port is not None and not 0 <= args.metrics_port <= 65535:
        raise CliError(f"--metrics-port: must be 0-65535, got {args.metrics_port}")
    admin_token: str = args.admin_token or new_token()
    config = Config(
        host=args.host,
        port=args.port,
        reconnect_grace=args.reconnect_grace,
        shutdown_grace=args.shutdown_grace,
        admin_token=admin_token,
        metrics_port=args.metrics_port,
    )

    def ready(port: int) -> None:
        print(f"{PROG}: database {display_url(args.db)}")
        if not args.admin_token:
            print(
                f"{PROG}: admin token (made for this run; set ${ADMIN_TOKEN_ENV} to keep one): "
                f"{admin_token}"
            )
        print(f"{PROG}: serving on {args.host}:{port}", flush=True)

    try:
        run(config, storage, ready)
    except OSError as exc:
        raise CliError(str(exc), code=1) from None
    finally:
        storage.close()
        root.removeHandler(handler)
    print(f"{PROG}: stopped", flush=True)
    return 0


# -- bot ------------------------------------------------------------------------------------------


def _bot_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="bot_action", metavar="ACTION", required=True)
    add = actions.add_parser(
        "add",
        help="create a bot and print its token (shown only once)",
        description="Create a bot and print its token. Only a hash of the token is kept, "
        "so it is shown this once.",
    )
    add.add_argument("name", metavar="NAME", help="the bot's name (letters, digits, _ . -)")
    _db_argument(add)
    add.set_defaults(bot_run=_bot_add)
    play = actions.add_parser(
        "run",
        help="run a house bot against a referee (until Ctrl-C)",
        description="Connect a house bot to a referee as the bot NAME and play every match "
        "it is seated in, until Ctrl-C or SIGTERM; reconnects after a lost connection.",
    )
    play.add_argument("name", metavar="NAME", help="the bot's name, as created by 'bot add'")
    _server_arguments(play, token=False)
    play.add_argument(
        "--token",
        metavar="T",
        help="the token 'bot add' printed (default: $DOMINO_ARENA_TOKEN)",
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
    from domino_arena.server.store.storage import BadBotNameError, DuplicateBotError, check_name  # noqa: PLC0415

    try:
        check_name(args.name)
    except BadBotNameError as exc:
        raise CliError(str(exc)) from None
    storage = _open_storage(args.db)
    try:
        token = storage.add_bot(args.name)
    except DuplicateBotError as exc:
        raise CliError(f"{exc}; pick another name") from None
    finally:
        storage.close()
    print(f"{PROG}: created bot '{args.name}'; its token, shown only this once:", file=sys.stderr)
    print(token)
    return 0


def _bot_play(args: argparse.Namespace) -> int:
    from domino_arena.sdk import runner  # noqa: PLC0415
    from domino_arena.sdk.client import RefereeError  # noqa: PLC0415

    if args.bot not in HOUSE_BOTS:
        raise CliError(
            f"--bot: unknown bot '{args.bot}': expected one of {', '.join(sorted(HOUSE_BOTS))}"
        )
    token = args.token or os.environ.get(runner.TOKEN_ENV)
    if not token:
        raise CliError(
            f"no token for bot '{args.name}': pass --token or set ${runner.TOKEN_ENV} "
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
        runner.run(new_bot, server=args.server, name=args.name, token=token, games=games)
    except RefereeError as exc:
        raise CliError(str(exc), code=1) from None
    except ValueError as exc:
        raise CliError(str(exc)) from None
    except KeyboardInterrupt:
        pass
    return 0


# -- the admin API: shared -------------------------------------------------------------------------
# Every command below is one or more calls of the referee's admin API (admin.proto), with the
# token of --admin-token or $DOMINO_ARENA_ADMIN_TOKEN; ``watch`` needs none.

FOLLOW_INTERVAL: Final = 1.0
"""Seconds between two looks at a tournament that ``tournament status --follow`` follows."""

_USER_MISTAKES: Final = frozenset(
    {
        "INVALID_ARGUMENT",
        "NOT_FOUND",
        "FAILED_PRECONDITION",
        "UNAUTHENTICATED",
        "PERMISSION_DENIED",
        "ALREADY_EXISTS",
        "OUT_OF_RANGE",
    }
)
"""Refusals that are the user's to fix (exit status 2); any other failure exits 1."""


def _server_arguments(parser: argparse.ArgumentParser, *, token: bool = True) -> None:
    """Add ``--server`` and (for the admin API) ``--admin-token``, with their env defaults."""
    default = os.environ.get(SERVER_ENV) or DEFAULT_SERVER
    parser.add_argument(
        "--server",
        default=default,
        metavar="HOST:PORT",
        help=f"the referee (default ${SERVER_ENV}, else {DEFAULT_SERVER})",
    )
    if token:
        parser.add_argument(
            "--admin-token",
            default=os.environ.get(ADMIN_TOKEN_ENV),
            metavar="TOKEN",
            help=f"the referee's admin token (default ${ADMIN_TOKEN_ENV})",
        )


def _admin_call(args: argparse.Namespace, method: str, request: Any) -> Any:
    """Call ``method`` of the admin API at ``args.server`` with the admin token; return the answer.

    Raises:
        CliError: no token (2); a refusal the user can fix (2, the referee's reason); the
            referee cannot be reached or failed (1).
    """
    import grpc  # noqa: PLC0415

    from domino_arena.v1 import admin_pb2_grpc  # noqa: PLC0415

    token: str | None = args.admin_token
    if not token:
        raise CliError(
            f"no admin token: pass --admin-token or set ${ADMIN_TOKEN_ENV} "
            "(the referee prints one at start when it was given none)"
        )
    with grpc.insecure_channel(args.server) as channel:
        stub = admin_pb2_grpc.AdminServiceStub(channel)
        try:
            return getattr(stub, method)(request, metadata=(("authorization", f"Bearer {token}"),))
        except grpc.RpcError as exc:
            raise _rpc_error(args.server, exc) from None


def _rpc_error(server: str, exc: Any) -> CliError:
    """The one-line error of a failed call: 2 for the user's mistakes, 1 for the rest."""
    code = 2 if exc.code().name in _USER_MISTAKES else 1
    return CliError(_rpc_failure(server, exc), code=code)


def _console() -> Any:
    """A rich console on stdout; wide enough for the tables when stdout is not a terminal."""
    from rich.console import Console  # noqa: PLC0415

    return Console(highlight=False, width=None if sys.stdout.isatty() else 160)


def _enum_name(enum: Any, value: int, prefix: str) -> str:
    """``TOURNAMENT_STATE_RUNNING`` -> ``running``."""
    name: str = enum.Name(value)
    return name.removeprefix(prefix).lower().replace("_", " ")


def _time_control_text(message: Any) -> str:
    return str(TimeControl.from_ms(message.move_ms, message.bank_ms, message.grace_ms))


def _time_control_message(args: argparse.Namespace) -> Any:
    """The ``TimeControl`` message of ``--time-control`` (None when not given)."""
    from domino_arena.v1 import referee_pb2  # noqa: PLC0415

    if args.time_control is None:
        return None
    try:
        move_ms, bank_ms, grace_ms = TimeControl.parse(args.time_control).to_ms()
    except ValueError as exc:
        raise CliError(f"--time-control: {exc}") from None
    return referee_pb2.TimeControl(move_ms=move_ms, bank_ms=bank_ms, grace_ms=grace_ms)


def _policy_arguments(parser: argparse.ArgumentParser) -> None:
    """``--time-control``, ``--fault-policy`` and ``--max-strikes``: read by :func:`_policies`."""
    parser.add_argument(
        "--time-control",
        metavar="TC",
        help="MOVE[+BANK][/GRACE], e.g. 1s+10s/50ms (default: the referee's, 1s+10s/50ms)",
    )
    parser.add_argument(
        "--fault-policy",
        choices=("forfeit", "substitute"),
        help="what a fault costs (default substitute)",
    )
    parser.add_argument(
        "--max-strikes",
        type=int,
        metavar="K",
        help="substitute: faults that forfeit (default 3)",
    )


def _policies(args: argparse.Namespace, request: Any) -> None:
    """Copy ``--time-control``, ``--fault-policy`` and ``--max-strikes`` into ``request``."""
    from domino_arena.v1 import referee_pb2  # noqa: PLC0415

    time_control = _time_control_message(args)
    if time_control is not None:
        request.time_control.CopyFrom(time_control)
    if args.fault_policy is not None:
        request.fault_policy = (
            referee_pb2.FAULT_POLICY_FORFEIT
            if args.fault_policy == "forfeit"
            else referee_pb2.FAULT_POLICY_SUBSTITUTE
        )
    if args.max_strikes is not None:
        if args.max_strikes < 1:
            raise CliError(f"--max-strikes: must be 1 or more, got {args.max_strikes}")
        request.max_strikes = args.max_strikes


def _positive(flag: str, value: int | None) -> int | None:
    if value is not None and value < 1:
        raise CliError(f"{flag}: must be 1 or more, got {value}")
    return value


def _seed(value: int | None) -> int | None:
    from domino_arena.server.store.storage import MAX_SEED  # noqa: PLC0415

    if value is not None and not 0 <= value <= MAX_SEED:
        raise CliError(f"--seed: must be from 0 to {MAX_SEED}, got {value}")
    return value


def _bot_names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _subcommands(
    parser: argparse.ArgumentParser,
    dest: str,
    actions: Sequence[
        tuple[str, str, Callable[[argparse.ArgumentParser], None], Callable[..., int]]
    ],
) -> None:
    """Add one sub-action per ``(name, help, add_arguments, run)``; ``run`` is set as ``action``."""
    subparsers = parser.add_subparsers(dest=dest, metavar="ACTION", required=True)
    for name, help_text, add_arguments, run in actions:
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        add_arguments(sub)
        sub.set_defaults(action=run)


def _run_action(args: argparse.Namespace) -> int:
    run: Callable[[argparse.Namespace], int] = args.action
    return run(args)


# -- match -----------------------------------------------------------------------------------------


def _match_arguments(parser: argparse.ArgumentParser) -> None:
    _subcommands(
        parser,
        "match_action",
        [
            (
                "run",
                "ask a referee to run one match between connected bots; print the result and "
                "optionally write the record",
                _match_run_arguments,
                _match_run,
            )
        ],
    )


def _match_run_arguments(parser: argparse.ArgumentParser) -> None:
    _game_arguments(parser, "one connected bot per seat, seat 0 first")
    _server_arguments(parser)
    parser.add_argument("--record", metavar="FILE", help="write the match record (JSON Lines)")
    _policy_arguments(parser)


def _match_run(args: argparse.Namespace) -> int:
    from domino_arena.sdk.wire.convert import game_to_proto  # noqa: PLC0415
    from domino_arena.v1 import admin_pb2  # noqa: PLC0415

    game = _game_from_args(args)
    bots = [name.strip() for name in args.bots.split(",")]
    if len(bots) != game.num_players:
        raise CliError(
            f"--bots: {game.num_players} bots are needed, one per seat ({game.describe()}), "
            f"got {len(bots)}: {args.bots}"
        )
    request = admin_pb2.RunMatchRequest(game=game_to_proto(game), bots=bots)
    if args.seed is not None:
        request.has_seed = True
        request.seed = _seed(args.seed) or 0
    _policies(args, request)
    if args.record is not None:
        _check_writable(args.record)
    response = _admin_call(args, "RunMatch", request)
    print(f"match {response.match_id}: {game.describe()}")
    _print_result(game, bots, response.result)
    if args.record is not None and response.record:
        _write_text(args.record, response.record)
        print(f"record written to {args.record}")
    return 0


def _write_text(path: str, text: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write the record to {path}: {exc.strerror}") from None


def _rpc_failure(server: str, exc: Any) -> str:
    """One line for a failed call: unreachable referee, or its refusal and reason."""
    import grpc  # noqa: PLC0415

    code: grpc.StatusCode = exc.code()
    details: str = exc.details() or ""
    if code is grpc.StatusCode.UNAVAILABLE and "connect" in details.lower():
        return f"cannot reach the referee at {server}: {details}"
    return f"the referee at {server} answered {code.name}: {details}"


def _print_result(game: Game, bots: Sequence[str], result: Any) -> None:
    """Print a ``MatchResult`` message: how it ended, the winner, each side's score."""
    from domino_arena.v1 import referee_pb2  # noqa: PLC0415

    termination = _enum_name(referee_pb2.Termination, result.termination, "TERMINATION_")
    winner = result.winner
    if winner >= 0:
        seats = ", ".join(str(s) for s in game.sides[winner])
        score = "-".join(str(s) for s in result.scores)
        plural = "s" if len(game.sides[winner]) > 1 else ""
        print(f"result: {termination}; side {winner} (seat{plural} {seats}) wins {score}")
    else:
        print(f"result: {termination}; no winner")
    if result.detail:
        print(f"  {result.detail}")
    for side, seats_of_side in enumerate(game.sides):
        who = ", ".join(f"seat {s} {bots[s]}" for s in seats_of_side)
        mark = "  winner" if side == winner else ""
        score_text = result.scores[side] if side < len(result.scores) else "?"
        print(f"  side {side} ({who}): {score_text}{mark}")


# -- tournament ------------------------------------------------------------------------------------


def _tournament_arguments(parser: argparse.ArgumentParser) -> None:
    def one_id(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("id", metavar="ID", help="the tournament's id")
        _server_arguments(sub)

    def status(sub: argparse.ArgumentParser) -> None:
        one_id(sub)
        sub.add_argument(
            "--follow", action="store_true", help="show a progress bar until it stops running"
        )

    _subcommands(
        parser,
        "tournament_action",
        [
            (
                "create",
                "create a round-robin tournament between registered bots",
                _tournament_create_arguments,
                _tournament_create,
            ),
            ("start", "start a created tournament, or resume a paused one", one_id, _t_start),
            ("pause", "start no new game; running games finish", one_id, _t_pause),
            ("cancel", "stop for good; running games are aborted", one_id, _t_cancel),
            ("status", "settings, progress and results of a tournament", status, _t_status),
            ("list", "every tournament with its state and progress", _server_arguments, _t_list),
        ],
    )


def _tournament_create_arguments(parser: argparse.ArgumentParser) -> None:
    _game_arguments(parser, "the entrants, registered bots (at least one table's worth)")
    _server_arguments(parser)
    parser.add_argument("--name", metavar="TEXT", help="its name (default: the game and date)")
    parser.add_argument(
        "--games-per-pairing", type=int, metavar="N", help="games of each pairing (default 1)"
    )
    parser.add_argument(
        "--no-duplicate-deals",
        action="store_true",
        help="a fresh deal for every game (default: every deal under every seat rotation)",
    )
    _policy_arguments(parser)
    parser.add_argument(
        "--concurrency", type=int, metavar="N", help="games at once (default: the referee's)"
    )
    parser.add_argument(
        "--wait",
        type=float,
        metavar="SECONDS",
        help="how long a game waits for absent bots (default: the referee's)",
    )
    parser.add_argument("--unrated", action="store_true", help="its games do not count for Elo")
    parser.add_argument("--start", action="store_true", help="start it at once")


def _tournament_create(args: argparse.Namespace) -> int:
    from domino_arena.sdk.wire.convert import game_to_proto  # noqa: PLC0415
    from domino_arena.v1 import admin_pb2  # noqa: PLC0415

    game = _game_from_args(args)
    request = admin_pb2.CreateTournamentRequest(
        name=args.name or "",
        game=game_to_proto(game),
        entrants=_bot_names(args.bots),
        games_per_pairing=_positive("--games-per-pairing", args.games_per_pairing) or 0,
        concurrency=_positive("--concurrency", args.concurrency) or 0,
        start=args.start,
    )
    if args.no_duplicate_deals:
        request.duplicate_deals = False
    if args.unrated:
        request.rated = False
    seed = _seed(args.seed)
    if seed is not None:
        request.seed = seed
    if args.wait is not None:
        if not 0 <= args.wait <= 86_400:
            raise CliError(f"--wait: must be 0 to 86400 seconds, got {args.wait:g}")
        request.wait_ms = round(args.wait * 1000)
    _policies(args, request)
    t = _admin_call(args, "CreateTournament", request)
    print(f"tournament {t.id} created: {t.name}")
    _print_tournament(t)
    if not args.start:
        print(f"start it with: domino-arena tournament start {t.id}")
    return 0


def _t_start(args: argparse.Namespace) -> int:
    return _tournament_action(args, "StartTournament", "started")


def _t_pause(args: argparse.Namespace) -> int:
    return _tournament_action(args, "PauseTournament", "pausing: running games finish")


def _t_cancel(args: argparse.Namespace) -> int:
    return _tournament_action(args, "CancelTournament", "cancelled")


def _tournament_action(args: argparse.Namespace, method: str, done: str) -> int:
    from domino_arena.v1 import admin_pb2  # noqa: PLC0415

    request = getattr(admin_pb2, f"{method}Request")(tournament_id=args.id)
    t = _admin_call(args, method, request)
    print(f"tournament {t.id}: {done}; {_progress_text(t)}")
    return 0


def _t_status(args: argparse.Namespace) -> int:
    from domino_arena.v1 import admin_pb2  # noqa: PLC0415

    request = admin_pb2.GetTournamentRequest(tournament_id=args.id)
    t = _admin_call(args, "GetTournament", request)
    if args.follow and t.state == admin_pb2.TOURNAMENT_STATE_RUNNING:
        t = _follow(args, request, t)
    print(f"tournament {t.id}: {t.name}")
    _print_tournament(t)
    _print_results(t)
    return 0


def _follow(args: argparse.Namespace, request: Any, t: Any) -> Any:
    """Show a progress bar while ``t`` runs; return it as it is when it stops."""
    import time  # noqa: PLC0415

    from rich.progress import (  # noqa: PLC0415
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from domino_arena.v1 import admin_pb2  # noqa: PLC0415

    def describe(t: Any) -> str:
        p = t.progress
        return f"{t.name} ({p.running} running, {p.waiting} waiting)"

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=_console(),
    ) as bar:
        task = bar.add_task(describe(t), total=t.progress.total, completed=t.progress.done)
        while t.state == admin_pb2.TOURNAMENT_STATE_RUNNING:
            time.sleep(FOLLOW_INTERVAL)
            t = _admin_call(args, "GetTournament", request)
            bar.update(
                task, description=describe(t), total=t.progress.total, completed=t.progress.done
            )
    return t


def _progress_text(t: Any) -> str:
    from domino_arena.v1 import admin_pb2  # noqa: PLC0415

    state = _enum_name(admin_pb2.TournamentState, t.state, "TOURNAMENT_STATE_")
    p = t.progress
    text = f"{state}, {p.done}/{p.total} games"
    if p.running or p.waiting:
        text += f" ({p.running} running, {p.waiting} waiting for bots)"
    return text


def _print_tournament(t: Any) -> None:
    from domino_arena.sdk.wire.convert import game_from_proto  # noqa: PLC0415
    from domino_arena.v1 import referee_pb2  # noqa: PLC0415

    game = game_from_proto(t.game)
    policy = _enum_name(referee_pb2.FaultPolicy, t.fault_policy, "FAULT_POLICY_")
    strikes = f" after {t.max_strikes} strikes" if policy == "substitute" else ""
    pairing = f"{t.games_per_pairing} game{'s' if t.games_per_pairing > 1 else ''} per pairing"
    print(f"  {game.describe()}: {_progress_text(t)}")
    print(f"  entrants: {', '.join(t.entrants)}")
    print(
        f"  {pairing}, {'duplicate deals' if t.duplicate_deals else 'fresh deals'}, "
        f"{'rated' if t.rated else 'unrated'}; seed {t.seed}"
    )
    print(
        f"  time control {_time_control_text(t.time_control)}, {policy}{strikes}; "
        f"{t.concurrency} at once; waits {t.wait_ms / 1000:g} s for absent bots"
    )


def _print_results(t: Any) -> None:
    if not t.results:
        return
    console = _console()
    console.print(
        table(
            "results",
            ["#", "bot", "games", "wins", "draws", "losses", "faults", "points", "performance"],
            (
                (
                    rank,
                    r.bot,
                    r.games,
                    r.wins,
                    r.draws,
                    r.losses,
                    r.faults,
                    f"{r.points:g}",
                    f"{r.performance:.0f}",
                )
                for rank, r in enumerate(t.results, start=1)
            ),
        )
    )
    if t.crosstable:
        entrants = [r.bot for r in t.results]
        _print_head_to_head(console, "crosstable (wins-draws-losses)", t.crosstable, entrants)


def _print_head_to_head(
    console: Any, title: str, records: Sequence[Any], bots: Sequence[str] = ()
) -> None:
    """A square table: row bot against column bot, as wins-draws-losses.

    ``bots``: the rows and columns, in order (default: every bot that met another, sorted).
    """
    bots = bots or sorted({r.bot for r in records} | {r.opponent for r in records})
    cells = {(r.bot, r.opponent): f"{r.wins}-{r.draws}-{r.losses}" for r in records}
    console.print(
        table(
            title,
            ["bot", *bots],
            ([a, *(cells.get((a, b), "" if a != b else "x") for b in bots)] for a in bots),
        )
    )


def _t_list(args: argparse.Namespace) -> int:
    from domino_arena.sdk.wire.convert import game_from_proto  # noqa: PLC0415
    from domino_arena.v1 import admin_pb2  # noqa: PLC0415

    response = _admin_call(args, "ListTournaments", admin_pb2.ListTournamentsRequest())
    if not response.tournaments:
        print("no tournaments")
        return 0
    _console().print(
        table(
            None,
            ["id", "name", "game", "state", "done", "total", "entrants", "created"],
            (
                (
                    t.id,
                    t.name,
                    game_from_proto(t.game).describe(),
                    _enum_name(admin_pb2.TournamentState, t.state, "TOURNAMENT_STATE_"),
                    t.progress.done,
                    t.progress.total,
                    len(t.entrants),
                    f"{t.created.ToDatetime():%Y-%m-%d %H:%M}",
                )
                for t in response.tournaments
            ),
        )
    )
    return 0


# -- standings, matches, record --------------------------------------------------------------------


def _standings_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", metavar="GAME", help=f"the game: {', '.join(sorted(GAMES))}")
    parser.add_argument(
        "--head-to-head", action="store_true", help="also each pair's wins-draws-losses"
    )
    _server_arguments(parser)


def _standings(args: argparse.Namespace) -> int:
    from domino_arena.v1 import admin_pb2  # noqa: PLC0415

    request = admin_pb2.GetStandingsRequest(game=args.game, head_to_head=args.head_to_head)
    response = _admin_call(args, "GetStandings", request)
    if not response.rows:
        print(f"no rated {response.game} games yet")
        return 0
    console = _console()
    console.print(
        standings_table(f"{response.game} standings", ((r.bot, r) for r in response.rows))
    )
    if args.head_to_head and response.head_to_head:
        _print_head_to_head(console, "head to head (wins-draws-losses)", response.head_to_head)
    return 0


def _matches_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tournament", metavar="ID", help="only this tournament's games")
    parser.add_argument("--bot", metavar="NAME", help="only matches this bot played")
    parser.add_argument("--game", metavar="GAME", help="only this game")
    parser.add_argument(
        "--limit", type=int, default=20, metavar="N", help="at most N, newest first (default 20)"
    )
    _server_arguments(parser)


def _matches(args: argparse.Namespace) -> int:
    from domino_arena.sdk.wire.convert import game_from_proto  # noqa: PLC0415
    from domino_arena.v1 import admin_pb2, referee_pb2  # noqa: PLC0415

    if not 1 <= args.limit <= 1000:
        raise CliError(f"--limit: must be 1 to 1000, got {args.limit}")
    request = admin_pb2.ListMatchesRequest(
        tournament_id=args.tournament or "",
        bot=args.bot or "",
        game=args.game or "",
        limit=args.limit,
    )
    response = _admin_call(args, "ListMatches", request)
    if not response.matches:
        print("no matches")
        return 0

    def winner(m: Any) -> str:
        side = m.result.winner
        if side < 0:
            return "-"
        return ", ".join(
            b for b, s in zip(m.bots, m.result.side_of_seat, strict=False) if s == side
        )

    _console().print(
        table(
            None,
            ["id", "game", "bots", "result", "winner", "scores", "created"],
            (
                (
                    m.match_id,
                    game_from_proto(m.game).describe(),
                    ", ".join(m.bots),
                    _enum_name(referee_pb2.Termination, m.result.termination, "TERMINATION_"),
                    winner(m),
                    "-".join(str(s) for s in m.result.scores),
                    f"{m.created.ToDatetime():%Y-%m-%d %H:%M}",
                )
                for m in response.matches
            ),
        )
    )
    return 0


def _record_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("match_id", metavar="MATCH_ID", help="a stored match's id")
    parser.add_argument("-o", "--output", metavar="FILE", help="write it here (default: stdout)")
    _server_arguments(parser)


def _record(args: argparse.Namespace) -> int:
    from domino_arena.v1 import admin_pb2  # noqa: PLC0415

    if args.output is not None:
        _check_writable(args.output)
    response = _admin_call(args, "GetMatch", admin_pb2.GetMatchRequest(match_id=args.match_id))
    if not response.record:
        raise CliError(
            f"match {args.match_id} has no record (it was void: {response.match.result.detail})",
            code=1,
        )
    if args.output is None:
        sys.stdout.write(response.record)
    else:
        _write_text(args.output, response.record)
        print(f"record written to {args.output}", file=sys.stderr)
    return 0


# -- watch -----------------------------------------------------------------------------------------


def _watch_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("match_id", metavar="MATCH_ID", help="a running match's id")
    _server_arguments(parser, token=False)


def _watch(args: argparse.Namespace) -> int:
    import grpc  # noqa: PLC0415

    from domino_arena.v1 import admin_pb2, admin_pb2_grpc  # noqa: PLC0415

    with grpc.insecure_channel(args.server) as channel:
        stub = admin_pb2_grpc.SpectatorServiceStub(channel)
        stream = stub.Watch(admin_pb2.WatchRequest(match_id=args.match_id))
        printer = _Spectator()
        try:
            for message in stream:
                printer.show(message)
        except grpc.RpcError as exc:
            raise _rpc_error(args.server, exc) from None
        except KeyboardInterrupt:
            stream.cancel()
    return 0


class _Spectator:
    """Prints what a spectator receives, one line per step, as :class:`_Transcript` does."""

    def __init__(self) -> None:
        self.game: Game | None = None
        self.bots: tuple[str, ...] = ()
        self.scores: tuple[int, ...] = ()

    def show(self, message: Any) -> None:
        from domino_arena.sdk.wire.convert import (  # noqa: PLC0415
            game_from_proto,
            hand_result_from_proto,
            step_from_proto,
        )

        kind = message.WhichOneof("message")
        if kind == "start":
            start = message.start
            self.game = game_from_proto(start.game)
            self.bots = tuple(start.players)
            print(f"match {start.match_id}: {self.game.describe()}", flush=True)
            for side, seats in enumerate(self.game.sides):
                who = ", ".join(f"seat {s} {self.bots[s]}" for s in seats)
                print(f"side {side}: {who}", flush=True)
        elif kind == "event":
            event = message.event
            entry = step_from_proto(event.step)
            scores = tuple(event.scores)
            if entry.action == DEAL:
                print(f"deal {event.deal}", flush=True)
            else:
                line = f"  seat {entry.seat}: {entry.action}"
                if self.scores and scores != self.scores:
                    line += f"  (scores {_scores(scores)})"
                print(line, flush=True)
            self.scores = scores
        elif kind == "hand_end":
            result = hand_result_from_proto(message.hand_end)
            print(f"  end of deal {result.deal} ({result.end.value}): {result.detail}")
            print(f"  scores: {_scores(tuple(message.hand_end.scores))}", flush=True)
            self.scores = tuple(message.hand_end.scores)
        elif kind == "match_end":
            assert self.game is not None, "the start comes first"
            _print_result(self.game, self.bots, message.match_end.result)


# -- ladder ----------------------------------------------------------------------------------------


def _ladder_arguments(parser: argparse.ArgumentParser) -> None:
    def start(sub: argparse.ArgumentParser) -> None:
        _game_arguments(sub, None)
        _server_arguments(sub)
        _policy_arguments(sub)
        sub.add_argument(
            "--concurrency", type=int, metavar="N", help="ladder games at once (default 4)"
        )

    def stop(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("game", metavar="GAME", help="the game whose ladder stops")
        _server_arguments(sub)

    _subcommands(
        parser,
        "ladder_action",
        [
            ("start", "keep pairing connected bots of GAME into rated games", start, _l_start),
            ("stop", "stop the ladder of GAME; its running games finish", stop, _l_stop),
            ("list", "the running ladders", _server_arguments, _l_list),
        ],
    )


def _l_start(args: argparse.Namespace) -> int:
    from domino_arena.sdk.wire.convert import game_to_proto  # noqa: PLC0415
    from domino_arena.v1 import admin_pb2  # noqa: PLC0415

    game = _game_from_args(args)
    request = admin_pb2.StartLadderRequest(
        game=game_to_proto(game), concurrency=_positive("--concurrency", args.concurrency) or 0
    )
    seed = _seed(args.seed)
    if seed is not None:
        request.seed = seed
    _policies(args, request)
    ladder = _admin_call(args, "StartLadder", request)
    print(
        f"{game.name} ladder started: {game.describe()}, {ladder.concurrency} games at once, "
        f"time control {_time_control_text(ladder.time_control)}, seed {ladder.seed}"
    )
    return 0


def _l_stop(args: argparse.Namespace) -> int:
    from domino_arena.v1 import admin_pb2  # noqa: PLC0415

    _admin_call(args, "StopLadder", admin_pb2.StopLadderRequest(game=args.game))
    print(f"{args.game} ladder stopping: its running games finish")
    return 0


def _l_list(args: argparse.Namespace) -> int:
    from domino_arena.sdk.wire.convert import game_from_proto  # noqa: PLC0415
    from domino_arena.v1 import admin_pb2, referee_pb2  # noqa: PLC0415

    response = _admin_call(args, "ListLadders", admin_pb2.ListLaddersRequest())
    if not response.ladders:
        print("no ladder is running")
        return 0
    _console().print(
        table(
            None,
            ["game", "concurrency", "time control", "fault policy", "started", "finished"],
            (
                (
                    game_from_proto(x.game).describe(),
                    x.concurrency,
                    _time_control_text(x.time_control),
                    _enum_name(referee_pb2.FaultPolicy, x.fault_policy, "FAULT_POLICY_"),
                    x.started,
                    x.finished,
                )
                for x in response.ladders
            ),
        )
    )
    return 0


# -- the command line ---------------------------------------------------------------------------

COMMANDS: Final[tuple[Command, ...]] = (
    Command("play", "play one game between house bots, in-process", _play_arguments, _play),
    Command("replay", "re-run a match record and check every step", _replay_arguments, _replay),
    Command("games", "list the games with their options and defaults", _games_arguments, _games),
    Command(
        "round-robin",
        "play a round robin of house bots in every game and print the standings",
        _round_robin_arguments,
        _round_robin,
    ),
    Command("serve", "run the referee: bots connect to it over gRPC", _serve_arguments, _serve),
    Command(
        "bot",
        "'bot add NAME': create a bot and its token; 'bot run NAME': play a house bot remotely",
        _bot_arguments,
        _bot,
    ),
    Command(
        "match",
        "'match run GAME --bots A,B': run one match between bots connected to a referee",
        _match_arguments,
        _run_action,
    ),
    Command(
        "tournament",
        "'tournament create|start|pause|cancel|status|list': round robins on a referee",
        _tournament_arguments,
        _run_action,
    ),
    Command("standings", "the Elo standings of a game", _standings_arguments, _standings),
    Command("matches", "the stored matches, newest first", _matches_arguments, _matches),
    Command("record", "print or save a stored match's record", _record_arguments, _record),
    Command("watch", "follow a running match step by step", _watch_arguments, _watch),
    Command(
        "ladder",
        "'ladder start|stop|list': continuous rated pairing of connected bots",
        _ladder_arguments,
        _run_action,
    ),
)


def build_parser() -> argparse.ArgumentParser:
    """Return the parser of the whole command line, one subparser per :data:`COMMANDS` entry."""
    parser = _Parser(prog=PROG, description="Domino Arena: a tournament referee for domino bots.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        sub = commands.add_parser(command.name, help=command.help, description=command.help)
        command.add_arguments(sub)
        sub.set_defaults(run=command.run)
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

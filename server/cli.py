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
    Step,
    play_game,
    seat_seed,
)
from domino_arena.sdk.records import RecordError, read_record, replay, write_record
from domino_arena.sdk.rules import (
    DEAL,
    GAMES,
    Game,
    GameState,
    HandResult,
    RulesError,
    configurations,
    game_options,
    make_game,
)

from .local_round_robin import entrant_bot, play_configuration
from .timecontrol import TimeControl

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


def _game_arguments(parser: argparse.ArgumentParser, bots_help: str) -> None:
    """Add the arguments that choose a game and its seats: read by :func:`_game_from_args`."""
    parser.add_argument("game", metavar="GAME", help=f"the game: {', '.join(sorted(GAMES))}")
    parser.add_argument(
        "--players", type=int, metavar="N", help="number of players (default: the game's)"
    )
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
    parser.add_argument("--seed", type=int, metavar="S", help="the game's seed (default: random)")


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
        help=f"games to play (default: all: {', '.join(sorted(GAMES))})",
    )
    parser.add_argument(
        "--entrants",
        metavar="E1,E2,...",
        default="greedy-1,greedy-2,random-1,random-2",
        help="entrants, each a house bot name with an optional '-suffix' "
        "(default: greedy-1,greedy-2,random-1,random-2)",
    )
    parser.add_argument(
        "--games-per-pairing", type=int, default=4, metavar="N", help="deals per table (default 4)"
    )
    parser.add_argument("--seed", type=int, default=1, metavar="S", help="seed (default 1)")


def _round_robin(args: argparse.Namespace) -> int:
    names = [n.strip() for n in args.games.split(",") if n.strip()]
    for name in names:
        if name not in GAMES:
            raise CliError(f"--games: unknown game '{name}': expected {', '.join(sorted(GAMES))}")
    entrants = [e.strip() for e in args.entrants.split(",") if e.strip()]
    for entrant in entrants:
        if entrant_bot(entrant) not in HOUSE_BOTS and entrant not in HOUSE_BOTS:
            raise CliError(
                f"--entrants: '{entrant}' is not a house bot ({', '.join(sorted(HOUSE_BOTS))}) "
                "with an optional '-suffix'"
            )
    if args.games_per_pairing < 1:
        raise CliError(f"--games-per-pairing: must be 1 or more, got {args.games_per_pairing}")
    if len(set(entrants)) != len(entrants):
        raise CliError(f"--entrants: names must be unique, got {args.entrants}")
    print(f"Round robin of {', '.join(entrants)}; seed {args.seed}; in-process (no referee)")
    totals: dict[str, list[int]] = {e: [0, 0] for e in entrants}
    for game in configurations(names):
        if len(entrants) < game.num_players:
            print(f"\n{game.describe()}: skipped, it needs {game.num_players} entrants")
            continue
        standings = play_configuration(
            game, entrants, seed=args.seed, games_per_pairing=args.games_per_pairing
        )
        print(f"\n{game.describe()}: {standings.games_played} games")
        print(f"  {'entrant':<16}{'games':>7}{'wins':>7}{'win %':>8}{'points':>9}")
        for row in standings.table():
            print(
                f"  {row.name:<16}{row.games:>7}{row.wins:>7}{100 * row.win_rate:>7.1f}%"
                f"{row.points:>9}"
            )
            totals[row.name][0] += row.games
            totals[row.name][1] += row.wins
    print("\nAll games")
    print(f"  {'entrant':<16}{'games':>7}{'wins':>7}{'win %':>8}")
    for name, (games, wins) in sorted(totals.items(), key=lambda kv: -kv[1][1] / max(kv[1][0], 1)):
        rate = 100 * wins / games if games else 0.0
        print(f"  {name:<16}{games:>7}{wins:>7}{rate:>7.1f}%")
    return 0


# -- serve ---------------------------------------------------------------------------------------
# The service commands import grpc, trio and SQLAlchemy inside their functions (PLC0415), so
# that play, replay and the rest start without them (see the module docstring).

DEFAULT_SERVER: Final = "127.0.0.1:50051"
"""The referee ``bot run`` and ``match run`` talk to unless told otherwise."""


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


def _db_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        default="sqlite:///domino-arena.db",
        metavar="URL",
        help="database URL (default sqlite:///domino-arena.db; "
        "PostgreSQL: postgresql://user@host/db)",
    )


def _open_storage(url: str) -> Any:
    from .storage import Storage, StorageError  # noqa: PLC0415

    storage = Storage(url)
    try:
        storage.open()
    except StorageError as exc:
        raise CliError(str(exc), code=1) from None
    return storage


def _serve(args: argparse.Namespace) -> int:
    from .app import Config, run  # noqa: PLC0415
    from .storage import display_url  # noqa: PLC0415

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
    config = Config(
        host=args.host,
        port=args.port,
        reconnect_grace=args.reconnect_grace,
        shutdown_grace=args.shutdown_grace,
    )

    def ready(port: int) -> None:
        print(f"{PROG}: database {display_url(args.db)}")
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
    play.add_argument(
        "--server",
        default=DEFAULT_SERVER,
        metavar="HOST:PORT",
        help=f"the referee (default {DEFAULT_SERVER})",
    )
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
    from .storage import BadBotNameError, DuplicateBotError, check_name  # noqa: PLC0415

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


# -- match -----------------------------------------------------------------------------------------


def _match_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="match_action", metavar="ACTION", required=True)
    play = actions.add_parser(
        "run",
        help="run one match between bots connected to a referee",
        description="Ask a referee to run one match between connected bots; print the "
        "result and optionally write the record.",
    )
    _game_arguments(play, "one connected bot per seat, seat 0 first")
    play.add_argument(
        "--server",
        default=DEFAULT_SERVER,
        metavar="HOST:PORT",
        help=f"the referee (default {DEFAULT_SERVER})",
    )
    play.add_argument("--record", metavar="FILE", help="write the match record (JSON Lines)")
    play.add_argument(
        "--time-control",
        metavar="TC",
        help="MOVE[+BANK][/GRACE], e.g. 1s+10s/50ms (default: the referee's, 1s+10s/50ms)",
    )
    play.add_argument(
        "--fault-policy",
        choices=("forfeit", "substitute"),
        help="what a fault costs (default substitute)",
    )
    play.add_argument(
        "--max-strikes",
        type=int,
        metavar="K",
        help="substitute: faults that forfeit (default 3)",
    )
    play.set_defaults(match_run=_match_run)


def _match(args: argparse.Namespace) -> int:
    run: Callable[[argparse.Namespace], int] = args.match_run
    return run(args)


def _match_run(args: argparse.Namespace) -> int:
    import grpc  # noqa: PLC0415

    from domino_arena.sdk.convert import game_to_proto  # noqa: PLC0415
    from domino_arena.v1 import admin_pb2, admin_pb2_grpc, referee_pb2  # noqa: PLC0415

    game = _game_from_args(args)
    bots = [name.strip() for name in args.bots.split(",")]
    if len(bots) != game.num_players:
        raise CliError(
            f"--bots: {game.num_players} bots are needed, one per seat ({game.describe()}), "
            f"got {len(bots)}: {args.bots}"
        )
    request = admin_pb2.RunMatchRequest(game=game_to_proto(game), bots=bots)
    if args.seed is not None:
        if args.seed < 0:
            raise CliError(f"--seed: must be 0 or more, got {args.seed}")
        request.has_seed = True
        request.seed = args.seed
    if args.time_control is not None:
        try:
            move_ms, bank_ms, grace_ms = TimeControl.parse(args.time_control).to_ms()
        except ValueError as exc:
            raise CliError(f"--time-control: {exc}") from None
        request.time_control.CopyFrom(
            referee_pb2.TimeControl(move_ms=move_ms, bank_ms=bank_ms, grace_ms=grace_ms)
        )
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
    if args.record is not None:
        _check_writable(args.record)
    with grpc.insecure_channel(args.server) as channel:
        stub = admin_pb2_grpc.AdminServiceStub(channel)
        try:
            response = stub.RunMatch(request)
        except grpc.RpcError as exc:
            raise CliError(_rpc_failure(args.server, exc), code=1) from None
    _print_match(game, bots, response)
    if args.record is not None and response.record:
        try:
            Path(args.record).write_text(response.record, encoding="utf-8")
        except OSError as exc:
            raise CliError(f"cannot write the record to {args.record}: {exc.strerror}") from None
        print(f"record written to {args.record}")
    return 0


def _rpc_failure(server: str, exc: Any) -> str:
    """One line for a failed call: unreachable referee, or its refusal and reason."""
    import grpc  # noqa: PLC0415

    code: grpc.StatusCode = exc.code()
    details: str = exc.details() or ""
    if code is grpc.StatusCode.UNAVAILABLE and "connect" in details.lower():
        return f"cannot reach the referee at {server}: {details}"
    return f"the referee at {server} answered {code.name}: {details}"


def _print_match(game: Game, bots: Sequence[str], response: Any) -> None:
    from domino_arena.v1 import referee_pb2  # noqa: PLC0415

    result = response.result
    termination = referee_pb2.Termination.Name(result.termination)
    termination = termination.removeprefix("TERMINATION_").lower()
    print(f"match {response.match_id}: {game.describe()}")
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
        _match,
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

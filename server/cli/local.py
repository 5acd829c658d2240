"""The commands that need no referee: ``play`` a game between house bots, ``replay`` a record,
list the ``games``.

They run in-process and import neither grpc, trio nor SQLAlchemy (tests/cli pins it).
"""

from __future__ import annotations

import argparse
import secrets
from collections.abc import Sequence
from typing import Final

from domino_arena.bots import (
    HOUSE_BOTS,
    UnknownBotError,
    UnsupportedGameError,
    is_bot_spec,
    player_factory,
)
from domino_arena.sdk.bot import Bot
from domino_arena.sdk.local import (
    DEFAULT_MAX_DEALS,
    BotActionError,
    play_game,
)
from domino_arena.sdk.match.notices import Step
from domino_arena.sdk.match.records import RecordError, read_record, replay, write_record
from domino_arena.sdk.match.results import MatchResult
from domino_arena.sdk.match.seeds import bot_seed
from domino_arena.sdk.rules import DEAL, GAMES, Game, GameState, HandResult, game_options, make_game
from domino_arena.sdk.stdio.exec_bot import BotReportedError, ExecBotError
from domino_arena.server.cli.arguments import (
    CliError,
    Handler,
    Handlers,
    check_writable,
    game_arguments,
    game_from_args,
    scores_text,
    seat_bots,
)

# -- play ---------------------------------------------------------------------------------------


def _play_arguments(parser: argparse.ArgumentParser) -> None:
    game_arguments(
        parser,
        f"one bot per seat, seat 0 first: a house bot ({', '.join(sorted(HOUSE_BOTS))}) or "
        "a bot of your own as MODULE:NAME, e.g. mybot.py:HeavyFirst, or a program in any "
        "language speaking the stdio protocol as exec:COMMAND, e.g. exec:./mybot",
    )
    parser.add_argument(
        "--first-seat", type=int, metavar="K", help="seat that starts (default: from the seed)"
    )
    parser.add_argument(
        "--max-deals",
        type=int,
        default=DEFAULT_MAX_DEALS,
        metavar="N",
        help=(
            "adjudicate by the scores a game nobody has won after N deals, as the referee does "
            f"(default: {DEFAULT_MAX_DEALS})"
        ),
    )
    parser.add_argument("--record", metavar="FILE", help="write the match record (JSON Lines)")
    parser.add_argument("--quiet", action="store_true", help="print only the seed and the result")


def _play(args: argparse.Namespace) -> int:
    game = game_from_args(args)
    players = game.num_players
    names = seat_bots(game, args.bots)
    seed: int = args.seed if args.seed is not None else secrets.randbelow(10**9)
    if args.max_deals < 1:
        raise CliError(f"--max-deals: must be 1 or more, got {args.max_deals}")
    if args.first_seat is not None and not 0 <= args.first_seat < players:
        raise CliError(
            f"--first-seat: {args.first_seat} is not a seat of a {players}-player game "
            f"(0 to {players - 1})"
        )
    bots = [_seat_bot(name, bot_seed(seed, seat)) for seat, name in enumerate(names)]
    names = [bot.name if is_bot_spec(spec) else spec for spec, bot in zip(names, bots, strict=True)]
    if args.record is not None:
        check_writable(args.record)
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
    except (BotActionError, ExecBotError, BotReportedError) as exc:
        raise CliError(str(exc), code=1) from None
    transcript.finish(result.result, result.record.first_seat)
    if args.record is not None:
        try:
            write_record(result.record, args.record)
        except OSError as exc:
            raise CliError(f"cannot write the record to {args.record}: {exc.strerror}") from None
        print(f"record written to {args.record}")
    return 0


def _seat_bot(spec: str, seed: int) -> Bot:
    """The bot for one seat: a house bot seeded ``seed``, or a bot of one's own (MODULE:NAME)."""
    try:
        bot = player_factory(spec, seed)()
    except UnknownBotError as exc:
        raise CliError(
            f"--bots: {exc}, or MODULE:NAME for a bot of your own, or exec:COMMAND for a program"
        ) from None
    except (ImportError, AttributeError, OSError, ValueError) as exc:
        raise CliError(f"--bots: cannot load {spec}: {type(exc).__name__}: {exc}") from None
    if not isinstance(bot, Bot):
        raise CliError(
            f"--bots: {spec} is an AsyncBot: local play takes a Bot (an AsyncBot plays "
            "through a referee: 'domino-arena round-robin' or 'bot run')"
        )
    return bot


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
                line += f"  (scores {scores_text(step.after.scores)})"
            print(line)
        for result in step.after.hand_results[len(step.before.hand_results) :]:
            self._hand_result(result, step.after.scores)

    def finish(self, result: MatchResult, first_seat: int) -> None:
        if self.quiet:
            print(f"{self.game.describe()}; seed {self.seed}, first seat {first_seat}")
        else:
            print()
        if result.outcome is not None:
            print(f"result: {result.outcome.result()}; {result.outcome.detail}")
        else:
            print(f"result: {result.detail}")
        for side, seats in enumerate(self.game.sides):
            who = ", ".join(f"seat {s} {self.names[s]}" for s in seats)
            mark = "  winner" if side == result.winner else ""
            print(f"  side {side} ({who}): {result.scores[side]}{mark}")
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
        print(f"  scores: {scores_text(scores)}")


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


HANDLERS: Final[Handlers] = {
    "play": Handler(_play_arguments, _play),
    "replay": Handler(_replay_arguments, _replay),
    "games": Handler(_games_arguments, _games),
}

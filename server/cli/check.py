"""``check`` and ``practice``: a connected bot checked by the referee, or matched against house
bots it hosts (the admin API's ``CheckBot`` and ``PracticeMatch``).

``domino-arena check NAME`` prints the same report as ``python -m domino_arena.sdk.testing``
and exits 0 when the bot passes, 1 when it fails (2 on a usage error or a refused request). It
asks the referee one game at a time, printing each on stderr as it goes (the progress), and
stops after a game whose check stopped early (the same failure again and again) or lost the bot.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Final

from domino_arena.sdk.testing import DEFAULT_POSITIONS, ComplianceReport, Failure, Problem
from domino_arena.sdk.wire import game_to_proto
from domino_arena.server.cli.admin_client import admin_call, policies, print_result
from domino_arena.server.cli.arguments import (
    CliError,
    Handler,
    Handlers,
    check_writable,
    checked_seed,
    game_arguments,
    game_from_args,
    server_arguments,
)
from domino_arena.v1 import admin_pb2


def _check_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bot", metavar="NAME", help="a bot connected to the referee")
    parser.add_argument(
        "--games", metavar="G1,G2", help="games to check (default: every game the bot plays)"
    )
    parser.add_argument(
        "--positions",
        type=int,
        default=DEFAULT_POSITIONS,
        metavar="N",
        help=f"positions per game configuration (default {DEFAULT_POSITIONS}, at most 200)",
    )
    parser.add_argument(
        "--time-limit",
        type=float,
        default=1.0,
        metavar="S",
        help="the longest an answer may take, in seconds (default 1; the referee adds 50 ms "
        "of network grace)",
    )
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="other positions")
    parser.add_argument(
        "--no-games", action="store_true", help="skip the whole games against house bots"
    )
    server_arguments(parser)


def report_of(response: admin_pb2.CheckBotResponse) -> ComplianceReport:
    """The report a CheckBot answer carries, as sdk.testing's type."""
    failures = tuple(
        Failure(
            game=f.game,
            position=f.position,
            problem=_problem(f.problem),
            message=f.message,
            returned=f.returned,
            legal=tuple(f.legal),
            seconds=f.seconds if f.has_seconds else None,
        )
        for f in response.failures
    )
    return ComplianceReport(
        bot=response.bot,
        configurations=tuple(response.configurations),
        positions=response.positions,
        games=response.games,
        time_limit=response.time_limit_ms / 1000,
        slowest=response.slowest,
        failures=failures,
        stopped=response.stopped,
    )


_PROBLEMS: Final[tuple[Problem, ...]] = (
    "raised",
    "not an action",
    "illegal",
    "too slow",
    "hook raised",
    "unfinished",
    "malformed",
    "timeout",
    "disconnected",
)


def _problem(text: str) -> Problem:
    for problem in _PROBLEMS:
        if problem == text:
            return problem
    return "malformed"  # a kind this client does not know: the referee's text says which


def _check(args: argparse.Namespace) -> int:
    if not 1 <= args.positions <= 200:
        raise CliError(f"--positions: must be 1 to 200, got {args.positions}")
    if not 0 < args.time_limit <= 600:
        raise CliError(f"--time-limit: must be more than 0 and at most 600, got {args.time_limit}")
    games = [g.strip() for g in args.games.split(",") if g.strip()] if args.games else []
    games = games or _games_of(args)
    reports: list[ComplianceReport] = []
    for index, game in enumerate(games or [""], 1):  # "": every game, in one call
        if game:
            print(f"checking '{args.bot}' in {game} ({index}/{len(games)})", file=sys.stderr)
            sys.stderr.flush()
        request = admin_pb2.CheckBotRequest(
            bot=args.bot,
            games=[game] if game else [],
            positions=args.positions,
            time_limit_ms=max(1, round(args.time_limit * 1000)),
            seed=checked_seed(args.seed) or 0,
            no_games=args.no_games,
        )
        reports.append(report_of(admin_call(args, "CheckBot", request)))
        last = reports[-1]
        if last.stopped or any(f.problem == "disconnected" for f in last.failures):
            break
    report = merged(reports)
    print(report)
    return 0 if report.passed else 1


def _games_of(args: argparse.Namespace) -> list[str]:
    """The games the connected bot ``args.bot`` plays, as the referee lists it; [] when it is not
    listed (the one CheckBot call then says why)."""
    answer = admin_call(args, "ListConnected", admin_pb2.ListConnectedRequest())
    return next((list(b.games) for b in answer.bots if b.name == args.bot), [])


def merged(reports: Sequence[ComplianceReport]) -> ComplianceReport:
    """One report of the checks of several games, in order (the last one's ``stopped``)."""
    first = reports[0]
    return ComplianceReport(
        bot=first.bot,
        configurations=tuple(c for r in reports for c in r.configurations),
        positions=sum(r.positions for r in reports),
        games=sum(r.games for r in reports),
        time_limit=first.time_limit,
        slowest=max(r.slowest for r in reports),
        failures=tuple(f for r in reports for f in r.failures),
        stopped=reports[-1].stopped,
    )


def _practice_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bot", metavar="NAME", help="a bot connected to the referee")
    game_arguments(parser, None)
    parser.add_argument(
        "--against",
        metavar="H1[,H2...]",
        help="the house bot in each other seat, in seat order (default greedy in every one; "
        "one name fills every seat)",
    )
    parser.add_argument(
        "--seat", type=int, default=0, metavar="K", help="the bot's seat (default 0)"
    )
    parser.add_argument("--record", metavar="FILE", help="write the match record (JSON Lines)")
    parser.add_argument("--time-control", metavar="TC", help="MOVE[+BANK][/GRACE], e.g. 1s+10s")
    parser.add_argument(
        "--max-deals", type=int, metavar="N", help="the cap on deals (default 1000)"
    )
    server_arguments(parser)


def _practice(args: argparse.Namespace) -> int:
    game = game_from_args(args)
    if not 0 <= args.seat < game.num_players:
        raise CliError(
            f"--seat: {game.describe()} has seats 0-{game.num_players - 1}, got {args.seat}"
        )
    against = [a.strip() for a in (args.against or "").split(",") if a.strip()]
    if len(against) == 1:
        against *= game.num_players - 1
    request = admin_pb2.PracticeMatchRequest(
        bot=args.bot, game=game_to_proto(game), opponents=against, seat=args.seat
    )
    if args.seed is not None:
        request.has_seed = True
        request.seed = checked_seed(args.seed) or 0
    args.fault_policy = args.max_strikes = None  # practice: the referee's substitute policy
    policies(args, request)
    if args.record is not None:
        check_writable(args.record)
    response = admin_call(args, "PracticeMatch", request)
    bots = list(response.bots)
    print(f"practice match {response.match_id} (unrated): {game.describe()}")
    print_result(game, bots, response.result)
    if args.record is not None and response.record:
        with open(args.record, "w", encoding="utf-8") as out:
            out.write(response.record)
        print(f"record written to {args.record}")
    return 0


HANDLERS: Final[Handlers] = {
    "check": Handler(_check_arguments, _check),
    "practice": Handler(_practice_arguments, _practice),
}

"""The competitions a referee runs, through its admin API: ``tournament create|start|pause|
cancel|status|list`` and ``ladder start|stop|list``.

This module imports the protos at the top: ``main`` imports it only when one of them runs.
"""

from __future__ import annotations

import argparse
import datetime as dt
from typing import Any, Final

from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.wire import fault_policy_from_proto, game_from_proto, game_to_proto
from domino_arena.server.cli import compare, follow
from domino_arena.server.cli.admin_client import (
    admin_call,
    console,
    enum_name,
    policies,
    policy_arguments,
    print_head_to_head,
    print_repeat_deals,
    run_action,
    subcommands,
    time_control_text,
)
from domino_arena.server.cli.arguments import (
    CliError,
    Handler,
    Handlers,
    checked_seed,
    course_argument,
    game_arguments,
    game_from_args,
    positive,
    server_arguments,
)
from domino_arena.server.cli.course_settings import (
    hosted_tournament_arguments,
    hosted_tournament_fields,
    hosted_tournament_lines,
    live_view_argument,
    live_view_of,
    live_view_text,
)
from domino_arena.server.cli.formats import format_arguments, format_fields, format_lines
from domino_arena.server.cli.grades import precision_lines
from domino_arena.server.cli.json_output import json_argument, message_json, print_json
from domino_arena.server.cli.moments import moment
from domino_arena.server.cli.tables import table
from domino_arena.server.cli.tournament_plan import plan_arguments, plan_command
from domino_arena.server.cli.tournament_rounds import rounds_arguments, rounds_command
from domino_arena.server.logs import escape
from domino_arena.server.net.wire import deal_mode_from_proto, deal_mode_to_proto
from domino_arena.server.stats.regrades import index_ranges
from domino_arena.server.tournaments.scheduler import DealMode
from domino_arena.v1 import admin_pb2

ENTRANT_POLICIES: Final = {
    "listed": admin_pb2.ENTRANT_POLICY_LISTED,
    "connected": admin_pb2.ENTRANT_POLICY_CONNECTED,
    "latest": admin_pb2.ENTRANT_POLICY_LATEST,
}

# -- tournament ------------------------------------------------------------------------------------


def _tournament_arguments(parser: argparse.ArgumentParser) -> None:
    def one_id(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("id", metavar="ID", help="the tournament's id")
        server_arguments(sub)

    def status(sub: argparse.ArgumentParser) -> None:
        one_id(sub)
        sub.add_argument(
            "--follow", action="store_true", help="show a progress bar until it stops running"
        )
        json_argument(sub, "the tournament (with --follow: once it stops running)")

    def listing(sub: argparse.ArgumentParser) -> None:
        server_arguments(sub)
        json_argument(sub, "the tournaments")

    subcommands(
        parser,
        "tournament_action",
        [
            (
                "create",
                "create a tournament (round robin, balanced, gauntlet, Swiss or knockout)",
                _tournament_create_arguments,
                _tournament_create,
            ),
            (
                "plan",
                "games, duration and precision of a tournament, before creating it",
                plan_arguments,
                plan_command,
            ),
            ("start", "start a created tournament, or resume a paused one", one_id, _t_start),
            ("pause", "start no new game; running games finish", one_id, _t_pause),
            ("cancel", "stop for good; running games are aborted", one_id, _t_cancel),
            ("status", "settings, progress and results of a tournament", status, _t_status),
            ("list", "every tournament with its state and progress", listing, _t_list),
            (
                "rounds",
                "a Swiss or knockout's rounds and bracket",
                rounds_arguments,
                rounds_command,
            ),
            (
                "regrade",
                "replay a finished tournament with bots replaced by new versions",
                _regrade_arguments,
                _t_regrade,
            ),
        ],
    )


def _tournament_create_arguments(parser: argparse.ArgumentParser) -> None:
    game_arguments(
        parser,
        "the entrants, registered bots (at least one table's worth; with --entrant-policy "
        "connected or latest, any to add to those chosen at the start)",
        bots_required=False,
    )
    server_arguments(parser)
    parser.add_argument(
        "--course",
        metavar="NAME",
        help="the course it belongs to (default: the default "
        "course; an organizer's token: its own)",
    )
    parser.add_argument(
        "--baselines",
        metavar="B1,B2",
        default="",
        help="frozen baselines of the course to seat beside the entrants (house bot names, "
        "e.g. greedy,random; docs/courses.md)",
    )
    parser.add_argument(
        "--entrant-policy",
        choices=sorted(ENTRANT_POLICIES),
        default="listed",
        help="who plays: listed (--bots, the default), connected (the course's bots connected "
        "at the start) or latest (each owner's latest bot at the start)",
    )
    parser.add_argument(
        "--start-at",
        metavar="TIME",
        help="start by itself at this time: ISO 8601 with a zone (2027-03-01T09:00Z) or in a "
        "while (+30m, +2h, +1d)",
    )
    parser.add_argument("--name", metavar="TEXT", help="its name (default: the game and date)")
    parser.add_argument(
        "--games-per-pairing", type=int, metavar="N", help="games of each pairing (default 1)"
    )
    parser.add_argument(
        "--precision",
        type=float,
        metavar="ELO",
        help="choose the games per pairing (--format balanced: per entrant) so each baseline "
        "comparison's 95%% interval (without --baselines: each rating's) is at most +-ELO "
        "(docs/courses.md: precision)",
    )
    format_arguments(parser)
    parser.add_argument(
        "--deals",
        choices=[mode.value for mode in DealMode],
        default=DealMode.DUPLICATE.value,
        help="duplicate: every deal under every seat rotation, one after another (the default); "
        "spread: the same, each deal's rotations far apart in the schedule; fresh: a new deal "
        "for every game (docs/tournaments.md: deals)",
    )
    policy_arguments(parser)
    parser.add_argument(
        "--concurrency", type=int, metavar="N", help="games at once (default: the referee's)"
    )
    parser.add_argument(
        "--wait",
        type=float,
        metavar="SECONDS",
        help="how long a game waits for absent bots (default: the referee's)",
    )
    live_view_argument(parser, "its course's")
    hosted_tournament_arguments(parser)
    parser.add_argument("--unrated", action="store_true", help="its games do not count for Elo")
    parser.add_argument("--start", action="store_true", help="start it at once")


def _tournament_create(args: argparse.Namespace) -> int:
    game = game_from_args(args)
    request = admin_pb2.CreateTournamentRequest(
        name=args.name or "",
        game=game_to_proto(game),
        entrants=[name.strip() for name in args.bots.split(",") if name.strip()],
        games_per_pairing=positive("--games-per-pairing", args.games_per_pairing) or 0,
        concurrency=positive("--concurrency", args.concurrency) or 0,
        start=args.start,
    )
    request.deals = deal_mode_to_proto(DealMode(args.deals))
    format_fields(args, request)
    if args.precision is not None:  # the referee checks the range
        if args.games_per_pairing is not None and args.format == "round-robin":
            raise CliError("--precision: it chooses the games per pairing; drop one of the two")
        if not args.precision:  # 0 would mean "not given" on the wire
            raise CliError("--precision: expected 5 to 1000 Elo, got 0")
        request.precision = args.precision
    request.course = args.course or ""
    request.baselines.extend(name.strip() for name in args.baselines.split(",") if name.strip())
    request.entrant_policy = ENTRANT_POLICIES[args.entrant_policy]
    request.live_view = live_view_of(args)
    hosted_tournament_fields(args, request)
    if args.start_at is not None:
        request.start_at.FromDatetime(moment("--start-at", args.start_at))
    if not request.entrants and args.entrant_policy == "listed":
        raise CliError("--bots: name the entrants (or choose --entrant-policy connected|latest)")
    if args.unrated:
        request.rated = False
    seed = checked_seed(args.seed)
    if seed is not None:
        request.seed = seed
    if args.wait is not None:
        if not 0 <= args.wait <= 86_400:
            raise CliError(f"--wait: must be 0 to 86400 seconds, got {args.wait:g}")
        request.wait_ms = round(args.wait * 1000)
    policies(args, request)
    t = admin_call(args, "CreateTournament", request)
    print(f"tournament {t.id} created: {escape(t.name)}")
    if args.precision is not None:
        size = f"{t.games_per_entrant} games per entrant" if t.games_per_entrant else ""
        size = size or f"{t.games_per_pairing} games per pairing"
        print(f"  sized for +-{args.precision:g} Elo: {size}")
    _print_tournament(t)
    if not args.start and not t.HasField("start_at"):
        print(f"start it with: domino-arena tournament start {t.id}")
    return 0


def _regrade_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", metavar="ID", help="the finished tournament to regrade")
    parser.add_argument(
        "--replace",
        action="append",
        required=True,
        metavar="OLD=NEW",
        help="a bot of the tournament and its new version; may be repeated",
    )
    parser.add_argument("--name", metavar="TEXT", help="its name (default: the original's)")
    parser.add_argument(
        "--fresh-deals",
        action="store_true",
        help="play the new versions' games on new deals: the original's are public, and a new "
        "version could be tuned to them (carried games keep theirs)",
    )
    parser.add_argument("--start", action="store_true", help="start it at once")
    server_arguments(parser)


def _t_regrade(args: argparse.Namespace) -> int:
    request = admin_pb2.RegradeTournamentRequest(
        tournament_id=args.id, start=args.start, name=args.name or "", fresh_deals=args.fresh_deals
    )
    for index, text in enumerate(args.replace):
        old, sep, new = (part.strip() for part in text.partition("="))
        if not sep or not old or not new:
            raise CliError(f"--replace #{index + 1}: expected OLD=NEW, got {text!r}")
        request.replace.add(bot=old, by=new)
    t = admin_call(args, "RegradeTournament", request)
    print(f"tournament {t.id} created: {escape(t.name)}")
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
    request = getattr(admin_pb2, f"{method}Request")(tournament_id=args.id)
    t = admin_call(args, method, request)
    print(f"tournament {escape(t.id)}: {done}; {_progress_text(t)}")
    return 0


def _t_status(args: argparse.Namespace) -> int:
    request = admin_pb2.GetTournamentRequest(tournament_id=args.id)
    t = admin_call(args, "GetTournament", request)
    comparison = t.kind == admin_pb2.TOURNAMENT_KIND_COMPARE
    if args.follow and t.state == admin_pb2.TOURNAMENT_STATE_RUNNING:
        if comparison:
            t = compare.follow_comparison(args, t, live=not args.json)
        else:
            t = follow.follow_tournament(args, request, t, live=not args.json)
    if args.json:
        print_json({"tournament": message_json(t)})
        return 0
    print(f"tournament {escape(t.id)}: {escape(t.name)}")
    _print_tournament(t)
    if comparison:
        compare.print_plan(t)
        compare.print_comparison(t)
    else:
        _print_results(t)
    return 0


def _progress_text(t: Any) -> str:
    state = enum_name(admin_pb2.TournamentState, t.state, "TOURNAMENT_STATE_")
    p = t.progress
    text = f"{state}, {p.done}/{p.total} games"
    if p.running or p.waiting:
        text += f" ({p.running} running, {p.waiting} waiting for bots)"
    return text


def _deals_text(value: admin_pb2.DealMode.ValueType) -> str:
    mode = deal_mode_from_proto(value)
    return "unknown deals" if mode is None else f"{mode} deals"


def _print_tournament(t: Any) -> None:
    game = game_from_proto(t.game)
    policy = fault_policy_from_proto(t.fault_policy)
    strikes = f" after {t.max_strikes} strikes" if policy is FaultPolicy.SUBSTITUTE else ""
    pairing = f"{t.games_per_pairing} game{'s' if t.games_per_pairing > 1 else ''} per pairing"
    print(f"  {game.describe()}: {_progress_text(t)}")
    if t.course:
        print(f"  course: {escape(t.course)}")
    print("  live view: " + live_view_text(t.live_view, "the course's"))
    policy_name = enum_name(admin_pb2.EntrantPolicy, t.entrant_policy, "ENTRANT_POLICY_")
    entrants = escape(", ".join(t.entrants))
    if policy_name != "listed" and t.state == admin_pb2.TOURNAMENT_STATE_CREATED:
        chosen = {"connected": "the course's bots connected", "latest": "each owner's latest bot"}
        entrants = f"{chosen.get(policy_name, policy_name)} at the start" + (
            f", with {entrants}" if entrants else ""
        )
    print(f"  entrants: {entrants}")
    if t.baselines:
        print(f"  frozen baselines: {escape(', '.join(t.baselines))}")
    if t.HasField("start_at"):
        print(f"  starts by itself at {t.start_at.ToDatetime(dt.UTC):%Y-%m-%d %H:%M:%S} UTC")
    lines = [*format_lines(t), *regrade_lines(t), *precision_lines(t)]
    for line in [*lines, *hosted_tournament_lines(t)]:
        print(f"  {line}")
    print(f"  {pairing}, {_deals_text(t.deals)}, {'rated' if t.rated else 'unrated'}")
    print(f"  {_seed_text(t)}")
    print(
        f"  time control {time_control_text(t.time_control)}, {policy}{strikes}; "
        f"{t.concurrency} at once; waits {t.wait_ms / 1000:g} s for absent bots; "
        f"adjudicated after {t.max_deals} deals without a winner"
    )


def regrade_lines(t: Any) -> list[str]:
    """A regrade's lines: what it replaced, on whose deals, and which games it carried over
    (the carried games are known once it has started: ``GetTournament``)."""
    if not t.regrade_of:
        return []
    replaced = ", ".join(f"{r.bot} by {r.by}" for r in t.replaced)
    deals = "on fresh deals" if t.fresh_deals else "on the original's deals"
    lines = [f"regrade of {t.regrade_of}: replaced {replaced}; played again {deals}"]
    if t.carried:
        lines.append(
            f"carried over unplayed from {t.regrade_of}: {len(t.carried)} games "
            f"({index_ranges(t.carried)}), counted once when graded with it"
        )
    return lines


def _seed_text(t: Any) -> str:
    """The master seed once revealed, else its commitment (docs/tournaments.md: provable deals)."""
    if not t.HasField("seed"):
        return f"seed commitment {t.seed_commitment or '(none)'}; the seed is shown when it ends"
    if not t.seed_commitment:
        return f"seed {t.seed} (deal scheme {t.deal_scheme}, no commitment)"
    return (
        f"seed {t.seed}, salt {t.seed_salt}, commitment {t.seed_commitment}; "
        f"check with: domino-arena verify {t.id}"
    )


def _print_results(t: Any) -> None:
    if not t.results:
        return
    out = console()
    out.print(
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
                    (r.performance_text or "-") + (" (provisional)" if r.provisional else ""),
                )
                for rank, r in enumerate(t.results, start=1)
            ),
        )
    )
    if t.crosstable:
        entrants = [r.bot for r in t.results]
        print_head_to_head(out, "crosstable (wins-draws-losses)", t.crosstable, entrants)
    print_repeat_deals(out, t.repeat_deals)


def _t_list(args: argparse.Namespace) -> int:
    response = admin_call(args, "ListTournaments", admin_pb2.ListTournamentsRequest())
    if args.json:
        print_json(message_json(response))
        return 0
    if not response.tournaments:
        print("no tournaments")
        return 0
    console().print(
        table(
            None,
            ["id", "name", "game", "state", "done", "total", "entrants", "live view", "created"],
            (
                (
                    t.id,
                    t.name,
                    game_from_proto(t.game).describe(),
                    enum_name(admin_pb2.TournamentState, t.state, "TOURNAMENT_STATE_"),
                    t.progress.done,
                    t.progress.total,
                    len(t.entrants),
                    live_view_text(t.live_view, "course's"),
                    f"{t.created.ToDatetime():%Y-%m-%d %H:%M}",
                )
                for t in response.tournaments
            ),
        )
    )
    return 0


# -- ladder ----------------------------------------------------------------------------------------


def _ladder_arguments(parser: argparse.ArgumentParser) -> None:
    def start(sub: argparse.ArgumentParser) -> None:
        game_arguments(sub, None)
        server_arguments(sub)
        policy_arguments(sub)
        sub.add_argument(
            "--concurrency", type=int, metavar="N", help="ladder games at once (default 4)"
        )
        course_argument(sub, "the course whose connected bots it pairs")

    def listing(sub: argparse.ArgumentParser) -> None:
        server_arguments(sub)
        course_argument(sub, "only this course's ladders")
        json_argument(sub, "the running ladders")

    def stop(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("game", metavar="GAME", help="the game whose ladder stops")
        server_arguments(sub)
        course_argument(sub, "the ladder's course")

    subcommands(
        parser,
        "ladder_action",
        [
            ("start", "keep pairing connected bots of GAME into rated games", start, _l_start),
            ("stop", "stop the ladder of GAME; its running games finish", stop, _l_stop),
            ("list", "the running ladders", listing, _l_list),
        ],
    )


def _l_start(args: argparse.Namespace) -> int:
    game = game_from_args(args)
    request = admin_pb2.StartLadderRequest(
        game=game_to_proto(game),
        concurrency=positive("--concurrency", args.concurrency) or 0,
        course=args.course,
    )
    seed = checked_seed(args.seed)
    if seed is not None:
        request.seed = seed
    policies(args, request)
    ladder = admin_call(args, "StartLadder", request)
    print(
        f"{game.name} ladder started: {game.describe()}, {ladder.concurrency} games at once, "
        f"time control {time_control_text(ladder.time_control)}, seed {ladder.seed}, "
        f"adjudicated after {ladder.max_deals} deals"
    )
    return 0


def _l_stop(args: argparse.Namespace) -> int:
    admin_call(args, "StopLadder", admin_pb2.StopLadderRequest(game=args.game, course=args.course))
    print(f"{args.game} ladder stopping: its running games finish")
    return 0


def _l_list(args: argparse.Namespace) -> int:
    response = admin_call(args, "ListLadders", admin_pb2.ListLaddersRequest(course=args.course))
    if args.json:
        print_json(message_json(response))
        return 0
    if not response.ladders:
        print("no ladder is running")
        return 0
    console().print(
        table(
            None,
            ["game", "concurrency", "time control", "fault policy", "started", "finished"],
            (
                (
                    game_from_proto(x.game).describe(),
                    x.concurrency,
                    time_control_text(x.time_control),
                    str(fault_policy_from_proto(x.fault_policy)),
                    x.started,
                    x.finished,
                )
                for x in response.ladders
            ),
        )
    )
    return 0


HANDLERS: Final[Handlers] = {
    "tournament": Handler(_tournament_arguments, run_action),
    "ladder": Handler(_ladder_arguments, run_action),
}

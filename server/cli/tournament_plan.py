"""``domino-arena tournament plan``: a tournament's games, duration and precision before it is
created, with no referee (server/tournaments/planner.py; docs/tournaments.md: Planning a
tournament)."""

from __future__ import annotations

import argparse

from domino_arena.server.cli.arguments import CliError, game_arguments, game_from_args, positive
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.tournaments import planner


def plan_arguments(parser: argparse.ArgumentParser) -> None:
    game_arguments(parser, None)
    parser.add_argument(
        "--format", choices=planner.FORMATS, default="round-robin", help="the format to size"
    )
    parser.add_argument("--entrants", type=int, required=True, metavar="N", help="entrants")
    parser.add_argument(
        "--games-per-entrant",
        type=int,
        metavar="G",
        help="balanced or gauntlet: games each entrant plays (default 100; a gauntlet: one "
        "table per baseline combination); swiss without --rounds: rounded up to whole rounds",
    )
    parser.add_argument("--rounds", type=int, metavar="N", help="swiss: the rounds it plays")
    parser.add_argument(
        "--sets", type=int, default=1, metavar="N", help="knockout: sets each tie plays (1)"
    )
    parser.add_argument(
        "--max-sets", type=int, metavar="N", help="knockout: the most sets of a level tie"
    )
    parser.add_argument(
        "--precision",
        type=float,
        metavar="ELO",
        help="balanced, gauntlet or swiss: choose the games per entrant for a 95%% half-width "
        "of ELO",
    )
    parser.add_argument(
        "--games-per-pairing", type=int, default=1, metavar="N", help="deals per table"
    )
    parser.add_argument(
        "--baselines", type=int, default=3, metavar="K", help="gauntlet: baselines (default 3)"
    )
    parser.add_argument(
        "--concurrency", type=int, default=8, metavar="C", help="games at once (default 8)"
    )
    parser.add_argument(
        "--time-control",
        metavar="TC",
        default="1s+10s/50ms",
        help="MOVE[+BANK][/GRACE]: the move time bounds a thinking bot's game (default 1s)",
    )


def plan_command(args: argparse.Namespace) -> int:
    game = game_from_args(args)
    seats = game.num_players
    partnerships = len(game.sides) != seats
    try:
        move = TimeControl.parse(args.time_control).move
    except ValueError as error:
        raise CliError(f"--time-control: {error}") from error
    games_per_entrant = positive("--games-per-entrant", args.games_per_entrant)
    try:
        if args.precision is not None:
            if games_per_entrant is not None:
                raise CliError("--precision: it chooses the games per entrant; drop one of the two")
            if args.format in ("round-robin", "knockout"):
                raise CliError(
                    f"--precision: a {args.format}'s size is not chosen by precision; use "
                    "--format balanced"
                )
            games_per_entrant = planner.games_per_entrant_for(
                args.format,
                args.game,
                args.entrants,
                args.precision,
                seats=seats,
                partnerships=partnerships,
                games_per_pairing=args.games_per_pairing,
            )
        result = planner.plan(
            args.format,
            args.game,
            args.entrants,
            seats=seats,
            partnerships=partnerships,
            games_per_entrant=games_per_entrant,
            games_per_pairing=args.games_per_pairing,
            baselines=args.baselines,
            concurrency=args.concurrency,
            move_seconds=move,
            rounds=positive("--rounds", args.rounds),
            sets=args.sets,
            max_sets=args.max_sets,
        )
    except ValueError as error:
        raise CliError(str(error)) from error
    for line in result.lines():
        print(line)
    return 0

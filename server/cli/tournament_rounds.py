"""``domino-arena tournament rounds``: a Swiss or knockout tournament's rounds as the referee
seated them, each table's results, the byes, and a knockout's bracket and champion
(``GetTournament``'s ``played_rounds`` and ``bracket``; docs/tournaments.md: Swiss, knockout).
"""

from __future__ import annotations

import argparse
from typing import Any

from domino_arena.server.cli.admin_client import admin_call, console
from domino_arena.server.cli.arguments import CliError, server_arguments
from domino_arena.server.cli.json_output import json_argument, message_json, print_json
from domino_arena.server.cli.tables import table
from domino_arena.server.logs import escape
from domino_arena.server.tournaments.rounds import ADAPTIVE_FORMATS
from domino_arena.v1 import admin_pb2


def rounds_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", metavar="ID", help="the Swiss or knockout tournament's id")
    server_arguments(parser)
    json_argument(parser, "the rounds (and a knockout's bracket)")


def rounds_command(args: argparse.Namespace) -> int:
    """Print the rounds of a Swiss or knockout tournament.

    Raises:
        CliError: the tournament is of another format (it has no rounds).
    """
    request = admin_pb2.GetTournamentRequest(tournament_id=args.id)
    t = admin_call(args, "GetTournament", request)
    if t.format not in ADAPTIVE_FORMATS:
        raise CliError(
            f"tournament {escape(t.id)} is {t.format or 'round-robin'}: only a Swiss or knockout "
            "tournament plays rounds (its tables: domino-arena tournament status)"
        )
    if args.json:
        document: dict[str, Any] = {
            "tournament_id": t.id,
            "format": t.format,
            "rounds": [message_json(r) for r in t.played_rounds],
        }
        if t.HasField("bracket"):
            document["bracket"] = message_json(t.bracket)
        print_json(document)
        return 0
    planned = f" of {t.rounds}" if t.format == "swiss" else ""
    print(f"tournament {escape(t.id)}: {escape(t.name)}, {t.format}")
    if not t.played_rounds:
        print(f"  no round seated yet{planned and f' ({t.rounds} planned)'}")
    out = console()
    for r in t.played_rounds:  # the heading apart: a table's title wraps at its width
        print(
            f"round {r.number}{planned}: games {r.first_game}-{r.first_game + r.games - 1}, "
            f"{r.games_stored}/{r.games} stored"
        )
        out.print(
            table(
                None,
                ["table", "bot", "points", "score", "games"],
                (
                    (number if seat == 0 else "", entrant, f"{points:g}", score, table_.games)
                    for number, table_ in enumerate(r.tables, start=1)
                    for seat, (entrant, points, score) in enumerate(
                        zip(table_.entrants, table_.points, table_.score, strict=True)
                    )
                ),
            )
        )
        if r.byes:
            print(f"  byes: {escape(', '.join(r.byes))}")
    if t.HasField("bracket"):
        print_bracket(out, t.bracket)
    return 0


def print_bracket(out: Any, bracket: admin_pb2.KnockoutBracket) -> None:
    """A knockout's stages, each tie with who went out and what decided it, then the champion."""
    final = bool(bracket.champion)
    for number, stage in enumerate(bracket.stages, start=1):
        print(f"stage {number}" + (" (final)" if stage is bracket.stages[-1] and final else ""))
        out.print(
            table(
                None,
                ["tie", "entrants", "sets", "out", "decided by"],
                (
                    (
                        index,
                        ", ".join(tie.entrants),
                        tie.sets,
                        ", ".join(tie.out) or "-",
                        tie.decided_by or "undecided",
                    )
                    for index, tie in enumerate(stage.ties, start=1)
                ),
            )
        )
    if bracket.champion:
        print(f"champion: {escape(bracket.champion)}")
        print(f"final order: {escape(', '.join(bracket.final_order))}")
    else:
        print("champion: not decided yet")

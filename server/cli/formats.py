"""``tournament create --format round-robin|balanced|gauntlet|swiss|knockout`` with its size
(``--games-per-entrant``, ``--rounds``, ``--sets``, ``--max-sets``) and seeding (``--seeding``,
``--seeding-from``), and the format's lines of ``tournament status`` (docs/tournaments.md:
formats, Swiss, knockout).

The referee checks the values (INVALID_ARGUMENT naming the field); here only what the wire
cannot say: a size below 1 (0 means "not given" there).
"""

from __future__ import annotations

import argparse
from typing import Any, Final

from domino_arena.server.cli.arguments import CliError
from domino_arena.server.logs import escape
from domino_arena.server.tournaments.rounds import ADAPTIVE_FORMATS
from domino_arena.v1 import admin_pb2

FORMATS: Final = ("round-robin", "balanced", "gauntlet", "swiss", "knockout")


def format_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="round-robin",
        help="round-robin: every table of the entrants (the default; refused above 50,000 "
        "games); balanced: each entrant at as many tables, every pair meeting as equally often "
        "as the size allows (--games-per-entrant or --precision); gauntlet: each entrant "
        "against the --baselines only; swiss: --rounds rounds, each seating entrants of like "
        "results together; knockout: ties of --sets duplicate sets until one champion "
        "(docs/tournaments.md: formats)",
    )
    parser.add_argument(
        "--games-per-entrant",
        type=int,
        metavar="N",
        help="balanced, gauntlet: the games each entrant plays, rounded up to whole tables "
        "(every seat rotation on each deal; a gauntlet's default: every baseline combination "
        "once; a swiss without --rounds: rounded up to whole rounds)",
    )
    parser.add_argument("--rounds", type=int, metavar="N", help="swiss: the rounds it plays")
    parser.add_argument(
        "--sets",
        type=int,
        metavar="N",
        help="knockout: the duplicate sets each tie plays at least (default 1)",
    )
    parser.add_argument(
        "--max-sets",
        type=int,
        metavar="N",
        help="knockout: while a tie is level, more sets up to N (default --sets; then the "
        "better seed goes through)",
    )
    parser.add_argument(
        "--seeding",
        metavar="A,B,...",
        help="swiss, knockout: every entrant of --bots once, best first",
    )
    parser.add_argument(
        "--seeding-from",
        metavar="TOURNAMENT",
        help="swiss, knockout: seed by that tournament's official standings (those it ranks "
        "first, in its order, then the others in --bots order)",
    )


def format_fields(args: argparse.Namespace, request: admin_pb2.CreateTournamentRequest) -> None:
    """Put ``--format``, its size and its seeding in a CreateTournament request."""
    request.format = args.format
    for flag, field in (
        ("--games-per-entrant", "games_per_entrant"),
        ("--rounds", "rounds"),
        ("--sets", "knockout_sets"),
        ("--max-sets", "knockout_max_sets"),
    ):
        value = getattr(args, flag[2:].replace("-", "_"))
        if value is not None:
            if value < 1:
                raise CliError(f"{flag}: must be at least 1, got {value}")
            setattr(request, field, value)
    if args.seeding is not None:
        request.seeding.extend(name.strip() for name in args.seeding.split(",") if name.strip())
    request.seeding_from = args.seeding_from or ""


def format_lines(t: Any) -> list[str]:
    """The format of a tournament and, for a balanced or gauntlet one, its size and the
    balance its design reached."""
    if t.format in ("", "round-robin"):
        return ["format: round robin (every table of the entrants)"]
    if t.format in ADAPTIVE_FORMATS:
        return adaptive_lines(t)
    lines = [f"format: {t.format}, {t.games_per_entrant} games per entrant"]
    if t.balance:
        lines.append(f"balance: {t.balance}")
    return lines


def adaptive_lines(t: Any) -> list[str]:
    """A Swiss's round (r of R), a knockout's sets per tie, stage and champion (the rounds
    and the bracket are known from ``GetTournament``), and the seeding."""
    played = len(t.played_rounds)
    if t.format == "swiss":
        lines = [f"format: swiss, round {played} of {t.rounds}"]
    else:
        sets = f"{t.knockout_sets} set{'s' if t.knockout_sets > 1 else ''} a tie"
        if t.knockout_max_sets > t.knockout_sets:
            sets += f", up to {t.knockout_max_sets} while level"
        lines = [f"format: knockout, {sets}"]
        if t.HasField("bracket"):
            stages = len(t.bracket.stages)
            if t.bracket.champion:
                lines.append(f"champion: {escape(t.bracket.champion)} (after {stages} stages)")
            else:
                lines.append(f"stage {stages}, round {played}")
    if t.seeding:
        lines.append(f"seeding: {escape(', '.join(t.seeding))}")
    return lines

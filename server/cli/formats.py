"""``tournament create --format round-robin|balanced|gauntlet --games-per-entrant N`` and the
format's lines of ``tournament status`` (docs/tournaments.md: formats).

The referee checks the values (INVALID_ARGUMENT naming the field); here only what the wire
cannot say: a games per entrant below 1.
"""

from __future__ import annotations

import argparse
from typing import Any, Final

from domino_arena.server.cli.arguments import CliError
from domino_arena.v1 import admin_pb2

FORMATS: Final = ("round-robin", "balanced", "gauntlet")


def format_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="round-robin",
        help="round-robin: every table of the entrants (the default; refused above 50,000 "
        "games); balanced: each entrant at as many tables, every pair meeting as equally often "
        "as the size allows (--games-per-entrant or --precision); gauntlet: each entrant "
        "against the --baselines only (docs/tournaments.md: formats)",
    )
    parser.add_argument(
        "--games-per-entrant",
        type=int,
        metavar="N",
        help="balanced, gauntlet: the games each entrant plays, rounded up to whole tables "
        "(every seat rotation on each deal; a gauntlet's default: every baseline combination "
        "once)",
    )


def format_fields(args: argparse.Namespace, request: admin_pb2.CreateTournamentRequest) -> None:
    """Put ``--format`` and ``--games-per-entrant`` in a CreateTournament request."""
    request.format = args.format
    if args.games_per_entrant is not None:
        if args.games_per_entrant < 1:
            raise CliError(f"--games-per-entrant: must be at least 1, got {args.games_per_entrant}")
        request.games_per_entrant = args.games_per_entrant


def format_lines(t: Any) -> list[str]:
    """The format of a tournament and, for a balanced or gauntlet one, its size and the
    balance its design reached."""
    if t.format in ("", "round-robin"):
        return ["format: round robin (every table of the entrants)"]
    lines = [f"format: {t.format}, {t.games_per_entrant} games per entrant"]
    if t.balance:
        lines.append(f"balance: {t.balance}")
    return lines

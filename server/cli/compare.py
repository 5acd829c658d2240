"""``domino-arena compare A B GAME``: is A better than B? A paired comparison on a referee.

The referee plays duplicate sets (server/tournaments/lifecycle/compare.py) and, with ``--sprt``,
stops by itself when the SPRT decides; this command creates the comparison, follows it with the LLR
and its bounds live, and prints the verdict. Interrupting the command leaves the comparison running
on the referee (``tournament status ID --follow`` picks it up again), as a comparison survives a
referee restart like any tournament.

This module imports the protos at the top: ``main`` imports it only when ``compare`` runs.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any, Final

from domino_arena.sdk.wire import game_from_proto, game_to_proto
from domino_arena.server.cli import follow
from domino_arena.server.cli.admin_client import (
    admin_call,
    console,
    enum_name,
    policies,
    policy_arguments,
)
from domino_arena.server.cli.arguments import (
    CliError,
    Handler,
    Handlers,
    checked_seed,
    game_arguments,
    game_from_args,
    positive,
    server_arguments,
)
from domino_arena.server.cli.json_output import json_argument, message_json, print_json
from domino_arena.server.cli.tables import table
from domino_arena.server.logs import escape
from domino_arena.v1 import admin_pb2


def _compare_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("candidate", metavar="A", help="the bot under test (registered)")
    parser.add_argument("baseline", metavar="B", help="the bot it is compared with (registered)")
    game_arguments(parser, None)
    server_arguments(parser)
    parser.add_argument(
        "--opponents",
        metavar="C[,D...]",
        help="one bot per other seat for 3-4 seats (A and B each sit in every seat of every "
        "deal against them); none: head to head, two-seat games only",
    )
    parser.add_argument(
        "--sprt",
        metavar="ELO0,ELO1[,ALPHA,BETA]",
        help="stop when the SPRT decides between H0 'A is ELO0 better' and H1 'A is ELO1 "
        "better' (alpha and beta default to 0.05), e.g. 0,10",
    )
    parser.add_argument(
        "--sets", type=int, metavar="N", help="duplicate sets at most (default 1000)"
    )
    policy_arguments(parser)
    parser.add_argument("--concurrency", type=int, metavar="N", help="games at once (default 4)")
    parser.add_argument("--name", metavar="TEXT", help="its name (default 'A vs B')")
    parser.add_argument("--rated", action="store_true", help="its games count for the ladder")
    parser.add_argument(
        "--no-follow", action="store_true", help="create and start it, then return at once"
    )
    json_argument(parser, "the final state")


def sprt_bounds_of(text: str) -> admin_pb2.SprtBounds:
    """``"0,10"`` or ``"0,10,0.05,0.1"`` as the request's bounds (the referee checks ranges)."""
    parts = [part.strip() for part in text.split(",")]
    if len(parts) not in (2, 4):
        raise CliError(
            f"--sprt: expected ELO0,ELO1 or ELO0,ELO1,ALPHA,BETA, got {len(parts)} values: {text!r}"
        )
    try:
        values = [float(part) for part in parts]
    except ValueError:
        raise CliError(f"--sprt: expected numbers, got {text!r}") from None
    if not all(math.isfinite(value) for value in values):
        raise CliError(f"--sprt: expected finite numbers, got {text!r}")
    bounds = admin_pb2.SprtBounds(elo0=values[0], elo1=values[1])
    if len(values) == 4:
        bounds.alpha, bounds.beta = values[2], values[3]
        if not (0 < bounds.alpha < 0.5 and 0 < bounds.beta < 0.5):
            raise CliError(f"--sprt: alpha and beta must be between 0 and 0.5, got {text!r}")
    return bounds


def _compare(args: argparse.Namespace) -> int:
    game = game_from_args(args)
    request = admin_pb2.CreateComparisonRequest(
        name=args.name or "",
        game=game_to_proto(game),
        candidate=args.candidate,
        baseline=args.baseline,
        opponents=[n.strip() for n in (args.opponents or "").split(",") if n.strip()],
        max_sets=positive("--sets", args.sets) or 0,
        concurrency=positive("--concurrency", args.concurrency) or 0,
        rated=args.rated,
        start=True,
    )
    if args.sprt is not None:
        request.sprt.CopyFrom(sprt_bounds_of(args.sprt))
    seed = checked_seed(args.seed)
    if seed is not None:
        request.seed = seed
    policies(args, request)
    t = admin_call(args, "CreateComparison", request)
    if not args.json:
        described = game_from_proto(t.game).describe()
        print(f"comparison {t.id} started: {escape(t.name)}, {described}")
        print_plan(t)
    if not args.no_follow:
        try:
            t = follow_comparison(args, t, live=not args.json)
        except KeyboardInterrupt:
            print(
                f"\nstill running on the referee: domino-arena tournament status {t.id} --follow",
                file=sys.stderr,
            )
            return 130
    if args.json:
        print_json(comparison_json(t))
    else:
        print_comparison(t)
    return 0


def follow_comparison(args: argparse.Namespace, t: Any, *, live: bool = True) -> Any:
    """Follow ``t`` until it stops running, the progress line showing the LLR and its bounds."""
    request = admin_pb2.GetTournamentRequest(tournament_id=t.id)
    return follow.follow_tournament(args, request, t, describe=progress_text, live=live)


def progress_text(t: Any) -> str:
    """One line of a comparison's state: sets, Elo, and the LLR against its bounds."""
    c = t.comparison
    text = f"{c.sets} sets, Elo {_signed(c.estimate.elo)}"
    if c.HasField("sprt"):
        text += f", LLR {c.llr:+.2f} [{c.lower:+.2f}, {c.upper:+.2f}]"
    return text


def print_plan(t: Any) -> None:
    """The comparison's design and stopping rule, as ``tournament status`` shows it."""
    c = t.comparison
    design = (
        f"against {escape(', '.join(c.opponents))} (A and B in every seat of each deal)"
        if c.opponents
        else "head to head (game pairs with seats swapped)"
    )
    print(f"  {escape(c.candidate)} (A) vs {escape(c.baseline)} (B), {design}")
    if c.HasField("sprt"):
        s = c.sprt
        print(
            f"  SPRT H0: {_signed(s.elo0)} Elo, H1: {_signed(s.elo1)} Elo, alpha {s.alpha:g}, "
            f"beta {s.beta:g}: stops when the LLR leaves [{c.lower:+.2f}, {c.upper:+.2f}]; "
            f"at most {c.max_sets} sets"
        )
    else:
        print(f"  {c.max_sets} duplicate sets, no SPRT")


VERDICT_WORDS: Final = {
    admin_pb2.COMPARISON_VERDICT_RUNNING: "running",
    admin_pb2.COMPARISON_VERDICT_H0: "H0 accepted: A is not better than B by the SPRT's elo1",
    admin_pb2.COMPARISON_VERDICT_H1: "H1 accepted: A is better than B",
    admin_pb2.COMPARISON_VERDICT_INCONCLUSIVE: (
        "inconclusive: every set played, the LLR still between its bounds"
    ),
    admin_pb2.COMPARISON_VERDICT_DONE: "done: every set played",
}


def print_comparison(t: Any) -> None:
    """The verdict, the paired estimate and the distribution of set scores."""
    c = t.comparison
    state = enum_name(admin_pb2.TournamentState, t.state, "TOURNAMENT_STATE_")
    print(f"{escape(t.name)}: {state}; {VERDICT_WORDS.get(c.verdict, 'unknown')}")
    e = c.estimate
    excluded = f" ({c.excluded_sets} left out: a game voided or aborted)" if c.excluded_sets else ""
    print(f"  {c.sets} complete duplicate sets{excluded}, {t.progress.done} games")
    if c.sets:
        print(
            f"  A - B: {_signed(e.elo)} Elo (95% {_signed(e.elo_low)} to {_signed(e.elo_high)}), "
            f"normalized {_signed(e.nelo)} ({_signed(e.nelo_low)} to {_signed(e.nelo_high)}), "
            f"LOS {e.los:.1%}, mean set score {e.score:.3f}"
        )
    if c.HasField("sprt"):
        print(f"  LLR {c.llr:+.2f}, bounds [{c.lower:+.2f}, {c.upper:+.2f}]")
    if c.distribution:
        console().print(
            table(
                "set scores of A",
                ["score", "sets", "share"],
                (
                    (f"{d.score:g}", d.count, f"{d.count / max(c.sets, 1):.1%}")
                    for d in c.distribution
                ),
            )
        )


def comparison_json(t: Any) -> dict[str, Any]:
    """The JSON of ``compare --json``: the tournament's id, name and state, and the comparison
    message's fields by their proto names (stable as the proto is; docs/admin.md)."""
    comparison = message_json(t.comparison)
    return {
        "id": t.id,
        "name": t.name,
        "state": enum_name(admin_pb2.TournamentState, t.state, "TOURNAMENT_STATE_"),
        "games": t.progress.done,
        "comparison": comparison,
    }


def _signed(value: float) -> str:
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return f"{value:+.1f}"


HANDLERS: Final[Handlers] = {"compare": Handler(_compare_arguments, _compare)}

"""``domino-arena standings GAME``: the official standings (one batch fit, with 95% intervals,
the seat advantage and, with ``--los``, the likelihood-of-superiority matrix), then the live Elo
ladder; ``--tournament ID`` fits one tournament's games; ``--json`` for scripts.

This module imports the protos at the top: ``main`` imports it only when ``standings`` runs.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from typing import Any, Final

from domino_arena.sdk.rules import GAMES
from domino_arena.server.cli.admin_client import (
    admin_call,
    console,
    print_head_to_head,
    print_repeat_deals,
)
from domino_arena.server.cli.arguments import (
    CliError,
    Handler,
    Handlers,
    course_argument,
    server_arguments,
)
from domino_arena.server.cli.json_output import json_argument, message_json, print_json
from domino_arena.server.cli.tables import standings_table, table
from domino_arena.v1 import admin_pb2

NOT_FITTED: Final = "FAILED_PRECONDITION: "
"""How the referee says the games cannot be fitted yet (no counted games yet)."""


def _standings_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "game",
        metavar="GAME",
        nargs="?",
        help=f"the game: {', '.join(sorted(GAMES))} (optional with --tournament)",
    )
    parser.add_argument(
        "--tournament", metavar="ID", help="the official standings of this tournament's games"
    )
    parser.add_argument(
        "--players", type=int, metavar="N", help="which pool: N-seat games (default: most games)"
    )
    parser.add_argument("--partners", action="store_true", help="the 4-seat partnership pool")
    parser.add_argument(
        "--anchor",
        metavar="BOT[=RATING]",
        help="hold BOT at RATING (default 1500) instead of a pool mean of 1500",
    )
    parser.add_argument(
        "--rounds", type=int, metavar="N", help="bootstrap rounds (default 200, at most 2000)"
    )
    parser.add_argument(
        "--los", action="store_true", help="also the likelihood-of-superiority matrix"
    )
    parser.add_argument(
        "--elo-only", action="store_true", help="only the live Elo ladder (no batch fit)"
    )
    parser.add_argument(
        "--head-to-head", action="store_true", help="also each pair's wins-draws-losses"
    )
    parser.add_argument(
        "--repeat-deals",
        action="store_true",
        help="also each bot's repeat-deal check (does it do better on deals it has seen?)",
    )
    json_argument(parser)
    server_arguments(parser)
    course_argument(parser, "only this course's bots and games (and the house baselines)")


def standings_request(args: argparse.Namespace) -> admin_pb2.GetStandingsRequest:
    """The request the arguments ask for (checked here where the referee's words would be
    about fields the user did not type)."""
    if not args.game and not args.tournament:
        raise CliError("GAME: name a game, or a tournament with --tournament ID")
    request = admin_pb2.GetStandingsRequest(
        game=args.game or "",
        head_to_head=args.head_to_head,
        repeat_deals=args.repeat_deals,
        batch=not args.elo_only,
        tournament_id=args.tournament or "",
        los=args.los,
        players=args.players or (4 if args.partners else 0),
        partnerships=args.partners,
        course=args.course,
    )
    if args.rounds is not None:
        if not 1 <= args.rounds <= 2000:
            raise CliError(f"--rounds: must be 1 to 2000, got {args.rounds}")
        request.bootstrap_rounds = args.rounds
    if args.anchor:
        bot, _, rating = args.anchor.partition("=")
        request.anchor = bot
        if rating:
            try:
                request.anchor_rating = float(rating)
            except ValueError:
                raise CliError(
                    f"--anchor: expected BOT or BOT=RATING, got {args.anchor!r}"
                ) from None
            if not math.isfinite(request.anchor_rating):
                raise CliError(f"--anchor: the rating must be finite, got {rating!r}")
    return request


def _standings(args: argparse.Namespace) -> int:
    request = standings_request(args)
    note = ""
    try:
        response = admin_call(args, "GetStandings", request)
    except CliError as exc:
        text = str(exc)
        if not request.batch or NOT_FITTED not in text or request.tournament_id:
            raise
        note = text.split(NOT_FITTED, 1)[1]
        request.batch = False
        response = admin_call(args, "GetStandings", request)
    if args.json:
        answer = message_json(response)
        if note:
            answer["batch_error"] = note
        print_json(answer)
        return 0
    out = console()
    if response.HasField("batch"):
        print_batch(out, response.batch, los=args.los)
    elif note:
        print(f"no official standings yet: {note}")
    if args.tournament:
        return 0
    if not response.rows:
        print(f"no rated {response.game} games yet")
        return 0
    title = f"{response.game}: live Elo ladder (not the official standings)"
    out.print(standings_table(title, ((r.bot, r) for r in response.rows)))
    if args.head_to_head and response.head_to_head:
        print_head_to_head(out, "head to head (wins-draws-losses)", response.head_to_head)
    if args.repeat_deals:
        print_repeat_deals(out, response.repeat_deals)
    return 0


def print_batch(out: Any, batch: admin_pb2.BatchStandings, *, los: bool) -> None:
    """The batch fit's table, its seat advantage line, the pair table and the LOS matrix."""
    if batch.fixed:
        anchor = "frozen baselines " + ", ".join(f"{b.bot} at {b.rating:g}" for b in batch.fixed)
    elif batch.anchor:
        anchor = f"{batch.anchor} held at {batch.anchor_rating:g}"
    else:
        anchor = "pool mean 1500"
    title = (
        f"{batch.pool}: official standings ({batch.model}; {_count(batch.games, 'game')}, "
        f"{batch.sets} "
        f"duplicate sets, {batch.rounds} bootstrap rounds; {anchor})"
    )
    print(title)
    print_official(out, batch.rows)
    seats = [f"{s.label}: {s.elo:+.0f} ({s.low:+.0f} to {s.high:+.0f})" for s in batch.seats]
    sides = any(s.seat == 0 for s in batch.seats)  # a partnership pool: the sides' difference
    against = "the other side" if sides else "the first starter's seat"
    if seats:
        print(f"seat advantage, Elo against {against} (95%): " + "; ".join(seats))
    if batch.pairs:
        print("pairs: how each partnership did against what its members' ratings predict")
        out.print(
            table(
                None,
                ["first", "second", "games", "score", "expected", "beyond"],
                (
                    (
                        p.first,
                        p.second,
                        p.games,
                        f"{p.score:.3f}",
                        f"{p.expected:.3f}",
                        f"{p.score - p.expected:+.3f}",
                    )
                    for p in batch.pairs
                ),
            )
        )
    if los and batch.los:
        names = [row.bot for row in batch.los]
        print("likelihood of superiority: P(row better than column)")
        out.print(
            table(
                None,
                ["bot", *names],
                (
                    (
                        row.bot,
                        *(
                            "-" if a == b else f"{v:.2f}"
                            for b, v in zip(names, row.los, strict=True)
                        ),
                    )
                    for a, row in zip(names, batch.los, strict=True)
                ),
            )
        )
    if batch.other_pools:
        print(f"other pools: {', '.join(batch.other_pools)} (choose with --players/--partners)")


def print_official(out: Any, rows: Sequence[admin_pb2.BatchRow]) -> None:
    """The official table (``official.official_rows``' rows, as ``BatchRow`` messages): the
    ranked bots, then, below, the provisional and unbounded ones, unranked; a one-sided rating
    shows as "≥ 2100" or "≤ 900" and its note says why (docs/ratings.md)."""
    ranked = [r for r in rows if r.rank]
    others = [r for r in rows if not r.rank]
    columns = ["#", "bot", "Elo", "95% low", "95% high", "games"]
    noted = any(r.note for r in ranked)
    if ranked:
        out.print(
            table(
                None,
                [*columns, "note"] if noted else columns,
                (
                    (r.rank, r.bot, r.rating_text, _elo(r.low), _elo(r.high), r.games)
                    + ((r.note,) if noted else ())
                    for r in ranked
                ),
            )
        )
    else:
        print("no bot is ranked yet")
    if others:
        print("not ranked (provisional or unbounded: see each note; docs/ratings.md)")
        out.print(
            table(
                None,
                ["bot", "Elo", "95% low", "95% high", "games", "note"],
                (
                    (r.bot, r.rating_text, _elo(r.low), _elo(r.high), r.games, r.note)
                    for r in others
                ),
            )
        )


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _elo(value: float) -> str:
    return "-" if math.isinf(value) else f"{value:.0f}"


HANDLERS: Final[Handlers] = {"standings": Handler(_standings_arguments, _standings)}

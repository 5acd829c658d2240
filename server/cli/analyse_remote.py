"""``domino-arena analyse ... --server HOST:PORT``: the analyses through the referee's admin API
(GetAnalysis, AnalyseMatch, AnalyseTournament in admin.proto; docs/admin.md: analyses).

For an organizer without access to the database: the token is the admin's or the course's
organizer token, as for every admin command. ``analyse MATCH_ID --server`` prints the stored
analysis when there is one (as ``analyse --db`` prints its own), else queues the match for the
referee's analysis workers and says so; ``--again`` queues it whatever is stored. A match
whose analysis is queued, running or failed is the referee's FAILED_PRECONDITION, with its
state or error (exit 2; ``--again`` retries a failed one). ``analyse --tournament ID
--server`` queues the tournament's matches and prints its progress, as ``--db`` does.

This module imports grpc and the protos at the top: ``analyse`` imports it only with
``--server``.
"""

from __future__ import annotations

import argparse

import grpc

from domino_arena.server.cli.admin_client import admin_call
from domino_arena.server.cli.analyse import print_analysis, print_progress
from domino_arena.server.cli.arguments import CliError
from domino_arena.server.cli.json_output import message_json, print_json
from domino_arena.server.net.analysis_wire import analysis_from_proto
from domino_arena.v1 import admin_pb2


def remote(args: argparse.Namespace) -> int:
    """Run ``analyse`` through the admin API at ``args.server``.

    Raises:
        CliError: an option the referee's workers do not take, or the referee's refusal.
    """
    if args.game_precision is not None:
        raise CliError(
            "--game-precision: not with --server (the referee's workers analyse each decision "
            "to --precision); use --db"
        )
    if args.tournament is not None:
        return _tournament(args)
    match_id: str = args.match_id
    if not args.again:
        request = admin_pb2.GetAnalysisRequest(match_id=match_id)
        found = admin_call(args, "GetAnalysis", request, absent=(grpc.StatusCode.NOT_FOUND,))
        if found is not None:
            print_analysis(analysis_from_proto(found), as_json=args.json)
            return 0
    seats = [] if args.seat is None else [args.seat]
    queue = admin_pb2.AnalyseMatchRequest(match_id=match_id, seats=seats, precision=args.precision)
    status = admin_call(args, "AnalyseMatch", queue)
    if args.json:
        print_json(message_json(status))
        return 0
    print(
        f"match {status.match_id}: queued for the referee's analysis workers (precision "
        f"{status.precision:g}); run this again to read its analysis once it is done"
    )
    return 0


def _tournament(args: argparse.Namespace) -> int:
    request = admin_pb2.AnalyseTournamentRequest(
        tournament_id=args.tournament, precision=args.precision
    )
    progress = admin_call(args, "AnalyseTournament", request)
    if args.json:
        print_json(message_json(progress))
        return 0
    print_progress(
        progress.tournament_id,
        (progress.analysed, progress.total),
        progress.queued_now,
        (progress.waiting, progress.running, progress.failed),
        [(f.match_id, f.error) for f in progress.failures],
    )
    return 0

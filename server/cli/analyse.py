"""``domino-arena analyse``: a stored match's decisions analysed, or a tournament's progress.

``analyse MATCH_ID`` reads the match's record from the database (``--db``, as ``verify --db``
does), analyses it in one worker process (server/analysis/service/pool.py: the engine never runs in
the command's own process), stores the analysis (a seat analysed again replaces its earlier
one) and prints each evaluated decision and each seat's summary; ``--json`` prints the
analysis as ``MatchAnalysis.to_json`` writes it (docs/analysis.md).

``analyse --tournament ID`` queues the tournament's matches that are neither analysed nor
queued for the referee's analysis workers (docs/admin.md: analyses) and prints how many are
analysed of how many. A bad match id, seat or precision is one line naming the flag, exit 2.

With ``--server HOST:PORT`` (and the admin or an organizer token) it asks the referee's admin
API instead of reading a database (:mod:`.analyse_remote`): the analysis runs in the referee's
workers, never here.
"""

from __future__ import annotations

import argparse
import json
import math
from typing import TYPE_CHECKING, Any, Final

from domino_arena.server.cli.arguments import (
    CliError,
    Handler,
    Handlers,
    db_argument,
    server_arguments,
    server_extra,
)

if TYPE_CHECKING:
    from domino_arena.server.analysis.report import MatchAnalysis

DEFAULT_PRECISION: Final = 0.05
"""The analysis' default target standard error, in points (the pool's DEFAULT_PRECISION)."""

_DECISION_COLUMNS: Final = ("step", "seat", "phase", "chosen", "best", "loss", "severity")
_SUMMARY_COLUMNS: Final = ("seat", "name", "decisions", "mean loss", "accuracy", "severities")


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "match_id", nargs="?", metavar="MATCH_ID", help="the stored match to analyse"
    )
    parser.add_argument(
        "--seat",
        type=int,
        metavar="K",
        help="analyse only seat K (from 0; default: every seat)",
    )
    parser.add_argument(
        "--precision",
        type=float,
        default=DEFAULT_PRECISION,
        metavar="P",
        help="target standard error, in points, of each decision's loss (default "
        f"{DEFAULT_PRECISION}; larger is faster)",
    )
    parser.add_argument(
        "--game-precision",
        type=float,
        metavar="G",
        help="instead: target standard error, in points, of each seat's mean loss per decision "
        "over the match; samples go to the decisions where they narrow it most",
    )
    parser.add_argument(
        "--tournament",
        metavar="ID",
        help="instead of a match: queue this tournament's matches not analysed yet for the "
        "referee's analysis workers, and print how many are analysed",
    )
    parser.add_argument(
        "--again",
        action="store_true",
        help="with --server: queue the match again even if an analysis is stored or queued",
    )
    parser.add_argument("--json", action="store_true", help="print the analysis as JSON")
    db_argument(parser)
    server_arguments(parser, instead_of="the database (--db)")


def _run(args: argparse.Namespace) -> int:
    precision: float = args.precision
    if not (precision > 0 and math.isfinite(precision)):
        raise CliError(f"--precision: expected a number of points above 0, got {precision:g}")
    game_precision: float | None = args.game_precision
    if game_precision is not None and not (game_precision > 0 and math.isfinite(game_precision)):
        raise CliError(
            f"--game-precision: expected a number of points above 0, got {game_precision:g}"
        )
    if (args.match_id is None) == (args.tournament is None):
        raise CliError("give a MATCH_ID or --tournament ID (one of them)")
    if args.tournament is not None and game_precision is not None:
        raise CliError("--game-precision: a tournament's matches are analysed per decision")
    if args.tournament is not None and args.seat is not None:
        raise CliError("--seat: a tournament's matches are analysed for every seat")
    if args.tournament is not None and args.again:
        raise CliError("--again: a tournament's failed matches are queued again anyway")
    if args.server is not None:
        from domino_arena.server.cli.analyse_remote import remote  # noqa: PLC0415

        return remote(args)
    if args.again:
        raise CliError("--again: only with --server (a local analysis always runs again)")
    with server_extra("analyse"):
        from domino_arena.server.cli.storage_open import open_storage  # noqa: PLC0415
    storage = open_storage(args.db)
    try:
        if args.tournament is not None:
            return _tournament(storage.engine, args)
        return _match(storage.engine, args)
    finally:
        storage.close()


def _match(engine: Any, args: argparse.Namespace) -> int:
    from domino_arena.server.analysis.service.pool import AnalysisPool, AnalysisRequest  # noqa: PLC0415
    from domino_arena.server.store.analyses import in_duplicate_set, save_analysis  # noqa: PLC0415
    from domino_arena.server.store.matches import match  # noqa: PLC0415

    match_id: str = args.match_id
    found = match(engine, match_id)
    if found is None:
        raise CliError(f"MATCH_ID: no stored match has id {match_id!r} in the database {args.db}")
    if found.record is None:
        raise CliError(f"MATCH_ID: match {match_id} was stored without a record: nothing to read")
    seats = None
    if args.seat is not None:
        if not 0 <= args.seat < len(found.seats):
            raise CliError(
                f"--seat: match {match_id} has seats 0 to {len(found.seats) - 1}, got {args.seat}"
            )
        seats = (args.seat,)
    request = AnalysisRequest(
        match_id=match_id,
        record=found.record,
        seats=seats,
        precision=args.precision,
        game_precision=args.game_precision,
        pars=in_duplicate_set(engine, match_id),
    )
    with AnalysisPool(workers=1, queue=0) as pool:
        try:
            analysis = pool.run(request)
        except ValueError as exc:  # a record that does not replay: the analysis names the step
            raise CliError(f"match {match_id}: {exc}") from None
    save_analysis(engine, analysis)
    print_analysis(analysis, as_json=args.json)
    return 0


def print_analysis(analysis: MatchAnalysis, *, as_json: bool) -> None:
    """Print ``analysis``: its decisions and each seat's summary, or its JSON."""
    if as_json:
        print(json.dumps(analysis.to_json(), indent=2, sort_keys=True))
        return
    from domino_arena.server.cli.admin_client import console  # noqa: PLC0415
    from domino_arena.server.cli.tables import table  # noqa: PLC0415

    out = console()
    decisions = [
        (
            d.step,
            d.seat,
            d.phase,
            d.chosen,
            d.best,
            f"{d.loss_points:.2f}",
            "" if d.severity is None else d.severity.value,
        )
        for d in analysis.decisions
    ]
    out.print(table(f"match {analysis.match_id}: decisions", _DECISION_COLUMNS, decisions))
    summaries = [
        (
            s.seat,
            s.name,
            s.decisions,
            f"{s.mean_loss_points:.3f}",
            f"{s.accuracy:.1f}",
            ", ".join(f"{k} {v}" for k, v in sorted(s.severities.items()) if v) or "none",
        )
        for s in analysis.summaries
    ]
    out.print(table("seats", _SUMMARY_COLUMNS, summaries))


def _tournament(engine: Any, args: argparse.Namespace) -> int:
    from domino_arena.server.store import analysis_jobs  # noqa: PLC0415
    from domino_arena.server.store.tournaments import tournament  # noqa: PLC0415

    tournament_id: str = args.tournament
    if tournament(engine, tournament_id) is None:
        raise CliError(
            f"--tournament: no tournament has id {tournament_id!r} in the database {args.db}"
        )
    queued = analysis_jobs.queue_tournament(engine, tournament_id, precision=args.precision)
    status = analysis_jobs.tournament_status(engine, tournament_id)
    jobs = status.jobs
    if args.json:
        document = {
            "tournament_id": tournament_id,
            "analysed": status.analysed,
            "total": status.total,
            "queued": queued,
            "jobs": jobs,
            "failed": [{"match_id": j.match_id, "error": j.error} for j in status.failed],
        }
        print(json.dumps(document, indent=2, sort_keys=True))
        return 0
    print_progress(
        tournament_id,
        (status.analysed, status.total),
        queued,
        (jobs[analysis_jobs.PENDING], jobs[analysis_jobs.RUNNING], jobs[analysis_jobs.FAILED]),
        [(job.match_id, job.error) for job in status.failed],
    )
    return 0


def print_progress(
    tournament_id: str,
    analysed: tuple[int, int],
    queued: int,
    jobs: tuple[int, int, int],
    failures: list[tuple[str, str]],
) -> None:
    """Print how far a tournament's analysis has got: ``analysed`` (of all), ``queued`` now,
    the jobs waiting, running and failed, and the failures (match id, error)."""
    waiting, running, failed = jobs
    print(
        f"tournament {tournament_id}: {analysed[0]} of {analysed[1]} matches analysed; queued "
        f"now {queued}; waiting {waiting}, running {running}, failed {failed}"
    )
    for match_id, error in failures:
        print(f"  {match_id} failed: {error}")


HANDLERS: Final[Handlers] = {"analyse": Handler(_arguments, _run)}

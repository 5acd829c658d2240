"""``domino-arena grades TOURNAMENT_ID...``: the gradebook of finished tournaments, as CSV (what
a teacher pastes into a spreadsheet) or JSON, on stdout or into a file (docs/ratings.md: grades).

One CSV row per owner's bot: its rank, rating with its 95% interval, record and faults, then for
each frozen baseline six columns ``vs_<baseline>_score``, ``_elo``, ``_low``, ``_high``, ``_p``
and ``_verdict``. JSON is the ``Grades`` answer by its proto names (``format`` 1).

This module imports the protos at the top: ``main`` imports it only when ``grades`` runs.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import math
import sys
from collections.abc import Iterator
from typing import Final, TextIO

from domino_arena.server.cli.admin_client import admin_call
from domino_arena.server.cli.arguments import CliError, Handler, Handlers, server_arguments
from domino_arena.server.cli.json_output import message_json, print_json
from domino_arena.v1 import admin_pb2

COLUMNS: Final = (
    "owner",
    "bot",
    "rank",
    "rating",
    "rating_low",
    "rating_high",
    "games",
    "wins",
    "draws",
    "losses",
    "faults",
    "points",
)
"""The columns of every row, before each baseline's six."""
BASELINE_COLUMNS: Final = ("score", "elo", "low", "high", "p", "verdict")
_FORMULA_START: Final = ("=", "+", "-", "@", "\t", "\r")
"""A text cell starting so is read as a formula by spreadsheets: such text is quoted with '."""


def _grades_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "tournament_ids",
        metavar="TOURNAMENT_ID",
        nargs="+",
        help="finished tournaments of one course and one game, graded together",
    )
    parser.add_argument(
        "--format", choices=("csv", "json"), default="csv", help="csv (the default) or json"
    )
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE, not stdout")
    parser.add_argument(
        "--anonymous", action="store_true", help="aliases (Student 1, Bot 1) instead of names"
    )
    parser.add_argument(
        "--rounds", type=int, metavar="N", help="bootstrap rounds (default 200, at most 2000)"
    )
    server_arguments(parser)


def grades_request(args: argparse.Namespace) -> admin_pb2.GetGradesRequest:
    """The request the arguments ask for."""
    request = admin_pb2.GetGradesRequest(
        tournament_ids=args.tournament_ids, anonymous=args.anonymous
    )
    if args.rounds is not None:
        if not 1 <= args.rounds <= 2000:
            raise CliError(f"--rounds: must be 1 to 2000, got {args.rounds}")
        request.bootstrap_rounds = args.rounds
    return request


def _grades(args: argparse.Namespace) -> int:
    response: admin_pb2.Grades = admin_call(args, "GetGrades", grades_request(args))
    with _output(args.output) as out:
        if args.format == "json":
            with contextlib.redirect_stdout(out):
                print_json(message_json(response))
        else:
            write_csv(out, response)
    return 0


@contextlib.contextmanager
def _output(path: str | None) -> Iterator[TextIO]:
    """stdout, or ``path`` written whole once the document is complete (a refusal or a failed
    write leaves no half file behind)."""
    if path is None:
        yield sys.stdout
        return
    buffer = io.StringIO()
    yield buffer
    try:
        with open(path, "w", encoding="utf-8", newline="") as file:
            file.write(buffer.getvalue())
    except OSError as exc:
        raise CliError(f"-o: cannot write {path!r}: {exc.strerror or exc}", 1) from None


def csv_header(grades: admin_pb2.Grades) -> list[str]:
    """The header row: :data:`COLUMNS`, then ``vs_<baseline>_<column>`` for each baseline."""
    return [
        *COLUMNS,
        *(f"vs_{b.bot}_{column}" for b in grades.baselines for column in BASELINE_COLUMNS),
    ]


def csv_rows(grades: admin_pb2.Grades) -> list[list[str]]:
    """One row per owner's bot, as :func:`csv_header` names the columns."""
    rows = []
    for g in grades.grades:
        row = [
            _text(g.owner),
            _text(g.bot),
            str(g.rank),
            _number(g.rating, 1),
            _number(g.rating_low, 1),
            _number(g.rating_high, 1),
            str(g.games),
            str(g.wins),
            str(g.draws),
            str(g.losses),
            str(g.faults),
            f"{g.points:g}",
        ]
        against = {b.baseline: b for b in g.baselines}
        for baseline in grades.baselines:
            b = against.get(baseline.bot)
            if b is None:
                row += [""] * len(BASELINE_COLUMNS)
                continue
            row += [
                _number(b.score, 3),
                _number(b.elo, 1),
                _number(b.elo_low, 1),
                _number(b.elo_high, 1),
                f"{b.p_value:.3g}",
                _text(b.verdict),
            ]
        rows.append(row)
    return rows


def write_csv(out: TextIO, grades: admin_pb2.Grades) -> None:
    """The gradebook as CSV: the header, then the rows."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(csv_header(grades))
    writer.writerows(csv_rows(grades))


def _number(value: float, digits: int) -> str:
    """A number with ``digits`` decimals (never "-0.0"); empty for an unbounded interval end."""
    if not math.isfinite(value):
        return ""
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def _text(value: str) -> str:
    """A text cell, bounded, and never read as a spreadsheet formula."""
    value = value[:200]
    return "'" + value if value.startswith(_FORMULA_START) else value


HANDLERS: Final[Handlers] = {"grades": Handler(_grades_arguments, _grades)}

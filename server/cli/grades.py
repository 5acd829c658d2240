"""``domino-arena grades TOURNAMENT_ID...``: the gradebook of finished tournaments, as CSV (what
a teacher pastes into a spreadsheet), JSON, or a gradebook CSV for Canvas and Moodle, on stdout
or into a file (docs/ratings.md: grades; docs/courses.md: grade scales, gradebook import).

The CSV carries every field of a JSON row (``OwnerGrade``): one row per owner's bot (or one
"no submission" row for an owner without one), its columns the proto field names, then for each
frozen baseline one ``vs_<baseline>_<field>`` column per ``BaselineResult`` field. JSON is the
``Grades`` answer by its proto names (``format`` 1). The gradebook has one row per owner.

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
from domino_arena.server.stats.grade_scale import NO_SUBMISSION
from domino_arena.v1 import admin_pb2

COLUMNS: Final = (
    "owner",
    "bot",
    "status",
    "grade",
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
    "analysed_games",
    "mean_loss",
    "accuracy",
)
"""The columns of every row, before each baseline's: ``OwnerGrade``'s fields but ``baselines``."""
BASELINE_COLUMNS: Final = (
    "games",
    "sets",
    "score",
    "elo",
    "elo_low",
    "elo_high",
    "los",
    "p_value",
    "verdict",
)
"""Each baseline's columns, ``vs_<baseline>_<field>``: ``BaselineResult``'s fields but
``baseline``."""
GRADEBOOK_HEADER: Final = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
"""The gradebook's columns before the score: Canvas's own export's; the owner is the student
and the ``SIS Login ID`` (the id Canvas matches, and Moodle maps), the rest left empty."""
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
        "--format",
        choices=("csv", "json", "gradebook"),
        default="csv",
        help="csv (the default), json, or gradebook: one row per student, a student id and a "
        "score column, for Canvas and Moodle (docs/courses.md)",
    )
    parser.add_argument(
        "--scale",
        metavar="SCALE",
        help="grades, best first, by baselines beaten or rating cut-offs: "
        "'A:beats greedy,B:beats random,C' or 'A:1600,B:1500,C:1400,F' (docs/courses.md)",
    )
    parser.add_argument(
        "--assignment",
        metavar="NAME",
        default="Domino Arena",
        help="the gradebook's score column (default 'Domino Arena')",
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
        tournament_ids=args.tournament_ids, anonymous=args.anonymous, scale=args.scale or ""
    )
    if args.scale is not None and not args.scale.strip():
        raise CliError("--scale: expected GRADE:RULE entries, e.g. 'A:beats greedy,B:1500,C'")
    if not args.assignment.strip() or len(args.assignment) > 100:
        raise CliError("--assignment: expected a column name of 1-100 characters")
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
        elif args.format == "gradebook":
            write_gradebook(out, response, args.assignment.strip())
        else:
            write_csv(out, response)
    for line in [*regrade_lines(response), *thin_lines(response)]:
        print(line, file=sys.stderr)
    return 0


def thin_lines(grades: admin_pb2.Grades) -> list[str]:
    """A warning when some comparison against a baseline has fewer than two duplicate sets: its
    interval is clamped at the ends and its verdict "not significant" by construction."""
    graded = [g for g in grades.grades if g.status != NO_SUBMISSION]
    thin = [g for g in graded if any(b.sets < 2 for b in g.baselines)]
    if not thin:
        return []
    return [
        f"warning: {len(thin)} of {len(graded)} bots have fewer than 2 duplicate sets against a "
        "baseline: those comparisons have no interval (their Elo is clamped at the ends) and "
        "say 'not significant' whatever the games; grade a bigger tournament (tournament "
        "create --precision, docs/courses.md: precision)"
    ]


def precision_lines(t: admin_pb2.Tournament) -> list[str]:
    """What a graded tournament's grades are expected to be worth, before it is played
    (docs/courses.md: precision); nothing for a tournament without the numbers."""
    if not t.HasField("precision"):
        return []
    p = t.precision
    lines = [
        f"expected precision (95% intervals at equal strength, for {p.entrants} entrants with "
        f"the baselines; sd per game {p.sd_per_game:.2f}, docs/courses.md): rating "
        f"{_half_width(p.rating_half_width)} per entrant ({p.games_per_entrant} games), "
        f"{_half_width(p.baseline_half_width)} per baseline comparison "
        f"({p.sets_per_baseline} duplicate set{'' if p.sets_per_baseline == 1 else 's'}); "
        f"{p.games} games in all"
    ]
    if p.warning:
        lines.append(f"warning: {p.warning}; size it with --precision {p.threshold:g}")
    return lines


def _half_width(value: float) -> str:
    return "no interval" if not math.isfinite(value) else f"+-{value:.0f} Elo"


def regrade_lines(grades: admin_pb2.Grades) -> list[str]:
    """One line per regrade graded: what it replaced, what it carried, what counted once."""
    lines = []
    for note in grades.regrades:
        replaced = ", ".join(f"{r.bot} by {r.by}" for r in note.replaced)
        line = (
            f"regrade {note.tournament_id} of {note.regrade_of}: replaced {replaced}; "
            f"{note.carried} games carried over unplayed"
        )
        if note.counted_once:
            line += f", {note.counted_once} of them graded once, as the original's games"
        lines.append(line)
    return lines


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
    """One row per owner's bot, as :func:`csv_header` names the columns (a "no submission"
    row: its numbers empty)."""
    rows = []
    for g in grades.grades:
        if g.status == NO_SUBMISSION:
            head = [_text(g.owner), "", g.status, ""]
            rows.append(head + [""] * (len(csv_header(grades)) - len(head)))
            continue
        row = [
            _text(g.owner),
            _text(g.bot),
            g.status,
            _text(g.grade),
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
            *_analysed(g),
        ]
        against = {b.baseline: b for b in g.baselines}
        for baseline in grades.baselines:
            b = against.get(baseline.bot)
            if b is None:
                row += [""] * len(BASELINE_COLUMNS)
                continue
            row += [
                str(b.games),
                str(b.sets),
                _number(b.score, 3),
                _number(b.elo, 1),
                _number(b.elo_low, 1),
                _number(b.elo_high, 1),
                _number(b.los, 3),
                f"{b.p_value:.3g}",
                _text(b.verdict),
            ]
        rows.append(row)
    return rows


def _analysed(g: admin_pb2.OwnerGrade) -> list[str]:
    """The analysis columns of a row: empty when none of its games was analysed."""
    if not g.analysed_games:
        return ["", "", ""]
    return [str(g.analysed_games), _number(g.mean_loss, 3), _number(g.accuracy, 1)]


def write_csv(out: TextIO, grades: admin_pb2.Grades) -> None:
    """The gradebook as CSV: the header, then the rows."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(csv_header(grades))
    writer.writerows(csv_rows(grades))


def gradebook_rows(grades: admin_pb2.Grades, assignment: str) -> list[list[str]]:
    """The header and one row per owner: the student's id (the owner) and their score.

    The score is the scale's grade, else the rating rounded; an owner with several bots
    (versions, or an original and its regrade) scores by their best: the best grade of the
    scale, then the higher rating. "no submission", or no rule met: an empty score.
    """
    order = {grade: index for index, grade in enumerate(_scale_grades(grades.scale))}
    best: dict[str, admin_pb2.OwnerGrade] = {}
    for g in grades.grades:
        if not g.owner:
            continue  # a bot without an owner is nobody's grade

        def key(row: admin_pb2.OwnerGrade) -> tuple[bool, int, float]:
            graded = row.status != NO_SUBMISSION
            return (graded, -order.get(row.grade, len(order)), row.rating if graded else 0.0)

        if g.owner not in best or key(g) > key(best[g.owner]):
            best[g.owner] = g
    rows = [[*GRADEBOOK_HEADER, _text(assignment)]]
    for owner in sorted(best):
        g = best[owner]
        if g.status == NO_SUBMISSION:
            score = ""
        elif grades.scale:
            score = _text(g.grade)
        else:
            score = str(round(g.rating))
        rows.append([_text(owner), "", "", _text(owner), "", score])
    return rows


def write_gradebook(out: TextIO, grades: admin_pb2.Grades, assignment: str) -> None:
    """The gradebook CSV Canvas and Moodle import (:func:`gradebook_rows`)."""
    csv.writer(out, lineterminator="\n").writerows(gradebook_rows(grades, assignment))


def _scale_grades(scale: str) -> list[str]:
    """The grades of a scale as the referee echoed it, best first."""
    return [entry.partition(":")[0].strip() for entry in scale.split(",")] if scale else []


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

"""A match's analysis on the replay viewer: pure data from a :class:`MatchAnalysis` (no I/O, no
markup; ``templates/analysis_macros.html`` draws it).

- The **evaluation strip** under the timeline (:func:`strip`): one row per analysed seat, a bar
  at each of its decisions as tall as the points it lost there (scaled to the match's worst),
  coloured by severity; a severe one also carries a mark. Every bar is a link ``?step=N`` with
  its text as title ("chose play 6-4 E; play 5-5 W was better: -3.2 points, -12% win"), so it
  works without JavaScript (``static/replay.js`` follows the links in place).
- The **seat figures** beside the seats' names (:func:`seat_figures`): accuracy, mean loss and
  the count of each severity.
- The **decision at the shown step** (:func:`decisions_at`), the line the step's panel shows.

Decision ``step`` is taken in the position after ``step`` steps (server/analysis/report.py),
so its bar sits on the timeline's step ``step`` and its link shows the position the seat chose
in. The analysis is read for stored, finished matches only: the live pages never call this.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from domino_arena.server.analysis.report import Decision, MatchAnalysis, SeatSummary, Severity
from domino_arena.server.web.seat_names import seat_label

ROW: Final = 36
"""Pixels a seat's row of the strip takes: its label above, its bars (and their marks) below."""
BASE: Final = ROW - 4
"""Pixels from a row's top to the line its bars stand on."""
BAR_MAX: Final = 16
"""Pixels of the tallest bar (the match's largest loss)."""
BAR_MIN: Final = 2
"""Pixels of a bar of no loss (the decision is still marked)."""
MINUS: Final = "\u2212"
SEVERITIES: Final = (Severity.BLUNDER, Severity.MISTAKE, Severity.INACCURACY)
"""Worst first: the order the figures count them in."""
PLURAL: Final = {
    Severity.BLUNDER: "blunders",
    Severity.MISTAKE: "mistakes",
    Severity.INACCURACY: "inaccuracies",
}


def signed(value: float, digits: int = 1) -> str:
    """``value`` with a real minus sign (U+2212: "-3.2" typeset), as a loss is written."""
    text = f"{abs(value):.{digits}f}"
    return f"{MINUS}{text}" if round(abs(value), digits) > 0 else text


def loss_text(d: Decision) -> str:
    """What a decision cost: "chose play 6-4 E; play 5-5 W was better: -3.2 points, -12%
    win", or "chose play 6-4 E, the best" when it was (actions in their notation, docs/rules.md)."""
    if d.chosen == d.best or (d.loss_points <= 0 and d.loss_win <= 0):
        return f"chose {d.chosen}, the best"
    win = signed(100 * d.loss_win, 0)
    return f"chose {d.chosen}; {d.best} was better: {signed(d.loss_points)} points, {win}% win"


def who(seat: int, seats: Sequence[str]) -> str:
    """A seat as the pages name it (``alice (seat 1)``)."""
    return seat_label(seats[seat], seat) if seat < len(seats) else f"seat {seat}"


def decision_title(d: Decision, seats: Sequence[str]) -> str:
    """A decision's full line: step, seat, phase, what it cost and its severity."""
    severity = "" if d.severity is None else f" ({d.severity.value})"
    return f"Step {d.step}, {who(d.seat, seats)}, {d.phase}: {loss_text(d)}{severity}"


def severity_counts(summary: SeatSummary) -> list[dict[str, Any]]:
    """The seat's count of each severity it has, worst first."""
    return [
        {"severity": s.value, "count": n, "text": f"{n} {PLURAL[s] if n != 1 else s.value}"}
        for s in SEVERITIES
        if (n := summary.severities.get(s.value, 0))
    ]


def seat_figures(analysis: MatchAnalysis) -> dict[int, dict[str, Any]]:
    """Each analysed seat's figures by seat: ``accuracy`` (0 to 100), ``mean_loss`` (points
    lost per decision), ``decisions`` and ``counts`` (:func:`severity_counts`)."""
    return {
        s.seat: {
            "accuracy": s.accuracy,
            "mean_loss": s.mean_loss_points,
            "decisions": s.decisions,
            "counts": severity_counts(s),
        }
        for s in analysis.summaries
    }


def decisions_at(analysis: MatchAnalysis, step: int, seats: Sequence[str]) -> list[dict[str, Any]]:
    """The decisions taken in the position after ``step`` steps (one, in these games), each
    with its seat's name, its ``text`` (:func:`loss_text`) and severity."""
    return [
        {
            "seat": d.seat,
            "who": who(d.seat, seats),
            "phase": d.phase,
            "text": loss_text(d),
            "severity": None if d.severity is None else d.severity.value,
        }
        for d in analysis.decisions
        if d.step == step
    ]


def _bar(d: Decision, x: int, top: int, scale: float, seats: Sequence[str]) -> dict[str, Any]:
    height = BAR_MIN + round((BAR_MAX - BAR_MIN) * min(max(d.loss_points, 0.0) / scale, 1.0))
    return {
        "step": d.step,
        "x": x,
        "y": top + BASE - height,
        "height": height,
        "severity": None if d.severity is None else d.severity.value,
        "severe": d.severity in (Severity.MISTAKE, Severity.BLUNDER),
        "title": decision_title(d, seats),
    }


def strip(
    analysis: MatchAnalysis, timeline: Mapping[str, Any], seats: Sequence[str]
) -> dict[str, Any]:
    """The evaluation strip drawn under ``timeline`` (:func:`.timeline.timeline`'s data, whose
    positions it shares: step ``s`` is at ``pad + s * unit``): its ``top`` and ``height`` in the
    timeline's drawing, a ``rows`` entry per analysed seat (its ``label``, its top ``y``, the
    ``base`` its bars stand on, and ``bars``), and
    the severe decisions as ``mistakes`` (each with its ``title``), in step order."""
    top: int = timeline["height"]
    unit: int = timeline["unit"]
    pad: int = timeline["pad"]
    total: int = timeline["total"]
    shown = [d for d in analysis.decisions if 0 <= d.step <= total]
    scale = max([d.loss_points for d in shown] + [1.0])
    rows = []
    for i, seat in enumerate(analysis.seats):
        y = top + i * ROW
        bars = [_bar(d, pad + d.step * unit, y, scale, seats) for d in shown if d.seat == seat]
        rows.append(
            {"seat": seat, "label": who(seat, seats), "y": y, "base": y + BASE, "bars": bars}
        )
    mistakes = [
        {
            "step": d.step,
            "seat": d.seat,
            "hand": d.hand,
            "severity": d.severity.value,
            "title": decision_title(d, seats),
        }
        for d in sorted(shown, key=lambda d: (d.step, d.seat))
        if d.severity is not None
    ]
    return {
        "top": top,
        "height": ROW * len(rows),
        "rows": rows,
        "scale": scale,
        "mistakes": mistakes,
        "decisions": len(shown),
    }


def replay_analysis(
    analysis: MatchAnalysis, timeline: Mapping[str, Any], seats: Sequence[str], step: int
) -> dict[str, Any]:
    """All the replay viewer shows of ``analysis`` at ``step``: the ``strip``, the ``figures``
    by seat (as strings of seat numbers, as JSON keys are), the decisions ``here``, the
    stated ``precision`` and the median standard error ``reached`` (a decision stops at its
    sample budget short of the stated precision)."""
    errors = sorted(d.stderr for d in analysis.decisions)
    return {
        "strip": strip(analysis, timeline, seats),
        "figures": {str(k): v for k, v in seat_figures(analysis).items()},
        "here": decisions_at(analysis, step, seats),
        "precision": analysis.precision,
        "reached": errors[len(errors) // 2] if errors else None,
        "seats": list(analysis.seats),
    }

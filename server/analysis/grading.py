"""From a decision's losses to its severity, and from a seat's decisions to its summary.

Both are written in units of the game's deal spread (:mod:`.scale`), so a "mistake" costs
about the same share of a typical deal in every game (docs/analysis.md: severity, accuracy).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Final

from .report import Decision, SeatSummary, Severity
from .scale import Scale

POINT_THRESHOLDS: Final = (
    (Severity.BLUNDER, 0.5),
    (Severity.MISTAKE, 0.25),
    (Severity.INACCURACY, 0.1),
)
"""Loss in points, as a share of the game's deal spread, from which a decision is graded."""

WIN_THRESHOLDS: Final = (
    (Severity.BLUNDER, 0.20),
    (Severity.MISTAKE, 0.10),
    (Severity.INACCURACY, 0.05),
)
"""Loss of the chance of winning the game from which a decision is graded."""

NOISE_Z: Final = 2.0
"""A loss in points is graded only when it exceeds this many standard errors: a loss the
samples cannot tell from zero is not called a mistake."""

ACCURACY_K: Final = 4.0
"""Steepness of accuracy: ``100 * exp(-K * mean loss / spread)``."""


def severity(loss_points: float, loss_win: float, stderr: float, scale: Scale) -> Severity | None:
    """The worse of the grades by points lost and by winning chances lost (None: no grade)."""
    by_points = None
    if loss_points > NOISE_Z * stderr:
        share = loss_points / scale.spread
        by_points = next((s for s, at in POINT_THRESHOLDS if share >= at), None)
    by_win = next((s for s, at in WIN_THRESHOLDS if loss_win >= at), None)
    grades = [g for g in (by_points, by_win) if g is not None]
    if not grades:
        return None
    order = [s for s, _ in POINT_THRESHOLDS]
    return min(grades, key=order.index)


def accuracy(mean_loss_points: float, scale: Scale) -> float:
    """0 to 100: 100 for no loss, falling with the mean loss per decision."""
    return 100.0 * math.exp(-ACCURACY_K * mean_loss_points / scale.spread)


def summarize(seat: int, name: str, decisions: Sequence[Decision], scale: Scale) -> SeatSummary:
    """One seat's figures over its evaluated decisions (forced moves are not among them)."""
    mine = [d for d in decisions if d.seat == seat]
    n = len(mine)
    mean_points = sum(d.loss_points for d in mine) / n if n else 0.0
    mean_win = sum(d.loss_win for d in mine) / n if n else 0.0
    counts = Counter(d.severity.value for d in mine if d.severity is not None)
    phases: dict[str, list[float]] = defaultdict(list)
    for d in mine:
        phases[d.phase].append(d.loss_points)
    return SeatSummary(
        seat=seat,
        name=name,
        decisions=n,
        mean_loss_points=mean_points,
        mean_loss_win=mean_win,
        accuracy=accuracy(mean_points, scale),
        severities={s.value: counts.get(s.value, 0) for s in Severity},
        by_phase={phase: sum(v) / len(v) for phase, v in sorted(phases.items())},
    )

"""What an analysis of a match says: the shared vocabulary of the analysis, its store and pages.

An analysis evaluates every decision of the seats it was asked for, each legal action by sampled
playouts over the deals consistent with what that seat knew at that step (docs/analysis.md).
These types are what the analysis returns, what the store keeps (as the JSON of
:meth:`MatchAnalysis.to_json`), what the command line prints and what the web face draws: one
definition, read by all of them.

Steps are numbered as in the record and the replay viewer: decision ``step`` is taken in the
position after ``step`` steps (the replay's ``?step=N``), and the record's ``steps[step]`` is
the action that was chosen.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

FORMAT: Final = 1
"""Version of the JSON layout of :meth:`MatchAnalysis.to_json`."""


class Severity(StrEnum):
    """How bad a decision was, by its expected loss against the best action
    (thresholds in docs/analysis.md)."""

    INACCURACY = "inaccuracy"
    MISTAKE = "mistake"
    BLUNDER = "blunder"


@dataclass(frozen=True, slots=True)
class ActionValue:
    """One legal action's estimated value at a decision, for the deciding seat's side."""

    action: str
    """The action in the record's notation (``str(Action)``)."""
    points: float
    """Expected points of the deal: the side's gain minus the best other side's."""
    win: float
    """Estimated probability that the side wins the game after this action (0 to 1)."""


@dataclass(frozen=True, slots=True)
class Decision:
    """One decision of one seat, evaluated."""

    step: int
    seat: int
    hand: int
    """The hand (deal) of the match it belongs to, from 1."""
    phase: str
    """``"play"`` in the line games; Moon's ``"bid"``, ``"discard"``, ``"trump"`` or ``"play"``."""
    chosen: str
    best: str
    loss_points: float
    """Expected points lost against ``best`` (0 when the chosen action is the best)."""
    loss_win: float
    """Probability of winning the game lost against ``best`` (0 to 1)."""
    stderr: float
    """Standard error of ``loss_points`` (the paired difference over the same samples)."""
    samples: int
    severity: Severity | None
    values: tuple[ActionValue, ...]
    """Every legal action's value, in the engine's order of legal actions."""


@dataclass(frozen=True, slots=True)
class SeatSummary:
    """One analysed seat's figures over the match."""

    seat: int
    name: str
    decisions: int
    """Decisions with more than one legal action (forced moves are not counted)."""
    mean_loss_points: float
    mean_loss_win: float
    accuracy: float
    """0 to 100, from the mean loss (docs/analysis.md: accuracy)."""
    severities: Mapping[str, int]
    """Count of decisions by :class:`Severity` value."""
    by_phase: Mapping[str, float]
    """Mean loss in points per decision, by phase."""


@dataclass(frozen=True, slots=True)
class HandPar:
    """A hand's par: the result of perfect-information play of its deal (double dummy)."""

    hand: int
    par: tuple[int, ...]
    """Points each side scores in the hand under double-dummy play."""
    actual: tuple[int, ...]
    """Points each side scored in the hand as played."""
    exact: bool
    """False when the search ran out of its node budget and ``par`` is its best line so far."""


@dataclass(frozen=True, slots=True)
class MatchAnalysis:
    """The analysis of one match for some of its seats."""

    match_id: str
    game: str
    seats: tuple[int, ...]
    """The seats analysed."""
    precision: float
    """The stated precision: target standard error, in points, of each decision's loss."""
    seed: int
    decisions: tuple[Decision, ...]
    summaries: tuple[SeatSummary, ...]
    pars: tuple[HandPar, ...]
    """Empty unless the match is one of a duplicate set (or pars were asked for)."""
    game_precision: float | None = None
    """The stated precision of each seat's mean loss per decision, when the analysis was asked
    for one (docs/analysis.md: precision); None: each decision was sampled to ``precision``."""

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "match_id": self.match_id,
            "game": self.game,
            "seats": list(self.seats),
            "precision": self.precision,
            "game_precision": self.game_precision,
            "seed": self.seed,
            "decisions": [_decision_json(d) for d in self.decisions],
            "summaries": [
                {
                    "seat": s.seat,
                    "name": s.name,
                    "decisions": s.decisions,
                    "mean_loss_points": s.mean_loss_points,
                    "mean_loss_win": s.mean_loss_win,
                    "accuracy": s.accuracy,
                    "severities": dict(s.severities),
                    "by_phase": dict(s.by_phase),
                }
                for s in self.summaries
            ],
            "pars": [
                {"hand": p.hand, "par": list(p.par), "actual": list(p.actual), "exact": p.exact}
                for p in self.pars
            ],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MatchAnalysis:
        """Read what :meth:`to_json` wrote.

        Raises:
            ValueError: another format, or a field missing or of the wrong kind.
        """
        if data.get("format") != FORMAT:
            raise ValueError(f"analysis: format {data.get('format')!r}, expected {FORMAT}")
        try:
            return cls(
                match_id=str(data["match_id"]),
                game=str(data["game"]),
                seats=tuple(int(s) for s in data["seats"]),
                precision=float(data["precision"]),
                game_precision=(
                    None if data.get("game_precision") is None else float(data["game_precision"])
                ),
                seed=int(data["seed"]),
                decisions=tuple(_decision_of(d) for d in data["decisions"]),
                summaries=tuple(
                    SeatSummary(
                        seat=int(s["seat"]),
                        name=str(s["name"]),
                        decisions=int(s["decisions"]),
                        mean_loss_points=float(s["mean_loss_points"]),
                        mean_loss_win=float(s["mean_loss_win"]),
                        accuracy=float(s["accuracy"]),
                        severities={str(k): int(v) for k, v in s["severities"].items()},
                        by_phase={str(k): float(v) for k, v in s["by_phase"].items()},
                    )
                    for s in data["summaries"]
                ),
                pars=tuple(
                    HandPar(
                        hand=int(p["hand"]),
                        par=tuple(int(x) for x in p["par"]),
                        actual=tuple(int(x) for x in p["actual"]),
                        exact=bool(p["exact"]),
                    )
                    for p in data["pars"]
                ),
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"analysis: malformed JSON ({exc!r})") from exc

    def for_seat(self, seat: int) -> Sequence[Decision]:
        return [d for d in self.decisions if d.seat == seat]

    def mean_loss_stderr(self, seat: int) -> float:
        """Standard error of ``seat``'s mean loss in points per decision: ``sqrt(sum(se²)) / n``
        over its decisions' standard errors, which are independent (each decision has its own
        seeded samples); 0 without decisions."""
        errors = [d.stderr for d in self.for_seat(seat)]
        return math.sqrt(sum(e * e for e in errors)) / len(errors) if errors else 0.0


def _decision_json(d: Decision) -> dict[str, Any]:
    return {
        "step": d.step,
        "seat": d.seat,
        "hand": d.hand,
        "phase": d.phase,
        "chosen": d.chosen,
        "best": d.best,
        "loss_points": d.loss_points,
        "loss_win": d.loss_win,
        "stderr": d.stderr,
        "samples": d.samples,
        "severity": None if d.severity is None else d.severity.value,
        "values": [[v.action, v.points, v.win] for v in d.values],
    }


def _decision_of(d: Mapping[str, Any]) -> Decision:
    severity = d["severity"]
    return Decision(
        step=int(d["step"]),
        seat=int(d["seat"]),
        hand=int(d["hand"]),
        phase=str(d["phase"]),
        chosen=str(d["chosen"]),
        best=str(d["best"]),
        loss_points=float(d["loss_points"]),
        loss_win=float(d["loss_win"]),
        stderr=float(d["stderr"]),
        samples=int(d["samples"]),
        severity=None if severity is None else Severity(severity),
        values=tuple(ActionValue(str(a), float(p), float(w)) for a, p, w in d["values"]),
    )

"""A match's analysis on the wire: :class:`~domino_arena.server.analysis.report.MatchAnalysis`
as admin.proto's ``MatchAnalysis`` message and back.

Both ways live here, so the referee (``admin_analyses``) and the command line (``analyse
--server``, which prints what it reads with the same code as ``analyse --db``) share one
mapping. Nothing here needs the server extra: the light install reads analyses too.
"""

from __future__ import annotations

from typing import Final

from domino_arena.server.analysis.report import (
    ActionValue,
    Decision,
    HandPar,
    MatchAnalysis,
    SeatSummary,
    Severity,
)
from domino_arena.v1 import admin_pb2 as admin_pb

_SEVERITIES: Final = {
    Severity.INACCURACY: admin_pb.ANALYSIS_SEVERITY_INACCURACY,
    Severity.MISTAKE: admin_pb.ANALYSIS_SEVERITY_MISTAKE,
    Severity.BLUNDER: admin_pb.ANALYSIS_SEVERITY_BLUNDER,
}
_SEVERITY_OF: Final = {wire: severity for severity, wire in _SEVERITIES.items()}


def analysis_to_proto(analysis: MatchAnalysis) -> admin_pb.MatchAnalysis:
    """The ``MatchAnalysis`` message of ``analysis`` (each seat's mean-loss standard error
    included, which a client could not work out without every decision)."""
    message = admin_pb.MatchAnalysis(
        match_id=analysis.match_id,
        game=analysis.game,
        seats=analysis.seats,
        precision=analysis.precision,
        seed=analysis.seed,
        decisions=[_decision_to_proto(d) for d in analysis.decisions],
        summaries=[
            admin_pb.SeatAnalysis(
                seat=s.seat,
                name=s.name,
                decisions=s.decisions,
                mean_loss_points=s.mean_loss_points,
                mean_loss_win=s.mean_loss_win,
                accuracy=s.accuracy,
                inaccuracies=s.severities.get(Severity.INACCURACY.value, 0),
                mistakes=s.severities.get(Severity.MISTAKE.value, 0),
                blunders=s.severities.get(Severity.BLUNDER.value, 0),
                mean_loss_by_phase=dict(s.by_phase),
                mean_loss_stderr=analysis.mean_loss_stderr(s.seat),
            )
            for s in analysis.summaries
        ],
        pars=[
            admin_pb.HandPar(hand=p.hand, par=p.par, actual=p.actual, exact=p.exact)
            for p in analysis.pars
        ],
    )
    if analysis.game_precision is not None:
        message.game_precision = analysis.game_precision
    return message


def analysis_from_proto(message: admin_pb.MatchAnalysis) -> MatchAnalysis:
    """The analysis a ``MatchAnalysis`` message carries (what :func:`analysis_to_proto` made)."""
    return MatchAnalysis(
        match_id=message.match_id,
        game=message.game,
        seats=tuple(message.seats),
        precision=message.precision,
        game_precision=message.game_precision if message.HasField("game_precision") else None,
        seed=message.seed,
        decisions=tuple(
            Decision(
                step=d.step,
                seat=d.seat,
                hand=d.hand,
                phase=d.phase,
                chosen=d.chosen,
                best=d.best,
                loss_points=d.loss_points,
                loss_win=d.loss_win,
                stderr=d.stderr,
                samples=d.samples,
                severity=_SEVERITY_OF.get(d.severity),
                values=tuple(ActionValue(v.action, v.points, v.win) for v in d.values),
            )
            for d in message.decisions
        ),
        summaries=tuple(
            SeatSummary(
                seat=s.seat,
                name=s.name,
                decisions=s.decisions,
                mean_loss_points=s.mean_loss_points,
                mean_loss_win=s.mean_loss_win,
                accuracy=s.accuracy,
                severities={
                    Severity.INACCURACY.value: s.inaccuracies,
                    Severity.MISTAKE.value: s.mistakes,
                    Severity.BLUNDER.value: s.blunders,
                },
                by_phase=dict(s.mean_loss_by_phase),
            )
            for s in message.summaries
        ),
        pars=tuple(
            HandPar(hand=p.hand, par=tuple(p.par), actual=tuple(p.actual), exact=p.exact)
            for p in message.pars
        ),
    )


def _decision_to_proto(d: Decision) -> admin_pb.AnalysedDecision:
    return admin_pb.AnalysedDecision(
        step=d.step,
        seat=d.seat,
        hand=d.hand,
        phase=d.phase,
        chosen=d.chosen,
        best=d.best,
        loss_points=d.loss_points,
        loss_win=d.loss_win,
        stderr=d.stderr,
        samples=d.samples,
        severity=(
            admin_pb.ANALYSIS_SEVERITY_UNSPECIFIED
            if d.severity is None
            else _SEVERITIES[d.severity]
        ),
        values=[
            admin_pb.ActionValue(action=v.action, points=v.points, win=v.win) for v in d.values
        ],
    )

"""Analysis of matches: every decision of a seat evaluated against its legal alternatives,
by sampled playouts over what that seat knew (docs/analysis.md).

Pure computation: a :class:`~domino_arena.sdk.match.records.MatchRecord` in, a
:class:`.report.MatchAnalysis` out; no store, no clock, no I/O.
"""

from .evaluate import Budget, Evaluation, SamplerFactory, WorldSampler, evaluate
from .match import analyse_match
from .par import hand_par, hand_pars
from .report import ActionValue, Decision, HandPar, MatchAnalysis, SeatSummary, Severity

__all__ = [
    "ActionValue",
    "Budget",
    "Decision",
    "Evaluation",
    "HandPar",
    "MatchAnalysis",
    "SamplerFactory",
    "SeatSummary",
    "Severity",
    "WorldSampler",
    "analyse_match",
    "evaluate",
    "hand_par",
    "hand_pars",
]

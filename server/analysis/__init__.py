"""Analysis of matches: every decision of a seat evaluated against its legal alternatives,
by sampled playouts over what that seat knew (docs/analysis.md).

Pure computation: a :class:`~domino_arena.sdk.match.records.MatchRecord` in, a
:class:`.report.MatchAnalysis` out; no store, no clock, no I/O.

The names below are imported from their modules when first asked for (PEP 562): a referee
imports ``report`` (what an analysis is, to store it) at start, and the engine (``evaluate``,
``match``, ``par``; about 1.7 MiB) only in the worker processes that analyse. The function
``evaluate`` is imported from its module (``from .evaluate import evaluate``): here its name is
the module's, which any import of the engine binds on the package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from .evaluate import Budget, Evaluation, SamplerFactory, WorldSampler
    from .match import analyse_match
    from .par import hand_par, hand_pars
    from .report import ActionValue, Decision, HandPar, MatchAnalysis, SeatSummary, Severity

_MODULE_OF: Final = {
    "ActionValue": "report",
    "Budget": "evaluate",
    "Decision": "report",
    "Evaluation": "evaluate",
    "HandPar": "report",
    "MatchAnalysis": "report",
    "SamplerFactory": "evaluate",
    "SeatSummary": "report",
    "Severity": "report",
    "WorldSampler": "evaluate",
    "analyse_match": "match",
    "hand_par": "par",
    "hand_pars": "par",
}


def __getattr__(name: str) -> object:
    """The package's shared name ``name``, imported from its module on first use."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


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
    "hand_par",
    "hand_pars",
]

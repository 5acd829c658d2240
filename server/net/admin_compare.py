"""The admin API's comparisons: a CreateComparison request checked into a tournament row, and a
comparison's plan and state as the ``Tournament.comparison`` answer.

Kept beside ``admin_requests``/``admin_answers`` (which hold what every request and answer
shares) so the servicer stays a thin list of RPCs.
"""

from __future__ import annotations

import math
from typing import Any, Final

from domino_arena.server.net.admin_requests import (
    fault_policy_of,
    game_of,
    in_range,
    invalid,
    seed_of,
    time_control_of,
)
from domino_arena.server.play.match_spec import DEFAULT_MAX_DEALS, DEFAULT_MAX_STRIKES
from domino_arena.server.stats.sprt import Sprt, SprtOptionError
from domino_arena.server.store.tournaments import StoredTournament
from domino_arena.server.tournaments.lifecycle.compare import (
    DEFAULT_MAX_SETS,
    CompareError,
    SprtPlan,
    new_comparison,
    summary,
)
from domino_arena.v1 import admin_pb2 as admin_pb

MAX_SETS: Final = 50_000
"""The most duplicate sets one request may ask for (the game cap may bite first)."""

_VERDICTS: Final = {
    "running": admin_pb.COMPARISON_VERDICT_RUNNING,
    "H0": admin_pb.COMPARISON_VERDICT_H0,
    "H1": admin_pb.COMPARISON_VERDICT_H1,
    "inconclusive": admin_pb.COMPARISON_VERDICT_INCONCLUSIVE,
    "done": admin_pb.COMPARISON_VERDICT_DONE,
}


def sprt_plan_of(message: admin_pb.SprtBounds, field: str = "sprt") -> SprtPlan:
    """Return the SPRT of a request's ``SprtBounds`` (alpha and beta 0 take 0.05).

    Raises:
        RequestError: INVALID_ARGUMENT naming the bound and the rule.
    """
    plan = SprtPlan(
        elo0=message.elo0,
        elo1=message.elo1,
        alpha=message.alpha or 0.05,
        beta=message.beta or 0.05,
    )
    try:
        Sprt(plan.elo0, plan.elo1, alpha=plan.alpha, beta=plan.beta)
    except SprtOptionError as exc:
        raise invalid(f"{field}.{exc}") from None
    return plan


def comparison_of(
    request: admin_pb.CreateComparisonRequest, known_bots: list[str]
) -> StoredTournament:
    """Check a CreateComparison request and return the comparison's row (not stored yet).

    Raises:
        RequestError: INVALID_ARGUMENT naming the field and the rule.
    """
    game = game_of(request)
    if request.max_sets > MAX_SETS:
        raise invalid(f"max_sets: must be at most {MAX_SETS}, got {request.max_sets}")
    in_range(request.max_strikes, "max_strikes")
    in_range(request.max_deals, "max_deals")
    in_range(request.concurrency, "concurrency")
    optional: dict[str, Any] = {}
    if request.HasField("wait_ms"):
        optional["wait_seconds"] = in_range(request.wait_ms, "wait_ms") / 1000
    if request.concurrency:
        optional["concurrency"] = request.concurrency
    try:
        return new_comparison(
            game=game,
            candidate=request.candidate,
            baseline=request.baseline,
            opponents=tuple(request.opponents),
            known_bots=known_bots,
            max_sets=request.max_sets or DEFAULT_MAX_SETS,
            sprt=sprt_plan_of(request.sprt) if request.HasField("sprt") else None,
            time_control=time_control_of(request.time_control),
            fault_policy=fault_policy_of(request.fault_policy),
            max_strikes=request.max_strikes or DEFAULT_MAX_STRIKES,
            max_deals=request.max_deals or DEFAULT_MAX_DEALS,
            seed=seed_of(request.seed) if request.HasField("seed") else None,
            name=request.name or None,
            rated=request.rated,
            **optional,
        )
    except CompareError as exc:
        raise invalid(str(exc)) from None


def comparison_message(t: StoredTournament) -> admin_pb.Comparison:
    """Return a comparison's plan and its stored state (RUNNING with nothing stored yet)."""
    view = summary(t)
    message = admin_pb.Comparison(
        candidate=view["candidate"],
        baseline=view["baseline"],
        opponents=view["opponents"],
        max_sets=view["max_sets"],
        verdict=_VERDICTS.get(view["verdict"], admin_pb.COMPARISON_VERDICT_RUNNING),
        sets=view["sets"],
        excluded_sets=view["excluded_sets"],
    )
    sprt = view["sprt"]
    if sprt is not None:
        message.sprt.CopyFrom(
            admin_pb.SprtBounds(
                elo0=sprt["elo0"], elo1=sprt["elo1"], alpha=sprt["alpha"], beta=sprt["beta"]
            )
        )
        message.llr, message.lower, message.upper = sprt["llr"], sprt["lower"], sprt["upper"]
    estimate = view["estimate"]
    fields = admin_pb.PairedEstimate.DESCRIPTOR.fields_by_name
    message.estimate.CopyFrom(
        admin_pb.PairedEstimate(
            **{name: _finite(estimate[name]) for name in fields if name in estimate}
        )
    )
    message.distribution.extend(
        admin_pb.ScoreCount(score=value, count=count) for value, count in view["distribution"]
    )
    return message


def _finite(value: Any) -> float:
    """A stored number as a proto double; infinities kept (they mean "no bound yet")."""
    number = float(value)
    return 0.0 if math.isnan(number) else number

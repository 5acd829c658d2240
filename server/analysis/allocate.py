"""A game's decisions sampled together, to a stated precision of the seat's mean loss.

A seat's headline figure is its mean loss in points per decision, ``mean(loss_i)`` over its
``n`` decisions. The decisions are sampled independently (each from its own seeded
generator), so that mean's standard error is ``sqrt(sum(se_i²)) / n``, with ``se_i`` each
decision's own reported standard error (:meth:`.report.MatchAnalysis.mean_loss_stderr`).
Reaching it by asking every decision for the same ``se_i`` wastes samples: a decision whose
actions differ little, or that has been sampled a lot already, lowers the sum little per
sample. :func:`allocate` gives each batch to the decision
whose ``se_i²`` falls most per playout (docs/analysis.md: precision).
"""

from __future__ import annotations

from collections.abc import Sequence

from .evaluate import BATCH, Budget, Sampling


def allocate(samplings: Sequence[Sampling], budget: Budget, target: float) -> None:
    """Sample ``samplings`` (one seat's decisions) until the standard error of their mean loss
    is at most ``target`` points, or every decision has reached ``budget.precision`` or
    ``budget.max_samples``.

    Each decision first gets ``budget.min_samples``. Then, batch by batch, the next
    :data:`~.evaluate.BATCH` samples go to the decision with the largest fall of its squared
    error per playout, ``se² · B / (n + B)`` over ``B · cost`` (its variance ``se² · n`` taken
    as known), the lowest index on a tie, so the allocation is as deterministic as the samples.
    """
    for sampling in samplings:
        sampling.draw(budget.min_samples)
    limit = (target * len(samplings)) ** 2
    while sum(s.stderr**2 for s in samplings) > limit:
        best_gain, pick = 0.0, None
        for sampling in samplings:
            if sampling.samples >= budget.max_samples or sampling.stderr <= budget.precision:
                continue
            step = min(BATCH, budget.max_samples - sampling.samples)
            gain = sampling.stderr**2 / ((sampling.samples + step) * sampling.cost)
            if pick is None or gain > best_gain:
                best_gain, pick = gain, sampling
        if pick is None:
            return
        pick.draw(min(BATCH, budget.max_samples - pick.samples))

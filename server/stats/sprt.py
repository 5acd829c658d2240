"""The generalised sequential probability ratio test (GSPRT) over paired units.

A candidate is tested against a baseline by playing units (duplicate sets, ``paired.py``) until
the evidence decides between H0: Elo = elo0 and H1: Elo = elo1 (logistic Elo, so the expected
unit score is s = 1 / (1 + 10^(-elo/400))). Playing until it decides, instead of a fixed
number of games, stops early when the answer is clear: that is why fishtest and cutechess
test patches this way. Wald's bounds keep the chance of accepting H1 when H0 holds near
``alpha`` and of accepting H0 when H1 holds near ``beta``.

Unit scores take a few discrete values with no known shape (a duplicate set of three Moon
games is not a pentanomial), so the likelihood is that of the whole distribution: the LLR is
generalised, each hypothesis's distribution being the maximum-likelihood one with expectation
s0 (or s1) given the observed counts. That MLE reweights each observed cell by
``1 / (1 + x (a_i - s))``, x the root of the secular equation ``sum p_i (a_i - s) / (1 + x (a_i -
s)) = 0`` (:func:`constrained_mle`). Cells that are possible but not yet seen (at least the
extreme scores 0 and 1, so the support always straddles s) get a count of
:data:`REGULARISATION`, so the MLE exists from the first unit.

This is fishtest's ``LLRcalc.LLR_logistic`` with ``MLE_expected``, ``secular`` and
``regularize`` (official-stockfish/fishtest, ``server/fishtest/stats/LLRcalc.py``, after
Michel Van den Bergh's note "support_MLE_multinomial.pdf", Proposition 1.1), written without
scipy; :func:`brownian_llr` is its ``LLR_alt2``, the approximation for small Elo differences.

A test may be given a unit cap (a truncated SPRT): if it reaches the cap without crossing a
bound, its verdict is ``inconclusive``, with the side the LLR leans to.

>>> test = Sprt(0, 50)
>>> test.status({0.0: 10, 0.5: 40, 1.0: 50}).verdict
<Verdict.H1: 'H1'>
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from .paired import checked_counts, score_of_elo

REGULARISATION: Final = 1e-3
"""The count given to a possible unit score not yet observed (fishtest's ``regularize``)."""

_ROOT_TOLERANCE: Final = 1e-14
"""The secular equation's root is found to this width (relative to its bracket)."""


class SprtOptionError(ValueError):
    """An SPRT parameter (elo0, elo1, alpha, beta, the unit cap, a support value) is invalid."""


class Verdict(enum.Enum):
    """Where a test stands."""

    H0 = "H0"
    """The LLR fell to the lower bound: accept elo0 (the candidate is not better by elo1)."""
    H1 = "H1"
    """The LLR reached the upper bound: accept elo1."""
    CONTINUE = "continue"
    """Between the bounds, below the unit cap: play more units."""
    INCONCLUSIVE = "inconclusive"
    """The unit cap was reached between the bounds."""


@dataclass(frozen=True, slots=True)
class SprtStatus:
    """One look at a test."""

    verdict: Verdict
    llr: float
    lower: float
    upper: float
    units: int
    leaning: Verdict | None
    """For an inconclusive verdict, the hypothesis the LLR favours (None at exactly 0);
    otherwise None."""

    def describe(self) -> str:
        """Return one line such as ``H1 after 120 units: LLR 2.96 [-2.94, 2.94]``."""
        lean = f" (leaning {self.leaning.value})" if self.leaning else ""
        return (
            f"{self.verdict.value}{lean} after {self.units} units: "
            f"LLR {self.llr:.2f} [{self.lower:.2f}, {self.upper:.2f}]"
        )


@dataclass(frozen=True, slots=True)
class Sprt:
    """A GSPRT of H0: Elo = elo0 against H1: Elo = elo1 (logistic Elo), elo0 < elo1.

    ``alpha`` is the chance of accepting H1 when H0 holds, ``beta`` of accepting H0 when H1
    holds; ``max_units`` truncates the test (None: no cap). ``support`` lists unit scores that
    are possible but may not have been seen yet (e.g. 0, 1/4, ..., 1 for game pairs with
    draws); 0 and 1 are always in it.

    Raises:
        SprtOptionError: elo0 >= elo1 or not finite, alpha or beta outside (0, 1) or summing
            to 1 or more (the bounds would cross), a cap below 1, a support value outside [0, 1].
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    max_units: int | None = None
    support: Sequence[float] = ()
    lower: float = field(init=False)
    """ln(beta / (1 - alpha)): at or below it the test accepts H0."""
    upper: float = field(init=False)
    """ln((1 - beta) / alpha): at or above it the test accepts H1."""

    def __post_init__(self) -> None:
        for name, value in (("elo0", self.elo0), ("elo1", self.elo1)):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise SprtOptionError(f"{name}: must be a number (logistic Elo), got {value!r}")
            if not math.isfinite(value) or abs(value) >= 1000:
                raise SprtOptionError(f"{name}: must be a finite Elo within +-1000, got {value}")
        if not self.elo0 < self.elo1:
            raise SprtOptionError(
                f"elo0 and elo1: elo0 must be below elo1, got {self.elo0} and {self.elo1}"
            )
        for name, value in (("alpha", self.alpha), ("beta", self.beta)):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise SprtOptionError(f"{name}: must be a number in (0, 1), got {value!r}")
            if not 0 < value < 1:
                raise SprtOptionError(f"{name}: must be in (0, 1), got {value}")
        if self.alpha + self.beta >= 1:
            raise SprtOptionError(
                f"alpha and beta: must sum to less than 1 (else the bounds cross), "
                f"got {self.alpha} + {self.beta}"
            )
        if self.max_units is not None and (
            isinstance(self.max_units, bool)
            or not isinstance(self.max_units, int)
            or self.max_units < 1
        ):
            raise SprtOptionError(
                f"max_units: must be a positive integer or None, got {self.max_units!r}"
            )
        for value in self.support:
            if not 0 <= value <= 1:
                raise SprtOptionError(f"support: unit scores are in [0, 1], got {value!r}")
        object.__setattr__(self, "support", tuple(sorted({0.0, 1.0, *map(float, self.support)})))
        object.__setattr__(self, "lower", math.log(self.beta / (1 - self.alpha)))
        object.__setattr__(self, "upper", math.log((1 - self.beta) / self.alpha))

    @property
    def s0(self) -> float:
        """The expected unit score under H0."""
        return score_of_elo(self.elo0)

    @property
    def s1(self) -> float:
        """The expected unit score under H1."""
        return score_of_elo(self.elo1)

    def llr(self, counts: Mapping[float, int]) -> float:
        """Return the generalised log-likelihood ratio of H1 to H0 for unit scores ``counts``.

        0 with no units (no evidence either way).

        Raises:
            ScoreError: a value outside [0, 1] or a count that is not a non-negative integer.
        """
        cells = checked_counts(counts)
        if not cells:
            return 0.0
        regularised = dict.fromkeys(self.support, REGULARISATION)
        for value, count in cells:
            regularised[value] = float(count)
        mle0 = constrained_mle(regularised, self.s0)
        mle1 = constrained_mle(regularised, self.s1)
        return sum(w * math.log(mle1[v] / mle0[v]) for v, w in regularised.items())

    def status(self, counts: Mapping[float, int]) -> SprtStatus:
        """Return the verdict on unit scores ``counts``, with the LLR and the bounds.

        A crossed bound decides even at the cap; at or past the cap otherwise the verdict
        is inconclusive.
        """
        llr = self.llr(counts)
        units = sum(count for _, count in checked_counts(counts))
        leaning: Verdict | None = None
        if llr >= self.upper:
            verdict = Verdict.H1
        elif llr <= self.lower:
            verdict = Verdict.H0
        elif self.max_units is not None and units >= self.max_units:
            verdict = Verdict.INCONCLUSIVE
            leaning = Verdict.H1 if llr > 0 else Verdict.H0 if llr < 0 else None
        else:
            verdict = Verdict.CONTINUE
        return SprtStatus(verdict, llr, self.lower, self.upper, units, leaning)

    def brownian_llr(self, counts: Mapping[float, int]) -> float:
        """Return the LLR's Brownian approximation, n (s1 - s0)(2 mu - s0 - s1) / (2 sigma^2).

        Fishtest's ``LLR_alt2``; close to :meth:`llr` for small Elo differences. 0 with no
        units or no spread (where it is undefined).
        """
        cells = checked_counts(counts)
        n = sum(count for _, count in cells)
        if not n:
            return 0.0
        mu = sum(v * c for v, c in cells) / n
        var = sum(c * (v - mu) ** 2 for v, c in cells) / n
        if var == 0:
            return 0.0
        return n * (self.s1 - self.s0) * (2 * mu - self.s0 - self.s1) / (2 * var)


def constrained_mle(weights: Mapping[float, float], mean: float) -> dict[float, float]:
    """Return the most likely distribution with expectation ``mean``, given observed ``weights``.

    ``weights`` maps unit scores to (possibly regularised) counts; the answer maps the same
    scores to probabilities ``p_i / (1 + x (a_i - mean))``, ``p_i`` the observed shares and x
    from :func:`secular_root` (fishtest's ``MLE_expected``). It is also how a simulation tilts
    a realistic distribution to an exact mean.

    Raises:
        ValueError: a weight that is not positive, or ``mean`` not strictly inside the scores.
    """
    if any(not w > 0 for w in weights.values()):
        raise ValueError(f"weights: every cell needs a positive weight, got {dict(weights)}")
    total = sum(weights.values())
    values = sorted(weights)
    x = secular_root([v - mean for v in values], [weights[v] for v in values])
    return {v: weights[v] / total / (1 + x * (v - mean)) for v in values}


def secular_root(deviations: Sequence[float], weights: Sequence[float]) -> float:
    """Return the x solving ``sum w_i d_i / (1 + x d_i) = 0``, with ``1 + x d_i > 0`` for all i.

    ``d_i = a_i - s`` are the cells' deviations from the constrained mean, which must
    straddle 0 (some negative, some positive) with positive weights. The left side falls
    strictly as x grows, from +inf to -inf across the open interval ``(-1/max d, -1/min d)``,
    so the root is unique; Newton's steps, kept inside a shrinking bracket, find it.

    Raises:
        ValueError: the deviations do not straddle 0.
    """
    low_d, high_d = min(deviations), max(deviations)
    if not low_d < 0 < high_d:
        raise ValueError(
            f"deviations: must straddle 0 for the constrained MLE, got [{low_d}, {high_d}]"
        )
    lo, hi = -1 / high_d, -1 / low_d
    x = 0.0
    for _ in range(200):
        f = 0.0
        slope = 0.0
        for d, w in zip(deviations, weights, strict=True):
            q = d / (1 + x * d)
            f += w * q
            slope -= w * q * q
        if f > 0:
            lo = x
        elif f < 0:
            hi = x
        else:
            return x
        step = f / slope
        if abs(step) <= _ROOT_TOLERANCE * max(1.0, abs(x)):
            return x
        x = x - step if lo < x - step < hi else (lo + hi) / 2
        if hi - lo <= _ROOT_TOLERANCE * max(1.0, abs(lo), abs(hi)):
            return x
    return x


def parse_sprt(text: str, *, max_units: int | None = None) -> Sprt:
    """Return the test written ``elo0,elo1`` or ``elo0,elo1,alpha,beta`` (the CLI's ``--sprt``).

    >>> parse_sprt("0,10,0.05,0.1").beta
    0.1

    Raises:
        SprtOptionError: the message starts with ``--sprt:`` and says what was expected.
    """
    parts = [p.strip() for p in text.split(",")]
    if len(parts) not in (2, 4):
        raise SprtOptionError(
            f"--sprt: expected elo0,elo1 or elo0,elo1,alpha,beta, got {text!r} "
            f"({len(parts)} values)"
        )
    names = ("elo0", "elo1", "alpha", "beta")
    values: list[float] = []
    for name, part in zip(names, parts, strict=False):
        try:
            value = float(part)
        except ValueError:
            raise SprtOptionError(f"--sprt: {name} must be a number, got {part!r}") from None
        values.append(value)
    try:
        if len(values) == 2:
            return Sprt(values[0], values[1], max_units=max_units)
        return Sprt(values[0], values[1], values[2], values[3], max_units=max_units)
    except SprtOptionError as error:
        raise SprtOptionError(f"--sprt: {error}") from None

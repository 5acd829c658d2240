"""Grade scales: from a bot's graded results to the grade a teacher hands in (docs/courses.md:
grade scales).

A scale is a comma-separated list of ``GRADE:RULE``, best grade first; the first rule a bot meets
gives its grade. A rule is either

* ``beats NAME``: the verdict against the frozen baseline ``NAME`` is "better" (the paired
  comparison is significant, server/stats/grades.py), or ``beats NAME+OTHER`` for both;
* a rating cut-off, a number: the bot's anchored rating is at least that (cut-offs must fall
  from one grade to the next, or a later grade could never be given).

The last entry may be a bare ``GRADE``: everyone who meets no rule. Without it such a bot gets
no grade (an empty cell). A grade is 1-16 letters, digits, ``+``, ``-``, ``.`` or ``_``, so
points work as well as letters: ``10:beats search,7:beats greedy,4:beats random,0``.

>>> parse_scale("A:1600, B:1500,C").grades
('A', 'B', 'C')
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Final

GRADED: Final = "graded"
NO_SUBMISSION: Final = "no submission"
"""A grades row's status: the owner's bot was graded, or the owner of the course entered none
(this light module is where the command line reads it too)."""
GRADE_RE: Final = re.compile(r"[A-Za-z0-9+\-._]{1,16}")
MAX_ENTRIES: Final = 50
MAX_CUTOFF: Final = 5000.0


class ScaleError(ValueError):
    """A scale that cannot be read; the message names the entry and what was expected."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One entry of a scale: a grade and what earns it."""

    grade: str
    beats: tuple[str, ...] = ()
    """Baselines whose verdict must be "better" (all of them)."""
    cutoff: float | None = None
    """The rating needed; None for a ``beats`` rule or the catch-all."""

    def met(self, rating: float, verdicts: Mapping[str, str]) -> bool:
        if self.cutoff is not None:
            return math.isfinite(rating) and rating >= self.cutoff
        return all(verdicts.get(name) == "better" for name in self.beats)


@dataclass(frozen=True, slots=True)
class GradeScale:
    """A parsed scale; :meth:`grade` gives a bot's grade."""

    text: str
    rules: tuple[Rule, ...]

    @property
    def grades(self) -> tuple[str, ...]:
        return tuple(rule.grade for rule in self.rules)

    def baselines(self) -> set[str]:
        return {name for rule in self.rules for name in rule.beats}

    def check_baselines(self, seated: Collection[str]) -> None:
        """Raise :class:`ScaleError` for a ``beats`` rule naming no graded baseline."""
        for rule in self.rules:
            for name in rule.beats:
                if name not in seated:
                    known = ", ".join(sorted(seated)) or "none"
                    raise ScaleError(
                        f"scale: '{rule.grade}:beats {name}': {name!r} is not a baseline of "
                        f"the graded tournaments (baselines: {known})"
                    )

    def grade(self, rating: float, verdicts: Mapping[str, str]) -> str:
        """The first grade whose rule the bot meets; "" if none."""
        for rule in self.rules:
            if rule.met(rating, verdicts):
                return rule.grade
        return ""


def parse_scale(text: str) -> GradeScale:
    """Read a scale (module doc).

    Raises:
        ScaleError: an empty scale or entry, a bad grade or rule, a grade listed twice, a
            catch-all before the last entry, or cut-offs that do not fall.
    """
    entries = [part.strip() for part in text.split(",")]
    if not text.strip():
        raise ScaleError("scale: expected GRADE:RULE entries, e.g. 'A:beats greedy,B:1500,C'")
    if len(entries) > MAX_ENTRIES:
        raise ScaleError(f"scale: at most {MAX_ENTRIES} grades, got {len(entries)}")
    rules: list[Rule] = []
    for index, entry in enumerate(entries, start=1):
        where = f"scale entry {index} ({entry[:40]!r})"
        if not entry:
            raise ScaleError(f"scale entry {index}: empty; expected GRADE:RULE")
        grade, sep, rule = (part.strip() for part in entry.partition(":"))
        if not GRADE_RE.fullmatch(grade):
            raise ScaleError(
                f"{where}: the grade must be 1-16 letters, digits, '+', '-', '.' or '_'"
            )
        if grade in (r.grade for r in rules):
            raise ScaleError(f"{where}: grade {grade!r} is listed twice")
        if not sep:
            if index != len(entries):
                raise ScaleError(
                    f"{where}: a grade without a rule is for everyone else, so it must be last"
                )
            rules.append(Rule(grade))
            continue
        rules.append(_rule(where, grade, rule))
        previous = [r.cutoff for r in rules[:-1] if r.cutoff is not None]
        cutoff = rules[-1].cutoff
        if cutoff is not None and previous and cutoff >= min(previous):
            raise ScaleError(
                f"{where}: cut-off {cutoff:g} is not below the {min(previous):g} of a better "
                "grade; list grades best first, cut-offs falling"
            )
    return GradeScale(text=",".join(entries), rules=tuple(rules))


def _rule(where: str, grade: str, rule: str) -> Rule:
    words = rule.split()
    if len(words) == 2 and words[0] == "beats":
        names = tuple(name.strip() for name in words[1].split("+"))
        if not all(names) or len(set(names)) != len(names):
            raise ScaleError(f"{where}: expected 'beats NAME' or 'beats NAME+OTHER'")
        return Rule(grade, beats=names)
    try:
        cutoff = float(rule)
    except ValueError:
        raise ScaleError(
            f"{where}: expected 'beats BASELINE' or a rating cut-off (a number), got {rule!r}"
        ) from None
    if not 0 <= cutoff <= MAX_CUTOFF:
        raise ScaleError(f"{where}: a rating cut-off must be 0 to {MAX_CUTOFF:g}")
    return Rule(grade, cutoff=cutoff)

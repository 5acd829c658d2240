"""Is A better than B? A paired comparison over duplicate sets, as a tournament of its own kind.

A comparison is a stored tournament with ``kind="compare"`` and a :class:`ComparePlan`, so it
starts, pauses, resumes after a crash or a SIGKILL, and is cancelled exactly like a round robin
(``server/tournaments/lifecycle/runner.py``); only its schedule and its stopping rule differ.

The independent unit is a *duplicate set*: one deal (``deal_id`` = the set's number) played so
that A and B meet the same cards in the same seats against the same opponents (common random
numbers):

* **head to head** (two seats, no opponents): A against B, then the same deal with the seats
  swapped (fishtest's game pair); the set's score is A's mean score over the two games, so it
  takes the pentanomial values 0, 1/4, 1/2, 3/4, 1;
* **swap one seat** (opponents given; required for three and four seats): for every seat k,
  A in seat k with the opponents in the other seats in a fixed order, and the same table with B
  in seat k instead. The set's score is ``1/2 + (mean score of A - mean score of B) / 2``, in
  [0, 1], 1/2 when A and B did equally well on the same cards.

A bot's score in a game is its side's pairwise score by final standing against the other
sides (1 ahead, 1/2 level, 0 behind, averaged over the other sides): for two sides, win 1, draw
1/2, loss 0, as the Elo ladder scores it; for three sides, second place is worth 1/2. Only
complete sets count; a set with a voided or aborted game (a failure of the referee's, never
charged to a bot) is left out and counted as such, as fishtest leaves out a crashed pair.

The stopping rule (:func:`verdict_of`, called by the tournament runner after every game) folds
every complete set into the SPRT of the plan (``server/stats/sprt.py``); the state is stored
after each game, so the live LLR and bounds can be shown, and a restarted referee recomputes the
same state from the stored games. The plan's ``max_sets`` caps the schedule: a truncated SPRT
that reaches it ends inconclusive.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Final

from domino_arena.sdk.match.results import FaultPolicy, Termination
from domino_arena.sdk.match.seeds import check_seed, random_seed
from domino_arena.sdk.rules import Game
from domino_arena.server.ladder.ratings_store import rated_game_of
from domino_arena.server.play import provable
from domino_arena.server.play.match_spec import DEFAULT_MAX_DEALS, DEFAULT_MAX_STRIKES
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.stats import paired
from domino_arena.server.stats.sprt import Sprt, Verdict
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tournaments import StoredTournament, TournamentState
from domino_arena.server.tournaments.scheduler import DealMode, ScheduledGame

DEFAULT_MAX_SETS: Final = 1000
"""Sets a comparison plays at most when the request names no cap."""
MAX_GAMES: Final = 100_000
"""The most games a comparison may schedule (as for a tournament)."""
DEFAULT_CONCURRENCY: Final = 4
PENTANOMIAL: Final = (0.0, 0.25, 0.5, 0.75, 1.0)
"""The scores a head-to-head set (a game pair) can take."""


class CompareError(ValueError):
    """An impossible comparison request; the message says which field and why."""


@dataclass(frozen=True, slots=True)
class SprtPlan:
    """The SPRT's hypotheses: Elo difference ``elo0`` (H0) against ``elo1`` (H1)."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def sprt(self, plan: ComparePlan) -> Sprt:
        """The test over ``plan``'s sets, truncated at its cap."""
        return Sprt(
            self.elo0,
            self.elo1,
            alpha=self.alpha,
            beta=self.beta,
            max_units=plan.max_sets,
            support=PENTANOMIAL if plan.head_to_head else (),
        )


@dataclass(frozen=True, slots=True)
class ComparePlan:
    """What a comparison plays: kept in the tournament row (``plan``) as JSON."""

    candidate: str
    """A: the bot under test."""
    baseline: str
    """B: the bot it is measured against."""
    opponents: tuple[str, ...]
    """The other seats' bots, in seat order after the compared seat; empty for head to head."""
    max_sets: int
    sprt: SprtPlan | None

    @property
    def head_to_head(self) -> bool:
        return not self.opponents

    def games_per_set(self, seats: int) -> int:
        return 2 if self.head_to_head else 2 * seats

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(data: dict[str, Any]) -> ComparePlan:
        sprt = data.get("sprt")
        return ComparePlan(
            candidate=str(data["candidate"]),
            baseline=str(data["baseline"]),
            opponents=tuple(str(o) for o in data["opponents"]),
            max_sets=int(data["max_sets"]),
            sprt=None if sprt is None else SprtPlan(**sprt),
        )


def plan_of(t: StoredTournament) -> ComparePlan:
    """Return the plan of a stored comparison.

    Raises:
        CompareError: ``t`` is not a comparison, or its plan is damaged.
    """
    if t.kind != "compare" or t.plan is None:
        raise CompareError(f"tournament {t.id}: not a comparison (kind {t.kind!r})")
    try:
        return ComparePlan.from_json(t.plan)
    except (KeyError, TypeError, ValueError) as exc:
        raise CompareError(f"tournament {t.id}: plan: damaged ({exc})") from None


def new_comparison(
    *,
    game: Game,
    candidate: str,
    baseline: str,
    opponents: Sequence[str] = (),
    known_bots: Collection[str],
    max_sets: int = DEFAULT_MAX_SETS,
    sprt: SprtPlan | None = None,
    time_control: TimeControl,
    fault_policy: FaultPolicy,
    max_strikes: int = DEFAULT_MAX_STRIKES,
    max_deals: int = DEFAULT_MAX_DEALS,
    concurrency: int = DEFAULT_CONCURRENCY,
    wait_seconds: float = 60.0,
    seed: int | None = None,
    name: str | None = None,
    rated: bool = False,
    tournament_id: str | None = None,
) -> StoredTournament:
    """Check a comparison request and return its tournament row, CREATED (not stored yet).

    Raises:
        CompareError: the request is impossible; the message names the field and the rule.
    """
    seats = game.num_players
    opponents = tuple(opponents)
    bots = (candidate, baseline, *opponents)
    if candidate == baseline:
        raise CompareError(f"baseline: must differ from the candidate, both are {candidate!r}")
    twice = sorted(b for b, n in Counter(bots).items() if n > 1)
    if twice:
        raise CompareError(f"opponents: {', '.join(twice)} named twice; each bot sits once")
    unknown = [b for b in bots if b not in set(known_bots)]
    if unknown:
        raise CompareError(f"bots: unknown bot(s) {', '.join(unknown)}")
    if opponents and len(opponents) != seats - 1:
        raise CompareError(
            f"opponents: {game.describe()} has {seats} seats, so a swap-one-seat comparison "
            f"needs {seats - 1} opponents, got {len(opponents)}"
        )
    if not opponents and (seats != 2 or len(game.sides) != 2):
        raise CompareError(
            f"opponents: {game.describe()} has {seats} seats: name {seats - 1} opponents "
            "(A and B take turns in one seat against them); only a two-seat game can be "
            "played head to head"
        )
    if max_sets < 1:
        raise CompareError(f"max_sets: must be at least 1, got {max_sets}")
    plan = ComparePlan(candidate, baseline, opponents, max_sets, sprt)
    if max_sets * plan.games_per_set(seats) > MAX_GAMES:
        raise CompareError(
            f"max_sets: {max_sets} sets of {plan.games_per_set(seats)} games are more than the "
            f"{MAX_GAMES} games a comparison may have"
        )
    if concurrency < 1:
        raise CompareError(f"concurrency: must be at least 1, got {concurrency}")
    if max_deals < 1:
        raise CompareError(f"max_deals: must be at least 1, got {max_deals}")
    if seed is not None:
        try:
            check_seed(seed)
        except ValueError as exc:
            raise CompareError(str(exc)) from None
    now = dt.datetime.now(dt.UTC)
    seed = seed if seed is not None else random_seed()
    salt, commitment = provable.new_commitment(seed)
    return StoredTournament(
        id=tournament_id if tournament_id is not None else uuid.uuid4().hex[:16],
        name=name or f"{candidate} vs {baseline}",
        game=game.name,
        options=game.options(),
        entrants=bots,
        games_per_pairing=1,
        deals=DealMode.DUPLICATE.value,
        time_control_ms=time_control.to_ms(),
        fault_policy=fault_policy.value,
        max_strikes=max_strikes,
        max_deals=max_deals,
        concurrency=concurrency,
        wait_seconds=float(wait_seconds),
        seed=seed,
        rated=rated,
        state=TournamentState.CREATED,
        created=now,
        updated=now,
        seed_commitment=commitment,
        seed_salt=salt,
        deal_scheme=provable.CURRENT_SCHEME,
        kind="compare",
        plan=plan.to_json(),
        verdict=verdict_of(plan, seats, SetTally((), 0, 0), over=False),
    )


def compare_schedule(plan: ComparePlan, seats: int) -> list[ScheduledGame]:
    """Return every game of the plan, set by set (a set's games share its deal)."""
    games: list[ScheduledGame] = []
    for deal in range(plan.max_sets):
        for table in _set_tables(plan, seats):
            games.append(
                ScheduledGame(
                    index=len(games),
                    seats=table[1],
                    deal_id=deal,
                    rotation=table[0],
                    round=deal,
                )
            )
    return games


def _set_tables(plan: ComparePlan, seats: int) -> list[tuple[int, tuple[str, ...]]]:
    """A set's tables as (rotation, bots per seat): rotation k < seats puts A in seat k,
    rotation seats + k puts B there (head to head: rotation 0 is A-B, 1 is B-A)."""
    a, b = plan.candidate, plan.baseline
    if plan.head_to_head:
        return [(0, (a, b)), (1, (b, a))]
    tables = []
    for subject_index, subject in enumerate((a, b)):
        for seat in range(seats):
            others = iter(plan.opponents)
            table = tuple(subject if s == seat else next(others) for s in range(seats))
            tables.append((subject_index * seats + seat, table))
    return tables


@dataclass(frozen=True, slots=True)
class SetTally:
    """The complete sets of a comparison so far."""

    scores: tuple[float, ...]
    """Each complete, counted set's score, in set order."""
    excluded: int
    """Complete sets left out because a game of theirs was voided or aborted."""
    games: int


def side_score(match: StoredMatch, seat: int) -> float:
    """The pairwise score by final standing of ``seat``'s side against the other sides."""
    game = rated_game_of(match)
    mine = game.standing[game.side_of_seat[seat]]
    others = [p for side, p in enumerate(game.standing) if side != game.side_of_seat[seat]]
    return sum(1.0 if mine < p else 0.5 if mine == p else 0.0 for p in others) / len(others)


def tally(plan: ComparePlan, seats: int, matches: Iterable[StoredMatch]) -> SetTally:
    """Score the complete sets among ``matches`` (a comparison's stored games)."""
    per_set = plan.games_per_set(seats)
    by_set: dict[int, list[StoredMatch]] = {}
    games = 0
    for m in matches:
        if m.deal_id is None:
            continue
        by_set.setdefault(m.deal_id, []).append(m)
        games += 1
    scores: list[float] = []
    excluded = 0
    for deal in sorted(by_set):
        played = by_set[deal]
        if len(played) < per_set:
            continue
        if any(not Termination(m.termination).rated for m in played):
            excluded += 1
            continue
        scores.append(_set_score(plan, played))
    return SetTally(tuple(scores), excluded, games)


def _set_score(plan: ComparePlan, played: Sequence[StoredMatch]) -> float:
    totals = {plan.candidate: 0.0, plan.baseline: 0.0}
    counts = {plan.candidate: 0, plan.baseline: 0}
    for m in played:
        for seat, bot in enumerate(m.seats):
            if bot in totals:
                totals[bot] += side_score(m, seat)
                counts[bot] += 1
    mean_a = totals[plan.candidate] / counts[plan.candidate]
    if plan.head_to_head:
        return mean_a
    return 0.5 + (mean_a - totals[plan.baseline] / counts[plan.baseline]) / 2


def verdict_of(plan: ComparePlan, seats: int, sets: SetTally, *, over: bool) -> dict[str, Any]:
    """The comparison's state as stored in the tournament row (``verdict``) and shown live.

    ``over``: every scheduled set is played (a truncated SPRT ends inconclusive there).
    """
    estimate = paired.estimate(sets.scores, games_per_unit=games_per_score(plan, seats))
    state: dict[str, Any] = {
        "sets": len(sets.scores),
        "excluded_sets": sets.excluded,
        "games": sets.games,
        "estimate": {
            name: getattr(estimate, name)
            for name in ("score", "sigma", "elo", "elo_low", "elo_high", "nelo", "los")
        }
        | {"nelo_low": estimate.nelo_low, "nelo_high": estimate.nelo_high},
        "distribution": [[value, count] for value, count in estimate.distribution],
        "verdict": "running",
    }
    if plan.sprt is not None:
        status = plan.sprt.sprt(plan).status(paired.score_counts(sets.scores))
        state["sprt"] = {
            "elo0": plan.sprt.elo0,
            "elo1": plan.sprt.elo1,
            "alpha": plan.sprt.alpha,
            "beta": plan.sprt.beta,
            "llr": status.llr,
            "lower": status.lower,
            "upper": status.upper,
        }
        if status.verdict in (Verdict.H0, Verdict.H1):
            state["verdict"] = status.verdict.value
    if over and state["verdict"] == "running":
        state["verdict"] = "inconclusive" if plan.sprt is not None else "done"
    return state


def games_per_score(plan: ComparePlan, seats: int) -> int:
    """How many games of each bot a set's score averages (scales normalized Elo to a game)."""
    return 2 if plan.head_to_head else seats


def summary(t: StoredTournament) -> dict[str, Any]:
    """A stored comparison's plan and its state after the last game, as plain data (the web
    face's JSON, the admin API's ``Comparison``): the SPRT's bounds included, and the state of
    a comparison with nothing stored yet (``running``, no sets, an even score)."""
    plan = plan_of(t)
    state: dict[str, Any] = t.verdict or {
        "sets": 0,
        "excluded_sets": 0,
        "games": 0,
        "estimate": {"score": 0.5, "los": 0.5},
        "distribution": [],
        "verdict": "running",
    }
    sprt: dict[str, Any] | None = None
    if plan.sprt is not None:
        test = plan.sprt.sprt(plan)
        sprt = {
            **asdict(plan.sprt),
            "llr": float(state.get("sprt", {}).get("llr", 0.0)),
            "lower": test.lower,
            "upper": test.upper,
        }
    return {
        "candidate": plan.candidate,
        "baseline": plan.baseline,
        "opponents": list(plan.opponents),
        "max_sets": plan.max_sets,
        "verdict": str(state.get("verdict", "running")),
        "sets": int(state.get("sets", 0)),
        "excluded_sets": int(state.get("excluded_sets", 0)),
        "estimate": dict(state.get("estimate", {})),
        "distribution": [[float(v), int(n)] for v, n in state.get("distribution", [])],
        "sprt": sprt,
    }


def decided(state: dict[str, Any]) -> bool:
    """Whether a stored comparison state ends the comparison (its SPRT crossed a bound)."""
    return state.get("verdict") in ("H0", "H1")

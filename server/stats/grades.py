"""Grades: what a teacher pastes into a gradebook, from one or more finished tournaments.

Pure (no I/O): the caller reads the stored rows (the tournaments, their matches, the course's
bots) and this module turns them into one row per student bot (docs/ratings.md: grades):

* **the rating** is the batch fit of the graded games (``batch.py``) anchored at the course's
  frozen baselines: each ``house:NAME`` entrant held at its fixed rating (``fit(fixed=...)``),
  so a rating of 1500 means "as strong as the baseline rated 1500" in every tournament and every
  term, with its 95% bootstrap interval (the baselines are held in every round too);
* **the record**: games, wins, draws, losses and points (wins + draws / 2) over the counted
  games, and faults over every stored game of the tournaments (a voided game's fault counts);
* **against each baseline**: the paired comparison (``server/stats/paired.py``) over the
  duplicate sets in which the bot and the baseline both sat on different sides. A set's score is
  the bot's mean pairwise score against the baseline over those games (win 1, draw 1/2, loss 0),
  so the luck of the deal cancels inside a set and the sets are the independent units; the
  verdict is "better" or "worse" when the two-sided p-value of "no difference" is below 0.05,
  else "not significant";
* **every owner of the course** has a row: one per bot they entered, or one marked
  "no submission" (no bot, no numbers) when none of their bots played;
* **the grade**, when a scale is given (``grade_scale.py``);
* **regrades** are counted once: a regrade's game carried over from its original (unplayed,
  ``carried_from``) is left out when that original game is graded too, and each regrade graded
  says what it replaced and carried (:class:`RegradeNote`).

The same stored rows and bootstrap seed always give the same grades, to the bit.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from domino_arena.server.ladder.batch import BOOTSTRAP_SEED, batch_standings, counted, pool_key
from domino_arena.server.ladder.fit import fit_game_of
from domino_arena.server.ladder.fit_bootstrap import DEFAULT_ROUNDS
from domino_arena.server.ladder.ratings_store import rated_game_of
from domino_arena.server.stats.grade_scale import GRADED, NO_SUBMISSION, GradeScale
from domino_arena.server.stats.paired import estimate, normal_cdf, set_score
from domino_arena.server.store.bots import StoredBot
from domino_arena.server.store.courses import aliases
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tables import HOUSE_PREFIX
from domino_arena.server.store.tournaments import StoredTournament, TournamentState

if TYPE_CHECKING:  # the analyses' store loads the analysis package: only its type is read
    from domino_arena.server.store.analyses import AnalysedFigures

SIGNIFICANCE: Final = 0.05
"""The two-sided p-value below which a result against a baseline is "better" or "worse"."""
VERDICTS: Final = ("better", "worse", "not significant")


class GradeError(ValueError):
    """Tournaments that cannot be graded together; the message names the field and the rule."""


@dataclass(frozen=True, slots=True)
class BaselineGrade:
    """One bot against one frozen baseline: the paired comparison over their shared sets."""

    baseline: str
    """The house bot's name (``greedy``, not ``house:greedy``)."""
    games: int
    sets: int
    score: float
    elo: float
    elo_low: float
    elo_high: float
    los: float
    p_value: float
    verdict: str


@dataclass(frozen=True, slots=True)
class BotGrade:
    """One student bot's line of the gradebook."""

    owner: str
    bot: str
    rank: int
    """By rating among every bot and baseline graded, 1 = best (equal ratings share a rank)."""
    rating: float
    rating_low: float
    rating_high: float
    games: int
    wins: int
    draws: int
    losses: int
    faults: int
    points: float
    baselines: tuple[BaselineGrade, ...]
    status: str = GRADED
    """:data:`GRADED`, or :data:`NO_SUBMISSION` (``bot`` empty, every number 0)."""
    grade: str = ""
    """By the scale; "" without one, when no rule is met, or for no submission."""
    analysed_games: int = 0
    """Its games of the graded tournaments that were analysed (docs/analysis.md); 0: none,
    and the two figures below mean nothing."""
    mean_loss: float = 0.0
    """Expected points lost per decision over those games."""
    accuracy: float = 0.0
    """The mean of those games' accuracy (0 to 100)."""


def no_submission(owner: str) -> BotGrade:
    """The row of an owner of the course none of whose bots played in the graded games."""
    return BotGrade(owner, "", 0, 0.0, 0.0, 0.0, 0, 0, 0, 0, 0, 0.0, (), NO_SUBMISSION)


@dataclass(frozen=True, slots=True)
class RegradeNote:
    """A graded regrade: what it replaced, and its carried games."""

    tournament_id: str
    regrade_of: str
    replaced: tuple[tuple[str, str], ...]
    carried: int
    """Games copied from the original, unplayed."""
    counted_once: int
    """Of those, the games left out because their original game is graded too."""


@dataclass(frozen=True, slots=True)
class Grades:
    """The gradebook of some finished tournaments of one course and one game."""

    course: str
    game: str
    tournament_ids: tuple[str, ...]
    grades: tuple[BotGrade, ...]
    """By owner, then bot."""
    baselines: tuple[tuple[str, float], ...]
    """The anchors: (house bot name, fixed rating), by name."""
    games: int
    rounds: int
    anonymous: bool
    regrades: tuple[RegradeNote, ...] = ()
    scale: str = ""


def grades(
    tournaments: Sequence[StoredTournament],
    matches: Sequence[StoredMatch],
    bots: Sequence[StoredBot],
    *,
    anonymous: bool = False,
    rounds: int = DEFAULT_ROUNDS,
    seed: int = BOOTSTRAP_SEED,
    owners: Sequence[str] = (),
    scale: GradeScale | None = None,
    analysed: Mapping[str, AnalysedFigures] | None = None,
) -> Grades:
    """Grade ``matches`` (the stored matches of ``tournaments``).

    ``owners``: every owner of the course; one with no bot graded gets a "no submission" row.
    ``scale`` gives each bot its grade. ``analysed``: each bot's figures over its analysed
    games of the tournaments (:func:`.analyses.analysed_figures`), carried into its row.

    ``bots`` are the course's bots (deleted ones too): their owners, and the aliases when
    ``anonymous``. An entrant's owner is the tournament's record of it (what the seating rule
    saw), else its bot row's, else none ("").

    Raises:
        GradeError: no tournaments, tournaments of several courses or games (naming
            ``tournament_ids[i]``), one not finished, baselines with two different ratings, or
            games the fit refuses (none counted, parts that never met: the message says which).
        ScaleError: the scale names a baseline the tournaments did not seat.
    """
    first = _check(tournaments)
    ids = {t.id for t in tournaments}
    mine, notes = _counted_once(tournaments, [m for m in matches if m.tournament_id in ids])
    fixed_by_name: dict[str, float] = {}
    for index, t in enumerate(tournaments):
        for name, rating in t.baselines:
            if fixed_by_name.setdefault(name, rating) != rating:
                raise GradeError(
                    f"tournament_ids[{index}]: baseline {name!r} is held at {rating} there and "
                    f"at {fixed_by_name[name]} in another graded tournament; expected one rating"
                )
    if scale is not None:
        scale.check_baselines(fixed_by_name)
    fixed = {HOUSE_PREFIX + name: rating for name, rating in fixed_by_name.items()}
    scored = counted(mine, ladder=False)
    try:
        table = batch_standings(scored, game=first.game, rounds=rounds, seed=seed, fixed=fixed)
    except ValueError as exc:
        raise GradeError(str(exc)) from None
    pool = [m for m in scored if pool_key(m) == table.key]
    owner_of = _owners(tournaments, bots)
    names = aliases(bots) if anonymous else None
    rank_of = _ranks(table.point.standings())
    record = _records(pool)
    faults = Counter[str]()
    for m in mine:
        for seat, bot in enumerate(m.seats):
            faults[bot] += m.faults[seat] if m.faults else 0
    rows: list[BotGrade] = []
    for bot, rating in table.point.ratings.items():
        if bot.startswith(HOUSE_PREFIX):
            continue
        wins, draws, losses = record.get(bot, (0, 0, 0))
        # The official row's: a one-sided rating (never behind, or never ahead of, the rest)
        # has its open end infinite, empty in the CSV (docs/ratings.md), never a narrow band.
        official = table.row(bot)
        low, high = (
            table.spread.intervals[bot] if official is None else (official.low, official.high)
        )
        owner = owner_of.get(bot, "")
        versus = tuple(against(pool, bot, HOUSE_PREFIX + name) for name in sorted(fixed_by_name))
        verdicts = {b.baseline: b.verdict for b in versus}
        figures = (analysed or {}).get(bot)
        rows.append(
            BotGrade(
                owner=names.owner(owner) if names else owner,
                bot=names.bot(bot) if names else bot,
                rank=rank_of[bot],
                rating=rating,
                rating_low=low,
                rating_high=high,
                games=wins + draws + losses,
                wins=wins,
                draws=draws,
                losses=losses,
                faults=faults[bot],
                points=wins + draws / 2,
                baselines=versus,
                grade=scale.grade(rating, verdicts) if scale is not None else "",
                analysed_games=figures.games if figures else 0,
                mean_loss=figures.mean_loss_points if figures else 0.0,
                accuracy=figures.accuracy if figures else 0.0,
            )
        )
    entered = {owner_of.get(bot, "") for bot in table.point.ratings}
    for owner in sorted(set(owners) - entered):
        rows.append(no_submission(names.owner(owner) if names else owner))
    rows.sort(key=lambda row: (row.owner, row.bot))
    return Grades(
        course=first.course,
        game=first.game,
        tournament_ids=tuple(t.id for t in tournaments),
        grades=tuple(rows),
        baselines=tuple(sorted(fixed_by_name.items())),
        games=len(pool),
        rounds=rounds,
        anonymous=anonymous,
        regrades=notes,
        scale=scale.text if scale is not None else "",
    )


def _counted_once(
    tournaments: Sequence[StoredTournament], matches: Sequence[StoredMatch]
) -> tuple[list[StoredMatch], tuple[RegradeNote, ...]]:
    """``matches`` without the regrades' carried copies of games graded too, and a note per
    regrade (docs/courses.md: regrades in grades)."""
    graded = {m.id for m in matches}
    kept = [m for m in matches if m.carried_from is None or m.carried_from not in graded]
    notes = []
    for t in sorted(tournaments, key=lambda t: t.id):
        if t.regrade_of is None:
            continue
        copies = [m for m in matches if m.tournament_id == t.id and m.carried_from is not None]
        notes.append(
            RegradeNote(
                tournament_id=t.id,
                regrade_of=t.regrade_of,
                replaced=tuple(t.replaced),
                carried=len(copies),
                counted_once=sum(m.carried_from in graded for m in copies),
            )
        )
    return kept, tuple(notes)


def against(matches: Sequence[StoredMatch], bot: str, baseline: str) -> BaselineGrade:
    """``bot`` against the seat ``baseline`` (``house:NAME``) over the counted ``matches``: one
    paired unit per duplicate set (else per match) in which both sat on different sides."""
    units: dict[str, list[float]] = {}
    for m in matches:
        if bot not in m.seats or baseline not in m.seats:
            continue
        game = rated_game_of(m)
        side, other = (game.side_of_seat[m.seats.index(b)] for b in (bot, baseline))
        if side == other:
            continue  # partners do not meet
        mine, theirs = game.standing[side], game.standing[other]
        score = 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0
        units.setdefault(fit_game_of(m).unit, []).append(score)
    scores = [set_score(units[unit]) for unit in sorted(units)]
    sizes = Counter(len(games) for games in units.values())
    per_unit = min(sizes, key=lambda size: (-sizes[size], size)) if sizes else 1
    result = estimate(scores, games_per_unit=per_unit)
    if result.units:
        z = (result.score - 0.5) / (result.sigma / math.sqrt(result.units))
        p_value = min(1.0, 2 * normal_cdf(-abs(z)))
    else:
        p_value = 1.0
    verdict = VERDICTS[2]
    if p_value < SIGNIFICANCE:
        verdict = VERDICTS[0] if result.score > 0.5 else VERDICTS[1]
    return BaselineGrade(
        baseline=baseline.removeprefix(HOUSE_PREFIX),
        games=sum(len(games) for games in units.values()),
        sets=result.units,
        score=result.score,
        elo=result.elo,
        elo_low=result.elo_low,
        elo_high=result.elo_high,
        los=result.los,
        p_value=p_value,
        verdict=verdict,
    )


def _check(tournaments: Sequence[StoredTournament]) -> StoredTournament:
    """The first tournament, once all are known to be finished, of one course and one game."""
    if not tournaments:
        raise GradeError("tournament_ids: expected at least one finished tournament, got none")
    first = tournaments[0]
    for index, t in enumerate(tournaments):
        if t.id in (other.id for other in tournaments[:index]):
            raise GradeError(f"tournament_ids[{index}]: {t.id!r} is listed twice")
        if t.course != first.course:
            raise GradeError(
                f"tournament_ids[{index}]: {t.id!r} is of course {t.course!r}, "
                f"tournament_ids[0] of {first.course!r}; expected tournaments of one course"
            )
        if t.game != first.game:
            raise GradeError(
                f"tournament_ids[{index}]: {t.id!r} plays {t.game!r}, tournament_ids[0] "
                f"plays {first.game!r}; expected tournaments of one game"
            )
        if t.state is not TournamentState.FINISHED:
            raise GradeError(
                f"tournament_ids[{index}]: {t.id!r} is {t.state.value}; expected a finished "
                "tournament (grades are final only once every game is played)"
            )
    return first


def _owners(
    tournaments: Sequence[StoredTournament], bots: Sequence[StoredBot]
) -> Mapping[str, str]:
    """Bot -> owner: the bot rows', overridden by what the tournaments recorded."""
    owners = {bot.name: bot.owner for bot in bots if bot.owner}
    for t in tournaments:
        owners.update({bot: owner for bot, owner in (t.owners or {}).items() if owner})
    return owners


def _ranks(table: Sequence[tuple[str, float]]) -> dict[str, int]:
    """Bot -> place in a table sorted best first; equal ratings share the higher place."""
    ranks: dict[str, int] = {}
    for position, (bot, rating) in enumerate(table, start=1):
        tied = position > 1 and table[position - 2][1] == rating
        ranks[bot] = ranks[table[position - 2][0]] if tied else position
    return ranks


def _records(matches: Sequence[StoredMatch]) -> dict[str, tuple[int, int, int]]:
    """Each bot's (wins, draws, losses) over counted matches (a forfeit is a loss)."""
    tally: dict[str, list[int]] = {}
    for m in matches:
        game = rated_game_of(m)
        for seat, bot in enumerate(m.seats):
            column = ("win", "draw", "loss").index(game.outcome(seat))
            tally.setdefault(bot, [0, 0, 0])[column] += 1
    return {bot: (won, drew, lost) for bot, (won, drew, lost) in tally.items()}

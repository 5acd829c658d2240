"""Knockout: a seeded field played down to one champion, tie by tie (issue 31).

The tournament's life asks :meth:`Bracket.next_tables` for the tables to play now, stores
them, plays each as one duplicate set (its deal under every rotation of its seats), sums the
set's games with ``rounds.round_results`` and asks again; :func:`bracket` rebuilds the whole
state from the seeding and those stored rounds, so a referee resumes after a crash by calling
it again (docs/tournaments.md: Knockout). Pure: no I/O, the standard library only.

The rules, exactly:

* **Seeding.** ``seeding`` is best first (a previous tournament's standings or a Swiss). An
  entrant keeps its seed to the end: every tie seats its entrants best seed first (the table's
  seat order before rotation), and a seed breaks the last tie of all.
* **Brackets of two** (``table_size`` 2). The field fills a bracket of ``P`` slots, the least
  power of two at or above it, in the usual bracket order (1 v P, then the halves mirrored:
  8 slots are 1-8, 4-5, 2-7, 3-6), so seeds 1 and 2 can meet only in the final, 1 to 4 only
  in the semi-finals... A seed above the field is a bye: the top ``P - n`` seeds go through
  the first stage unplayed. Later stages keep the bracket: tie ``i`` of a stage is between
  the winners of ties ``2i`` and ``2i + 1`` of the stage before (no re-pairing), so the
  bracket is a tree to draw.
* **Tables of N** (``table_size`` 3 or 4). Each stage seats the survivors, by seed, at
  ``m // N`` tables; the ``m % N`` best seeds left over have a bye. The others are dealt in
  snake order (seeds 1..t to tables 1..t, the next t to tables t..1, ...), so every table has
  one of each tier. The last of each table is eliminated. A field of ``m > N`` keeps at least
  ``N`` (``m - m // N >= N``), so the stages always end at exactly ``N`` survivors: the final
  table, which ranks them, champion first (5 at 4 seats: a table of 4 and a bye, the table's
  last out, then a final of 4). A field of exactly ``N`` is the final at once.
* **Partnerships** are out of scope: a tie is decided between entrants, not teams, and the
  referee refuses a knockout of a partnership game.
* **Deciding a tie.** A tie plays at least ``sets`` sets. Then, summed over its sets, the
  entrants tied at the decisive place (the last of a table, or of two; the first of the final)
  are narrowed by match points (``TableResult.points``, rounded to nine decimals, since sums
  of thirds are not exact in binary), then game score (``TableResult.score``). One entrant
  left: decided (``decided_by`` "points" or "score"). Still level: another set if fewer
  than ``max_sets`` were played (the sequential rule: the tie stays undecided and is in the
  next round's tables), else the worse seed is out, or the better seed wins the final
  ("seed"). A set counts however many of its games finished (a set of none is level for
  everyone).
* **The final** ranks its table by points, score, then seed (the places after the first never
  need another set); ``out`` holds all but the champion, in that order, and is
  :attr:`Bracket.final_order` after the champion.
* **Stages.** A stage is the ties of one elimination step (byes included, as ties with
  ``decided_by`` "bye"). The next stage is seated once every tie of the current one is
  decided; until then each round plays one more set of every undecided tie, so a stage lasts
  from ``sets`` to ``max_sets`` rounds.
* **Replay.** The first round is the tables :meth:`Bracket.next_tables` gives for no results;
  each element of ``rounds`` holds the results of exactly the tables the state before it
  gave, in any order, matched by their entrants (a table missing, extra or repeated is a
  ValueError naming it).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from domino_arena.server.tournaments.rounds import TableResult

MAX_SETS = 15
"""The most duplicate sets one tie may play (``KnockoutRules.max_sets``)."""

POINTS_DIGITS = 9
"""Match points are compared rounded to this many decimals (a sum of thirds is not exact in
binary: 1/3 + 2/3 and 1 must be level)."""


@dataclass(frozen=True, slots=True)
class KnockoutRules:
    """How a knockout seats and decides its ties (module doc).

    Raises:
        ValueError: ``table_size`` outside 2..4, or not ``1 <= sets <= max_sets <= 15``.
    """

    table_size: int
    """The game's seats: 2 = brackets of two; 3-4 = tables of N whose last is eliminated."""
    sets: int = 1
    """Duplicate sets every tie plays at least."""
    max_sets: int = 1
    """While a tie is level after ``sets``, another set, up to this many (= ``sets``: fixed)."""

    def __post_init__(self) -> None:
        _check_table_size(self.table_size)
        if self.sets < 1:
            raise ValueError(f"sets: expected at least 1 duplicate set a tie, got {self.sets}")
        if not self.sets <= self.max_sets <= MAX_SETS:
            raise ValueError(
                f"max_sets: expected from sets ({self.sets}) to {MAX_SETS}, got {self.max_sets}"
            )


@dataclass(frozen=True, slots=True)
class Tie:
    """One table of a stage and the sets it has played (a bye: one entrant, no sets)."""

    stage: int
    """0 = the first stage."""
    entrants: tuple[str, ...]
    """Best seed first: also the table's seat order before rotation."""
    sets: tuple[TableResult, ...]
    """The sets played so far, in order, each with its entrants in the tie's order."""
    out: tuple[str, ...]
    """Eliminated: one entrant, or (the final) all but the champion, best first; empty while
    undecided and for a bye."""
    decided_by: str
    """"" while undecided; else "points", "score", "seed" or "bye" (module doc)."""

    @property
    def decided(self) -> bool:
        return self.decided_by != ""

    @property
    def through(self) -> tuple[str, ...]:
        """Who goes on (the entrants less ``out``, best seed first); empty while undecided."""
        if not self.decided:
            return ()
        return tuple(entrant for entrant in self.entrants if entrant not in self.out)


@dataclass(frozen=True, slots=True)
class Bracket:
    """A knockout's state after the rounds played so far (:func:`bracket`)."""

    seeding: tuple[str, ...]
    rules: KnockoutRules
    stages: tuple[tuple[Tie, ...], ...]
    """Every stage begun so far; a later stage exists only when the earlier is all decided.
    The last stage of a finished knockout is the final (one tie)."""
    champion: str | None
    final_order: tuple[str, ...]
    """Once over: the final table ranked, champion first; empty before."""

    def next_tables(self) -> tuple[tuple[str, ...], ...]:
        """The undecided ties' tables (seat order before rotation), each to play one more set
        now, in the stage's order; ``()`` once the champion is known."""
        if self.champion is not None:
            return ()
        return tuple(tie.entrants for tie in self.stages[-1] if not tie.decided)


def bracket(
    seeding: Sequence[str], rules: KnockoutRules, rounds: Sequence[Sequence[TableResult]]
) -> Bracket:
    """The knockout of ``seeding`` under ``rules`` after ``rounds`` (module doc: Replay).

    Raises:
        ValueError: a bad seeding (repeated or empty names, fewer entrants than seats), or a
            round whose tables are not exactly those the state before it gave.
    """
    field = _check_seeding(seeding, rules.table_size)
    seed = {entrant: number for number, entrant in enumerate(field)}
    stages = [_first_stage(field, rules.table_size)]
    champion: str | None = None
    final_order: tuple[str, ...] = ()
    for number, results in enumerate(rounds):
        if champion is not None:
            raise ValueError(
                f"rounds[{number}]: the knockout is over (champion {champion}); "
                f"expected no more rounds, got one of {len(results)} tables"
            )
        played = _match_round(number, stages[-1], results)
        final = len(stages[-1]) == 1  # only the final is a stage of one tie
        stage = tuple(
            _decide(replace(tie, sets=(*tie.sets, played[tie.entrants])), rules, seed, final=final)
            if tie.entrants in played
            else tie
            for tie in stages[-1]
        )
        stages[-1] = stage
        if not all(tie.decided for tie in stage):
            continue
        if final:
            champion = stage[0].through[0]
            final_order = (champion, *stage[0].out)
        else:
            stages.append(_next_stage(stage, rules.table_size, seed))
    return Bracket(field, rules, tuple(stages), champion, final_order)


def stages_needed(entrants: int, table_size: int) -> int:
    """How many stages a field of ``entrants`` takes, the final included (module doc).

    Raises:
        ValueError: ``table_size`` outside 2..4, or fewer entrants than seats.
    """
    _check_table_size(table_size)
    _check_field_size(entrants, table_size)
    if table_size == 2:
        return (entrants - 1).bit_length()
    stages = 1
    while entrants > table_size:
        entrants -= entrants // table_size
        stages += 1
    return stages


def sets_bounds(entrants: int, rules: KnockoutRules) -> tuple[int, int]:
    """The fewest and most table-sets the whole knockout can play (for the planner).

    Every table but the final eliminates exactly one entrant, so whatever the results a field
    of ``n`` plays ``n - N + 1`` tables (``n - 1`` matches in brackets of two), each from
    ``sets`` to ``max_sets`` times.

    Raises:
        ValueError: fewer entrants than the rules' seats.
    """
    _check_field_size(entrants, rules.table_size)
    tables = entrants - rules.table_size + 1
    return tables * rules.sets, tables * rules.max_sets


def _check_table_size(table_size: int) -> None:
    if not 2 <= table_size <= 4:
        raise ValueError(
            f"table_size: expected 2 to 4 seats (brackets of two, or tables of 3-4 whose last "
            f"is eliminated), got {table_size}"
        )


def _check_field_size(entrants: int, table_size: int) -> None:
    if entrants < table_size:
        raise ValueError(
            f"entrants: a knockout at {table_size} seats needs at least {table_size} "
            f"entrants, got {entrants}"
        )


def _check_seeding(seeding: Sequence[str], table_size: int) -> tuple[str, ...]:
    field = tuple(seeding)
    if any(not entrant for entrant in field):
        raise ValueError("seeding: expected non-empty entrant names")
    repeated = sorted(entrant for entrant, times in Counter(field).items() if times > 1)
    if repeated:
        raise ValueError(f"seeding: expected each entrant once, got {', '.join(repeated)} twice")
    if len(field) < table_size:
        raise ValueError(
            f"seeding: a knockout at {table_size} seats needs at least {table_size} "
            f"entrants, got {len(field)}"
        )
    return field


def bracket_order(slots: int) -> tuple[int, ...]:
    """The usual bracket's seeds (1-based) slot by slot for ``slots``, a power of two: each
    pair of slots is a first-stage tie, and seeds 1 and 2 lie in opposite halves, 1 to 4 in
    different quarters..."""
    order = [1]
    while len(order) < slots:
        mirror = 2 * len(order) + 1
        order = [s for seed in order for s in (seed, mirror - seed)]
    return tuple(order)


def _first_stage(field: tuple[str, ...], table_size: int) -> tuple[Tie, ...]:
    if table_size > 2:
        return _tables_of_n(0, field, table_size)
    slots = 1 << (len(field) - 1).bit_length()
    order = bracket_order(slots)
    ties: list[Tie] = []
    for pair in range(slots // 2):
        better, worse = order[2 * pair], order[2 * pair + 1]
        if worse > len(field):
            ties.append(_bye(0, field[better - 1]))
        else:
            ties.append(Tie(0, (field[better - 1], field[worse - 1]), (), (), ""))
    return tuple(ties)


def _next_stage(stage: tuple[Tie, ...], table_size: int, seed: dict[str, int]) -> tuple[Tie, ...]:
    number = stage[0].stage + 1
    if table_size == 2:  # the bracket's tree: the winners of ties 2i and 2i+1 meet
        winners = [tie.through[0] for tie in stage]
        pairs = (
            sorted(winners[i : i + 2], key=seed.__getitem__) for i in range(0, len(winners), 2)
        )
        return tuple(Tie(number, tuple(pair), (), (), "") for pair in pairs)
    survivors = sorted((e for tie in stage for e in tie.through), key=seed.__getitem__)
    return _tables_of_n(number, tuple(survivors), table_size)


def _tables_of_n(number: int, survivors: tuple[str, ...], table_size: int) -> tuple[Tie, ...]:
    """Byes to the ``m % N`` best seeds, the rest dealt to ``m // N`` tables in snake order."""
    tables, byes = divmod(len(survivors), table_size)
    seated: list[list[str]] = [[] for _ in range(tables)]
    for place, entrant in enumerate(survivors[byes:]):
        row, column = divmod(place, tables)
        seated[column if row % 2 == 0 else tables - 1 - column].append(entrant)
    return (
        *(_bye(number, entrant) for entrant in survivors[:byes]),
        *(Tie(number, tuple(table), (), (), "") for table in seated),
    )


def _bye(number: int, entrant: str) -> Tie:
    return Tie(number, (entrant,), (), (), "bye")


def _match_round(
    number: int, stage: tuple[Tie, ...], results: Sequence[TableResult]
) -> dict[tuple[str, ...], TableResult]:
    """Each undecided tie's result in ``results``, by its table (the entrants in any order)."""
    tables = {frozenset(tie.entrants): tie.entrants for tie in stage if not tie.decided}
    played: dict[tuple[str, ...], TableResult] = {}
    for result in results:
        named = ", ".join(result.entrants)
        table = tables.get(frozenset(result.entrants))
        if table is None or len(result.entrants) != len(table):
            expected = "; ".join(", ".join(t) for t in tables.values())
            raise ValueError(
                f"rounds[{number}]: table {named} is not one of this round's tables "
                f"(expected {expected})"
            )
        if table in played:
            raise ValueError(f"rounds[{number}]: table {named}: expected one result, got two")
        if len(result.points) != len(table) or len(result.score) != len(table):
            raise ValueError(
                f"rounds[{number}]: table {named}: expected points and score for each of its "
                f"{len(table)} entrants"
            )
        played[table] = _in_order(result, table)
    missing = [", ".join(table) for table in tables.values() if table not in played]
    if missing:
        raise ValueError(
            f"rounds[{number}]: no result for table {'; '.join(missing)} "
            "(each round holds the results of every table the state before it gave)"
        )
    return played


def _in_order(result: TableResult, table: tuple[str, ...]) -> TableResult:
    """``result`` with its entrants in the table's seat order, as the tie keeps its sets."""
    if result.entrants == table:
        return result
    return TableResult(
        entrants=table,
        points=tuple(result.points_of(e) for e in table),
        score=tuple(result.score_of(e) for e in table),
        games=result.games,
    )


def _decide(tie: Tie, rules: KnockoutRules, seed: dict[str, int], *, final: bool) -> Tie:
    """``tie`` decided by its sets so far, or left undecided (module doc: Deciding a tie)."""
    if len(tie.sets) < rules.sets:
        return replace(tie, out=(), decided_by="")
    points = {
        e: round(math.fsum(s.points_of(e) for s in tie.sets), POINTS_DIGITS) for e in tie.entrants
    }
    score = {e: sum(s.score_of(e) for s in tie.sets) for e in tie.entrants}
    # The decisive place: the first of the final, else the last; sign makes it the highest key.
    sign = 1 if final else -1
    group = list(tie.entrants)
    decided_by = "seed"
    for rule, measure in (("points", points), ("score", score)):
        extreme = max(sign * measure[e] for e in group)
        group = [e for e in group if sign * measure[e] == extreme]
        if len(group) == 1:
            decided_by = rule
            break
    if decided_by == "seed" and len(tie.sets) < rules.max_sets:
        return replace(tie, out=(), decided_by="")
    ranked = sorted(tie.entrants, key=lambda e: (-points[e], -score[e], seed[e]))
    if final:
        champion = min(group, key=seed.__getitem__)
        out = tuple(e for e in ranked if e != champion)
    else:
        out = (max(group, key=seed.__getitem__),)
    return replace(tie, out=out, decided_by=decided_by)

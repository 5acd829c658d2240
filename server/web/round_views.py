"""A Swiss or knockout tournament's rounds as its page shows them (docs/web.md: rounds).

Read back through ``server/ladder/rounds.py``, the one account of a round the referee seats the
next from (docs/tournaments.md: Swiss, knockout), so the page never disagrees with it. A round
is finished once every one of its games is stored (what the referee waits for), whatever their
result: a game that ended without one counts for no one but is done. Pure but for the reads its
caller made (the stored rounds and the tournament's games).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from domino_arena.server.ladder.rounds import knockout_bracket, results_of, seeding_of
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tournament_rounds import StoredRound
from domino_arena.server.store.tournaments import StoredTournament
from domino_arena.server.tournaments.knockout import POINTS_DIGITS
from domino_arena.server.tournaments.rounds import TableResult
from domino_arena.server.tournaments.swiss import points_order
from domino_arena.server.web.bracket_svg import view_of


def _points(value: float) -> float:
    """Match points as shown: sums of thirds rounded (docs: ``knockout.POINTS_DIGITS``)."""
    return round(value, POINTS_DIGITS)


def stored_per_table(stored: StoredRound, matches: Sequence[StoredMatch]) -> list[int]:
    """How many games of each table of ``stored`` are stored (any result, or none), matched by
    their seats among the round's game indexes."""
    number = {frozenset(table): n for n, table in enumerate(stored.tables)}
    counts = [0] * len(stored.tables)
    for match in matches:
        if match.game_index in stored.indexes:
            table = number.get(frozenset(match.seats))
            if table is not None:
                counts[table] += 1
    return counts


def games_per_table(stored: StoredRound) -> int:
    """Every table of a round plays the same games (each rotation on the same deals)."""
    return stored.games // len(stored.tables)


def _winner(result: TableResult) -> str | None:
    """The entrant ahead of every other at its table on match points, then game score; None
    when the best two are level on both."""
    ranked = sorted(
        zip(result.entrants, result.points, result.score, strict=True),
        key=lambda row: (-_points(row[1]), -row[2]),
    )
    first, second = ranked[0], ranked[1]
    if (_points(first[1]), first[2]) == (_points(second[1]), second[2]):
        return None
    return first[0]


def _table(number: int, result: TableResult, stored: int, games: int) -> dict[str, Any]:
    done = stored >= games
    winner = _winner(result) if done and result.games else None
    return {
        "table": number,
        "games": games,
        "stored": stored,
        "done": done,
        "winner": winner,
        "entrants": [
            {"bot": bot, "points": _points(points), "score": score, "winner": bot == winner}
            for bot, points, score in zip(result.entrants, result.points, result.score, strict=True)
        ],
    }


def _standings(
    seeding: Sequence[str], so_far: Sequence[TableResult], byes: Counter[str]
) -> list[dict[str, Any]]:
    """Every entrant after the rounds of ``so_far``: ranked as the Swiss ranks them before its
    fit links everyone (``swiss.points_order``: match points per game played, a bye counting
    no game; equal ones, and those yet to play, by seed)."""
    points = dict.fromkeys(seeding, 0.0)
    games = dict.fromkeys(seeding, 0)
    score = dict.fromkeys(seeding, 0)
    for result in so_far:
        for bot, earned, scored in zip(result.entrants, result.points, result.score, strict=True):
            points[bot] += earned
            games[bot] += result.games
            score[bot] += scored
    return [
        {
            "rank": rank,
            "bot": bot,
            "points": _points(points[bot]),
            "games": games[bot],
            "per_game": _points(points[bot] / games[bot]) if games[bot] else None,
            "score": score[bot],
            "byes": byes[bot],
        }
        for rank, bot in enumerate(points_order(seeding, so_far), start=1)
    ]


def swiss_rounds(
    t: StoredTournament, rounds: Sequence[StoredRound], matches: Sequence[StoredMatch]
) -> list[dict[str, Any]]:
    """Each stored round of a Swiss ``t``, first first: its tables (each entrant's match
    points and game score there, the winner once the table is done), its byes, and the
    standings after it."""
    seeding = seeding_of(t)
    so_far: list[TableResult] = []
    byes: Counter[str] = Counter()
    shown = []
    for stored, results in zip(rounds, results_of(rounds, matches), strict=True):
        so_far.extend(results)
        byes.update(stored.byes)
        counts = stored_per_table(stored, matches)
        per_table = games_per_table(stored)
        shown.append(
            {
                "round": stored.number + 1,
                "created": stored.created.isoformat(),
                "done": all(count >= per_table for count in counts),
                "games": stored.games,
                "stored": sum(counts),
                "tables": [
                    _table(n, result, count, per_table)
                    for n, (result, count) in enumerate(zip(results, counts, strict=True), 1)
                ],
                "byes": list(stored.byes),
                "standings": _standings(seeding, so_far, byes),
            }
        )
    return shown


def knockout(
    t: StoredTournament, rounds: Sequence[StoredRound], matches: Sequence[StoredMatch]
) -> dict[str, Any]:
    """The bracket of a knockout ``t`` (:class:`~.bracket_svg.BracketView` as JSON) after its
    finished rounds, the round being played shown on its ties as the games stored so far.

    Raises:
        ValueError: the stored rounds do not replay (``knockout.bracket``'s words).
    """
    finished: list[StoredRound] = []
    playing: dict[tuple[str, ...], tuple[int, int]] = {}
    for stored in rounds:
        counts = stored_per_table(stored, matches)
        per_table = games_per_table(stored)
        if all(count >= per_table for count in counts) and not playing:
            finished.append(stored)
            continue
        for table, count in zip(stored.tables, counts, strict=True):
            playing[_best_first(seeding_of(t), table)] = (count, per_table)
    bracket = knockout_bracket(t, results_of(finished, matches))
    return {
        "sets": bracket.rules.sets,
        "max_sets": bracket.rules.max_sets,
        "seeding": list(bracket.seeding),
        **view_of(bracket, playing).as_json(),
    }


def _best_first(seeding: Sequence[str], table: tuple[str, ...]) -> tuple[str, ...]:
    """A table's entrants best seed first, as the bracket names its ties."""
    seed = {entrant: n for n, entrant in enumerate(seeding)}
    return tuple(sorted(table, key=lambda e: seed.get(e, len(seed))))


def rounds_view(
    t: StoredTournament, rounds: Sequence[StoredRound], matches: Sequence[StoredMatch]
) -> dict[str, Any]:
    """The page's ``swiss`` (its rounds) and ``knockout`` (its bracket), None for the other
    formats; ``rounds_error`` says why neither is shown when the stored rounds and games do
    not replay (a page says so rather than failing)."""
    shown: dict[str, Any] = {"swiss": None, "knockout": None, "rounds_error": None}
    try:
        if t.format == "swiss":
            shown["swiss"] = swiss_rounds(t, rounds, matches)
        elif t.format == "knockout":
            shown["knockout"] = knockout(t, rounds, matches)
    except ValueError as exc:
        shown["rounds_error"] = f"the stored rounds do not replay: {exc}"
    return shown

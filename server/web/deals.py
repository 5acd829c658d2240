"""A tournament's tables from its stored games: who beat whom, and each deal's set of games.

Pure (no I/O): :mod:`.views` reads the games and shows these; the numbers are the ladder's
(:func:`domino_arena.server.ladder.elo.head_to_head`, :func:`.results.entrant_results`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from domino_arena.sdk.match.results import Termination
from domino_arena.server.ladder import elo
from domino_arena.server.ladder.results import counted_games, entrant_results
from domino_arena.server.store.matches import StoredMatch, sides_of


def result_text(match: StoredMatch) -> str:
    """One line saying how ``match`` ended: who won, or why nobody did."""
    if match.winner is None:
        return f"{match.termination}: {match.detail}" if match.detail else match.termination
    sides = sides_of(match)
    winners = [bot for seat, bot in enumerate(match.seats) if sides[seat] == match.winner]
    won = f"{' & '.join(winners)} won{Termination(match.termination).how_won}"
    if match.termination != Termination.NORMAL and match.detail:
        return f"{won}: {match.detail}"
    return won


def crosstable(entrants: Sequence[str], games: Sequence[elo.RatedGame]) -> list[dict[str, Any]]:
    """Each entrant's wins, draws and losses against every other entrant (None: never met)."""
    meetings = elo.head_to_head(games)
    rows = []
    for bot in entrants:
        cells: list[dict[str, int] | None] = []
        for opponent in entrants:
            record = meetings.get((bot, opponent))
            cells.append(
                None
                if record is None or bot == opponent
                else {"wins": record.wins, "draws": record.draws, "losses": record.losses}
            )
        rows.append({"bot": bot, "against": cells})
    return rows


def by_deal(matches: Sequence[StoredMatch]) -> list[list[StoredMatch]]:
    """The games of each deal (``deal_id``), by deal id, each deal's in rotation order;
    matches stored without a deal id are left out."""
    deals: dict[int, list[StoredMatch]] = {}
    for m in matches:
        if m.deal_id is not None:
            deals.setdefault(m.deal_id, []).append(m)
    return [
        sorted(games, key=lambda m: (m.rotation is None, m.rotation or 0, m.id))
        for _, games in sorted(deals.items())
    ]


def duplicate_sets(
    deals: Sequence[Sequence[StoredMatch]], baselines: Sequence[tuple[str, float]] = ()
) -> list[dict[str, Any]]:
    """The games of each deal side by side (``deals`` as :func:`by_deal` groups them): one
    deal played under each seat rotation of its table, so the luck of the deal cancels out
    when the set is summed.

    Each set has its ``deal``, its ``games`` by rotation (seats and each seat's score) and the
    ``totals`` per bot over the set: the points of :func:`entrant_results` (a win 1, a draw
    1/2) and the bot's scores added up.
    """
    sets = []
    for games in deals:
        deal = games[0].deal_id
        bots = list(dict.fromkeys(bot for m in games for bot in m.seats))
        score = dict.fromkeys(bots, 0)
        for m in games:
            sides = sides_of(m)
            for seat, bot in enumerate(m.seats):
                score[bot] += m.scores[sides[seat]]
        sets.append(
            {
                "deal": deal,
                "games": [
                    {
                        "id": m.id,
                        "rotation": m.rotation,
                        "seats": list(m.seats),
                        "seat_scores": [m.scores[side] for side in sides_of(m)],
                        "result": result_text(m),
                    }
                    for m in games
                ],
                "totals": [
                    {"bot": row.bot, "points": row.points, "score": score[row.bot]}
                    for row in entrant_results(bots, counted_games(games, baselines))
                ],
            }
        )
    return sets

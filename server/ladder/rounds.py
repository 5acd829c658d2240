"""A Swiss or knockout tournament's stored rounds read back: results, order and bracket.

The referee seats each next round from these (``server/tournaments/lifecycle/adaptive.py``) and the
web face and the admin API show them, so both read one account of a round: a table's games summed by
``server/tournaments/rounds.round_results`` with the ladder's places
(:func:`.placed.placed_game_of`), a Swiss's order by the official fit once it links everyone, a
knockout's bracket replayed from its rounds (docs/tournaments.md: Swiss, knockout).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from domino_arena.sdk.rules import make_game
from domino_arena.server.ladder.placed import placed_game_of
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tournament_rounds import StoredRound
from domino_arena.server.store.tournaments import StoredTournament
from domino_arena.server.tournaments.knockout import Bracket, KnockoutRules, bracket
from domino_arena.server.tournaments.rounds import PlacedGame, TableResult, round_results
from domino_arena.server.tournaments.swiss import connected, points_order


def results_of(
    rounds: Sequence[StoredRound], matches: Sequence[StoredMatch]
) -> list[tuple[TableResult, ...]]:
    """Each stored round's tables with their entrants' match points and game points, from the
    stored games of ``matches`` (those of other tournaments or rounds are ignored)."""
    placed: dict[int, PlacedGame] = {}
    for match in matches:
        if match.tournament_id is None or match.game_index is None:
            continue
        game = placed_game_of(match)
        if game is not None:
            placed[match.game_index] = game
    return [
        round_results(stored.tables, [placed[i] for i in stored.indexes if i in placed])
        for stored in rounds
    ]


def seeding_of(t: StoredTournament) -> tuple[str, ...]:
    """The entrants best first: the organizer's seeding, else the entrants' order (a knockout)
    or that order shuffled by the master seed (a Swiss: its first round pairs at random)."""
    if t.seeding:
        return t.seeding
    if t.format == "knockout":
        return t.entrants
    shuffled = list(t.entrants)
    random.Random(t.seed).shuffle(shuffled)
    return tuple(shuffled)


def swiss_order(
    t: StoredTournament, results: Sequence[Sequence[TableResult]], matches: Sequence[StoredMatch]
) -> list[str]:
    """The entrants strongest first, as a Swiss seats its next round (docs/tournaments.md:
    Swiss): once the tables so far link every entrant (``swiss.connected``), the official fit
    of the tournament's games, equal ratings in :func:`seeding_of`'s order; before that (the
    fit refuses parts that never met), ``swiss.points_order``: match points per game, an
    entrant yet to play counting 0.5, ties in :func:`seeding_of`'s order."""
    # The fit (numpy, scipy) is loaded when a Swiss needs it, not by every referee that starts.
    from domino_arena.server.ladder.fit import fit, fit_game_of  # noqa: PLC0415

    seeding = seeding_of(t)
    if connected(seeding, [[table.entrants for table in tables] for tables in results]):
        games = []
        for match in matches:
            if match.tournament_id == t.id:
                try:
                    games.append(fit_game_of(match))
                except ValueError:
                    continue  # ended without a result: it tells nothing of strength
        try:
            ratings = fit(games).ratings if games else {}
        except ValueError:  # e.g. an entrant whose games all ended without a result
            ratings = {}
        if all(entrant in ratings for entrant in seeding):
            rank = {entrant: number for number, entrant in enumerate(seeding)}
            return sorted(seeding, key=lambda e: (-ratings[e], rank[e]))
    return points_order(seeding, [table for tables in results for table in tables])


def knockout_rules(t: StoredTournament) -> KnockoutRules:
    """The rules of a knockout ``t``'s ties: tables of its game's seats, its sets per tie."""
    assert t.knockout is not None, "a knockout tournament stores its sets per tie"
    return KnockoutRules(
        table_size=make_game(t.game, **t.options).num_players,
        sets=t.knockout["sets"],
        max_sets=t.knockout["max_sets"],
    )


def knockout_bracket(t: StoredTournament, results: Sequence[Sequence[TableResult]]) -> Bracket:
    """The bracket of a knockout ``t`` after the rounds whose results are given."""
    return bracket(seeding_of(t), knockout_rules(t), results)

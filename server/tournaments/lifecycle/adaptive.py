"""Swiss and knockout tournaments: each round seated from the results of the rounds before.

A fixed format knows every game from its row (``schedule.schedule_of``). An adaptive
one does not, so its life goes round by round (docs/tournaments.md: Swiss, knockout):

1. once every game of the stored rounds is stored, :func:`next_round` seats the next round from
   their results (``server/ladder/rounds.py``; Swiss: its order, then
   ``tournaments.swiss.swiss_round``; knockout: its bracket), or says the tournament is over
   (None);
2. the runner stores that round (``store/tournament_rounds.py``) before any of its games starts;
3. :func:`schedule_of_rounds` turns the stored rounds into games exactly as a fixed format's
   tables are turned (``scheduler.expand``: every rotation of a table on a duplicate deal),
   each round's game indexes and deal numbers after the previous round's.

So a restart after SIGKILL finds the round it was playing, plays only its missing games, and
never seats a round twice; the same stored rounds and games give the same next round.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from domino_arena.server.ladder.rounds import (
    knockout_bracket,
    results_of,
    seeding_of,
    swiss_order,
)
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tournament_rounds import StoredRound, new_round
from domino_arena.server.store.tournaments import StoredTournament
from domino_arena.server.tournaments.lifecycle.schedule import (
    game_of,
    partnerships_of,
    schedule_of,
    seating_rule,
)
from domino_arena.server.tournaments.rounds import ADAPTIVE_FORMATS
from domino_arena.server.tournaments.scheduler import (
    DealMode,
    ScheduledGame,
    expand,
)
from domino_arena.server.tournaments.swiss import swiss_round


def is_adaptive(t: StoredTournament) -> bool:
    """Whether ``t`` is seated round by round (its games are those of its stored rounds)."""
    return t.format in ADAPTIVE_FORMATS


def round_games(t: StoredTournament, stored: StoredRound) -> list[ScheduledGame]:
    """The games of one stored round: its tables expanded as every format's are, indexed from
    its ``first_index`` and dealt from deal numbers that start there too (a round has no more
    deals than games, so no two rounds share a deal)."""
    game = game_of(t)
    seated = [entrant for table in stored.tables for entrant in table]
    games = expand(
        seated,
        game.num_players,
        stored.tables,
        games_per_pairing=t.games_per_pairing,
        partnerships=partnerships_of(game),
        deals=DealMode(t.deals),
    )  # no seating rule here: it chose the round's tables (next_round's ``allowed``)
    return [
        replace(
            g,
            index=g.index + stored.first_index,
            deal_id=g.deal_id + stored.first_index,
            round=g.round + stored.first_index,
        )
        for g in games
    ]


def schedule_of_rounds(t: StoredTournament, rounds: Sequence[StoredRound]) -> list[ScheduledGame]:
    """The games of every stored round of ``t``, in index order."""
    return [g for stored in rounds for g in round_games(t, stored)]


class RoundsSource(Protocol):
    """Where a tournament's stored rounds are read (``Storage.tournament_rounds``)."""

    def tournament_rounds(self, tournament_id: str) -> list[StoredRound]: ...


def games_of(t: StoredTournament, storage: RoundsSource) -> list[ScheduledGame]:
    """The games of ``t`` so far: a fixed format's whole schedule, an adaptive one's stored
    rounds' games (more come as it seats rounds). The one way to count or map a tournament's
    games outside its runner (blocking: reads the store for an adaptive one)."""
    if is_adaptive(t):
        return schedule_of_rounds(t, storage.tournament_rounds(t.id))
    return schedule_of(t)


def next_round(
    t: StoredTournament, rounds: Sequence[StoredRound], matches: Sequence[StoredMatch]
) -> StoredRound | None:
    """The round to seat after ``rounds`` (every game of which is stored in ``matches``), not
    stored yet; None when the tournament is over (a Swiss's rounds are played, a knockout has
    its champion).

    Raises:
        ValueError: ``t`` is not adaptive, or the seating rule leaves no round.
    """
    results = results_of(rounds, matches)
    if t.format == "swiss":
        assert t.rounds is not None, "a Swiss tournament stores its rounds"
        if len(rounds) >= t.rounds:
            return None
        game = game_of(t)
        seated = swiss_round(
            t.entrants,
            game.num_players,
            swiss_order(t, results, matches),
            [stored.tables for stored in rounds],
            partnerships=partnerships_of(game),
            allowed=seating_rule(t) if t.owners else None,
            seed=t.seed,
        )
        tables, byes = seated.tables, seated.byes
    elif t.format == "knockout":
        now = knockout_bracket(t, results)
        tables = now.next_tables()
        if not tables:
            return None
        out = {e for stage in now.stages for tie in stage for e in tie.out}
        at_tables = {e for table in tables for e in table}
        byes = tuple(e for e in seeding_of(t) if e not in out and e not in at_tables)
    else:
        raise ValueError(f"format: {t.format} is seated once, not round by round")
    first = rounds[-1].first_index + rounds[-1].games if rounds else 0
    draft = new_round(
        t.id, len(rounds), tables=tables, byes=byes, first_index=first, games=1
    )  # its games are counted from its tables, as they will be expanded
    return replace(draft, games=len(round_games(t, draft)))

"""A finished term's tournament as stored rows, for the grades' tests (server/stats/grades.py,
the GetGrades RPC, ``domino-arena grades``).

Two-player games drawn from the logistic Elo model of known strengths, in duplicate sets: each
deal played twice with the seats swapped (one ``deal_id``), so a set is the paired unit.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import random
from collections.abc import Mapping

from domino_arena.server.store.bots import BotState, StoredBot
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tournaments import StoredTournament, TournamentState

MOMENT = dt.datetime(2026, 5, 4, 12, 0, tzinfo=dt.UTC)
TRUTH: Mapping[str, float] = {
    "ace": 1900.0,
    "eve": 1500.0,
    "house:greedy": 1500.0,
    "house:random": 1000.0,
}
OWNERS: Mapping[str, str] = {"ace": "alice", "eve": "evelyn"}
BASELINES: tuple[tuple[str, float], ...] = (("greedy", 1500.0), ("random", 1000.0))


def a_term(
    tournament_id: str = "t1",
    *,
    course: str = "cs101",
    game: str = "passing",
    truth: Mapping[str, float] = TRUTH,
    owners: Mapping[str, str] = OWNERS,
    baselines: tuple[tuple[str, float], ...] = BASELINES,
    deals: int = 40,
    seed: int = 7,
    state: TournamentState = TournamentState.FINISHED,
) -> tuple[StoredTournament, list[StoredMatch]]:
    """The tournament and its stored matches: every pairing of ``truth`` over ``deals``
    duplicate sets. Every 25th game charges its loser a fault."""
    rng = random.Random(seed)
    tournament = StoredTournament(
        id=tournament_id,
        name=f"term {tournament_id}",
        game=game,
        options={},
        entrants=tuple(truth),
        games_per_pairing=2 * deals,
        deals="duplicate",
        time_control_ms=(1000, 10000, 250),
        fault_policy="forfeit",
        max_strikes=3,
        concurrency=1,
        wait_seconds=0.0,
        seed=seed,
        rated=False,
        state=state,
        created=MOMENT,
        updated=MOMENT,
        course=course,
        owners=dict(owners),
        baselines=baselines,
    )
    matches: list[StoredMatch] = []
    for pairing, (a, b) in enumerate(itertools.combinations(truth, 2)):
        for deal in range(deals):
            for seats in ((a, b), (b, a)):
                chance = 1 / (1 + 10 ** ((truth[seats[1]] - truth[seats[0]]) / 400))
                winner = 0 if rng.random() < chance else 1
                index = len(matches)
                faults = [0, 0]
                if index % 25 == 0:
                    faults[1 - winner] = 1
                matches.append(
                    StoredMatch(
                        id=f"{tournament_id}-{index}",
                        game=game,
                        options={"players": 2},
                        seats=seats,
                        seed=rng.getrandbits(32),
                        termination="normal",
                        winner=winner,
                        scores=(100, 40) if winner == 0 else (40, 100),
                        faulted_seat=None,
                        fault=None,
                        detail="",
                        record=None,
                        created=MOMENT + dt.timedelta(seconds=index),
                        tournament_id=tournament_id,
                        game_index=index,
                        deal_id=pairing * deals + deal,
                        rotation=seats.index(a),
                        side_of_seat=(0, 1),
                        faults=tuple(faults),
                        course=course,
                    )
                )
    return tournament, matches


def term_bots(owners: Mapping[str, str] = OWNERS, *, course: str = "cs101") -> list[StoredBot]:
    """The course's bots: each owned one, registered in name order."""
    return [
        StoredBot(
            name=name,
            state=BotState.ENABLED,
            created=MOMENT + dt.timedelta(minutes=number),
            token_issued=MOMENT,
            course=course,
            owner=owner,
        )
        for number, (name, owner) in enumerate(sorted(owners.items()))
    ]


def a_regrade(
    original: StoredTournament,
    matches: list[StoredMatch],
    replaced: Mapping[str, str],
    tournament_id: str = "t1-regrade",
) -> tuple[StoredTournament, list[StoredMatch]]:
    """The regrade of a term as ``carry_over`` stores it: each game without a replaced bot
    copied (``carried_from`` the original's match), each other one played again by the new
    versions with the same result (so a double count would show as twice the games)."""
    regrade = dataclasses.replace(
        original,
        id=tournament_id,
        name=f"{original.name} (regrade)",
        entrants=tuple(replaced.get(e, e) for e in original.entrants),
        owners={replaced.get(b, b): o for b, o in (original.owners or {}).items()},
        regrade_of=original.id,
        replaced=tuple(replaced.items()),
    )
    copies = []
    for m in matches:
        again = any(bot in replaced for bot in m.seats)
        copies.append(
            dataclasses.replace(
                m,
                id=f"{tournament_id}-{m.game_index}",
                tournament_id=tournament_id,
                seats=tuple(replaced.get(bot, bot) for bot in m.seats),
                carried_from=None if again else m.id,
            )
        )
    return regrade, copies

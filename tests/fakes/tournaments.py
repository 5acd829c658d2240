"""Tournaments played in-process with bot objects: the schedule, seeds and rows of the real
runner (``server/tournaments/lifecycle/runner.py``), each game played by ``sdk.local.play_game``.

One bot object per entrant lives across all its games, as a remote bot's process does, so a bot
that remembers deals (the memorizer) can. Games are played one at a time in schedule order.
Shared by the repeat-deal tests and ``bench/repeat_deals.py``; also rows of hand-made
two-seat tournaments for the tests of the check's display.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from domino_arena.sdk.bot import Bot
from domino_arena.sdk.local import play_game
from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import Game
from domino_arena.server.play.match_spec import FinishedMatch
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.tournaments.lifecycle import match_spec, new_tournament, schedule_of
from domino_arena.server.tournaments.scheduler import DealMode


def played_tournament(
    game: Game,
    bots: Mapping[str, Bot],
    *,
    games_per_pairing: int,
    deals: DealMode = DealMode.DUPLICATE,
    seed: int,
) -> list[StoredMatch]:
    """Play every game of a round robin of ``bots`` (entrant name -> bot); return the rows."""
    t = new_tournament(
        name="in-process",
        game=game,
        entrants=tuple(bots),
        known_bots=tuple(bots),
        games_per_pairing=games_per_pairing,
        deals=deals,
        time_control=TimeControl(),
        fault_policy=FaultPolicy.FORFEIT,
        seed=seed,
        tournament_id=f"in-process-{seed}",
    )
    rows = []
    for scheduled in schedule_of(t):
        spec = match_spec(t, scheduled, game=game)
        local = play_game(
            game,
            [bots[name] for name in scheduled.seats],
            spec.seed,
            names=scheduled.seats,
            timer=None,
            match_id=spec.match_id,
        )
        finished = FinishedMatch(spec, local.result, None, (0,) * game.num_players)
        rows.append(finished.to_row())
    return rows


def two_seat_row(
    tournament_id: str,
    game_index: int,
    seats: tuple[str, str],
    winner: int | None,
    *,
    deal_id: int | None = None,
    termination: str = "normal",
    rated: bool = True,
) -> StoredMatch:
    """A finished two-player Passing Game of a tournament, as the arena stores it.

    ``deal_id`` defaults to ``game_index // 2`` (duplicate deals, rotation ``game_index % 2``).
    """
    scores = (0, 0) if winner is None else ((101, 20) if winner == 0 else (20, 101))
    return StoredMatch(
        id=f"{tournament_id}-{game_index:05d}",
        game="passing",
        options={"players": 2, "partnerships": False, "target_rule": "gamerules"},
        seats=seats,
        seed=7,
        termination=termination,
        winner=winner,
        scores=scores,
        faulted_seat=None,
        fault=None,
        detail="",
        record=None,
        created=dt.datetime(2026, 1, 1, 12, tzinfo=dt.UTC) + dt.timedelta(minutes=game_index),
        tournament_id=tournament_id,
        game_index=game_index,
        deal_id=game_index // 2 if deal_id is None else deal_id,
        rotation=game_index % 2,
        side_of_seat=(0, 1),
        faults=(0, 0),
        rated=rated,
    )


def memorizing_rows(tournament_id: str, deals: int = 12) -> list[StoredMatch]:
    """Duplicate deals where "alice" loses every deal's first game to "bob" and wins its second,
    as a bot that remembers deals would; "bob", "carol" and "dave" play honest pairs, won by
    the same bot in both seats, so the seats are even for them."""
    rows: list[StoredMatch] = []
    honest = [("bob", "carol"), ("carol", "dave"), ("dave", "bob")]
    for deal in range(deals):
        index = len(rows)
        rows.append(two_seat_row(tournament_id, index, ("alice", "bob"), 1))
        rows.append(two_seat_row(tournament_id, index + 1, ("bob", "alice"), 1))
        for a, b in honest:
            index = len(rows)
            winner = deal % 2  # a wins both rotations of even deals, b of odd ones
            rows.append(two_seat_row(tournament_id, index, (a, b), winner))
            rows.append(two_seat_row(tournament_id, index + 1, (b, a), 1 - winner))
    return rows

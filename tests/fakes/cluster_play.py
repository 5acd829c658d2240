"""The tournaments a cluster test plays, and the checks of what they stored.

A small round robin of the cluster's four house bots (:data:`~tests.fakes.cluster.BOTS`) at
two-player Passing, stored in the cluster's database before (or while) the hosts run:
:func:`stored_once` checks that every game of its schedule was stored exactly once and that
every record replays; :func:`referee_of` and :func:`charged` read a stored record's header
(which host ran it, which gateways each seat's stream went through) and its faults.
"""

from __future__ import annotations

import io
import json
from typing import Any, Final

from domino_arena.sdk.match.records import read_record, replay
from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import make_game
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tournaments import StoredTournament, TournamentState
from domino_arena.server.tournaments.lifecycle import new_tournament, schedule_of
from tests.fakes.cluster import BOTS, WAIT

TIME_CONTROL: Final = TimeControl(move=2.0, bank=10.0, grace=0.5)
HOSTS: Final = ("host-a", "host-b")
GATEWAYS: Final = ("gw-a", "gw-b")
PREFERRED: Final = {
    "random-1": ("gw-a", "gw-b"),
    "greedy-2": ("gw-a", "gw-b"),
    "random-3": ("gw-b", "gw-a"),
    "greedy-4": ("gw-b", "gw-a"),
}
"""Each of :data:`BOTS`' gateways, in the order it dials them: half on each gateway."""


def tournament(
    storage: RatedStorage,
    *,
    entrants: tuple[str, ...] = BOTS,
    games_per_pairing: int = 1,
    seed: int = 7,
    state: TournamentState = TournamentState.RUNNING,
    format: str = "round-robin",
) -> tuple[StoredTournament, int]:
    """Store a round robin of ``entrants`` at two-player Passing (each deal played from
    both seats: 12 games per ``games_per_pairing`` for the four :data:`BOTS`), in ``state``
    (RUNNING: a host takes it up at its start, as after a crash; CREATED: it waits for an
    admin's StartTournament); return it and its number of games.

    ``format`` ``swiss`` plays 3 rounds of the four bots (two tables of two, each under its
    two rotations: 12 games); ``knockout`` two sets a tie (two semi-finals, then the final:
    12 games). Their rounds are seated as they go, so their games are counted in advance here.
    """
    sets = 2 if format == "knockout" else None
    t = new_tournament(
        format=format,
        rounds=3 if format == "swiss" else None,
        knockout_sets=sets,
        knockout_max_sets=sets,
        name=f"cluster test {seed}",
        game=make_game("passing", players=2),
        entrants=entrants,
        known_bots=tuple(sorted({*BOTS, *entrants})),
        games_per_pairing=games_per_pairing,
        time_control=TIME_CONTROL,
        fault_policy=FaultPolicy.SUBSTITUTE,
        concurrency=2,
        wait_seconds=WAIT,  # a loaded machine may be slow to connect them: never play without
        seed=seed,
    )
    storage.add_tournament(t)
    if state is not TournamentState.CREATED:
        storage.set_tournament_state(t.id, state)
    return t, len(schedule_of(t)) if format == "round-robin" else 12


def stored_once(storage: RatedStorage, tournament_id: str, total: int) -> list[StoredMatch]:
    """The tournament's stored games, checked: it finished, each of the ``total`` positions
    of its schedule is stored exactly once, and every record replays to its stored result."""
    row = storage.tournament(tournament_id)
    assert row is not None and row.state is TournamentState.FINISHED, row
    matches = storage.matches(limit=10_000, tournament_id=tournament_id)
    indexes = sorted(m.game_index for m in matches if m.game_index is not None)
    assert indexes == list(range(total)), indexes
    assert len({m.id for m in matches}) == len(matches) == total
    assert storage.tournament_game_count(tournament_id) == total
    for match in matches:
        assert match.record is not None, match.id
        report = replay(read_record(io.StringIO(match.record)))
        assert report.ok, (match.id, str(report))
    return matches


def referee_of(match: StoredMatch) -> dict[str, Any]:
    """The ``referee`` of the match record's header: ``{"host": NODE, "gateways": [[NODE,
    ...], ...]}``, the host that ran it and the gateways of each seat's stream."""
    assert match.record is not None, match.id
    header = json.loads(match.record.splitlines()[0])
    referee: dict[str, Any] = header["referee"]
    return referee


def charged(match: StoredMatch) -> list[Any]:
    """Every fault the match charged a seat: its record's fault lines, and its stored fault
    (kind, seat, counts) if it has one; empty for a clean game."""
    assert match.record is not None, match.id
    lines = [json.loads(line) for line in match.record.splitlines()]
    found: list[Any] = [line for line in lines if line.get("type") == "fault"]
    if match.fault is not None or match.faulted_seat is not None or any(match.faults):
        found.append((match.fault, match.faulted_seat, match.faults, match.detail))
    return found

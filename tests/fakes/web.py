"""A storage filled for the web face's tests: real matches of every game, a tournament, faults.

The matches are whole games played in-process by modest random bots (``sdk/local.py``), so
their records are real and replay through the engine; they are stored through the real store
API (``RatedStorage.save_match``), which rates them. One tournament and one forfeited match
carry :data:`HOSTILE` text in every place stored text can come in (a tournament's name, a
match's detail, a fault's reason), for the escaping tests.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Final

from domino_arena.sdk.local import LocalResult
from domino_arena.sdk.match.records import RecordFault, record_from_state, record_lines
from domino_arena.sdk.match.results import FaultKind, Termination
from domino_arena.sdk.rules import make_game
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tournaments import StoredTournament, TournamentState

from .games import play_random

HOSTILE: Final = "<script>alert(1)</script>"
ESCAPED: Final = "&lt;script&gt;alert(1)&lt;/script&gt;"
BOTS: Final = ("alice", "bob", "carol")
GAMES_PLAYED: Final = ("passing", "straight", "doubles", "moon")
TOURNAMENT_ID: Final = "cup"
FORFEIT_ID: Final = "forfeit"
START: Final = dt.datetime(2026, 3, 4, 5, 0, tzinfo=dt.UTC)


def match_id_of(game: str, n: int) -> str:
    return f"{game}-{n}"


def stored_match_of(
    played: LocalResult,
    match_id: str,
    created: dt.datetime,
    *,
    tournament_id: str | None = None,
    game_index: int | None = None,
) -> StoredMatch:
    """The row a referee would store for a game played in-process (rated, with its record)."""
    result = played.result
    game = played.state.game
    return StoredMatch(
        id=match_id,
        game=game.name,
        options=game.options(),
        seats=played.record.seats,
        seed=played.record.seed,
        termination=result.termination.value,
        winner=result.winner,
        scores=result.scores,
        faulted_seat=result.faulted_seat,
        fault=None if result.fault is None else result.fault.value,
        detail=result.detail,
        record="".join(line + "\n" for line in record_lines(played.record)),
        created=created,
        tournament_id=tournament_id,
        game_index=game_index,
        side_of_seat=tuple(game.side_of(seat) for seat in range(game.num_players)),
        rated=True,
    )


def a_tournament(name: str = HOSTILE) -> StoredTournament:
    """A finished passing round robin of alice and bob, named ``name``."""
    return StoredTournament(
        id=TOURNAMENT_ID,
        name=name,
        game="passing",
        options=make_game("passing").options(),
        entrants=("alice", "bob"),
        games_per_pairing=2,
        deals="duplicate",
        time_control_ms=(1000, 10000, 250),
        fault_policy="substitute",
        max_strikes=3,
        concurrency=1,
        wait_seconds=30.0,
        seed=11,
        rated=True,
        state=TournamentState.FINISHED,
        created=START,
        updated=START,
    )


def forfeited_match(created: dt.datetime) -> StoredMatch:
    """A passing match bob forfeited after 6 steps: its detail and fault reason are hostile."""
    game = make_game("passing")
    state = game.new_game(5, first_seat=0)
    for _ in range(6):
        state = state.apply(state.legal_actions()[0])
    loser = state.current_seat
    fault = RecordFault(loser, 7, 6, FaultKind.TIMEOUT, f"no answer: {HOSTILE}", 1, True)
    record = record_from_state(
        state,
        seats=("alice", "bob"),
        seed=5,
        first_seat=0,
        termination=Termination.FORFEIT,
        winner=1 - loser,
        detail=HOSTILE,
        faults=[fault],
    )
    return StoredMatch(
        id=FORFEIT_ID,
        game="passing",
        options=game.options(),
        seats=("alice", "bob"),
        seed=5,
        termination="forfeit",
        winner=1 - loser,
        scores=state.scores,
        faulted_seat=loser,
        fault="timeout",
        detail=HOSTILE,
        record="".join(line + "\n" for line in record_lines(record)),
        created=created,
        faults=tuple(1 if seat == loser else 0 for seat in range(2)),
        rated=True,
    )


def fill(storage: RatedStorage, per_game: int = 2) -> dict[str, LocalResult]:
    """Store ``per_game`` real matches of each game (the passing ones in the tournament), and
    the forfeit; return the played games by match id."""
    for bot in BOTS:
        storage.add_bot(bot)
    storage.add_tournament(a_tournament())
    played: dict[str, LocalResult] = {}
    minute = 0
    for game in GAMES_PLAYED:
        for n in range(per_game):
            result = play_random(game, {}, seed=100 + n)
            names = BOTS[: len(result.record.seats)]
            result = dataclasses.replace(
                result, record=dataclasses.replace(result.record, seats=names)
            )
            match_id = match_id_of(game, n)
            in_cup = game == "passing"
            storage.save_match(
                stored_match_of(
                    result,
                    match_id,
                    START + dt.timedelta(minutes=minute),
                    tournament_id=TOURNAMENT_ID if in_cup else None,
                    game_index=n if in_cup else None,
                )
            )
            played[match_id] = result
            minute += 1
    storage.save_match(forfeited_match(START + dt.timedelta(minutes=minute)))
    return played

"""Swiss and knockout tournaments through the runner (docs/tournaments.md: Swiss, knockout).

Each round is seated from the stored results, stored before its first game, and played as every
format's tables are (every rotation on one deal); a pause or a failed game leaves the stored
round to be finished by the next runner, never seated again. The pairing and bracket rules
themselves are property-tested in tests/tournaments/.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import make_game
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.ladder.rounds import knockout_bracket, results_of
from domino_arena.server.net.lobby import Connection, Lobby
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store.tournament_rounds import StoredRound
from domino_arena.server.store.tournaments import StoredTournament, TournamentState
from domino_arena.server.tournaments.lifecycle import (
    TournamentError,
    new_tournament,
)
from domino_arena.server.tournaments.lifecycle.adaptive import schedule_of_rounds
from tests.fakes.play import FakePlay, strongest_wins
from tests.fakes.rounds import run_tournament, strength

BOTS = tuple(f"bot-{i:02d}" for i in range(16))
TWO = make_game("passing", players=2)
THREE = make_game("passing", players=3)
FOUR = make_game("passing", players=4, partnerships=True)


def a_tournament(**options: Any) -> StoredTournament:
    settings: dict[str, Any] = {
        "name": "cup",
        "game": TWO,
        "entrants": BOTS[:12],
        "known_bots": BOTS,
        "time_control": TimeControl(),
        "fault_policy": FaultPolicy.SUBSTITUTE,
        "seed": 5,
        "concurrency": 4,
    }
    settings.update(options)
    return new_tournament(**settings)


class Field:
    """A storage with the bots, a lobby where they are all connected, and a play that stores
    each match with the strongest bot's side winning."""

    def __init__(self, tmp_path: Path, t: StoredTournament) -> None:
        self.storage = RatedStorage(f"sqlite:///{tmp_path / 'arena.db'}")
        self.storage.open()
        for name in BOTS:
            self.storage.add_bot(name)
        self.t = t
        self.storage.add_tournament(t)
        self.lobby = Lobby()
        for name in t.entrants:
            self.lobby.connect(Connection(name, [t.game]))
        self.play = FakePlay(storage=self.storage, winner=strongest_wins(strength))

    def run(self, *, pause_after: int | None = None) -> TournamentState:
        """Run a new runner to its end (or pause it once ``pause_after`` matches started)."""
        return run_tournament(self.storage, self.t, self.play, self.lobby, pause_after=pause_after)

    def rounds(self) -> list[StoredRound]:
        return self.storage.tournament_rounds(self.t.id)

    def indexes(self) -> list[int]:
        rows = self.storage.matches(limit=10_000, tournament_id=self.t.id, records=False)
        return sorted(m.game_index for m in rows if m.game_index is not None)


def assert_rounds_played_once(field: Field) -> None:
    """Every game of every stored round is stored once, no other game is, and each round was
    stored before its first game was."""
    rounds = field.rounds()
    games = schedule_of_rounds(field.t, rounds)
    assert [g.index for g in games] == list(range(len(games)))
    assert field.indexes() == list(range(len(games)))
    rows = field.storage.matches(limit=10_000, tournament_id=field.t.id, records=False)
    first_stored = {m.game_index: m.created for m in rows}
    for stored in rounds:
        assert stored.created <= min(first_stored[i] for i in stored.indexes)
        seated = [e for table in stored.tables for e in table]
        assert len(seated) == len(set(seated)), f"round {stored.number} seats an entrant twice"
        assert set(seated).isdisjoint(stored.byes)


def test_a_swiss_tournament_plays_its_rounds_seating_equals_together(tmp_path: Path) -> None:
    field = Field(tmp_path, a_tournament(format="swiss", rounds=4))
    assert field.run() is TournamentState.FINISHED
    rounds = field.rounds()
    assert [r.number for r in rounds] == [0, 1, 2, 3]
    assert all(len(r.tables) == 6 and r.games == 12 for r in rounds)  # 6 tables x 2 rotations
    assert_rounds_played_once(field)
    met = Counter(pair for r in rounds for t in r.tables for pair in combinations(sorted(t), 2))
    assert max(met.values()) == 1  # 4 rounds of 12 entrants: no pair needs to meet twice
    # Like meets like: the two strongest, who win every game but against each other, meet.
    assert any(set(t) == {"bot-11", "bot-10"} for r in rounds for t in r.tables)
    matches = field.storage.matches(limit=10_000, tournament_id=field.t.id, records=False)
    results = results_of(rounds, matches)
    points: dict[str, float] = {}
    for round_results in results:
        for table in round_results:
            for entrant, gained in zip(table.entrants, table.points, strict=True):
                points[entrant] = points.get(entrant, 0.0) + gained
    assert points["bot-11"] == 8.0  # it wins all its games
    field.storage.close()


def test_a_swiss_tournament_sized_by_games_per_entrant_and_byes_for_an_odd_field(
    tmp_path: Path,
) -> None:
    t = a_tournament(game=THREE, entrants=BOTS[:10], format="swiss", games_per_entrant=9)
    assert t.rounds == 3  # 9 games a table of 3 rotations gives each of its entrants 3
    field = Field(tmp_path, t)
    assert field.run() is TournamentState.FINISHED
    rounds = field.rounds()
    assert [len(r.byes) for r in rounds] == [1, 1, 1]
    assert len({r.byes for r in rounds}) == 3  # a different entrant sits out each round
    assert_rounds_played_once(field)
    field.storage.close()


def test_a_knockout_crowns_the_strongest_through_its_bracket(tmp_path: Path) -> None:
    t = a_tournament(entrants=BOTS[:8], format="knockout", seeding=BOTS[:8])
    field = Field(tmp_path, t)
    assert field.run() is TournamentState.FINISHED
    rounds = field.rounds()
    assert [len(r.tables) for r in rounds] == [4, 2, 1]
    assert_rounds_played_once(field)
    matches = field.storage.matches(limit=10_000, tournament_id=t.id, records=False)
    final = knockout_bracket(t, results_of(rounds, matches))
    assert final.champion == "bot-07"
    assert final.next_tables() == ()
    field.storage.close()


def test_a_knockout_at_three_seats_eliminates_the_last_of_each_table(tmp_path: Path) -> None:
    # The strongest wins each game and the other two tie: the better seed (stronger) goes on.
    t = a_tournament(game=THREE, entrants=BOTS[:9], format="knockout", seeding=BOTS[8::-1])
    field = Field(tmp_path, t)
    assert field.run() is TournamentState.FINISHED
    rounds = field.rounds()
    assert len(rounds[0].tables) == 3
    assert_rounds_played_once(field)
    matches = field.storage.matches(limit=10_000, tournament_id=t.id, records=False)
    final = knockout_bracket(t, results_of(rounds, matches))
    assert final.champion == "bot-08"
    assert "bot-00" not in {e for table in rounds[1].tables for e in table}  # last at its table
    field.storage.close()


@pytest.mark.parametrize("format", ["swiss", "knockout"])
def test_a_paused_round_is_finished_by_the_next_runner_and_never_seated_again(
    tmp_path: Path, format: str
) -> None:
    options: dict[str, Any] = {"rounds": 3} if format == "swiss" else {}
    field = Field(tmp_path, a_tournament(entrants=BOTS[:8], format=format, **options))
    assert field.run(pause_after=3) is TournamentState.PAUSED
    seated = field.rounds()
    assert len(seated) == 1
    assert 0 < len(field.indexes()) < seated[0].games
    assert field.run() is TournamentState.FINISHED
    rounds = field.rounds()
    assert rounds[0] == seated[0]
    assert_rounds_played_once(field)
    field.storage.close()


@pytest.mark.parametrize("format", ["swiss", "knockout"])
def test_a_failed_game_leaves_the_round_to_the_next_runner(tmp_path: Path, format: str) -> None:
    options: dict[str, Any] = {"rounds": 2} if format == "swiss" else {}
    field = Field(tmp_path, a_tournament(entrants=BOTS[:8], format=format, **options))
    field.play.fail[6] = RuntimeError("the database is gone")
    with pytest.raises(RuntimeError, match="the database is gone"):
        field.run()
    seated = field.rounds()
    field.play.fail.clear()
    assert field.run() is TournamentState.FINISHED
    assert field.rounds()[: len(seated)] == seated
    assert_rounds_played_once(field)
    field.storage.close()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"format": "swiss"}, "rounds: a Swiss tournament needs its size"),
        ({"format": "swiss", "rounds": 0}, "rounds: expected 1-1000"),
        ({"format": "balanced", "games_per_entrant": 4, "rounds": 2}, "rounds, knockout_sets"),
        ({"format": "knockout", "game": FOUR}, "partnerships"),
        ({"format": "knockout", "rounds": 3}, "plays until its champion"),
        ({"format": "knockout", "knockout_sets": 3, "knockout_max_sets": 2}, "knockout_sets"),
        ({"format": "knockout", "seeding": BOTS[:3]}, "seeding: expected every listed entrant"),
        ({"format": "balanced", "games_per_entrant": 4, "seeding": BOTS[:12]}, "seeding: only"),
    ],
)
def test_impossible_rounds_are_refused_with_the_field(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(TournamentError, match=message):
        a_tournament(**options)

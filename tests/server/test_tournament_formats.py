"""Balanced and gauntlet tournaments (docs/tournaments.md: formats): their schedules come from
the row alone through the round robin's expansion, and impossible ones are refused.

The designs themselves are property-tested in tests/tournaments/; here: the shape of the games
a tournament of each format plays (every table under every rotation on one deal, rounds
maximal, the same row the same schedule) and new_tournament's refusals.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import make_game
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.net.lobby import Connection, Lobby
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store.tournaments import StoredTournament, TournamentState
from domino_arena.server.tournaments.lifecycle import (
    TournamentError,
    new_tournament,
    schedule_of,
)
from domino_arena.server.tournaments.lifecycle.regrade import regrade_of
from domino_arena.server.tournaments.lifecycle.runner import TournamentRunner
from domino_arena.server.tournaments.lifecycle.schedule import design_of
from domino_arena.server.tournaments.planner import MAX_ROUND_ROBIN_GAMES
from domino_arena.server.tournaments.scheduler import ScheduledGame
from tests.fakes.play import FakePlay

BOTS = tuple(f"bot-{i:02d}" for i in range(40))
FOUR = make_game("passing", players=4, partnerships=True)
THREE = make_game("passing", players=3)


def a_tournament(**options: Any) -> StoredTournament:
    settings: dict[str, Any] = {
        "name": "cup",
        "game": FOUR,
        "entrants": BOTS[:12],
        "known_bots": BOTS,
        "time_control": TimeControl(),
        "fault_policy": FaultPolicy.SUBSTITUTE,
        "seed": 5,
    }
    settings.update(options)
    return new_tournament(**settings)


def assert_expanded(schedule: list[ScheduledGame], seats: int) -> None:
    """Every deal is one table under every rotation; rounds are maximal and seat no entrant
    twice (house baselines, hosted for every seat apart, may sit at many tables)."""
    assert [g.index for g in schedule] == list(range(len(schedule)))
    by_deal: dict[int, list[ScheduledGame]] = {}
    for g in schedule:
        by_deal.setdefault(g.deal_id, []).append(g)
    for games in by_deal.values():
        assert sorted(g.rotation for g in games) == list(range(seats))
        table = games[0].seats[seats - games[0].rotation :] + games[0].seats[: -games[0].rotation]
        table = table if games[0].rotation else games[0].seats
        for g in games:
            assert g.seats == table[g.rotation :] + table[: g.rotation]
    rounds: dict[int, list[ScheduledGame]] = {}
    for g in schedule:
        rounds.setdefault(g.round, []).append(g)
    assert [g.round for g in schedule] == sorted(g.round for g in schedule)
    for number, games in rounds.items():
        seated = [e for g in games for e in g.seats if not e.startswith("house:")]
        assert len(seated) == len(set(seated)), f"round {number} seats an entrant twice"
        later = [g for g in schedule if g.round > number]
        busy = set(seated)
        for g in later:  # maximal: a later game could not have joined this round
            own = {e for e in g.seats if not e.startswith("house:")}
            assert own & busy, f"game {g.index} could have played in round {number}"


def test_a_balanced_tournament_seats_everyone_equally_under_every_rotation() -> None:
    t = a_tournament(format="balanced", games_per_entrant=24)
    schedule = schedule_of(t)
    assert_expanded(schedule, 4)
    games = Counter(e for g in schedule for e in g.seats)
    assert set(games.values()) == {24}  # 6 tables each, every one under 4 rotations
    seats = Counter((e, g.seats.index(e)) for g in schedule for e in g.seats)
    assert set(seats.values()) == {6}  # the rotations: every seat equally often
    design = design_of(t)
    assert design is not None and design.balance.tables_per_entrant == (6, 6)
    assert schedule_of(t) == schedule  # the same row, the same schedule


def test_a_balanced_tournament_is_sized_in_whole_tables_and_per_deal() -> None:
    t = a_tournament(format="balanced", games_per_entrant=10, games_per_pairing=2)
    schedule = schedule_of(t)
    games = Counter(e for g in schedule for e in g.seats)
    assert min(games.values()) >= 10  # ceil(10 / (4 seats x 2 deals)) = 2 tables
    assert set(games.values()) == {16}
    assert len({g.deal_id for g in schedule}) == len(schedule) // 4


def test_a_gauntlet_seats_each_entrant_with_baselines_only() -> None:
    t = a_tournament(
        game=THREE,
        entrants=BOTS[:10],
        baselines=[("greedy", 1500.0), ("random", 1000.0), ("search", 1800.0)],
        format="gauntlet",
    )
    schedule = schedule_of(t)
    assert_expanded(schedule, 3)
    baselines = {"house:greedy", "house:random", "house:search"}
    for g in schedule:
        own = [e for e in g.seats if e not in baselines]
        assert len(own) == 1
    # the default: every pair of the three baselines once, each under every rotation
    assert t.games_per_entrant == 9
    assert Counter(e for g in schedule for e in g.seats if e in BOTS) == dict.fromkeys(BOTS[:10], 9)
    assert len({g.round for g in schedule}) == 9  # baselines never hold an entrant back
    assert schedule_of(t) == schedule


def test_a_two_seat_gauntlet_plays_each_baseline_from_both_seats() -> None:
    t = a_tournament(
        game=make_game("passing", players=2),
        entrants=BOTS[:5],
        baselines=[("greedy", 1500.0), ("random", 1000.0)],
        format="gauntlet",
    )
    met = Counter((g.seats[0], g.seats[1]) for g in schedule_of(t))
    for bot in BOTS[:5]:
        for house in ("house:greedy", "house:random"):
            assert met[(bot, house)] == met[(house, bot)] == 1


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"format": "ladder"}, "format: expected one of round-robin, balanced, gauntlet, swiss"),
        ({"format": "balanced"}, "games_per_entrant: a balanced tournament needs its size"),
        ({"format": "balanced", "games_per_entrant": 0}, "games_per_entrant: must be at least 1"),
        ({"games_per_entrant": 20}, "games_per_entrant: a round robin plays every table"),
        ({"format": "gauntlet"}, "baselines: a 4-seat gauntlet seats each entrant with 3"),
        (
            {"format": "balanced", "games_per_entrant": 100_000},
            "more than the 100000 a tournament may have",
        ),
    ],
)
def test_impossible_formats_are_refused_with_the_field(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(TournamentError, match=message):
        a_tournament(**options)


def test_a_round_robin_too_big_is_refused_with_the_balanced_one_to_play() -> None:
    with pytest.raises(TournamentError) as refused:
        a_tournament(entrants=BOTS)  # 40 entrants, 4 seats, partnerships: 822,510 tables
    message = str(refused.value)
    assert "a round robin of 40 entrants makes 1096680 games" in message
    assert f"more than the {MAX_ROUND_ROBIN_GAMES}" in message
    assert "--format balanced --games-per-entrant 100" in message
    balanced = a_tournament(entrants=BOTS, format="balanced", games_per_entrant=100)
    assert len(schedule_of(balanced)) == 40 * 100 // 4


def test_a_regrade_on_fresh_deals_keeps_the_designs_tables() -> None:
    """The design follows from the entrants' order and sizes, not the master seed, so a
    regrade's carried games are the same games (server/tournaments/lifecycle/regrade.py)."""
    t = a_tournament(format="balanced", games_per_entrant=12, game=THREE)
    done = dataclasses.replace(t, state=TournamentState.FINISHED)
    again = regrade_of(
        done, {"bot-03": "bot-30"}, course_bots=dict.fromkeys(BOTS, ""), fresh_deals=True
    )
    assert again.seed != t.seed and again.format == "balanced"
    renamed = [tuple("bot-30" if e == "bot-03" else e for e in g.seats) for g in schedule_of(t)]
    assert [g.seats for g in schedule_of(again)] == renamed


def test_a_gauntlets_baselines_play_at_many_tables_at_once(tmp_path: Path) -> None:
    """The runner does not hold a gauntlet's games back for its baselines (hosted for every
    seat apart): its entrants' games run at once, up to the concurrency."""
    storage = RatedStorage(f"sqlite:///{tmp_path / 'arena.db'}")
    storage.open()
    for name in BOTS[:6]:
        storage.add_bot(name)
    t = a_tournament(
        game=make_game("passing", players=2),
        entrants=BOTS[:6],
        baselines=[("greedy", 1500.0)],
        format="gauntlet",
        concurrency=6,
    )
    storage.add_tournament(t)
    lobby = Lobby()
    play = FakePlay(storage=storage)

    async def main() -> None:
        for name in BOTS[:6]:
            lobby.connect(Connection(name, ["passing"]))
        runner = TournamentRunner(t, storage=storage, play=play, lobby=lobby)
        assert await runner.run() is TournamentState.FINISHED

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert storage.tournament_game_indexes(t.id) == set(range(12))
    assert play.max_in_flight == 6  # every entrant at once, each against house:greedy
    storage.close()

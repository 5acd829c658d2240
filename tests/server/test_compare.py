"""Comparisons: the paired schedule, the set scores, and the SPRT that stops the runner.

The runner plays through a fake ``play`` whose outcomes follow from the match id alone (a
seeded coin per game with the candidate's chance of winning), so a run is deterministic
whatever the order the games end in, and a resumed run sees the same games again. Time is
trio's ``MockClock``.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio
import trio.testing

from domino_arena.sdk.match.results import FaultPolicy, MatchResult, Termination
from domino_arena.sdk.rules import Game, make_game
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.net.lobby import Connection, Lobby
from domino_arena.server.play.match_spec import FinishedMatch, MatchSpec
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tournaments import StoredTournament, TournamentState
from domino_arena.server.tournaments.lifecycle import (
    compare,
    match_spec,
    schedule_of,
)
from domino_arena.server.tournaments.lifecycle.compare import CompareError, SprtPlan, new_comparison
from domino_arena.server.tournaments.lifecycle.runner import TournamentRunner

BOTS = ("new", "old", "opp1", "opp2", "opp3")
TWO: Game = make_game("straight", players=2)
MOON: Game = make_game("moon")


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[RatedStorage]:
    store = RatedStorage(f"sqlite:///{tmp_path / 'arena.db'}")
    store.open()
    for name in BOTS:
        store.add_bot(name)
    yield store
    store.close()


def comparison(
    game: Game = TWO, opponents: tuple[str, ...] = (), **options: object
) -> StoredTournament:
    settings: dict[str, object] = {
        "time_control": TimeControl(),
        "fault_policy": FaultPolicy.FORFEIT,
        "seed": 11,
        "concurrency": 1,
        # a fixed id: the match ids, and so the coins of CoinPlay, follow from it
        "tournament_id": "comparison",
    }
    settings.update(options)
    return new_comparison(
        game=game,
        candidate="new",
        baseline="old",
        opponents=opponents,
        known_bots=BOTS,
        **settings,  # type: ignore[arg-type]
    )


# -- the schedule ---------------------------------------------------------------------------------


def test_head_to_head_sets_are_game_pairs_with_the_seats_swapped_on_one_deal() -> None:
    t = comparison(max_sets=3)
    games = schedule_of(t)
    assert [(g.seats, g.deal_id) for g in games] == [
        (("new", "old"), 0),
        (("old", "new"), 0),
        (("new", "old"), 1),
        (("old", "new"), 1),
        (("new", "old"), 2),
        (("old", "new"), 2),
    ]
    seeds = [match_spec(t, g).seed for g in games]
    assert seeds[0] == seeds[1] != seeds[2] == seeds[3]


def test_swap_one_seat_puts_each_bot_in_every_seat_against_the_same_opponents() -> None:
    t = comparison(MOON, ("opp1", "opp2"), max_sets=2)
    games = schedule_of(t)
    assert len(games) == 2 * 6
    first_set = [g.seats for g in games if g.deal_id == 0]
    assert first_set == [
        ("new", "opp1", "opp2"),
        ("opp1", "new", "opp2"),
        ("opp1", "opp2", "new"),
        ("old", "opp1", "opp2"),
        ("opp1", "old", "opp2"),
        ("opp1", "opp2", "old"),
    ]
    assert len({g.rotation for g in games if g.deal_id == 0}) == 6


@pytest.mark.parametrize(
    ("game", "opponents", "field"),
    [
        (MOON, (), "opponents: Three-Player Moon.*name 2 opponents"),
        (MOON, ("opp1",), "needs 2 opponents"),
        (TWO, ("new",), "named twice"),
        (TWO, ("ghost",), "unknown bot"),
    ],
)
def test_impossible_comparisons_are_refused_naming_the_field(
    game: Game, opponents: tuple[str, ...], field: str
) -> None:
    with pytest.raises(CompareError, match=field):
        comparison(game, opponents)


def test_a_bot_compared_with_itself_and_a_cap_of_nothing_are_refused() -> None:
    with pytest.raises(CompareError, match="baseline: must differ"):
        new_comparison(
            game=TWO,
            candidate="new",
            baseline="new",
            known_bots=BOTS,
            time_control=TimeControl(),
            fault_policy=FaultPolicy.FORFEIT,
        )
    with pytest.raises(CompareError, match="max_sets: must be at least 1"):
        comparison(max_sets=0)
    with pytest.raises(CompareError, match="more than the 100000 games"):
        comparison(MOON, ("opp1", "opp2"), max_sets=20_000)


def test_the_plan_survives_its_json_round_trip() -> None:
    t = comparison(MOON, ("opp1", "opp2"), max_sets=7, sprt=SprtPlan(0, 10, 0.1, 0.05))
    plan = compare.plan_of(t)
    assert compare.ComparePlan.from_json(plan.to_json()) == plan
    assert plan.sprt == SprtPlan(0.0, 10.0, 0.1, 0.05)


# -- set scores -----------------------------------------------------------------------------------


def row(t: StoredTournament, index: int, winner: int | None, **kw: object) -> StoredMatch:
    g = schedule_of(t)[index]
    spec = match_spec(t, g)
    sides = len(spec.game.sides)
    scores = kw.pop("scores", None) or tuple(5 if s == winner else 0 for s in range(sides))
    termination = kw.pop("termination", Termination.NORMAL)
    result = MatchResult(termination, winner, scores)  # type: ignore[arg-type]
    return FinishedMatch(spec, result, None, (0,) * len(spec.bots)).to_row()


def test_a_game_pair_scores_the_candidates_mean_and_only_complete_sets_count() -> None:
    t = comparison(max_sets=3)
    plan = compare.plan_of(t)
    rows = [
        row(t, 0, 0),  # set 0: new wins as seat 0
        row(t, 1, 1),  # ... and as seat 1: 1
        row(t, 2, 0),  # set 1: new wins, then
        row(t, 3, 0),  # old wins: 1/2
        row(t, 4, None, scores=(3, 3)),  # set 2: a draw, its pair not played yet
    ]
    sets = compare.tally(plan, 2, rows)
    assert sets.scores == (1.0, 0.5)
    assert sets.games == 5 and sets.excluded == 0


def test_a_swap_one_seat_set_scores_half_plus_half_the_difference() -> None:
    t = comparison(MOON, ("opp1", "opp2"), max_sets=1)
    plan = compare.plan_of(t)
    # new wins twice of its three games (pairwise 1, 1 and last place 0: mean 2/3);
    # old comes second each time (pairwise 1/2): the set scores 1/2 + (2/3 - 1/2) / 2.
    rows = []
    for index, g in enumerate(schedule_of(t)):
        subject = g.seats.index("new") if "new" in g.seats else g.seats.index("old")
        if "new" in g.seats:
            points = [0, 0, 0]
            points[subject] = 30 if index < 2 else -10
            points[(subject + 1) % 3] = 10
            winner = subject if index < 2 else (subject + 1) % 3
        else:
            points = [20, 20, 20]
            points[subject] = 10
            points[(subject + 1) % 3] = 30
            points[(subject + 2) % 3] = 0
            winner = (subject + 1) % 3
        rows.append(row(t, index, winner, scores=tuple(points)))
    sets = compare.tally(plan, 3, rows)
    assert sets.scores == pytest.approx((0.5 + (2 / 3 - 1 / 2) / 2,))


def test_a_set_with_a_voided_game_is_left_out_and_counted() -> None:
    t = comparison(max_sets=2)
    plan = compare.plan_of(t)
    rows = [
        row(t, 0, 0),
        row(t, 1, None, termination=Termination.VOID, scores=(0, 0)),
        row(t, 2, 0),
        row(t, 3, 1),
    ]
    sets = compare.tally(plan, 2, rows)
    assert sets.scores == (1.0,) and sets.excluded == 1


# -- the runner and the SPRT ----------------------------------------------------------------------


class CoinPlay:
    """Plays each game for a second: the candidate's side wins with chance ``p``, from a coin
    seeded by the match id (so the same game always ends the same way)."""

    def __init__(self, storage: RatedStorage, p: float, stop_after: int | None = None) -> None:
        self.storage = storage
        self.p = p
        self.played = 0
        self.stop_after = stop_after
        self.limit_hit = trio.Event()

    async def __call__(self, spec: MatchSpec) -> FinishedMatch:
        if self.stop_after is not None and self.played >= self.stop_after:
            self.limit_hit.set()
            await trio.sleep_forever()
        await trio.sleep(1)
        coin = random.Random(spec.match_id).random()
        subject = 0 if spec.bots[0] == "new" else 1
        winner = subject if coin < self.p else 1 - subject
        scores = tuple(5 if side == winner else 0 for side in range(2))
        finished = FinishedMatch(
            spec, MatchResult(Termination.NORMAL, winner, scores), None, (0, 0)
        )
        self.storage.save_match(finished.to_row())
        self.played += 1
        return finished


def runner(storage: RatedStorage, t: StoredTournament, play: CoinPlay) -> TournamentRunner:
    lobby = Lobby()
    for name in BOTS:
        lobby.connect(Connection(name, ["straight"]))
    return TournamentRunner(t, storage=storage, play=play, lobby=lobby)


def run_to_end(storage: RatedStorage, t: StoredTournament, p: float) -> TournamentState:
    async def main() -> TournamentState:
        return await runner(storage, t, CoinPlay(storage, p)).run()

    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def stored(storage: RatedStorage, t: StoredTournament) -> StoredTournament:
    found = storage.tournament(t.id)
    assert found is not None
    return found


def test_a_much_stronger_candidate_is_accepted_early_and_the_verdict_is_stored(
    storage: RatedStorage,
) -> None:
    t = comparison(max_sets=500, sprt=SprtPlan(0, 20))
    storage.add_tournament(t)
    assert run_to_end(storage, t, p=0.8) is TournamentState.FINISHED
    row_ = stored(storage, t)
    assert row_.verdict is not None and row_.verdict["verdict"] == "H1"
    assert row_.verdict["sprt"]["llr"] >= row_.verdict["sprt"]["upper"]
    assert row_.verdict["sets"] < 500
    assert storage.tournament_game_count(t.id) < 1000
    assert row_.verdict["estimate"]["elo"] > 100


def test_equal_bots_are_rejected_or_run_to_the_cap(storage: RatedStorage) -> None:
    t = comparison(max_sets=300, sprt=SprtPlan(0, 40))
    storage.add_tournament(t)
    assert run_to_end(storage, t, p=0.5) is TournamentState.FINISHED
    verdict = stored(storage, t).verdict
    assert verdict is not None and verdict["verdict"] in ("H0", "inconclusive")
    if verdict["verdict"] == "inconclusive":
        assert verdict["sets"] == 300


def test_without_an_sprt_every_set_is_played_and_estimated(storage: RatedStorage) -> None:
    t = comparison(max_sets=20)
    storage.add_tournament(t)
    assert run_to_end(storage, t, p=0.7) is TournamentState.FINISHED
    verdict = stored(storage, t).verdict
    assert verdict is not None and verdict["verdict"] == "done"
    assert verdict["sets"] == 20 and storage.tournament_game_count(t.id) == 40
    assert verdict["estimate"]["elo_low"] < verdict["estimate"]["elo"]


def test_a_comparison_cut_off_midway_resumes_to_the_same_verdict(
    storage: RatedStorage, tmp_path: Path
) -> None:
    whole = comparison(max_sets=500, sprt=SprtPlan(0, 20), tournament_id="whole")
    storage.add_tournament(whole)
    run_to_end(storage, whole, p=0.75)
    expected = stored(storage, whole).verdict
    assert expected is not None and expected["verdict"] == "H1"

    cut = comparison(max_sets=500, sprt=SprtPlan(0, 20), tournament_id="cut")
    storage.add_tournament(cut)

    async def interrupted() -> None:
        play = CoinPlay(storage, 0.75, stop_after=expected["games"] // 2)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(runner(storage, cut, play).run)
            await play.limit_hit.wait()
            nursery.cancel_scope.cancel()  # the referee dies: nothing more is stored

    trio.run(interrupted, clock=trio.testing.MockClock(autojump_threshold=0))
    assert stored(storage, cut).state is TournamentState.RUNNING
    assert run_to_end(storage, cut, p=0.75) is TournamentState.FINISHED
    resumed = stored(storage, cut).verdict
    assert resumed is not None
    # Match ids differ between the two comparisons, so compare the decisions, not the numbers.
    assert resumed["verdict"] == "H1"
    assert storage.tournament_game_count(cut.id) == resumed["games"]


def test_a_decided_comparison_plays_nothing_more_when_started_again(
    storage: RatedStorage,
) -> None:
    t = comparison(max_sets=500, sprt=SprtPlan(0, 20))
    storage.add_tournament(t)
    run_to_end(storage, t, p=0.8)
    games = storage.tournament_game_count(t.id)
    storage.set_tournament_state(t.id, TournamentState.RUNNING)
    assert run_to_end(storage, t, p=0.8) is TournamentState.FINISHED
    assert storage.tournament_game_count(t.id) == games


def test_a_comparisons_games_may_share_bots_at_once(storage: RatedStorage) -> None:
    t = comparison(max_sets=10, concurrency=4)
    storage.add_tournament(t)
    most = 0

    class Counting(CoinPlay):
        running = 0

        async def __call__(self, spec: MatchSpec) -> FinishedMatch:
            nonlocal most
            Counting.running += 1
            most = max(most, Counting.running)
            try:
                return await super().__call__(spec)
            finally:
                Counting.running -= 1

    async def main() -> None:
        await runner(storage, t, Counting(storage, 0.5)).run()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert most == 4

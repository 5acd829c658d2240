"""Grades (server/stats/grades.py) from synthetic stored matches of known strengths: the
rating anchored at the baselines, the record, the paired comparison against each baseline and
its verdict, aliases, determinism, the tournaments that cannot be graded together, a row for
every owner, grade scales, and a regrade graded with its original (each game counted once)."""

from __future__ import annotations

import dataclasses
import re

import pytest

from domino_arena.server.stats.grade_scale import ScaleError, parse_scale
from domino_arena.server.stats.grades import GradeError, grades
from domino_arena.server.store.tournaments import TournamentState
from tests.fakes.graded import a_regrade, a_term, term_bots

ROUNDS = 40


def test_a_strong_bot_is_better_than_both_baselines_and_an_equal_one_is_not_significant() -> None:
    tournament, matches = a_term()
    result = grades([tournament], matches, term_bots(), rounds=ROUNDS)
    assert (result.course, result.game, result.tournament_ids) == ("cs101", "passing", ("t1",))
    assert result.baselines == (("greedy", 1500.0), ("random", 1000.0))
    assert result.games == len(matches) and result.rounds == ROUNDS
    ace, eve = result.grades
    assert (ace.owner, ace.bot, eve.owner, eve.bot) == ("alice", "ace", "evelyn", "eve")
    greedy, random_ = ace.baselines
    assert (greedy.baseline, random_.baseline) == ("greedy", "random")
    for line in ace.baselines:
        assert line.verdict == "better" and line.p_value < 0.05 and line.los > 0.95
        assert line.elo_low < line.elo <= line.elo_high
        assert line.sets == 40 and line.games == 80
    assert ace.rating_low < ace.rating < ace.rating_high
    assert ace.rating == pytest.approx(1900, abs=150)
    level = eve.baselines[0]
    assert level.verdict == "not significant" and level.p_value >= 0.05
    assert level.elo_low < 0 < level.elo_high
    assert eve.baselines[1].verdict == "better"
    assert eve.rating == pytest.approx(1500, abs=100)
    assert (ace.rank, eve.rank) == (1, 2) or (ace.rank, eve.rank) == (1, 3)


def test_a_weak_bot_is_worse_than_a_strong_baseline() -> None:
    truth = {"zed": 1000.0, "house:greedy": 1600.0, "house:random": 1000.0}
    tournament, matches = a_term(truth=truth, owners={"zed": "zoe"})
    result = grades([tournament], matches, term_bots({"zed": "zoe"}), rounds=ROUNDS)
    (zed,) = result.grades
    greedy, random_ = zed.baselines
    assert greedy.verdict == "worse" and greedy.p_value < 0.05 and greedy.elo < 0
    assert random_.verdict == "not significant"
    assert zed.rank == 2 or zed.rank == 3


def test_the_record_counts_games_points_and_faults() -> None:
    tournament, matches = a_term()
    result = grades([tournament], matches, term_bots(), rounds=ROUNDS)
    for line in result.grades:
        mine = [m for m in matches if line.bot in m.seats]
        won = sum(1 for m in mine if m.seats[m.winner or 0] == line.bot)
        assert line.games == len(mine) == 3 * 80
        assert (line.wins, line.draws, line.losses) == (won, 0, len(mine) - won)
        assert line.points == won
        assert line.faults == sum(m.faults[m.seats.index(line.bot)] for m in mine)
    assert sum(line.faults for line in result.grades) > 0


def test_the_baselines_hold_their_ratings_and_ranks_count_them() -> None:
    tournament, matches = a_term()
    result = grades([tournament], matches, term_bots(), rounds=ROUNDS)
    ranks = sorted(line.rank for line in result.grades)
    assert len(set(ranks)) == 2 and max(ranks) <= 4


def test_the_same_rows_and_seed_give_the_same_grades_and_another_seed_other_intervals() -> None:
    tournament, matches = a_term()
    once = grades([tournament], matches, term_bots(), rounds=ROUNDS, seed=3)
    assert grades([tournament], list(reversed(matches)), term_bots(), rounds=ROUNDS, seed=3) == once
    other = grades([tournament], matches, term_bots(), rounds=ROUNDS, seed=4)
    assert other.grades[0].rating == once.grades[0].rating
    assert other.grades[0].rating_low != once.grades[0].rating_low


def test_anonymous_grades_show_aliases() -> None:
    tournament, matches = a_term()
    result = grades([tournament], matches, term_bots(), rounds=ROUNDS, anonymous=True)
    assert result.anonymous
    assert [(g.owner, g.bot) for g in result.grades] == [
        ("Student 1", "Bot 1"),
        ("Student 2", "Bot 2"),
    ]
    assert [b.baseline for b in result.grades[0].baselines] == ["greedy", "random"]


def test_two_tournaments_are_graded_together_and_other_tournaments_matches_are_ignored() -> None:
    first, one = a_term("t1", deals=20, seed=1)
    second, two = a_term("t2", deals=20, seed=2)
    _, stray = a_term("t3", deals=5, seed=3)
    result = grades([first, second], one + two + stray, term_bots(), rounds=ROUNDS)
    assert result.games == len(one) + len(two)
    assert result.grades[0].baselines[0].sets == 40


def test_an_owner_is_the_tournaments_record_else_the_bot_row() -> None:
    tournament, matches = a_term(owners={"ace": "alice"})
    result = grades([tournament], matches, term_bots(), rounds=ROUNDS)
    assert [(g.owner, g.bot) for g in result.grades] == [("alice", "ace"), ("evelyn", "eve")]
    result = grades([tournament], matches, [], rounds=ROUNDS)
    assert [(g.owner, g.bot) for g in result.grades] == [("", "eve"), ("alice", "ace")]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"course": "other"}, r"tournament_ids\[1\]: 't2' is of course 'other'"),
        ({"game": "moon"}, r"tournament_ids\[1\]: 't2' plays 'moon'"),
        ({"state": TournamentState.RUNNING}, r"tournament_ids\[1\]: 't2' is running"),
        ({"baselines": (("greedy", 1400.0),)}, r"tournament_ids\[1\]: baseline 'greedy'"),
        ({"id": "t1"}, r"tournament_ids\[1\]: 't1' is listed twice"),
    ],
)
def test_tournaments_that_cannot_be_graded_together_are_refused(
    change: dict[str, object], message: str
) -> None:
    first, matches = a_term("t1", deals=4)
    second = dataclasses.replace(a_term("t2", deals=4)[0], **change)  # type: ignore[arg-type]
    with pytest.raises(GradeError, match=message):
        grades([first, second], matches, term_bots(), rounds=ROUNDS)


def test_no_tournaments_or_no_games_are_refused() -> None:
    with pytest.raises(GradeError, match="tournament_ids: expected at least one"):
        grades([], [], [], rounds=ROUNDS)
    tournament, _ = a_term()
    with pytest.raises(GradeError, match="no rated games"):
        grades([tournament], [], [], rounds=ROUNDS)


def test_without_baselines_the_pool_mean_is_1500_and_no_baseline_columns() -> None:
    truth = {"ace": 1600.0, "eve": 1400.0}
    tournament, matches = a_term(truth=truth, baselines=(), deals=20)
    result = grades([tournament], matches, term_bots(), rounds=ROUNDS)
    assert result.baselines == ()
    ace, eve = result.grades
    assert (ace.rating + eve.rating) / 2 == pytest.approx(1500.0)
    assert ace.baselines == eve.baselines == ()
    assert (ace.rank, eve.rank) == (1, 2)


def test_a_bot_that_never_met_a_baseline_is_not_significant_against_it() -> None:
    tournament, matches = a_term(deals=6)
    apart = [m for m in matches if set(m.seats) != {"eve", "house:random"}]
    result = grades([tournament], apart, term_bots(), rounds=ROUNDS)
    eve = result.grades[1]
    against_random = eve.baselines[1]
    assert (against_random.sets, against_random.games) == (0, 0)
    assert (against_random.score, against_random.p_value) == (0.5, 1.0)
    assert against_random.verdict == "not significant"


def test_an_original_graded_with_its_regrade_counts_each_carried_game_once() -> None:
    original, played = a_term(deals=10)
    regrade, replayed = a_regrade(original, played, {"eve": "eve-v2"})
    bots = [*term_bots(), *term_bots({"eve-v2": "evelyn"})]
    both = grades([original, regrade], played + replayed, bots, rounds=ROUNDS)
    alone = grades([original], played, term_bots(), rounds=ROUNDS)
    by_bot = {line.bot: line for line in both.grades}
    assert by_bot["ace"].games == alone.grades[0].games + 20  # its 20 with eve-v2, played again
    assert by_bot["eve-v2"].games == by_bot["eve"].games == 3 * 20
    carried = sum(m.carried_from is not None for m in replayed)
    (note,) = both.regrades
    assert (note.tournament_id, note.regrade_of, note.replaced) == (
        "t1-regrade",
        "t1",
        (("eve", "eve-v2"),),
    )
    assert note.carried == note.counted_once == carried == 3 * 20
    assert both.games == len(played) + len(replayed) - carried
    (regrade_alone,) = grades([regrade], replayed, bots, rounds=ROUNDS).regrades
    assert (regrade_alone.carried, regrade_alone.counted_once) == (carried, 0)


def test_every_owner_of_the_course_has_a_row_and_a_scale_gives_grades() -> None:
    tournament, matches = a_term()
    scale = parse_scale("A:beats greedy+random,B:beats random,F")
    result = grades(
        [tournament], matches, term_bots(), owners=["alice", "evelyn", "zoe"], scale=scale
    )
    assert [(g.owner, g.bot, g.status, g.grade) for g in result.grades] == [
        ("alice", "ace", "graded", "A"),
        ("evelyn", "eve", "graded", "B"),
        ("zoe", "", "no submission", ""),
    ]
    assert result.scale == "A:beats greedy+random,B:beats random,F"
    with pytest.raises(ScaleError, match="'search' is not a baseline"):
        grades([tournament], matches, term_bots(), scale=parse_scale("A:beats search"))


def test_rating_cutoffs_and_the_catch_all() -> None:
    scale = parse_scale(" A:1600 , B:1400,C")
    assert scale.grades == ("A", "B", "C") and scale.text == "A:1600,B:1400,C"
    assert [scale.grade(rating, {}) for rating in (1700, 1600, 1500, 900)] == ["A", "A", "B", "C"]
    no_catch_all = parse_scale("A:1600")
    assert no_catch_all.grade(1500, {}) == ""
    points = parse_scale("10:beats search,7:beats greedy,0")
    assert points.grade(1500, {"greedy": "better", "search": "worse"}) == "7"
    for bad, message in [
        ("", "expected GRADE:RULE entries"),
        ("A:1600,,B", "scale entry 2: empty"),
        ("A:-5", "a rating cut-off must be 0 to 5000"),
        ("A:beats greedy+greedy", "expected 'beats NAME' or 'beats NAME+OTHER'"),
    ]:
        with pytest.raises(ScaleError, match=re.escape(message)):
            parse_scale(bad)

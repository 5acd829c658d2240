"""A Swiss's rounds and a knockout's bracket as the tournament page's data
(server/web/round_views.py), from stored rounds and games built as the referee stores them."""

from __future__ import annotations

from collections.abc import Sequence

from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tournament_rounds import StoredRound
from domino_arena.server.store.tournaments import StoredTournament
from domino_arena.server.web.round_views import rounds_view
from tests.fakes.round_tournaments import (
    GAMES_PER_TABLE,
    Outcomes,
    round_rows,
    round_tournament,
)
from tests.fakes.web import START

SWISS = round_tournament(
    "swiss", ("ann", "ben", "cat", "dan", "eve"), format="swiss", rounds=3,
    seeding=("ann", "ben", "cat", "dan", "eve"),
)  # fmt: skip


def played(
    t: StoredTournament, plan: Sequence[tuple[list[tuple[str, str]], Outcomes, tuple[str, ...]]]
) -> tuple[list[StoredRound], list[StoredMatch]]:
    """The stored rounds of ``plan`` (each: tables, outcomes, byes) and their games."""
    rounds: list[StoredRound] = []
    matches: list[StoredMatch] = []
    first = 0
    for number, (tables, outcomes, byes) in enumerate(plan):
        games = GAMES_PER_TABLE * len(tables)
        rounds.append(StoredRound(t.id, number, tuple(tables), byes, first, games, START))
        matches.extend(round_rows(t, first, tables, outcomes))
        first += games
    return rounds, matches


def swiss_plan() -> list[tuple[list[tuple[str, str]], Outcomes, tuple[str, ...]]]:
    return [
        (
            [("ann", "ben"), ("cat", "dan")],
            {("ann", "ben"): ["ann", "ann"], ("cat", "dan"): ["dan", None]},
            ("eve",),
        ),
        (
            [("ann", "dan"), ("ben", "eve")],
            {("ann", "dan"): ["dan"], ("ben", "eve"): ["eve", "ben"]},
            ("cat",),
        ),
    ]


def test_a_swiss_round_shows_its_tables_points_scores_and_winner() -> None:
    rounds, matches = played(SWISS, swiss_plan())
    shown = rounds_view(SWISS, rounds, matches)
    assert shown["knockout"] is None and shown["rounds_error"] is None
    first = shown["swiss"][0]
    assert first["round"] == 1 and first["done"] and first["byes"] == ["eve"]
    one, two = first["tables"]
    assert one["winner"] == "ann" and one["done"]
    assert [(e["bot"], e["points"], e["score"], e["winner"]) for e in one["entrants"]] == [
        ("ann", 2.0, 202, True),
        ("ben", 0.0, 40, False),
    ]
    # dan won one game and drew the other: 1.5 to 0.5.
    assert two["winner"] == "dan"
    assert [e["points"] for e in two["entrants"]] == [0.5, 1.5]


def test_an_unfinished_round_says_which_tables_are_done_and_marks_no_winner_yet() -> None:
    rounds, matches = played(SWISS, swiss_plan())
    second = rounds_view(SWISS, rounds, matches)["swiss"][1]
    assert not second["done"]
    assert (second["stored"], second["games"]) == (3, 4)
    playing, done = second["tables"]
    assert (playing["done"], playing["stored"], playing["winner"]) == (False, 1, None)
    assert playing["entrants"][1]["points"] == 1.0  # dan's game so far
    # ben and eve won one game each, 101 + 20 points each: level on both, no winner.
    assert done["done"] and done["winner"] is None


def test_the_standings_after_each_round_are_cumulative_and_ranked_per_game() -> None:
    rounds, matches = played(SWISS, swiss_plan())
    first, second = (r["standings"] for r in rounds_view(SWISS, rounds, matches)["swiss"])
    assert [(s["rank"], s["bot"], s["points"], s["games"]) for s in first] == [
        (1, "ann", 2.0, 2),
        (2, "dan", 1.5, 2),
        # eve had a bye: no game, ranked as even (0.5 a game), above the losers
        (3, "eve", 0.0, 0),
        (4, "cat", 0.5, 2),
        (5, "ben", 0.0, 2),
    ]
    assert next(s for s in first if s["bot"] == "eve")["byes"] == 1
    by_bot = {s["bot"]: s for s in second}
    assert (by_bot["dan"]["points"], by_bot["dan"]["games"]) == (2.5, 3)
    assert (by_bot["ann"]["points"], by_bot["ann"]["games"]) == (2.0, 3)
    assert by_bot["dan"]["rank"] == 1 and by_bot["cat"]["byes"] == 1
    assert by_bot["ben"]["score"] == 40 + 121


def test_a_knockout_is_its_bracket_after_its_finished_rounds() -> None:
    t = round_tournament(
        "ko", ("s1", "s2", "s3", "s4", "s5", "s6"), format="knockout",
        knockout={"sets": 1, "max_sets": 2},
    )  # fmt: skip
    quarters: Outcomes = {("s4", "s5"): ["s4", "s5"], ("s3", "s6"): ["s6", "s6"]}
    again: Outcomes = {("s4", "s5"): ["s5", "s5"]}
    semis: Outcomes = {("s1", "s5"): ["s1", "s1"], ("s2", "s6"): ["s6"]}
    rounds, matches = played(
        t,
        [
            ([("s4", "s5"), ("s3", "s6")], quarters, ()),  # s4 and s5 level: another set
            ([("s4", "s5")], again, ()),
            ([("s1", "s5"), ("s2", "s6")], semis, ()),
        ],
    )
    k = rounds_view(t, rounds, matches)["knockout"]
    assert [s["name"] for s in k["stages"]] == ["quarter-finals", "semi-finals", "final"]
    quarter = k["stages"][0]["ties"]
    assert [tie["decided_by"] for tie in quarter] == ["bye", "points", "bye", "points"]
    level_then_won = quarter[1]
    assert level_then_won["sets"] == 2
    assert [(e["bot"], e["state"], e["points"]) for e in level_then_won["entrants"]] == [
        ("s4", "out", 1.0),
        ("s5", "through", 3.0),
    ]
    # The semi-finals' round is not finished: no result yet, the games stored shown instead.
    semi = k["stages"][1]["ties"]
    assert [tie["decided_by"] for tie in semi] == ["", ""]
    assert [tie["playing"] for tie in semi] == [[2, 2], [1, 2]]
    assert semi[1]["note"] == "playing: 1 of 2 games"
    assert k["stages"][2]["ties"][0]["placeholder"]
    assert k["champion"] is None


def test_stored_rounds_that_do_not_replay_are_said_not_raised() -> None:
    t = round_tournament(
        "ko", ("s1", "s2", "s3"), format="knockout", knockout={"sets": 1, "max_sets": 1}
    )
    rounds, matches = played(t, [([("s1", "s3")], {("s1", "s3"): ["s1", "s1"]}, ())])
    shown = rounds_view(t, rounds, matches)
    assert shown["knockout"] is None
    assert shown["rounds_error"].startswith(
        "the stored rounds do not replay: rounds[0]: table s1, s3"
    )


def test_other_formats_show_no_rounds() -> None:
    t = round_tournament("rr", ("ann", "ben"), format="round-robin")
    assert rounds_view(t, [], []) == {"swiss": None, "knockout": None, "rounds_error": None}

"""The in-process round robin behind ``domino-arena round-robin``."""

from __future__ import annotations

import pytest

from domino_arena.sdk.rules import make_game
from domino_arena.server.cli import main
from domino_arena.server.local_round_robin import entrant_bot, play_configuration


def test_every_entrant_plays_the_same_number_of_games_and_wins_add_up() -> None:
    game = make_game("passing", players=3)
    entrants = ["greedy-1", "random-1", "random-2", "greedy-2"]
    standings = play_configuration(game, entrants, seed=3, games_per_pairing=1)
    # 4 tables of 3, each under 3 rotations: 12 games, 9 seats-worth per entrant.
    assert standings.games_played == 12
    assert {row.games for row in standings.table()} == {9}
    assert sum(row.wins for row in standings.table()) == standings.games_played


def test_partnership_wins_count_for_both_partners() -> None:
    game = make_game("straight", players=4, partnerships=True)
    standings = play_configuration(game, ["greedy-1", "greedy-2", "random-1", "random-2"], seed=1)
    assert sum(row.wins for row in standings.table()) == 2 * standings.games_played


def test_same_seed_same_standings() -> None:
    game = make_game("doubles", players=2)
    entrants = ["greedy-1", "random-1", "random-2"]
    first = play_configuration(game, entrants, seed=9)
    again = play_configuration(game, entrants, seed=9)
    assert [(r.name, r.wins, r.points) for r in first.table()] == [
        (r.name, r.wins, r.points) for r in again.table()
    ]


def test_entrant_names_map_to_house_bots() -> None:
    assert entrant_bot("greedy-2") == "greedy"
    assert entrant_bot("random") == "random"


def test_cli_prints_standings_for_each_configuration(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["round-robin", "--games", "doubles", "--games-per-pairing", "1", "--seed", "2"])
    out = capsys.readouterr().out
    assert code == 0
    for heading in ("Doubles, 2 players", "Doubles, 3 players", "Doubles, 4 players", "All games"):
        assert heading in out
    assert "greedy-1" in out and "win %" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--games", "chess"], "unknown game 'chess'"),
        (["--entrants", "greedy-1,wizard-1"], "'wizard-1' is not a house bot"),
        (["--entrants", "greedy-1,greedy-1"], "names must be unique"),
        (["--games-per-pairing", "0"], "must be 1 or more"),
    ],
)
def test_cli_refuses_bad_requests_in_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["round-robin", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1

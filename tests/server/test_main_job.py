"""The README's main job: a real round robin through the gRPC referee, bots as processes."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path

import pytest

from domino_arena.server.cli.main import main
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.store.tournaments import TournamentState
from tests.fakes.readme import example


def test_round_robin_plays_through_the_referee_and_prints_the_official_standings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'rr.db'}"
    (tmp_path / "mybot.py").write_text(example()[2])  # the README's bot, as a user saves it
    entrants = f"greedy-1,random-1,greedy-2=./{tmp_path.name}/mybot.py:HeavyFirst"
    argv = ["round-robin", "--games", "passing,moon", "--bots", entrants]
    with contextlib.chdir(tmp_path.parent):  # a relative path, as a user types it
        assert main([*argv, "--games-per-pairing", "1", "--db", url]) == 0
    out = capsys.readouterr().out
    assert "3 bots connected as separate processes" in out
    for title in ("Passing Game, 2 players, to 101: 6 games", "Three-Player Moon, 3 players"):
        assert title in out
    assert "official standings (" in out and "95% low" in out
    assert "±95%" not in out, "the live ladder's table is not the one printed"
    for name in ("greedy-1", "greedy-2", "random-1"):
        assert name in out

    storage = RatedStorage(url)
    storage.open()
    try:
        tournaments = storage.tournaments()
        assert [t.state for t in tournaments] == [TournamentState.FINISHED] * 2
        passing = next(t for t in tournaments if t.game == "passing")
        assert storage.tournament_game_indexes(passing.id) == set(range(6))
        for pool in ("passing", "moon"):
            ratings = storage.ratings(pool)
            assert set(ratings) == {"greedy-1", "greedy-2", "random-1"}
            assert storage.recompute_ratings(pool) == ratings
        assert sum(r.games for r in storage.ratings("passing").values()) == 12
    finally:
        storage.close()


def test_a_second_run_on_the_same_database_is_refused_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'rr.db'}"
    RatedStorage(url).open()
    storage = RatedStorage(url)
    storage.open()
    storage.add_bot("greedy-1")
    storage.close()
    argv = ["round-robin", "--games", "passing", "--bots", "greedy-1,random-1", "--db", url]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "a bot named 'greedy-1' exists already" in err and "use a fresh --db" in err


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--games", "chess"], "--games: unknown game 'chess'"),
        (["--bots", "alpha-1,random-1"], "--bots: 'alpha-1' is not a house bot"),
        (
            ["--bots", "random-1,nowhere.py:Bot"],
            "--bots: 'nowhere.py:Bot': cannot load nowhere.py:Bot: FileNotFoundError",
        ),
        (["--bots", "random-1,bad name=x.py:Bot"], "--bots: 'bad name=x.py:Bot': bad bot"),
        (["--bots", "random-1,random-1"], "--bots: names must be unique"),
        (["--bots", "random-1"], "--bots: a round robin needs 2 or more"),
        (["--entrants", "random-1"], "--bots: a round robin needs 2 or more"),  # the old name
        (["--games-per-pairing", "0"], "--games-per-pairing: must be 1 or more"),
        (["--games", "moon", "--players", "4"], "--players:"),
    ],
)
def test_round_robin_mistakes_are_one_line(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["round-robin", *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1


def test_a_bot_process_that_dies_before_dialling_in_is_reported_with_its_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Loads in the job (which checks every entrant) and dies in its own process.
    bot = tmp_path / "dies.py"
    bot.write_text(
        "import sys\n"
        "from domino_arena.bots import RandomBot\n"
        "if sys.argv[0].endswith('__main__.py'):\n"
        "    raise SystemExit('the bot process gives up')\n"
        "def Bot():\n"
        "    return RandomBot(1)\n"
    )
    url = f"sqlite:///{tmp_path / 'rr.db'}"
    argv = ["round-robin", "--games", "passing", "--bots", f"random-1,dies={bot}:Bot"]
    assert main([*argv, "--db", url, "--no-web"]) == 1
    err = capsys.readouterr().err
    assert "house bot 'dies' exited with status 1" in err
    assert "the bot process gives up" in err


def test_a_bot_started_from_stdin_needs_the_address_and_the_token_there() -> None:
    command = [sys.executable, "-m", "domino_arena.bots", "alice", "--from-stdin"]
    done = subprocess.run(
        command, input="127.0.0.1:1\n", capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert "--from-stdin: expected HOST:PORT and the token, one line each" in done.stderr
    both = subprocess.run(
        [*command, "--server", "127.0.0.1:1"], input="", capture_output=True, text=True, check=False
    )
    assert both.returncode == 2
    assert "--from-stdin reads the address and the token: give neither" in both.stderr

"""The README's main job plays alike on every run (issue 28, docs/referee.md "Reproducible
play"): ``round-robin --seed 7`` twice writes byte-identical records, the same results and the
same official standings, though its bot processes play their matches in whatever order the
referee's concurrent tables start them; and Ctrl-C stops it with one line naming the database.
"""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path
from typing import Final

import pytest

from domino_arena.server.cli.main import main
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.store.matches import StoredMatch
from tests.fakes.processes import Process, command

BOTS: Final = "greedy-1,greedy-2,random-1,random-2"
"""Four bot processes, six tables of Passing and six of Straight at two seat rotations, both
tournaments at once: each process plays twelve matches, up to eight at a time, so arrival order
varies between runs."""


def play(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> tuple[dict[str, StoredMatch], str]:
    """Run the job once into its own database; its stored matches by id and its standings."""
    url = f"sqlite:///{tmp_path / name}"
    # Two games: their tournaments play at once, each as it would alone.
    argv = ["round-robin", "--games", "passing,straight", "--bots", BOTS, "--seed", "7"]
    # No web face: its line names port 8080 only when the port is free (this machine is shared).
    assert (
        main([*argv, "--games-per-pairing", "1", "--concurrency", "4", "--db", url, "--no-web"])
        == 0
    )
    out = capsys.readouterr().out
    # In the games' order, whichever ends first (Straight's games are the shorter).
    assert out.index("Passing Game, 2 players") < out.index("Straight Dominoes, 2 players")
    # The standings from the first game's on, without the seconds each game took.
    table = re.sub(r"games in [\d.]+ s", "games in ? s", out[out.index("official standings") :])
    storage = RatedStorage(url)
    storage.open()
    try:
        matches = {m.id: m for m in storage.matches(1000)}
    finally:
        storage.close()
    return matches, table


def test_the_same_seed_gives_byte_identical_records_results_and_standings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, first_table = play(tmp_path, "one.db", capsys)
    second, second_table = play(tmp_path, "two.db", capsys)
    assert len(first) == 24
    assert first.keys() == second.keys()
    for match_id, match in first.items():
        again = second[match_id]
        assert match.record is not None and again.record is not None
        assert match.record.encode() == again.record.encode(), match_id
        assert (match.seed, match.seats, match.termination, match.winner, match.scores) == (
            again.seed,
            again.seats,
            again.termination,
            again.winner,
            again.scores,
        )
        steps = [json.loads(line) for line in match.record.splitlines()[1:-1]]
        assert all(s["think_ms"] is None for s in steps if s["type"] == "step")
    assert first_table == second_table
    assert "random-1" in first_table and "greedy-1" in first_table
    assert "straight 2p: official standings" in first_table


def test_ctrl_c_stops_the_job_with_one_line_naming_where_the_results_are(tmp_path: Path) -> None:
    argv = ["--games", "passing", "--bots", "greedy-1,random-1", "--no-web"]
    job = Process(
        command("round-robin", *argv, "--games-per-pairing", "500", "--concurrency", "1"),
        cwd=tmp_path,
    )
    try:
        database = job.wait_line("database sqlite:///").split("sqlite:///", 1)[1]
        job.wait_line("bots connected as separate processes")
        job.popen.send_signal(signal.SIGINT)
        code, out = job.finish()
    finally:
        job.stop()
    assert code == 130, out
    assert "Traceback" not in out
    url = f"sqlite:///{database}"
    assert out.splitlines()[-1] == (
        f"domino-arena: stopped by Ctrl-C; the results so far are in {url} "
        f"(domino-arena web --db {url} shows them)"
    )
    assert Path(database).exists(), "a temporary database that holds results is kept"
    Path(database).unlink()
    Path(database).parent.rmdir()

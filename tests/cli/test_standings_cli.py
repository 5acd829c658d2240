"""``domino-arena standings``: the official standings (batch fit) above the live Elo ladder,
the LOS matrix, the seat advantage, anchors, ``--json``, and a clear note when nothing can be
fitted yet. The referee is the admin API on port 0 over a real SQLite storage."""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from domino_arena.server.ladder.ratings_store import RatedStorage
from tests.fakes.admin_server import TOKEN, AdminServer, FakeArena, stored_match

from .harness import run, table_rows

BOTS = ("alice", "bob", "carol")


@pytest.fixture
def referee(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AdminServer]:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'cli.db'}")
    storage.open()
    for name in BOTS:
        storage.add_bot(name)
    server = AdminServer(FakeArena(storage))
    monkeypatch.setenv("DOMINO_ARENA_ADMIN_TOKEN", TOKEN)
    monkeypatch.setenv("DOMINO_ARENA_SERVER", server.address)
    yield server
    server.close()
    storage.close()


def fill(storage: RatedStorage, games: int = 90) -> None:
    """Games in which alice mostly beats bob and bob mostly beats carol."""
    rng = random.Random(4)
    for n in range(games):
        first, second = rng.sample(range(3), 2)
        strong = 0 if first < second else 1
        winner = strong if rng.random() < 0.8 else 1 - strong
        match = stored_match(f"m{n}", (BOTS[first], BOTS[second]), winner, minute=n % 60)
        storage.save_match(dataclasses.replace(match, seed=n, record=None))


def test_standings_show_the_official_fit_then_the_live_ladder(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    fill(referee.arena.storage)
    code, out, err = run(capsys, "standings", "passing", "--los", "--rounds", "40")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("passing 2p: official standings (plackett-luce/1; 90 games, ")
    assert "40 bootstrap rounds; pool mean 1500)" in lines[0]
    rows = table_rows(out)
    official = [row for row in rows if row[0] in {"1", "2", "3"}]
    assert [row[1] for row in official[:3]] == ["alice", "bob", "carol"]
    for row in official[:3]:
        rating, low, high = (float(x) for x in row[2:5])
        assert low <= rating <= high
    assert any(line.startswith("seat advantage, Elo against the first starter") for line in lines)
    assert "likelihood of superiority: P(row better than column)" in out
    alice = next(row for row in rows if row[0] == "alice" and len(row) == 4)
    assert alice[1] == "-" and float(alice[3]) > 0.9
    assert "passing: live Elo ladder (not the official standings)" in out


def test_an_anchor_and_json(capsys: pytest.CaptureFixture[str], referee: AdminServer) -> None:
    fill(referee.arena.storage)
    code, out, err = run(
        capsys, "standings", "passing", "--anchor", "carol=1000", "--rounds", "10", "--json"
    )
    assert (code, err) == (0, "")
    answer = json.loads(out)
    batch = answer["batch"]
    assert (batch["anchor"], batch["anchor_rating"], batch["pool"]) == (
        "carol",
        1000.0,
        "passing 2p",
    )
    carol = next(r for r in batch["rows"] if r["bot"] == "carol")
    assert carol["rating"] == pytest.approx(1000)
    assert [r["bot"] for r in answer["rows"]] == ["alice", "bob", "carol"]  # the live ladder


def test_nothing_to_fit_is_a_note_and_the_ladder_still_shows(
    capsys: pytest.CaptureFixture[str], referee: AdminServer
) -> None:
    code, out, err = run(capsys, "standings", "moon")
    assert (code, err) == (0, "")
    assert (
        out
        == "no official standings yet: moon: no rated games to fit yet\nno rated moon games yet\n"
    )
    code, out, _ = run(capsys, "standings", "moon", "--json")
    assert json.loads(out)["batch_error"] == "moon: no rated games to fit yet"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["standings"], "GAME: name a game, or a tournament with --tournament ID"),
        (["standings", "passing", "--rounds", "0"], "--rounds: must be 1 to 2000, got 0"),
        (["standings", "passing", "--anchor", "bob=x"], "--anchor: expected BOT or BOT=RATING"),
        (["standings", "passing", "--anchor", "zed"], "anchor: 'zed' played none of the games"),
        (["standings", "passing", "--players", "3"], "players: no passing 3p games to fit"),
    ],
)
def test_mistakes_are_one_line_naming_the_option(
    capsys: pytest.CaptureFixture[str], referee: AdminServer, args: list[str], words: str
) -> None:
    fill(referee.arena.storage, games=12)
    code, out, err = run(capsys, *args)
    assert (code, out) == (2, "")
    assert words in err

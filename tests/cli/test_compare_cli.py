"""``domino-arena compare``: its argument checks, and whole comparisons on a real referee.

The referee is the one ``serve`` runs (tests/fakes/referee_server.py), its bots raw gRPC
clients playing the first legal move. Polling waits are replaced by immediate re-polls (the
tests never sleep), so following a comparison costs only the games' own time.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from domino_arena.server.ladder.ratings_store import RatedStorage
from tests.fakes.referee_server import ADMIN_TOKEN, Referee

from .harness import run


@pytest.fixture
def referee(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Referee]:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'compare.db'}")
    storage.open()
    tokens = {name: storage.add_bot(name) for name in ("alice", "bob", "carol", "dave")}
    server = Referee(storage)
    try:
        for name, token in tokens.items():
            server.connect(name, token)
        monkeypatch.setenv("DOMINO_ARENA_SERVER", server.address)
        monkeypatch.setenv("DOMINO_ARENA_ADMIN_TOKEN", ADMIN_TOKEN)
        monkeypatch.setattr(time, "sleep", lambda seconds: None)
        yield server
    finally:
        server.close()
        storage.close()


@pytest.mark.parametrize(
    ("sprt", "words"),
    [
        ("5", "--sprt: expected ELO0,ELO1 or ELO0,ELO1,ALPHA,BETA, got 1 values"),
        ("0,x", "--sprt: expected numbers, got '0,x'"),
        ("0,nan", "--sprt: expected finite numbers"),
        ("0,10,0.6,0.05", "--sprt: alpha and beta must be between 0 and 0.5"),
    ],
)
def test_bad_sprt_bounds_are_refused_before_any_call(
    capsys: pytest.CaptureFixture[str], sprt: str, words: str
) -> None:
    code, out, err = run(
        capsys, "compare", "a", "b", "straight", "--sprt", sprt, "--server", "127.0.0.1:1"
    )
    assert (code, out) == (2, "")
    assert words in err


def test_the_referee_names_what_is_wrong_with_a_comparison(
    capsys: pytest.CaptureFixture[str], referee: Referee
) -> None:
    code, _, err = run(capsys, "compare", "alice", "alice", "straight")
    assert code == 2
    assert "INVALID_ARGUMENT" in err and "baseline" in err
    code, _, err = run(capsys, "compare", "alice", "zed", "straight")
    assert code == 2 and "zed" in err
    code, _, err = run(capsys, "compare", "alice", "bob", "moon")
    assert code == 2 and "opponents" in err
    code, _, err = run(capsys, "compare", "alice", "bob", "straight", "--sprt", "10,0")
    assert code == 2 and "sprt." in err


def test_a_head_to_head_comparison_runs_to_its_sets_and_reports(
    capsys: pytest.CaptureFixture[str], referee: Referee
) -> None:
    code, out, err = run(
        capsys, "compare", "alice", "bob", "straight", "--sets", "2", "--seed", "7"
    )
    assert code == 0, err
    first = out.splitlines()[0]
    found = re.fullmatch(r"comparison (\w+) started: alice vs bob, Straight Dominoes.*", first)
    assert found, out
    assert "alice (A) vs bob (B), head to head (game pairs with seats swapped)" in out
    assert "2 duplicate sets, no SPRT" in out
    assert "alice vs bob: finished; done: every set played" in out
    assert "2 complete duplicate sets, 4 games" in out
    assert "LOS" in out and "set scores of A" in out
    tid = found.group(1)
    code, status, err = run(capsys, "tournament", "status", tid)
    assert code == 0, err
    assert "done: every set played" in status and "head to head" in status


def test_compare_json_is_the_comparison_by_its_proto_names(
    capsys: pytest.CaptureFixture[str], referee: Referee
) -> None:
    code, out, err = run(
        capsys,
        *("compare", "alice", "bob", "straight", "--players", "3"),
        *("--opponents", "carol,dave", "--sets", "1"),
        *("--sprt", "0,20", "--seed", "3", "--json"),
    )
    assert code == 0, err
    answer = json.loads(out)
    assert answer["state"] == "finished"
    assert answer["games"] == 6  # A in each of 3 seats, then B: one swap-one-seat set
    comparison = answer["comparison"]
    assert comparison["candidate"] == "alice" and comparison["opponents"] == ["carol", "dave"]
    assert comparison["sets"] == 1
    assert comparison["verdict"] == "COMPARISON_VERDICT_INCONCLUSIVE"
    assert comparison["sprt"] == {"elo0": 0.0, "elo1": 20.0, "alpha": 0.05, "beta": 0.05}
    assert comparison["lower"] < 0 < comparison["upper"]
    assert sum(d["count"] for d in comparison["distribution"]) == 1

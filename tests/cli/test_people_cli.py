"""People at the table on the command line (docs/people.md): ``bot allow-people``,
``course update --human-move-seconds`` and ``serve``'s people bounds, against a real referee
(tests/fakes/referee_server.py) as an owner and an admin type them."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from domino_arena.server.cli import serve, serve_bounds
from domino_arena.server.cli.arguments import CliError
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.play.people import DEFAULT_PEOPLE, PeopleBounds
from tests.fakes.referee_server import ADMIN_TOKEN, Referee

from .harness import run


@pytest.fixture
def referee(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Referee]:
    for name in ("DOMINO_ARENA_SERVER", "DOMINO_ARENA_TOKEN", "DOMINO_ARENA_ADMIN_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    storage = RatedStorage(f"sqlite:///{tmp_path / 'cli.db'}")
    storage.open()
    storage.create_course("cs101")
    for student in ("ann", "bob"):
        (code,) = (i.code for i in storage.create_invites("cs101", 1))
        issued = storage.register_bot(code, f"{student}-v1", student)
        (tmp_path / f"{student}.owner").write_text(issued.owner_token + "\n")
    served = Referee(storage)
    yield served
    served.close()
    storage.close()


def test_an_owner_allows_people_and_stops(
    capsys: pytest.CaptureFixture[str], referee: Referee, tmp_path: Path
) -> None:
    owner = ("--owner-token-file", str(tmp_path / "ann.owner"), "--server", referee.address)
    code, out, err = run(capsys, "bot", "allow-people", "ann-v1", *owner)
    assert (code, err) == (0, "")
    assert out == "ann-v1: people of course cs101 may play against it\n"
    bot = referee.app.storage.bot("ann-v1")
    assert bot is not None and bot.allow_people
    code, out, _ = run(capsys, "bot", "allow-people", "ann-v1", "--off", "--json", *owner)
    assert code == 0 and json.loads(out)["bot"]["name"] == "ann-v1"
    bot = referee.app.storage.bot("ann-v1")
    assert bot is not None and not bot.allow_people
    code, _, err = run(capsys, "bot", "allow-people", "bob-v1", *owner)
    assert code != 0 and "is not a bot of owner ann" in err


def test_the_admin_sets_a_courses_human_move_time(
    capsys: pytest.CaptureFixture[str], referee: Referee
) -> None:
    admin = ("--admin-token", ADMIN_TOKEN, "--server", referee.address)
    code, out, err = run(
        capsys, "course", "update", "cs101", "--human-move-seconds", "30", "--json", *admin
    )
    assert (code, err) == (0, "")
    assert json.loads(out)["human_move_ms"] == 30_000
    code, out, _ = run(capsys, "course", "show", "cs101", *admin)
    assert code == 0 and "a person's move 30 s" in out
    code, _, err = run(capsys, "course", "update", "cs101", "--human-move-seconds", "601", *admin)
    assert code == 2 and "--human-move-seconds: expected 0-600 seconds, got 601" in err


def people_of(*argv: str) -> PeopleBounds:
    parser = argparse.ArgumentParser()
    serve.HANDLERS["serve"].add_arguments(parser)
    return serve_bounds.people_bounds(parser.parse_args(list(argv)))


def test_serve_reads_the_people_bounds() -> None:
    assert people_of() == DEFAULT_PEOPLE == PeopleBounds(2, 32, 30.0)
    assert people_of(
        "--max-matches-per-person", "1", "--max-people-matches", "5", "--seat-connect-seconds", "9"
    ) == PeopleBounds(1, 5, 9.0)
    for argv, message in (
        (["--max-matches-per-person", "0"], "--max-matches-per-person: must be 1-1000000000"),
        (["--max-people-matches", "0"], "--max-people-matches: must be 1-1000000000"),
        (["--seat-connect-seconds", "0"], "--seat-connect-seconds: must be more than 0"),
        (["--seat-connect-seconds", "nan"], "--seat-connect-seconds: must be more than 0"),
    ):
        with pytest.raises(CliError, match=message):
            people_of(*argv)

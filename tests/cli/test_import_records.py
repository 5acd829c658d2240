"""``domino-arena import RECORDS...`` (server/cli/import_records.py): matches played elsewhere.

Real records of real games (greedy house bots, in-process), stored on SQLite and PostgreSQL
(``tests/fakes/store.py``): only what replays is stored, once per match id, unrated unless
asked, with known bots unless asked to create them; each refused file is named with its line.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from domino_arena.bots import make_bot
from domino_arena.sdk.local import play_game
from domino_arena.sdk.match.records import record_lines
from domino_arena.sdk.rules import make_game
from domino_arena.server.cli.import_records import import_records
from domino_arena.server.cli.main import main
from domino_arena.server.ladder import elo
from domino_arena.server.ladder.ratings_store import RatedStorage, rated_game_of

SEATINGS: tuple[tuple[str, dict[str, object], tuple[str, ...]], ...] = (
    ("passing", {"players": 2}, ("ann", "bob")),
    ("moon", {}, ("ann", "bob", "cy")),
    ("straight", {"players": 4, "partnerships": True}, ("ann", "bob", "cy", "dee")),
    ("passing", {"players": 2}, ("cy", "ann")),
)


def mid(number: int) -> str:
    """The match id of record ``number``, in the referee's form (32 hex digits)."""
    return f"{number:032x}"


def a_record(number: int, seats: tuple[str, ...], game: str, options: dict[str, object]) -> str:
    """The record text of a real game between greedy bots, as match ``mid(NUMBER)``."""
    played = make_game(game, **options)
    bots = [make_bot("greedy", number * 10 + seat) for seat in range(played.num_players)]
    record = play_game(played, bots, seed=number).record
    named = dataclasses.replace(record, seats=seats, match_id=mid(number))
    return "".join(line + "\n" for line in record_lines(named))


def write_records(folder: Path) -> list[str]:
    paths = []
    for number, (game, options, seats) in enumerate(SEATINGS):
        path = folder / f"m{number}.jsonl"
        path.write_text(a_record(number, seats, game, options), encoding="utf-8")
        paths.append(str(path))
    return paths


def with_bots(storage: RatedStorage, *names: str) -> RatedStorage:
    for name in names:
        storage.create_bot(name)
    return storage


def test_records_that_replay_are_stored_as_the_referee_stores_them(
    rated_storage: RatedStorage, tmp_path: Path
) -> None:
    paths = write_records(tmp_path)
    report = import_records(with_bots(rated_storage, "ann", "bob", "cy", "dee"), paths)
    assert (report.imported, report.skipped, report.refused) == (4, 0, [])
    stored = rated_storage.match(mid(2))
    assert stored is not None
    text = Path(paths[2]).read_text(encoding="utf-8")
    header, result = json.loads(text.splitlines()[0]), json.loads(text.splitlines()[-1])
    assert stored.record == text
    assert (stored.game, stored.seats, stored.seed) == ("straight", ("ann", "bob", "cy", "dee"), 2)
    assert stored.options == make_game("straight", **header["options"]).options()
    assert stored.side_of_seat == (0, 1, 0, 1)
    assert (stored.termination, stored.winner) == ("normal", result["winner"])
    assert list(stored.scores) == result["scores"]
    assert stored.faults == (0, 0, 0, 0)
    assert not stored.rated
    assert rated_storage.pools() == []  # unrated by default: no rating moved


def test_importing_again_stores_nothing_twice(rated_storage: RatedStorage, tmp_path: Path) -> None:
    paths = write_records(tmp_path)
    storage = with_bots(rated_storage, "ann", "bob", "cy", "dee")
    import_records(storage, paths, rated=True)
    again = import_records(storage, [*paths, paths[0]], rated=True)
    assert (again.imported, again.skipped, again.refused) == (0, 5, [])
    assert "5 record(s): 0 imported, 5 skipped (stored already), 0 refused" in again.summary()
    assert len(storage.matches()) == 4


def test_rated_imports_move_the_ladder_in_the_order_given(
    rated_storage: RatedStorage, tmp_path: Path
) -> None:
    paths = write_records(tmp_path)
    storage = with_bots(rated_storage, "ann", "bob", "cy", "dee")
    order = [paths[3], paths[0], paths[1], paths[2]]
    assert import_records(storage, order, rated=True, batch_size=3).imported == 4
    stored = [storage.match(mid(n)) for n in (3, 0)]
    games = [rated_game_of(m) for m in stored if m is not None]
    assert storage.rated_games("passing") == games
    assert storage.ratings("passing") == elo.replay(games)
    assert storage.pools() == ["moon", "passing", "straight"]


def test_unknown_bots_are_refused_unless_created(
    rated_storage: RatedStorage, tmp_path: Path
) -> None:
    paths = write_records(tmp_path)
    storage = with_bots(rated_storage, "ann", "bob")
    refused = import_records(storage, paths)
    assert refused.imported == 1  # only m0 seats ann and bob alone
    unknown = "no bot is named 'cy' in the database (create it first, or import with --create-bots)"
    assert [str(r) for r in refused.refused] == [
        f"{paths[1]}: line 1: seats[2]: {unknown}",
        f"{paths[2]}: line 1: seats[2]: {unknown}",
        f"{paths[3]}: line 1: seats[0]: {unknown}",
    ]
    assert storage.bot_names() == ["ann", "bob"]
    created = import_records(storage, paths, create_bots=True)
    assert sorted(created.created_bots) == ["cy", "dee"]
    assert sorted(storage.bot_names()) == ["ann", "bob", "cy", "dee"]
    assert (created.imported, created.skipped) == (3, 1)
    storage.delete_bot("dee")
    extra = tmp_path / "m9.jsonl"
    extra.write_text(
        a_record(9, ("ann", "bob", "cy", "dee"), "straight", {"players": 4}), encoding="utf-8"
    )
    deleted = import_records(storage, [str(extra)], create_bots=True)
    assert [r.reason for r in deleted.refused] == ["line 1: seats[3]: bot 'dee' is deleted"]


def test_each_refused_record_is_named_and_the_others_are_stored(
    rated_storage: RatedStorage, tmp_path: Path
) -> None:
    paths = write_records(tmp_path)
    storage = with_bots(rated_storage, "ann", "bob", "cy", "dee")
    lines = Path(paths[0]).read_text(encoding="utf-8").splitlines()
    step = json.loads(lines[3])
    step["action"] = json.loads(lines[1])["action"].split()[0] + " 6-5"  # played at step 0
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("\n".join([*lines[:3], json.dumps(step), *lines[4:]]) + "\n")
    broken = tmp_path / "broken.jsonl"
    broken.write_text(lines[0] + "\n{not json\n", encoding="utf-8")
    header = json.loads(lines[0])
    del header["match_id"]
    anonymous = tmp_path / "anonymous.jsonl"
    anonymous.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    missing = tmp_path / "missing.jsonl"
    report = import_records(
        storage, [str(tampered), paths[1], str(broken), str(anonymous), str(missing), paths[2]]
    )
    assert report.imported == 2
    reasons = {Path(r.path).name: r.reason for r in report.refused}
    assert sorted(reasons) == ["anonymous.jsonl", "broken.jsonl", "missing.jsonl", "tampered.jsonl"]
    assert reasons["tampered.jsonl"].startswith("does not replay: ")
    assert "line 4" in reasons["tampered.jsonl"]
    assert reasons["broken.jsonl"].startswith("line 2: ")
    assert reasons["anonymous.jsonl"].startswith("line 1: match_id: the header has none")
    assert reasons["missing.jsonl"].startswith("cannot read it: No such file")
    assert sorted(m.id for m in storage.matches()) == [mid(1), mid(2)]


def test_the_command_prints_each_refusal_and_a_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = write_records(tmp_path)
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    assert main(["import", *paths, "--db", db, "--rated", "--create-bots"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[-1].startswith("4 record(s): 4 imported, 0 skipped (stored already)")
    assert "created 4 bot(s): ann, bob, cy, dee" in out
    assert err == f"importing into {db}\n"
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    assert main(["import", str(tmp_path / "empty.jsonl"), paths[0], "--db", db]) == 1
    out, _ = capsys.readouterr()
    assert out.splitlines() == [
        f"REFUSED {tmp_path / 'empty.jsonl'}: empty record: expected a header line",
        "2 record(s): 0 imported, 1 skipped (stored already), 1 refused",
    ]


def test_a_record_keeps_its_header_time(rated_storage: RatedStorage, tmp_path: Path) -> None:
    text = a_record(5, ("ann", "bob"), "passing", {"players": 2})
    header = json.loads(text.splitlines()[0])
    header["created"] = "2025-11-03T10:20:30+00:00"
    path = tmp_path / "dated.jsonl"
    path.write_text("\n".join([json.dumps(header), *text.splitlines()[1:]]) + "\n")
    assert import_records(with_bots(rated_storage, "ann", "bob"), [str(path)]).imported == 1
    stored = rated_storage.match(mid(5))
    assert stored is not None
    assert stored.created.isoformat() == "2025-11-03T10:20:30+00:00"

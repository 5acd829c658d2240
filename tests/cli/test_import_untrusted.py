"""``domino-arena import`` treats each record file as untrusted input (issue 29, items 4 and 5).

Real records of real games (greedy house bots, in-process) and forged ones built with the
engine: a game cut at a step with an invented forfeit, an abort after 4 steps, a fault the
moves do not show, seats of two courses, hostile files (deep nesting, /dev/zero, binary
garbage, UTF-16), match ids and dates no referee writes. Each is refused alone with one line
(escaped, bounded) and the run goes on; nothing refused leaves a row, a rating or a bot. The
signed case, end to end with a real referee, is tests/e2e/test_signed_records_e2e.py.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from pathlib import Path
from typing import Final

import pytest

from domino_arena.bots import make_bot
from domino_arena.sdk.local import play_game
from domino_arena.sdk.match.records import (
    RecordFault,
    forfeit_winner,
    record_from_state,
    record_lines,
    replay,
)
from domino_arena.sdk.match.records.model import MatchRecord
from domino_arena.sdk.match.results import FaultKind, Termination
from domino_arena.sdk.rules import CHANCE, make_game
from domino_arena.server.cli.import_records import MAX_RECORD_BYTES, import_records
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.store.matches import StoredMatch
from tests.cli.harness import admin_server, run

NOW: Final = dt.datetime(2026, 12, 6, 12, 0, tzinfo=dt.UTC)
"""The import's clock in these tests (``import_records(now=...)``)."""


def mid(number: int) -> str:
    return f"{number:032x}"


def text_of(record: MatchRecord) -> str:
    return "".join(line + "\n" for line in record_lines(record))


def played(number: int, seats: tuple[str, ...] = ("ann", "bob")) -> MatchRecord:
    """A real two-player Passing Game between greedy bots, as match ``mid(number)``."""
    game = make_game("passing", players=2)
    bots = [make_bot("greedy", number * 10 + seat) for seat in range(2)]
    record = play_game(game, bots, seed=number).record
    return dataclasses.replace(record, seats=seats, match_id=mid(number))


def cut(number: int, steps: int, termination: Termination) -> MatchRecord:
    """The game of :func:`played` cut after ``steps`` steps (or the first decision after them),
    claiming ``termination``: a forfeit by timeout of the seat to move, or an abort."""
    whole = played(number)
    state = make_game("passing", players=2).new_game(whole.seed, first_seat=whole.first_seat)
    for step in whole.steps:
        if len(state.history) >= steps and state.current_seat != CHANCE:
            break
        state = state.apply(step.action)
    seat = state.current_seat
    faults: list[RecordFault] = []
    winner = None
    if termination is Termination.FORFEIT:
        reason = f"seat {seat} ran out of time"
        faults = [RecordFault(seat, len(state.history) + 1, len(state.history),
                              FaultKind.TIMEOUT, reason, 1, True)]  # fmt: skip
        winner = forfeit_winner(state.scores, state.game.side_of(seat))
    return record_from_state(
        state, whole.seats, whole.seed, whole.first_seat, termination=termination,
        winner=winner, faults=faults, match_id=mid(number),
    )  # fmt: skip


def write(folder: Path, name: str, text: str | bytes) -> str:
    path = folder / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return str(path)


def with_bots(storage: RatedStorage, *names: str, course: str | None = None) -> RatedStorage:
    for name in names:
        if course is None:
            storage.create_bot(name)
        else:
            storage.create_bot(name, course=course)
    return storage


# -- item 4: what a record claims ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("steps", "termination", "claim"),
    [
        (7, Termination.FORFEIT, "claims ended by 'forfeit' (seat "),
        (1, Termination.FORFEIT, "claims ended by 'forfeit' (seat "),
        (4, Termination.ABORTED, "claims ended by 'aborted' after 4 steps"),
    ],
)
def test_a_cut_game_claiming_a_forfeit_or_an_abort_is_refused_unsigned(
    rated_storage: RatedStorage, tmp_path: Path, steps: int, termination: Termination, claim: str
) -> None:
    record = cut(3, steps, termination)
    assert replay(record).ok  # the moves are legal: only the claim is invented
    path = write(tmp_path, "cut.jsonl", text_of(record))
    storage = with_bots(rated_storage, "ann", "bob")
    for rated in (True, False):
        report = import_records(storage, [path], rated=rated, now=NOW)
        (refused,) = report.refused
        assert claim in refused.reason, refused.reason
        assert refused.reason.startswith(
            f"result (line {len(record.steps) + len(record.faults) + 2}): "
        )
        assert refused.reason.endswith(
            "which its moves do not prove, and it is unsigned: such a record is imported only "
            "signed by the referee that played it, with a key trusted here (--trust-key FILE.pub)"
        )
    assert storage.matches() == [] and storage.pools() == []


def test_a_cut_game_claiming_a_normal_end_does_not_replay(
    rated_storage: RatedStorage, tmp_path: Path
) -> None:
    whole = played(4)
    lines = text_of(whole).splitlines()
    short = write(tmp_path, "short.jsonl", "\n".join([*lines[:6], lines[-1]]) + "\n")
    report = import_records(with_bots(rated_storage, "ann", "bob"), [short], rated=True, now=NOW)
    (refused,) = report.refused
    assert refused.reason.startswith("does not replay: result (line 7): ")
    assert "the game is not over" in refused.reason


def test_a_fault_the_moves_do_not_show_is_refused_and_a_proved_game_is_rated(
    rated_storage: RatedStorage, tmp_path: Path
) -> None:
    whole = played(5)
    state = make_game("passing", players=2).new_game(whole.seed, first_seat=whole.first_seat)
    for step in whole.steps:
        state = state.apply(step.action)
    index = next(i for i, step in enumerate(whole.steps) if step.seat == 1)
    fault = RecordFault(1, index + 1, index, FaultKind.ILLEGAL, "illegal", 1, False)
    faulted = record_from_state(
        state, whole.seats, whole.seed, whole.first_seat, faults=[fault], substituted=[index],
        match_id=mid(6),
    )  # fmt: skip
    assert replay(faulted).ok
    paths = [
        write(tmp_path, "faulted.jsonl", text_of(faulted)),
        write(tmp_path, "ok.jsonl", text_of(whole)),
    ]
    storage = with_bots(rated_storage, "ann", "bob")
    report = import_records(storage, paths, rated=True, now=NOW)
    assert report.imported == 1
    (refused,) = report.refused
    assert "claims 1 fault(s) (first: seat 1, illegal)" in refused.reason
    assert [m.id for m in storage.matches()] == [mid(5)]
    assert sorted(storage.ratings("passing")) == ["ann", "bob"]  # the proved game moved them


def test_seats_of_two_courses_are_refused_and_a_courses_record_is_stored_in_it(
    rated_storage: RatedStorage, tmp_path: Path
) -> None:
    rated_storage.create_course("spring")
    storage = with_bots(rated_storage, "ann", "cy", course="spring")
    with_bots(storage, "bob")
    mixed = write(tmp_path, "mixed.jsonl", text_of(played(7, ("ann", "bob"))))
    inside = write(tmp_path, "inside.jsonl", text_of(played(8, ("ann", "cy"))))
    newbie = write(tmp_path, "newbie.jsonl", text_of(played(9, ("newbie", "cy"))))
    report = import_records(storage, [mixed, inside, newbie], rated=True, create_bots=True, now=NOW)
    assert [r.reason for r in report.refused] == [
        "line 1: seats: they belong to different courses (ann: spring, bob: default); a match "
        "is played within one course"
    ]
    assert report.imported == 2 and report.created_bots == ["newbie"]
    stored = storage.match(mid(8))
    assert stored is not None and stored.course == "spring"
    newbie_bot = storage.bot("newbie")
    assert newbie_bot is not None and newbie_bot.course == "spring"
    assert storage.ratings("passing")["ann"].games == 1  # the mixed record moved nothing


# -- item 5: hostile files, ids and dates --------------------------------------------------------


def test_each_bad_file_is_refused_alone_with_one_line_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = text_of(played(10))
    bad: dict[str, str | bytes] = {
        "deep.jsonl": "[" * 200_000 + "\n",
        "deep-value.jsonl": '{"type": "header", "x": ' + "[" * 50_000 + "]" * 50_000 + "}\n",
        "garbage.bin": bytes(range(256)) * 8,
        "utf16.jsonl": good.encode("utf-16"),
        "big.jsonl": good + " " * MAX_RECORD_BYTES,
    }
    paths = [write(tmp_path, name, text) for name, text in bad.items()]
    paths.insert(3, "/dev/zero")
    paths.append(write(tmp_path, "good.jsonl", good))
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    code, out, err = run(capsys, "import", *paths, "--db", db, "--create-bots")
    assert code == 1 and err == f"importing into {db}\n"
    lines = out.splitlines()
    assert (
        lines[-1]
        == "7 record(s): 1 imported, 0 skipped (stored already), 6 refused; created 2 bot(s): "
        "ann, bob"
    )
    reasons = dict(line.removeprefix("REFUSED ").split(": ", 1) for line in lines[:-1])
    folder = str(tmp_path)
    too_big = f"larger than {MAX_RECORD_BYTES:,} bytes, the most a record file may hold"
    assert reasons == {
        f"{folder}/deep.jsonl": "line 1: JSON nested deeper than the reader allows (a record's "
        "lines nest a few levels)",
        f"{folder}/deep-value.jsonl": "line 1: JSON nested deeper than the reader allows (a "
        "record's lines nest a few levels)",
        f"{folder}/garbage.bin": "not UTF-8 text: byte 128 (0x80) cannot start or continue a "
        "character",
        "/dev/zero": f"{too_big} (read stopped there)",
        f"{folder}/utf16.jsonl": "not UTF-8 text: byte 0 (0xff) cannot start or continue a "
        "character",
        f"{folder}/big.jsonl": f"{too_big} (read stopped there)",
    }


def header_with(record: MatchRecord, **changes: object) -> str:
    lines = text_of(record).splitlines()
    header = json.loads(lines[0])
    header.update(changes)
    return "\n".join([json.dumps(header), *lines[1:]]) + "\n"


def test_match_ids_must_be_in_the_referees_form_and_are_echoed_bounded_and_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = [
        "x" * 10_000,
        "<script>alert(1)</script>",
        "\x1b[2J\rfake row",
        "imp-1",
        "ABCDEF" * 5 + "AB",
    ]
    paths = [
        write(tmp_path, f"id{n}.jsonl", header_with(played(11), match_id=i))
        for n, i in enumerate(ids)
    ]
    tournament_game = write(
        tmp_path, "game.jsonl", header_with(played(12), match_id="0123456789abcdef-00042")
    )
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    code, out, _ = run(capsys, "import", *paths, tournament_game, "--db", db, "--create-bots")
    assert code == 1
    lines = out.splitlines()
    assert lines[-1].startswith("6 record(s): 1 imported, 0 skipped (stored already), 5 refused")
    assert "\x1b" not in out and "\r" not in out
    rule = (
        "line 1: match_id: expected 32 lowercase hex digits (a uuid4's hex), or a tournament "
        "game's 16 hex digits, '-' and its 5-7 digit index, got "
    )
    for line in lines[:-1]:
        assert rule in line and len(line) < 400, line
    assert f"got '{'x' * 64}... (9936 more characters)'" in lines[0]
    assert "got '<script>alert(1)</script>'" in lines[1]
    assert "got '\\u001b[2J\\rfake row'" in lines[2]
    assert "created 2 bot(s): ann, bob" in lines[-1]  # for the stored record only


def test_create_bots_makes_no_bot_for_a_record_that_is_then_refused(
    rated_storage: RatedStorage, tmp_path: Path
) -> None:
    forfeit = write(tmp_path, "forfeit.jsonl", text_of(cut(13, 6, Termination.FORFEIT)))
    bad_id = write(tmp_path, "bad-id.jsonl", header_with(played(14), match_id="imp-14"))
    future = write(
        tmp_path, "future.jsonl", header_with(played(15), created="9999-01-01T00:00:00+00:00")
    )
    report = import_records(
        rated_storage, [forfeit, bad_id, future], rated=True, create_bots=True, now=NOW
    )
    assert len(report.refused) == 3 and report.created_bots == []
    assert rated_storage.bot_names() == [] and rated_storage.matches() == []


@pytest.mark.parametrize(
    ("created", "reason"),
    [
        (
            "9999-01-01T00:00:00+00:00",
            "is in the future (the import's clock says 2026-12-06T12:00:00Z; 5 minutes of skew "
            "allowed)",
        ),
        ((NOW + dt.timedelta(minutes=6)).isoformat(), "is in the future"),
        (
            "1970-01-01T00:00:00+00:00",
            "is before 2020-01-01, when no record of this format existed",
        ),
        ("yesterday", "line 1: created: expected an ISO 8601 time, got 'yesterday'"),
    ],
)
def test_a_created_date_in_the_future_or_before_the_floor_is_refused(
    rated_storage: RatedStorage, tmp_path: Path, created: str, reason: str
) -> None:
    storage = with_bots(rated_storage, "ann", "bob")
    path = write(tmp_path, "dated.jsonl", header_with(played(16), created=created))
    (refused,) = import_records(storage, [path], now=NOW).refused
    assert reason in refused.reason
    skewed = (NOW + dt.timedelta(minutes=4)).isoformat()
    ok = write(tmp_path, "skewed.jsonl", header_with(played(17), created=skewed))
    assert import_records(storage, [ok], now=NOW).imported == 1


# -- terminal output is text ---------------------------------------------------------------------


def test_matches_prints_a_stored_id_and_bot_name_with_control_characters_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with admin_server(tmp_path, monkeypatch) as server:
        match = StoredMatch(
            id="\x1b[2J\rFAKE", game="passing", options=make_game("passing").options(),
            seats=("ali\x1b[31mce", "bob\u202e"), seed=7, termination="normal", winner=0,
            scores=(101, 20), faulted_seat=None, fault=None, detail="", record=None,
            created=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
        )  # fmt: skip
        server.arena.storage.save_match(match)
        code, out, err = run(capsys, "matches", "--server", server.address)
    assert (code, err) == (0, "")
    assert "\x1b" not in out and "\r" not in out and "\u202e" not in out
    assert "\\u001b[2J\\rFAKE" in out
    assert "ali\\u001b[31mce, bob\\u202e" in out

"""Match records (sdk/match/records/): JSON Lines round-trips, replay, every way a record breaks.

Each broken record must be refused with a message that names the line (and step) and what is
wrong, because a person reads it to find out which match went astray and why.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from domino_arena.sdk.match.records import (
    FORMAT_VERSION,
    RULES_VERSION,
    MatchRecord,
    RecordError,
    RecordResult,
    RecordStep,
    parse_record,
    read_record,
    record_from_state,
    record_lines,
    replay,
    write_record,
)
from domino_arena.sdk.rules import CHANCE, DEAL, GAMES, HandEnd, make_game, parse_action
from tests.fakes.games import CONFIG_IDS, CONFIGS, play_random


def passing_record(seed: int = 11, players: int = 2) -> MatchRecord:
    return play_random("passing", {"players": players}, seed).record


def text_of(record: MatchRecord) -> str:
    out = io.StringIO()
    write_record(record, out)
    return out.getvalue()


def lines_of(record: MatchRecord) -> list[dict[str, Any]]:
    return [json.loads(line) for line in record_lines(record)]


def join(objects: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(obj) + "\n" for obj in objects)


def read_error(text: str) -> str:
    with pytest.raises(RecordError) as caught:
        parse_record(text)
    return str(caught.value)


# -- round trips ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=CONFIG_IDS)
def test_a_record_survives_writing_and_reading(name: str, options: dict[str, Any]) -> None:
    record = play_random(name, options, 21).record
    text = text_of(record)
    assert parse_record(text) == record
    assert text_of(parse_record(text)) == text
    assert str(replay(parse_record(text))) == f"OK: {len(record.steps)} steps, result matches"


def test_records_go_to_and_come_from_files(tmp_path: Path) -> None:
    record = passing_record()
    path = tmp_path / "match.jsonl"
    write_record(record, path)
    assert read_record(path) == record
    assert read_record(str(path)) == record
    with path.open(encoding="utf-8") as file:
        assert read_record(file) == record


def test_the_same_game_writes_the_same_bytes() -> None:
    assert text_of(passing_record(4)) == text_of(passing_record(4))


def test_the_layout_of_a_record() -> None:
    record = passing_record(11, players=3)
    objects = lines_of(record)
    header, steps, result = objects[0], objects[1:-1], objects[-1]
    assert header == {
        "type": "header",
        "format": FORMAT_VERSION,
        "rules": "1",
        "game": "passing",
        "options": {"players": 3, "partnerships": False, "target_rule": "gamerules"},
        "seats": ["modest", "modest", "modest"],
        "seed": 11,
        "first_seat": record.first_seat,
    }
    assert RULES_VERSION == "1"
    assert [s["index"] for s in steps] == list(range(len(record.steps)))
    assert all(set(s) == {"type", "index", "seat", "action", "think_ms"} for s in steps)
    deals = [s for s in steps if s["action"] == "deal"]
    assert deals
    assert all(s["seat"] == -1 and s["think_ms"] is None for s in deals)
    assert result["type"] == "result"
    assert result["sides"] == [[0], [1], [2]]
    assert result["scores"] == list(record.result.scores)
    assert max(result["scores"]) >= 101
    assert result["winner"] == result["scores"].index(max(result["scores"]))
    assert len(result["hands"]) == len(deals) + 1
    assert [h["deal"] for h in result["hands"]] == list(range(1, len(deals) + 2))
    assert all(h["end"] in {e.value for e in HandEnd} for h in result["hands"])
    assert all(sum(h["points"]) >= 0 for h in result["hands"])
    assert result["detail"].startswith(f"side {result['winner']} reached ")


def test_optional_header_fields_are_written_only_when_given() -> None:
    record = passing_record()
    assert "created" not in lines_of(record)[0]
    assert "time_control" not in lines_of(record)[0]
    stamped = play_random("passing", {}, 11).state
    full = record_from_state(
        stamped,
        ["a", "b"],
        11,
        record.first_seat,
        time_control={"move_ms": 1000, "bank_ms": 10000},
        created="2024-05-01T12:00:00Z",
    )
    header = lines_of(full)[0]
    assert header["created"] == "2024-05-01T12:00:00Z"
    assert header["time_control"] == {"move_ms": 1000, "bank_ms": 10000}
    assert header["seats"] == ["a", "b"]
    assert parse_record(text_of(full)) == full


def test_the_cluster_processes_of_a_record_round_trip_and_replay() -> None:
    record = passing_record()
    assert "referee" not in lines_of(record)[0]
    signed = dataclasses.replace(
        record, referee={"host": "host-a", "gateways": [["gw-a"], ["gw-a", "gw-b"]]}
    )
    assert lines_of(signed)[0]["referee"]["gateways"][1] == ["gw-a", "gw-b"]
    assert parse_record(text_of(signed)) == signed
    replay(signed)


def test_think_times_are_kept_to_the_microsecond() -> None:
    state = play_random("passing", {}, 3).state
    times = [None if e.seat == CHANCE else 1.23456 for e in state.history]
    record = record_from_state(state, ["a", "b"], 3, 0, think_ms=times)
    steps = lines_of(record)[1:-1]
    assert {s["think_ms"] for s in steps} - {None} == {1.235}
    assert {s.think_ms for s in parse_record(text_of(record)).steps} - {None} == {1.235}


def test_record_from_state_checks_its_arguments() -> None:
    state = play_random("passing", {}, 3).state
    with pytest.raises(ValueError, match="expected 2 seat names, got 1"):
        record_from_state(state, ["a"], 3, 0)
    with pytest.raises(ValueError, match=r"expected \d+ think times, one per step, got 1"):
        record_from_state(state, ["a", "b"], 3, 0, think_ms=[1.0])
    unfinished = make_game("passing").new_game(3)
    with pytest.raises(ValueError, match="the game is not over"):
        record_from_state(unfinished, ["a", "b"], 3, 0)


def test_unicode_seat_names_round_trip() -> None:
    state = play_random("passing", {}, 3).state
    record = record_from_state(state, ["Zoë", "بوت"], 3, 0)
    assert "Zoë" in text_of(record)
    assert parse_record(text_of(record)).seats == ("Zoë", "بوت")


# -- replay finds the first difference -----------------------------------------------------------


def first_seat_step(record: MatchRecord, after: int = 0) -> int:
    """Return the index of the first step at or after ``after`` taken by a seat."""
    return next(i for i, s in enumerate(record.steps) if i >= after and s.seat != CHANCE)


def with_step(record: MatchRecord, index: int, step: RecordStep) -> MatchRecord:
    steps = list(record.steps)
    steps[index] = step
    return _replace(record, steps=tuple(steps))


def _replace(record: MatchRecord, **changes: Any) -> MatchRecord:
    return dataclasses.replace(record, **changes)


@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=CONFIG_IDS)
def test_replay_names_a_step_taken_by_the_wrong_seat(name: str, options: dict[str, Any]) -> None:
    record = play_random(name, options, 13).record
    players = make_game(name, **options).num_players
    k = first_seat_step(record, len(record.steps) // 2)
    step = record.steps[k]
    wrong = (step.seat + 1) % players
    report = replay(with_step(record, k, RecordStep(wrong, step.action)))
    assert not report.ok
    assert report.failed_step == k
    assert report.applied == k
    assert str(report) == (
        f"step {k} (line {k + 2}): the record has seat {wrong} acting ('{step.action}'), "
        f"but seat {step.seat} is to move"
    )


@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=CONFIG_IDS)
def test_replay_names_an_illegal_action(name: str, options: dict[str, Any]) -> None:
    record = play_random(name, options, 13).record
    k = first_seat_step(record, len(record.steps) // 3)
    seat = record.steps[k].seat
    report = replay(with_step(record, k, RecordStep(seat, DEAL)))
    assert report.failed_step == k
    assert str(report).startswith(f"step {k} (line {k + 2}): seat {seat}: illegal action 'deal': ")
    assert "legal actions: " in str(report)


def test_replay_names_the_rule_a_tampered_play_breaks() -> None:
    record = passing_record(11)
    first = record.steps[0]
    state = make_game("passing").new_game(11, first_seat=record.first_seat)
    foreign = next(t for t in state.hand(1 - first.seat))
    tampered = with_step(record, 0, RecordStep(first.seat, parse_action(f"play {foreign}")))
    report = replay(tampered)
    assert str(report).startswith(
        f"step 0 (line 2): seat {first.seat}: illegal action 'play {foreign}': docs/rules.md "
    )
    assert f"seat {first.seat} does not hold {foreign}; legal actions: play " in str(report)


def test_replay_names_a_deal_taken_out_of_turn() -> None:
    record = passing_record(11)
    k = next(i for i, s in enumerate(record.steps) if s.seat == CHANCE)
    mover = record.steps[k + 1].seat
    tampered = with_step(record, k + 1, RecordStep(CHANCE, DEAL))
    assert str(replay(tampered)) == (
        f"step {k + 1} (line {k + 3}): the record has chance (the deal) acting ('deal'), "
        f"but seat {mover} is to move"
    )


def test_replay_names_a_wrong_result_field() -> None:
    record = passing_record(11)
    last = len(record.steps) + 2
    scores = record.result.scores
    bad_scores = (scores[0] + 1, *scores[1:])
    report = replay(_replace(record, result=_result(record, scores=bad_scores)))
    assert report.failed_step is None
    assert report.applied == len(record.steps)
    assert str(report) == (
        f"result (line {last}): 'scores' differs: the record has {list(bad_scores)}, "
        f"the engine has {list(scores)}"
    )
    winner = record.result.winner
    assert winner is not None
    report = replay(_replace(record, result=_result(record, winner=1 - winner)))
    assert str(report) == (
        f"result (line {last}): 'winner' differs: the record has {1 - winner}, "
        f"the engine has {winner}"
    )
    report = replay(_replace(record, result=_result(record, detail="a fine game")))
    assert str(report).startswith(f"result (line {last}): 'detail' differs: ")


def test_replay_names_a_wrong_hand_result() -> None:
    record = passing_record(11)
    hands = list(record.result.hands)
    hands[1] = dataclasses.replace(hands[1], detail="made up")
    report = replay(_replace(record, result=_result(record, hands=tuple(hands))))
    assert str(report).startswith(
        f"result (line {len(record.steps) + 2}): hands[1] differs: the record has "
    )
    assert '"detail": "made up"' in str(report)
    report = replay(_replace(record, result=_result(record, hands=tuple(hands[:1]))))
    assert str(report) == (
        f"result (line {len(record.steps) + 2}): 'hands' differs: the record has 1 hands, "
        f"the engine has {len(hands)}"
    )


def _result(record: MatchRecord, **changes: Any) -> RecordResult:
    return dataclasses.replace(record.result, **changes)


def test_replay_names_a_record_that_stops_before_the_end() -> None:
    record = passing_record(11)
    short = _replace(record, steps=record.steps[:10])
    mover = make_game("passing").new_game(11, first_seat=record.first_seat)
    for step in record.steps[:10]:
        mover = mover.apply(step.action)
    assert str(replay(short)) == (
        f"result (line 12): the record ends after 10 steps but the game is not over "
        f"(seat {mover.current_seat} to move)"
    )


def test_replay_names_a_step_after_the_end() -> None:
    record = passing_record(11)
    n = len(record.steps)
    extra = _replace(record, steps=(*record.steps, RecordStep(0, parse_action("pass"))))
    report = replay(extra)
    assert report.failed_step == n
    assert str(report) == (
        f"step {n} (line {n + 2}): the game is already over, but the record goes on with "
        "seat 0: pass"
    )


def test_replay_names_a_header_the_engine_refuses() -> None:
    record = passing_record(11)
    assert str(replay(_replace(record, game="chess"))) == (
        "header (line 1): unknown game 'chess': expected one of " + ", ".join(sorted(GAMES))
    )
    assert str(replay(_replace(record, seats=("a",)))) == (
        "header (line 1): 1 seat names for a 2-player game"
    )


# -- reading refuses broken files ---------------------------------------------------------------


def test_a_truncated_record_is_refused() -> None:
    text = text_of(passing_record(11))
    lines = text.splitlines(keepends=True)
    without_result = "".join(lines[:-1])
    assert read_error(without_result) == (
        f"record ends after line {len(lines) - 1} without a result line (truncated?)"
    )
    cut = "".join(lines[:5]) + lines[5][:20]
    message = read_error(cut)
    assert message.startswith("line 6: not JSON (truncated?): ")


def test_a_line_that_is_not_json_is_refused() -> None:
    text = text_of(passing_record(11))
    assert read_error("{oops\n" + text) == (
        "line 1: not JSON: Expecting property name enclosed in double quotes: "
        "line 1 column 2 (char 1)"
    )
    lines = text.splitlines(keepends=True)
    lines[3] = "not json at all\n"
    assert read_error("".join(lines)).startswith("line 4: not JSON: Expecting value")
    assert read_error("[1, 2]\n") == "line 1: expected a JSON object, got [1, 2]"
    assert read_error("") == "empty record: expected a header line"


def test_a_skipped_step_is_refused_with_both_numbers() -> None:
    objects = lines_of(passing_record(11))
    del objects[6]  # the step with index 5, on line 7
    assert read_error(join(objects)) == "line 7: step index 5 expected, got 6"


def test_an_unknown_action_is_refused() -> None:
    objects = lines_of(passing_record(11))
    objects[2]["action"] = "jump 6-4"
    assert read_error(join(objects)) == (
        "line 3: unknown action 'jump 6-4': expected one of play, draw, pass, bid, discard, "
        "trump, deal"
    )
    objects[2]["action"] = "play 9-9 W"
    assert read_error(join(objects)).startswith("line 3: no tile 9-9")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"type": "step"}, "line 1: expected the header line, got 'step'"),
        ({"format": 3}, "line 1: record format 3 is not supported (this reader knows 1 and 2)"),
        (
            {"rules": "2"},
            "line 1: rules version '2' is not supported "
            "(the engines implement docs/rules.md version 1)",
        ),
        ({"game": "chess"}, "line 1: unknown game 'chess': expected one of "),
        ({"options": {"players": 9}}, "line 1: passing: players must be 2, 3 or 4, got 9"),
        ({"options": {"colour": "red"}}, "line 1: passing: unknown option 'colour'"),
        ({"options": []}, "line 1: 'options' must be an object, got []"),
        ({"seats": ["a"]}, "line 1: 'seats' must list 2 player names, got ['a']"),
        ({"seats": ["a", 3]}, "line 1: 'seats' must list 2 player names, got ['a', 3]"),
        ({"seed": "11"}, "line 1: 'seed' must be an integer, got \"11\""),
        ({"seed": True}, "line 1: 'seed' must be an integer, got true"),
        ({"first_seat": 2}, "line 1: first_seat 2 is not a seat of a 2-player game"),
        ({"time_control": 5}, "line 1: 'time_control' must be an object, got 5"),
        ({"colour": "red"}, "line 1: unknown field 'colour'"),
        ({"seed": None}, "line 1: 'seed' must be an integer, got null"),
    ],
)
def test_a_bad_header_is_refused(change: dict[str, Any], message: str) -> None:
    objects = lines_of(passing_record(11))
    objects[0].update(change)
    assert read_error(join(objects)).startswith(message)


def test_a_header_without_a_field_is_refused() -> None:
    objects = lines_of(passing_record(11))
    del objects[0]["seed"]
    assert read_error(join(objects)) == "line 1: missing 'seed'"
    del objects[0]["type"]
    assert read_error(join(objects)) == "line 1: missing 'type' (header, step or result)"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"seat": 2}, "line 4: seat 2 is not a seat of a 2-player game (or -1 for the deal)"),
        ({"seat": "1"}, "line 4: 'seat' must be an integer, got \"1\""),
        ({"action": 5}, "line 4: 'action' must be a string, got 5"),
        ({"think_ms": -1}, "line 4: think_ms must be 0 or more, got -1.0"),
        ({"think_ms": "fast"}, "line 4: 'think_ms' must be a number or null, got \"fast\""),
        ({"extra": 1}, "line 4: unknown field 'extra'"),
        ({"type": "header"}, "line 4: expected a step or the result, got type 'header'"),
    ],
)
def test_a_bad_step_is_refused(change: dict[str, Any], message: str) -> None:
    objects = lines_of(passing_record(11))
    objects[3].update(change)
    assert read_error(join(objects)) == message


def test_whole_numbers_are_accepted_as_think_times() -> None:
    objects = lines_of(passing_record(11))
    objects[3]["think_ms"] = 7
    assert parse_record(join(objects)).steps[2].think_ms == 7.0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"winner": "0"}, "'winner' must be an integer, got \"0\""),
        ({"scores": [1, "2"]}, "'scores' must be a list of integers, got [1, '2']"),
        ({"sides": [0, 1]}, "'sides' must be lists of seats, got 0"),
        ({"hands": [{"deal": 1}]}, "hands[0]: missing 'end'"),
        (
            {"hands": [{"deal": 1, "end": "boom", "points": [0, 0], "detail": ""}]},
            "hands[0]: unknown hand end 'boom' (expected one of domino, blocked, ",
        ),
        ({"hands": [5]}, "hands[0] must be an object, got 5"),
        ({"detail": None}, "'detail' must be a string, got null"),
        ({"bonus": 1}, "unknown field 'bonus'"),
    ],
)
def test_a_bad_result_line_is_refused(change: dict[str, Any], message: str) -> None:
    objects = lines_of(passing_record(11))
    objects[-1].update(change)
    assert read_error(join(objects)).startswith(f"line {len(objects)}: {message}")


def test_blank_lines_and_trailing_content_are_refused() -> None:
    text = text_of(passing_record(11))
    lines = text.splitlines(keepends=True)
    assert read_error("".join([*lines[:3], "\n", *lines[3:]])) == "line 4: empty line"
    assert read_error(text + '{"type": "step"}\n') == (
        f"line {len(lines) + 1}: nothing may follow the result line"
    )
    assert parse_record(text + "\n\n") == parse_record(text)
    assert parse_record(text.rstrip("\n")) == parse_record(text)


def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"type": "header", "seats": ["Zo\xeb"]}\n')
    with pytest.raises(RecordError, match=re.escape("not UTF-8 text: ")):
        read_record(path)

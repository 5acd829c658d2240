"""Match records as JSON Lines, and their replay through the engine (DESIGN.md decision 13).

A record is what a match leaves behind: enough to re-run it exactly and to check every step.
Line 1 is the header (game, options, rules version, seats, seed, first seat), then one line
per step (the acting seat, the action's canonical text and its think time; the ``deal`` chance
step between hands has seat -1), then one result line::

    {"type": "header", "format": 1, "rules": "1", "game": "passing", "options": {...}, ...}
    {"type": "step", "index": 0, "seat": 1, "action": "play 6-5", "think_ms": 0.41}
    ...
    {"type": "result", "winner": 1, "scores": [40, 101], "sides": [[0], [1]], "hands": [...]}

Step ``i`` is always on line ``i + 2`` (blank lines are refused), so every message can name
both. Nothing in a record depends on the clock unless the caller passes a ``created`` time or
think times, so the same game always writes the same bytes.

>>> from domino_arena.sdk.rules import make_game
>>> state = make_game("passing").new_game(seed=7, first_seat=0)
>>> while not state.is_terminal():
...     state = state.apply(state.legal_actions()[0])
>>> record = record_from_state(state, seats=["a", "b"], seed=7, first_seat=0)
>>> str(replay(record)).startswith("OK: ")
True
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TextIO

from .rules import (
    CHANCE,
    Action,
    GameOverError,
    GameState,
    HandEnd,
    HandResult,
    IllegalActionError,
    RulesError,
    make_game,
    parse_action,
)

FORMAT_VERSION: Final = 1
"""Version of the record layout written by :func:`write_record`."""

RULES_VERSION: Final = "1"
"""Version of RULES.md the engines implement."""


class RecordError(ValueError):
    """A record that cannot be read: the message names the line and what is wrong there."""


@dataclass(frozen=True, slots=True)
class RecordStep:
    """One step of a match: who acted (-1 for the ``deal`` chance step) and what they did."""

    seat: int
    action: Action
    think_ms: float | None = None
    """Time the bot took to answer, in milliseconds; None for chance steps or when not timed."""


@dataclass(frozen=True, slots=True)
class RecordResult:
    """The result line: the engine's outcome and every scored hand."""

    winner: int
    """The winning side."""
    scores: tuple[int, ...]
    """Final score of each side."""
    sides: tuple[tuple[int, ...], ...]
    """The seats of each side."""
    hands: tuple[HandResult, ...]
    """Every deal of the game, void deals included."""
    detail: str

    @classmethod
    def from_state(cls, state: GameState) -> RecordResult:
        """Return the result of the finished game ``state``.

        Raises:
            ValueError: the game is not over.
        """
        outcome = state.outcome()
        if outcome is None:
            raise ValueError(f"the game is not over ({state})")
        return cls(
            winner=outcome.winner,
            scores=outcome.scores,
            sides=outcome.sides,
            hands=state.hand_results,
            detail=outcome.detail,
        )


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """A whole match: header fields, steps in order and the result."""

    game: str
    """Registry name of the game."""
    options: dict[str, Any]
    """Options that recreate the game through ``make_game(game, **options)``."""
    seats: tuple[str, ...]
    """The name of the player in each seat."""
    seed: int
    first_seat: int
    steps: tuple[RecordStep, ...]
    result: RecordResult
    time_control: dict[str, Any] | None = None
    created: str | None = None
    """When the match was played (any text, e.g. ISO 8601); None keeps records reproducible."""
    rules_version: str = RULES_VERSION
    format_version: int = FORMAT_VERSION


def record_from_state(
    final_state: GameState,
    seats: Sequence[str],
    seed: int,
    first_seat: int,
    *,
    think_ms: Sequence[float | None] | None = None,
    time_control: dict[str, Any] | None = None,
    created: str | None = None,
) -> MatchRecord:
    """Build the record of a finished game from its final state (the log is ``state.history``).

    Args:
        final_state: the state at the end of the game.
        seats: the name of the player in each seat.
        seed, first_seat: the arguments the game was started with (``first_seat`` resolved:
            pass the seat that actually started, not None).
        think_ms: one entry per step of ``final_state.history``, or None for untimed play.

    Raises:
        ValueError: the game is not over, or ``seats``/``think_ms`` have the wrong length.
    """
    game = final_state.game
    history = final_state.history
    if len(seats) != game.num_players:
        raise ValueError(f"expected {game.num_players} seat names, got {len(seats)}")
    if think_ms is None:
        times: Sequence[float | None] = [None] * len(history)
    elif len(think_ms) != len(history):
        raise ValueError(f"expected {len(history)} think times, one per step, got {len(think_ms)}")
    else:
        times = think_ms
    return MatchRecord(
        game=game.name,
        options=game.options(),
        seats=tuple(seats),
        seed=seed,
        first_seat=first_seat,
        steps=tuple(
            RecordStep(entry.seat, entry.action, ms)
            for entry, ms in zip(history, times, strict=True)
        ),
        result=RecordResult.from_state(final_state),
        time_control=time_control,
        created=created,
    )


# -- writing ------------------------------------------------------------------------------------


def record_lines(record: MatchRecord) -> list[str]:
    """Return the JSON Lines of ``record``, without line ends."""
    header: dict[str, Any] = {
        "type": "header",
        "format": record.format_version,
        "rules": record.rules_version,
        "game": record.game,
        "options": record.options,
        "seats": list(record.seats),
        "seed": record.seed,
        "first_seat": record.first_seat,
    }
    if record.time_control is not None:
        header["time_control"] = record.time_control
    if record.created is not None:
        header["created"] = record.created
    lines = [_dump(header)]
    for index, step in enumerate(record.steps):
        ms = None if step.think_ms is None else round(step.think_ms, 3)
        lines.append(
            _dump(
                {
                    "type": "step",
                    "index": index,
                    "seat": step.seat,
                    "action": str(step.action),
                    "think_ms": ms,
                }
            )
        )
    result = record.result
    lines.append(
        _dump(
            {
                "type": "result",
                "winner": result.winner,
                "scores": list(result.scores),
                "sides": [list(side) for side in result.sides],
                "hands": [_hand_json(hand) for hand in result.hands],
                "detail": result.detail,
            }
        )
    )
    return lines


def write_record(record: MatchRecord, path_or_file: str | os.PathLike[str] | TextIO) -> None:
    """Write ``record`` as JSON Lines (UTF-8) to a path or an open text file."""
    text = "".join(line + "\n" for line in record_lines(record))
    if isinstance(path_or_file, str | os.PathLike):
        Path(path_or_file).write_text(text, encoding="utf-8")
    else:
        path_or_file.write(text)


def _dump(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _hand_json(hand: HandResult) -> dict[str, Any]:
    return {
        "deal": hand.deal,
        "end": hand.end.value,
        "points": list(hand.points),
        "detail": hand.detail,
    }


# -- reading ------------------------------------------------------------------------------------


def read_record(path_or_file: str | os.PathLike[str] | TextIO) -> MatchRecord:
    """Read a record written by :func:`write_record`, checking its form line by line.

    This checks the layout, the types, the step numbering, that every action parses and that
    the header names a game the registry can build; whether the steps are legal is
    :func:`replay`'s job.

    Raises:
        RecordError: the message says what is wrong and on which line.
        OSError: the file cannot be opened.
    """
    if isinstance(path_or_file, str | os.PathLike):
        with open(path_or_file, encoding="utf-8", newline="") as file:
            text = _read_text(file)
    else:
        text = _read_text(path_or_file)
    return parse_record(text)


def _read_text(file: TextIO) -> str:
    try:
        return file.read()
    except UnicodeDecodeError as exc:
        raise RecordError(f"not UTF-8 text: {exc}") from None


def parse_record(text: str) -> MatchRecord:
    """Parse the JSON Lines of a record (see :func:`read_record`)."""
    lines = text.split("\n")
    ends_with_newline = lines[-1] == ""
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise RecordError("empty record: expected a header line")
    reader = _Reader(lines, ends_with_newline)
    return reader.read()


class _Reader:
    """Reads the lines of one record in order; each ``_line`` knows its 1-based number."""

    def __init__(self, lines: list[str], ends_with_newline: bool) -> None:
        self.lines = lines
        self.ends_with_newline = ends_with_newline

    def read(self) -> MatchRecord:
        header = self._object(1, "header")
        fmt = self._field(1, header, "format", int)
        if fmt != FORMAT_VERSION:
            raise RecordError(
                f"line 1: record format {fmt} is not supported (this reader knows {FORMAT_VERSION})"
            )
        rules = self._field(1, header, "rules", str)
        if rules != RULES_VERSION:
            raise RecordError(
                f"line 1: rules version '{rules}' is not supported "
                f"(the engines implement RULES.md version {RULES_VERSION})"
            )
        game_name = self._field(1, header, "game", str)
        options = self._field(1, header, "options", dict)
        try:
            game = make_game(game_name, **options)
        except RulesError as exc:
            raise RecordError(f"line 1: {exc}") from None
        seats = self._field(1, header, "seats", list)
        if len(seats) != game.num_players or not all(isinstance(s, str) for s in seats):
            raise RecordError(
                f"line 1: 'seats' must list {game.num_players} player names, got {seats!r}"
            )
        seed = self._field(1, header, "seed", int)
        first_seat = self._field(1, header, "first_seat", int)
        if not 0 <= first_seat < game.num_players:
            raise RecordError(
                f"line 1: first_seat {first_seat} is not a seat of a {game.num_players}-player game"
            )
        time_control = self._optional(1, header, "time_control", dict)
        created = self._optional(1, header, "created", str)
        self._no_extra(
            1,
            header,
            {"type", "format", "rules", "game", "options", "seats", "seed", "first_seat"}
            | {"time_control", "created"},
        )

        steps: list[RecordStep] = []
        number = 2
        while True:
            if number > len(self.lines):
                raise RecordError(
                    f"record ends after line {number - 1} without a result line (truncated?)"
                )
            obj = self._object(number, None)
            if obj["type"] == "result":
                result = self._result(number, obj)
                break
            if obj["type"] != "step":
                raise RecordError(
                    f"line {number}: expected a step or the result, got type {obj['type']!r}"
                )
            steps.append(self._step(number, obj, len(steps), game.num_players))
            number += 1
        if number < len(self.lines):
            raise RecordError(f"line {number + 1}: nothing may follow the result line")
        return MatchRecord(
            game=game_name,
            options=game.options(),
            seats=tuple(seats),
            seed=seed,
            first_seat=first_seat,
            steps=tuple(steps),
            result=result,
            time_control=time_control,
            created=created,
            rules_version=rules,
            format_version=fmt,
        )

    def _object(self, number: int, expected_type: str | None) -> dict[str, Any]:
        line = self.lines[number - 1]
        if not line.strip():
            raise RecordError(f"line {number}: empty line")
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            cut = number == len(self.lines) and not self.ends_with_newline
            hint = " (truncated?)" if cut else ""
            raise RecordError(f"line {number}: not JSON{hint}: {exc}") from None
        if not isinstance(obj, dict):
            raise RecordError(f"line {number}: expected a JSON object, got {line.strip()[:40]}")
        kind = obj.get("type")
        if not isinstance(kind, str):
            raise RecordError(f"line {number}: missing 'type' (header, step or result)")
        if expected_type is not None and kind != expected_type:
            raise RecordError(f"line {number}: expected the {expected_type} line, got {kind!r}")
        return obj

    def _step(self, number: int, obj: dict[str, Any], index: int, players: int) -> RecordStep:
        got = self._field(number, obj, "index", int)
        if got != index:
            raise RecordError(f"line {number}: step index {index} expected, got {got}")
        seat = self._field(number, obj, "seat", int)
        if not -1 <= seat < players:
            raise RecordError(
                f"line {number}: seat {seat} is not a seat of a {players}-player game "
                "(or -1 for the deal)"
            )
        text = self._field(number, obj, "action", str)
        try:
            action = parse_action(text)
        except RulesError as exc:
            raise RecordError(f"line {number}: {exc}") from None
        think_ms = self._field(number, obj, "think_ms", float, nullable=True)
        if think_ms is not None and think_ms < 0:
            raise RecordError(f"line {number}: think_ms must be 0 or more, got {think_ms}")
        self._no_extra(number, obj, {"type", "index", "seat", "action", "think_ms"})
        return RecordStep(seat, action, think_ms)

    def _result(self, number: int, obj: dict[str, Any]) -> RecordResult:
        winner = self._field(number, obj, "winner", int)
        scores = tuple(self._int_list(number, obj, "scores"))
        raw_sides = self._field(number, obj, "sides", list)
        sides = []
        for side in raw_sides:
            if not isinstance(side, list) or not all(_is_int(s) for s in side):
                raise RecordError(f"line {number}: 'sides' must be lists of seats, got {side!r}")
            sides.append(tuple(side))
        hands = tuple(
            self._hand(number, i, hand)
            for i, hand in enumerate(self._field(number, obj, "hands", list))
        )
        detail = self._field(number, obj, "detail", str)
        self._no_extra(number, obj, {"type", "winner", "scores", "sides", "hands", "detail"})
        return RecordResult(winner, scores, tuple(sides), hands, detail)

    def _hand(self, number: int, i: int, hand: object) -> HandResult:
        where = f"hands[{i}]"
        if not isinstance(hand, dict):
            raise RecordError(f"line {number}: {where} must be an object, got {hand!r}")
        deal = self._field(number, hand, "deal", int, where)
        end_text = self._field(number, hand, "end", str, where)
        try:
            end = HandEnd(end_text)
        except ValueError:
            known = ", ".join(e.value for e in HandEnd)
            raise RecordError(
                f"line {number}: {where}: unknown hand end '{end_text}' (expected one of {known})"
            ) from None
        points = tuple(self._int_list(number, hand, "points", where))
        detail = self._field(number, hand, "detail", str, where)
        self._no_extra(number, hand, {"deal", "end", "points", "detail"}, where)
        return HandResult(deal, end, points, detail)

    def _int_list(self, number: int, obj: dict[str, Any], key: str, where: str = "") -> list[int]:
        values: list[int] = self._field(number, obj, key, list, where)
        if not all(_is_int(v) for v in values):
            raise RecordError(
                f"line {number}: {_where(where)}'{key}' must be a list of integers, got {values!r}"
            )
        return values

    def _field(
        self,
        number: int,
        obj: dict[str, Any],
        key: str,
        kind: type[Any],
        where: str = "",
        *,
        nullable: bool = False,
    ) -> Any:
        if key not in obj:
            raise RecordError(f"line {number}: {_where(where)}missing '{key}'")
        value = obj[key]
        if value is None and nullable:
            return None
        if kind is float and _is_int(value):
            value = float(value)
        if isinstance(value, bool) or not isinstance(value, kind):
            raise RecordError(
                f"line {number}: {_where(where)}'{key}' must be {_KIND_TEXT[kind]}"
                f"{' or null' if nullable else ''}, got {json.dumps(value)}"
            )
        return value

    def _optional(self, number: int, obj: dict[str, Any], key: str, kind: type[Any]) -> Any:
        if obj.get(key) is None:
            return None
        return self._field(number, obj, key, kind)

    def _no_extra(
        self, number: int, obj: dict[str, Any], known: Iterable[str], where: str = ""
    ) -> None:
        extra = sorted(set(obj) - set(known))
        if extra:
            raise RecordError(
                f"line {number}: {_where(where)}unknown field{'s' if len(extra) > 1 else ''} "
                + ", ".join(f"'{k}'" for k in extra)
            )


_KIND_TEXT: Final[dict[type[Any], str]] = {
    int: "an integer",
    float: "a number",
    str: "a string",
    list: "a list",
    dict: "an object",
}


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _where(where: str) -> str:
    return f"{where}: " if where else ""


# -- replay -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """What :func:`replay` found: all steps and the result agree, or the first difference."""

    steps: int
    """Number of steps in the record."""
    applied: int
    """Steps the engine accepted before the first difference (all of them when ok)."""
    error: str | None
    """The first difference, naming the step and its line; None when the record is sound."""
    failed_step: int | None
    """Index of the first step that differs; None when ok or when only the result differs."""
    state: GameState | None
    """The engine's state after the accepted steps; None if the game could not be built."""

    @property
    def ok(self) -> bool:
        return self.error is None

    def __str__(self) -> str:
        if self.error is None:
            return f"OK: {self.steps} steps, result matches"
        return self.error


def replay(record: MatchRecord) -> ReplayReport:
    """Re-run ``record`` through the engine and check every step and the result.

    The game is rebuilt as ``make_game(game, **options).new_game(seed, first_seat=...)``; each
    step must be taken by the seat to move and be legal, and at the end the engine's outcome
    and hand results must equal the result line.
    """
    total = len(record.steps)

    def fail(message: str, applied: int, step: int | None, state: GameState | None) -> ReplayReport:
        return ReplayReport(total, applied, message, step, state)

    try:
        game = make_game(record.game, **record.options)
        state: GameState = game.new_game(record.seed, first_seat=record.first_seat)
    except RulesError as exc:
        return fail(f"header (line 1): {exc}", 0, None, None)
    if len(record.seats) != game.num_players:
        return fail(
            f"header (line 1): {len(record.seats)} seat names for a {game.num_players}-player game",
            0,
            None,
            state,
        )
    for index, step in enumerate(record.steps):
        where = f"step {index} (line {index + 2})"
        to_move = state.current_seat
        if state.is_terminal():
            return fail(
                f"{where}: the game is already over, but the record goes on with "
                f"{_who(step.seat)}: {step.action}",
                index,
                index,
                state,
            )
        if step.seat != to_move:
            return fail(
                f"{where}: the record has {_who(step.seat)} acting ('{step.action}'), "
                f"but {_who(to_move)} is to move",
                index,
                index,
                state,
            )
        try:
            state = state.apply(step.action)
        except (IllegalActionError, GameOverError) as exc:
            return fail(f"{where}: {_who(step.seat)}: {exc}", index, index, state)
    where = f"result (line {total + 2})"
    if not state.is_terminal():
        return fail(
            f"{where}: the record ends after {total} steps but the game is not over "
            f"({_who(state.current_seat)} to move)",
            total,
            None,
            state,
        )
    difference = _result_difference(record.result, RecordResult.from_state(state))
    if difference is not None:
        return fail(f"{where}: {difference}", total, None, state)
    return ReplayReport(total, total, None, None, state)


def _result_difference(recorded: RecordResult, engine: RecordResult) -> str | None:
    """Name the first field where the recorded result differs from the engine's."""
    for key in ("winner", "scores", "sides"):
        mine, theirs = getattr(recorded, key), getattr(engine, key)
        if mine != theirs:
            return f"'{key}' differs: the record has {_json(mine)}, the engine has {_json(theirs)}"
    for i, (mine_hand, their_hand) in enumerate(zip(recorded.hands, engine.hands, strict=False)):
        if mine_hand != their_hand:
            return (
                f"hands[{i}] differs: the record has {_json(_hand_json(mine_hand))}, "
                f"the engine has {_json(_hand_json(their_hand))}"
            )
    if len(recorded.hands) != len(engine.hands):
        return (
            f"'hands' differs: the record has {len(recorded.hands)} hands, "
            f"the engine has {len(engine.hands)}"
        )
    if recorded.detail != engine.detail:
        return (
            f"'detail' differs: the record has {_json(recorded.detail)}, "
            f"the engine has {_json(engine.detail)}"
        )
    return None


def _json(value: object) -> str:
    def plain(v: object) -> object:
        if isinstance(v, tuple | list):
            return [plain(x) for x in v]
        return v

    return json.dumps(plain(value), ensure_ascii=False)


def _who(seat: int) -> str:
    return "chance (the deal)" if seat == CHANCE else f"seat {seat}"

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

Format 2 adds what a refereed match needs (format 1 records are still read and replayed):

* a ``fault`` line per fault charged to a seat, after the last step and before the result
  (DESIGN.md decision 9)::

    {"type": "fault", "seat": 1, "turn": 7, "step": 12, "kind": "timeout", "reason": "...",
     "strikes": 1, "forfeited": false}

  ``step`` is the index of the step that was due; ``turn`` the request it answered.
* ``"substituted": true`` on a step the referee played for a faulting seat;
* ``"termination"`` on the result line when the match did not end by the rules: ``forfeit``
  (the winner is then :func:`forfeit_winner`'s), ``void`` or ``aborted`` (``winner`` null);
  the scores and hands are those reached when play stopped;
* optional header fields ``match_id`` and ``fault_policy``.

A record written without any of these is a format 1 record with ``"format": 2``.

>>> from domino_arena.sdk.rules import make_game
>>> state = make_game("passing").new_game(seed=7, first_seat=0)
>>> while not state.is_terminal():
...     state = state.apply(state.legal_actions()[0])
>>> record = record_from_state(state, seats=["a", "b"], seed=7, first_seat=0)
>>> str(replay(record)).startswith("OK: ")
True
"""

from __future__ import annotations

import dataclasses
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

FORMAT_VERSION: Final = 2
"""Version of the record layout written by :func:`write_record`."""

READABLE_FORMATS: Final = (1, 2)
"""Record layouts :func:`read_record` and :func:`replay` accept."""

NORMAL: Final = "normal"
"""The termination of a match played to the end by the rules."""

TERMINATIONS: Final = (NORMAL, "forfeit", "void", "aborted")
"""How a match can end (the referee's ``Termination`` values)."""

FAULT_KINDS: Final = ("timeout", "illegal", "malformed", "disconnected")
"""What a seat can be charged with (the referee's ``FaultKind`` values)."""

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
    substituted: bool = False
    """The referee played this step for a faulting seat (format 2)."""


@dataclass(frozen=True, slots=True)
class RecordFault:
    """A fault charged to a seat (format 2): what it did, and what the policy did about it."""

    seat: int
    turn: int
    """The request the fault belongs to (numbered from 1 through the match)."""
    step: int
    """Index of the step that was due; equal to the number of steps when the seat forfeited."""
    kind: str
    """One of :data:`FAULT_KINDS`."""
    reason: str
    strikes: int
    """Faults charged to this seat so far in the match, this one included."""
    forfeited: bool
    """This fault lost the seat the match."""


@dataclass(frozen=True, slots=True)
class RecordResult:
    """The result line: the engine's outcome (or how the referee ended the match) and hands."""

    winner: int | None
    """The winning side; None only for a ``void`` or ``aborted`` match."""
    scores: tuple[int, ...]
    """Final score of each side."""
    sides: tuple[tuple[int, ...], ...]
    """The seats of each side."""
    hands: tuple[HandResult, ...]
    """Every deal of the game, void deals included."""
    detail: str
    termination: str = NORMAL
    """One of :data:`TERMINATIONS` (format 2); anything but ``normal`` means play stopped early."""

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
    faults: tuple[RecordFault, ...] = ()
    """Every fault charged to a seat, in order (format 2)."""
    match_id: str | None = None
    fault_policy: dict[str, Any] | None = None
    """The referee's fault policy, e.g. ``{"policy": "substitute", "max_strikes": 3}``."""


def forfeit_winner(scores: Sequence[int], loser: int) -> int:
    """Return the side that wins when side ``loser`` forfeits.

    With two sides it is the other one. With three or more, it is the side with the highest
    score among the others, the lowest side index breaking a tie: the forfeit ends the game,
    so the game's own "most points wins" order decides between those still in it.
    """
    others = [side for side in range(len(scores)) if side != loser]
    if not others:
        raise ValueError("a forfeit needs at least two sides")
    return max(others, key=lambda side: (scores[side], -side))


def record_from_state(
    final_state: GameState,
    seats: Sequence[str],
    seed: int,
    first_seat: int,
    *,
    think_ms: Sequence[float | None] | None = None,
    time_control: dict[str, Any] | None = None,
    created: str | None = None,
    termination: str = NORMAL,
    winner: int | None = None,
    detail: str | None = None,
    faults: Sequence[RecordFault] = (),
    substituted: Iterable[int] = (),
    match_id: str | None = None,
    fault_policy: dict[str, Any] | None = None,
) -> MatchRecord:
    """Build the record of a game from its last state (the log is ``state.history``).

    Args:
        final_state: the state at the end of the game, or where the referee stopped it.
        seats: the name of the player in each seat.
        seed, first_seat: the arguments the game was started with (``first_seat`` resolved:
            pass the seat that actually started, not None).
        think_ms: one entry per step of ``final_state.history``, or None for untimed play.
        termination: one of :data:`TERMINATIONS`; ``normal`` takes the result from the
            engine's outcome, the others from ``winner`` and ``detail``.
        winner, detail: the result of a match that did not end by the rules (``winner`` must
            be None for ``void`` and ``aborted``).
        faults, substituted: the faults charged, and the indices of the steps the referee
            played for a faulting seat.

    Raises:
        ValueError: a normal game is not over, or an argument does not fit the others.
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
    if termination not in TERMINATIONS:
        raise ValueError(f"unknown termination '{termination}': expected one of {TERMINATIONS}")
    if termination == NORMAL:
        if winner is not None or detail is not None:
            raise ValueError("a normal result comes from the engine: pass no winner or detail")
        result = RecordResult.from_state(final_state)
    else:
        if (winner is None) != (termination != "forfeit"):
            raise ValueError(
                f"a {termination} result needs {'a' if winner is None else 'no'} winner"
            )
        result = RecordResult(
            winner=winner,
            scores=final_state.scores,
            sides=game.sides,
            hands=final_state.hand_results,
            detail=detail or termination,
            termination=termination,
        )
    played_for = set(substituted)
    return MatchRecord(
        game=game.name,
        options=game.options(),
        seats=tuple(seats),
        seed=seed,
        first_seat=first_seat,
        steps=tuple(
            RecordStep(entry.seat, entry.action, ms, index in played_for)
            for index, (entry, ms) in enumerate(zip(history, times, strict=True))
        ),
        result=result,
        time_control=time_control,
        created=created,
        faults=tuple(faults),
        match_id=match_id,
        fault_policy=fault_policy,
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
    if record.match_id is not None:
        header["match_id"] = record.match_id
    if record.fault_policy is not None:
        header["fault_policy"] = record.fault_policy
    lines = [_dump(header)]
    for index, step in enumerate(record.steps):
        ms = None if step.think_ms is None else round(step.think_ms, 3)
        line: dict[str, Any] = {
            "type": "step",
            "index": index,
            "seat": step.seat,
            "action": str(step.action),
            "think_ms": ms,
        }
        if step.substituted:
            line["substituted"] = True
        lines.append(_dump(line))
    for fault in record.faults:
        lines.append(
            _dump(
                {
                    "type": "fault",
                    "seat": fault.seat,
                    "turn": fault.turn,
                    "step": fault.step,
                    "kind": fault.kind,
                    "reason": fault.reason,
                    "strikes": fault.strikes,
                    "forfeited": fault.forfeited,
                }
            )
        )
    result = record.result
    last: dict[str, Any] = {
        "type": "result",
        "winner": result.winner,
        "scores": list(result.scores),
        "sides": [list(side) for side in result.sides],
        "hands": [_hand_json(hand) for hand in result.hands],
        "detail": result.detail,
    }
    if result.termination != NORMAL:
        last["termination"] = result.termination
    lines.append(_dump(last))
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
        self.format = FORMAT_VERSION

    def read(self) -> MatchRecord:
        header = self._object(1, "header")
        fmt = self._field(1, header, "format", int)
        if fmt not in READABLE_FORMATS:
            known = " and ".join(str(f) for f in READABLE_FORMATS)
            raise RecordError(
                f"line 1: record format {fmt} is not supported (this reader knows {known})"
            )
        self.format = fmt
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
        match_id = self._newer(1, header, "match_id", str)
        fault_policy = self._newer(1, header, "fault_policy", dict)
        self._no_extra(
            1,
            header,
            {"type", "format", "rules", "game", "options", "seats", "seed", "first_seat"}
            | {"time_control", "created"}
            | self._since_2({"match_id", "fault_policy"}),
        )

        steps: list[RecordStep] = []
        faults: list[RecordFault] = []
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
            if obj["type"] == "fault" and self.format >= 2:
                faults.append(self._fault(number, obj, len(steps), game.num_players))
            elif obj["type"] != "step":
                # Fault lines are optional extras of format 2; the message names the usual lines.
                raise RecordError(
                    f"line {number}: expected a step or the result, got type {obj['type']!r}"
                )
            elif faults:
                raise RecordError(f"line {number}: a step cannot follow the fault lines")
            else:
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
            faults=tuple(faults),
            match_id=match_id,
            fault_policy=fault_policy,
        )

    def _since_2(self, keys: set[str]) -> set[str]:
        """Return ``keys`` if the record is format 2 or later, else nothing (they are unknown)."""
        return keys if self.format >= 2 else set()

    def _newer(self, number: int, obj: dict[str, Any], key: str, kind: type[Any]) -> Any:
        """Read an optional field of format 2; a format 1 record refuses it as unknown."""
        return self._optional(number, obj, key, kind) if self.format >= 2 else None

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
        substituted = self._newer(number, obj, "substituted", bool) or False
        self._no_extra(
            number,
            obj,
            {"type", "index", "seat", "action", "think_ms"} | self._since_2({"substituted"}),
        )
        if substituted and seat == CHANCE:
            raise RecordError(f"line {number}: the deal cannot be substituted")
        return RecordStep(seat, action, think_ms, substituted)

    def _fault(self, number: int, obj: dict[str, Any], steps: int, players: int) -> RecordFault:
        seat = self._field(number, obj, "seat", int)
        if not 0 <= seat < players:
            raise RecordError(
                f"line {number}: seat {seat} is not a seat of a {players}-player game"
            )
        turn = self._field(number, obj, "turn", int)
        step = self._field(number, obj, "step", int)
        if not 0 <= step <= steps:
            raise RecordError(f"line {number}: fault at step {step}, but the record has {steps}")
        kind = self._field(number, obj, "kind", str)
        if kind not in FAULT_KINDS:
            raise RecordError(
                f"line {number}: unknown fault kind '{kind}' (expected one of "
                f"{', '.join(FAULT_KINDS)})"
            )
        reason = self._field(number, obj, "reason", str)
        strikes = self._field(number, obj, "strikes", int)
        if turn < 0 or strikes < 1:
            raise RecordError(f"line {number}: a fault needs turn >= 0 and strikes >= 1")
        forfeited = self._field(number, obj, "forfeited", bool)
        self._no_extra(
            number,
            obj,
            {"type", "seat", "turn", "step", "kind", "reason", "strikes", "forfeited"},
        )
        return RecordFault(seat, turn, step, kind, reason, strikes, forfeited)

    def _result(self, number: int, obj: dict[str, Any]) -> RecordResult:
        termination = self._newer(number, obj, "termination", str) or NORMAL
        if termination not in TERMINATIONS:
            raise RecordError(
                f"line {number}: unknown termination '{termination}' (expected one of "
                f"{', '.join(TERMINATIONS)})"
            )
        stopped = termination in ("void", "aborted")
        winner = self._field(number, obj, "winner", int, nullable=stopped)
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
        self._no_extra(
            number,
            obj,
            {"type", "winner", "scores", "sides", "hands", "detail"}
            | self._since_2({"termination"}),
        )
        if stopped and winner is not None:
            raise RecordError(f"line {number}: a {termination} match has no winner (null)")
        return RecordResult(winner, scores, tuple(sides), hands, detail, termination)

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
        if (isinstance(value, bool) and kind is not bool) or not isinstance(value, kind):
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
    bool: "true or false",
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

    A match the referee stopped (format 2: ``forfeit``, ``void``, ``aborted``) is checked the
    same way up to where it stopped: the scores and hands must be the engine's at that point,
    a forfeit must leave the game unfinished and name the winner :func:`forfeit_winner` gives.
    Each fault must be charged to the seat that was to move at its step, and the substituted
    steps must be exactly the steps of faults that did not forfeit.
    """
    total = len(record.steps)
    result_line = total + len(record.faults) + 2

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
    movers: list[int] = []
    for index, step in enumerate(record.steps):
        where = f"step {index} (line {index + 2})"
        to_move = state.current_seat
        movers.append(to_move)
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
    movers.append(state.current_seat)
    fault_error = _fault_difference(record, movers)
    if fault_error is not None:
        return fail(fault_error, total, None, state)
    where = f"result (line {result_line})"
    termination = record.result.termination
    if termination == NORMAL or (termination != "forfeit" and state.is_terminal()):
        if not state.is_terminal():
            return fail(
                f"{where}: the record ends after {total} steps but the game is not over "
                f"({_who(state.current_seat)} to move)",
                total,
                None,
                state,
            )
        expected = RecordResult.from_state(state)
        if termination != NORMAL:
            # A match voided or aborted after the last step: the engine's outcome stands
            # beside it, but nobody won.
            expected = dataclasses.replace(
                expected, winner=None, detail=record.result.detail, termination=termination
            )
    else:
        if state.is_terminal():
            return fail(
                f"{where}: the record says '{termination}', but its steps end the game",
                total,
                None,
                state,
            )
        winner = None
        if termination == "forfeit":
            forfeits = [f for f in record.faults if f.forfeited]
            if not forfeits:
                return fail(f"{where}: a forfeit without a forfeiting fault", total, None, state)
            loser = game.side_of(forfeits[-1].seat)
            winner = forfeit_winner(state.scores, loser)
        expected = RecordResult(
            winner,
            state.scores,
            game.sides,
            state.hand_results,
            record.result.detail,
            termination,
        )
    difference = _result_difference(record.result, expected)
    if difference is not None:
        return fail(f"{where}: {difference}", total, None, state)
    return ReplayReport(total, total, None, None, state)


def _fault_difference(record: MatchRecord, movers: Sequence[int]) -> str | None:
    """Check the fault lines against who was to move at each step (``movers``, one per step
    and one for the position after the last).
    """
    total = len(record.steps)
    substituted = {i for i, step in enumerate(record.steps) if step.substituted}
    charged: set[int] = set()
    for k, fault in enumerate(record.faults):
        where = f"fault (line {total + k + 2})"
        to_move = movers[fault.step]
        if fault.seat != to_move:
            return (
                f"{where}: charged to seat {fault.seat} at step {fault.step}, "
                f"but {_who(to_move)} was to move"
            )
        if fault.forfeited:
            if fault.step != total or k != len(record.faults) - 1:
                return f"{where}: a forfeit must be the last fault, after the last step"
        elif fault.step not in substituted:
            return (
                f"{where}: seat {fault.seat} kept its seat, so the referee played step "
                f"{fault.step} for it, but that step is not marked substituted"
            )
        else:
            charged.add(fault.step)
    for index in sorted(substituted - charged):
        return f"step {index} (line {index + 2}): substituted, but no fault is charged there"
    if record.result.termination == NORMAL and any(f.forfeited for f in record.faults):
        return f"result (line {total + len(record.faults) + 2}): a forfeit ended a normal match?"
    return None


def _result_difference(recorded: RecordResult, engine: RecordResult) -> str | None:
    """Name the first field where the recorded result differs from the engine's."""
    if recorded.termination != engine.termination:
        return (
            f"'termination' differs: the record has {_json(recorded.termination)}, "
            f"the replay has {_json(engine.termination)}"
        )
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

"""Reading a record: parsing its JSON Lines and checking their form, line by line."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any, Final, TextIO, TypeVar

from ...rules import CHANCE, HandEnd, HandResult, RulesError, make_game, parse_action
from ..results import FaultKind, Termination
from .model import (
    FORMAT_VERSION,
    READABLE_FORMATS,
    RULES_VERSION,
    MatchRecord,
    RecordError,
    RecordFault,
    RecordResult,
    RecordStep,
)

_Word = TypeVar("_Word", FaultKind, Termination)


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


SIGNATURE_TYPE: Final = "signature"
"""The ``type`` of the optional last line a referee adds when it hands a record out:
``{"type": "signature", "alg": "ed25519", "key": KEY_ID, "sig": BASE64}`` over the exact bytes
of the lines before it (docs/admin.md, "Signed records"). The SDK reads its form and ignores
it: checking it is the importing arena's job (it needs the referee's public key)."""
_SIGNATURE_FIELDS: Final = frozenset({"type", "alg", "key", "sig"})
_SIGNATURE_MAX: Final = 1024
"""A signature line is short (an Ed25519 signature is 88 base64 characters): a longer last
line is not read as one."""


def split_signature(text: str) -> tuple[str, dict[str, str] | None]:
    """Return the record's text without its signature line, and that line's fields (None
    when the last line is none).

    Raises:
        RecordError: the last line says it is a signature but has not its form.
    """
    body = text.rstrip("\n")
    start = body.rfind("\n") + 1
    last = body[start:]
    if len(last) > _SIGNATURE_MAX or f'"{SIGNATURE_TYPE}"' not in last:
        return text, None
    try:
        obj = json.loads(last)
    except (json.JSONDecodeError, RecursionError):
        return text, None
    if not isinstance(obj, dict) or obj.get("type") != SIGNATURE_TYPE:
        return text, None
    number = body.count("\n") + 1
    if set(obj) != _SIGNATURE_FIELDS or not all(isinstance(v, str) for v in obj.values()):
        raise RecordError(
            f"line {number}: a signature line holds exactly 'alg', 'key' and 'sig' (strings)"
        )
    return text[:start], obj


def parse_record(text: str) -> MatchRecord:
    """Parse the JSON Lines of a record (see :func:`read_record`); a last signature line
    (:func:`split_signature`) is checked for its form and otherwise ignored."""
    text, _ = split_signature(text)
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
                f"(the engines implement docs/rules.md version {RULES_VERSION})"
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
        referee = self._newer(1, header, "referee", dict)
        self._no_extra(
            1,
            header,
            {"type", "format", "rules", "game", "options", "seats", "seed", "first_seat"}
            | {"time_control", "created"}
            | self._since_2({"match_id", "fault_policy", "referee"}),
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
            referee=referee,
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
        except RecursionError:  # the decoder recurses once per level
            raise RecordError(
                f"line {number}: JSON nested deeper than the reader allows (a record's lines "
                "nest a few levels)"
            ) from None
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
        kind = self._word(number, obj, "kind", FaultKind, "fault kind")
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
        termination = Termination.NORMAL
        if self._newer(number, obj, "termination", str) is not None:
            termination = self._word(number, obj, "termination", Termination, "termination")
        stopped = termination in (Termination.VOID, Termination.ABORTED)
        nullable = stopped or termination is Termination.ADJUDICATED  # a tie at the top
        winner = self._field(number, obj, "winner", int, nullable=nullable)
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

    def _word(
        self, number: int, obj: dict[str, Any], key: str, words: type[_Word], what: str
    ) -> _Word:
        """Return the string field ``key`` as one of the enum ``words``, or say it is none."""
        text = self._field(number, obj, key, str)
        try:
            return words(text)
        except ValueError:
            raise RecordError(
                f"line {number}: unknown {what} '{text}' (expected one of {', '.join(words)})"
            ) from None

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

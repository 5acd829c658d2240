"""Writing a record as JSON Lines: the same record always gives the same bytes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, TextIO

from ...rules import HandResult
from ..results import Termination
from .model import MatchRecord


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
    if record.referee is not None:
        header["referee"] = record.referee
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
        "hands": [hand_json(hand) for hand in result.hands],
        "detail": result.detail,
    }
    if result.termination is not Termination.NORMAL:
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


def hand_json(hand: HandResult) -> dict[str, Any]:
    """A hand as the result line writes it (replay quotes it the same way)."""
    return {
        "deal": hand.deal,
        "end": hand.end.value,
        "points": list(hand.points),
        "detail": hand.detail,
    }

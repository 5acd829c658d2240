"""The stdio protocol's lines: one JSON object a line, the proto's own messages in protobuf's
canonical JSON mapping (docs/writing-a-bot.md, "Any language: the stdio protocol").

The arena writes one ``RefereeMessage`` a line to a bot's stdin (never a batch: batches are
unrolled, in order) and reads one ``BotMessage`` a line from its stdout. The proto stays the one
contract: a line is exactly what :mod:`google.protobuf.json_format` makes of the message,
camelCase names, enums by name, 64-bit integers as strings, and every field with no presence
written even when it is zero or empty (so a bot in any language reads ``"seat": 0`` instead of
guessing a missing key).

What a bot writes is untrusted: :func:`decode_bot_line` refuses a line longer than
:data:`MAX_LINE_BYTES`, not UTF-8, not JSON, or not a ``BotMessage``, with a
:class:`StdioProtocolError` that names the line and the rule. :class:`LineSplitter` cuts a
stream of chunks into lines without ever holding more than the bound, so a bot that prints
100 MB without a newline costs the arena 1 MiB, not 100 MB.
"""

from __future__ import annotations

import json
from typing import Final

from google.protobuf import json_format

from domino_arena.sdk.match.bot_errors import bounded, escape
from domino_arena.v1 import referee_pb2

MAX_LINE_BYTES: Final = 1 << 20
"""The longest line a bot may write (a reply is a few hundred bytes)."""

_WHY_LIMIT: Final = 200
"""Characters of a parser's complaint an error repeats."""


class StdioProtocolError(ValueError):
    """A line from a bot breaks the stdio protocol.

    Attributes:
        number: the line's number on the bot's stdout (from 1).
        rule: which rule it broke, e.g. ``"not JSON: Expecting value at column 1"``.
    """

    def __init__(self, number: int, rule: str) -> None:
        self.number = number
        self.rule = rule
        super().__init__(f"stdout line {number}: {rule}")


def encode_referee_message(msg: referee_pb2.RefereeMessage) -> bytes:
    """Return ``msg`` as one line of the protocol (JSON, UTF-8, ending in a newline).

    Raises:
        ValueError: ``msg`` is a batch (:func:`unroll` it first) or empty.
    """
    kind = msg.WhichOneof("message")
    if kind is None or kind == "batch":
        raise ValueError(f"a stdio line holds one RefereeMessage, not {kind or 'an empty one'}")
    text = json_format.MessageToJson(
        msg, indent=None, ensure_ascii=False, always_print_fields_with_no_presence=True
    )
    return text.encode() + b"\n"


def unroll(msg: referee_pb2.RefereeMessage) -> list[referee_pb2.RefereeMessage]:
    """Return the messages ``msg`` delivers: a batch's messages in order, else ``msg`` alone."""
    if msg.WhichOneof("message") == "batch":
        return list(msg.batch.messages)
    return [msg]


def decode_bot_line(line: bytes, number: int) -> referee_pb2.BotMessage:
    """Return the ``BotMessage`` of one line of a bot's stdout (line ``number``, from 1).

    A blank line gives an empty message (``WhichOneof("message")`` is None), which callers skip.

    Raises:
        StdioProtocolError: the line is too long, not UTF-8, not a JSON object, or not a
            ``BotMessage`` (unknown fields are ignored; a wrong type or value is not).
    """
    if len(line) > MAX_LINE_BYTES:
        raise StdioProtocolError(number, f"line longer than {MAX_LINE_BYTES} bytes")
    try:
        text = line.decode()
    except UnicodeDecodeError as exc:
        raise StdioProtocolError(number, f"not UTF-8: byte {exc.start}") from None
    if not text.strip():
        return referee_pb2.BotMessage()
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StdioProtocolError(number, f"not JSON: {exc.msg} at column {exc.colno}") from None
    except RecursionError:
        raise StdioProtocolError(number, "not JSON: nested too deeply") from None
    if not isinstance(value, dict):
        raise StdioProtocolError(
            number, f"not a BotMessage: a JSON {type(value).__name__}, expected an object"
        )
    message = referee_pb2.BotMessage()
    try:
        json_format.ParseDict(value, message, ignore_unknown_fields=True)
    except (json_format.ParseError, RecursionError, ValueError, TypeError) as exc:
        why = escape(bounded(str(exc), _WHY_LIMIT))
        raise StdioProtocolError(number, f"not a BotMessage: {why}") from None
    if message.WhichOneof("message") is None:
        raise StdioProtocolError(
            number, 'not a BotMessage: expected one of "reply", "replies" (or "hello")'
        )
    return message


class LineSplitter:
    """Cuts the chunks read from a bot's stdout into numbered lines, never holding a line
    longer than :data:`MAX_LINE_BYTES` (the first such line raises)."""

    __slots__ = ("_held", "number")

    def __init__(self) -> None:
        self._held = bytearray()
        self.number = 0
        """The number of the last line returned."""

    def feed(self, chunk: bytes) -> list[tuple[int, bytes]]:
        """Return the lines ``chunk`` completes, each with its number (from 1).

        Raises:
            StdioProtocolError: a line runs past :data:`MAX_LINE_BYTES` (its number is the one
                it would have had).
        """
        held = self._held
        held += chunk
        lines: list[tuple[int, bytes]] = []
        start = 0
        while (end := held.find(b"\n", start)) >= 0:
            if end - start > MAX_LINE_BYTES:
                break
            self.number += 1
            lines.append((self.number, bytes(held[start:end])))
            start = end + 1
        del held[:start]
        if held.find(b"\n") > MAX_LINE_BYTES or (b"\n" not in held and len(held) > MAX_LINE_BYTES):
            held.clear()
            raise StdioProtocolError(self.number + 1, f"line longer than {MAX_LINE_BYTES} bytes")
        return lines

    @property
    def pending(self) -> int:
        """Bytes of a line begun but not ended."""
        return len(self._held)

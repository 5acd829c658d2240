"""A Python :class:`~domino_arena.sdk.bot.Bot` played over stdin and stdout with the stdio
protocol: what ``python -m domino_arena.sdk.stdio mybot.py:MyBot`` runs (every hosted Python
submission, inside the sandbox; docs/writing-a-bot.md, "Any language: the stdio protocol").

It reads one ``RefereeMessage`` a line, gives each to the bot's hooks exactly as the gRPC client
does (the same conversions, :mod:`domino_arena.sdk.wire`), and answers each request with one
``ActionReply`` line: the chosen action, or, when ``choose`` raised, the exception's type and
message (``error``; its traceback goes to stderr), which the referee charges as a ``bot_error``
fault at once. A ``choose`` that returns something that is not an action gets an empty reply
(a ``malformed`` fault), as from the client.

It imports no gRPC: inside the sandbox only ``domino_arena.sdk``, ``domino_arena.v1`` and
``google.protobuf`` exist. Messages are handled one at a time, in order; a class (or factory)
makes a new bot for each match, an object plays them all.
"""

from __future__ import annotations

import asyncio
import sys
import time
import traceback
from collections.abc import Coroutine
from typing import IO, Any, Final

from google.protobuf import json_format

from domino_arena.sdk.bot import AnyBot, AsyncBot, Bot, set_current_clock
from domino_arena.sdk.loading import BotOrFactory
from domino_arena.sdk.match.bot_errors import BotError
from domino_arena.sdk.rules import Action, Game
from domino_arena.sdk.wire import (
    ConversionError,
    History,
    action_to_proto,
    bot_error_to_proto,
    clock_from_proto,
    fault_from_proto,
    hand_end_from_proto,
    match_end_from_proto,
    match_start_from_proto,
    observation_from_proto,
)
from domino_arena.v1 import referee_pb2

MAX_INPUT_LINE: Final = 8 << 20
"""The longest line read from the arena (its messages are under gRPC's 4 MiB)."""


def encode_bot_message(message: referee_pb2.BotMessage) -> bytes:
    """Return ``message`` as one line of the protocol (the bot's side)."""
    return json_format.MessageToJson(message, indent=None).encode() + b"\n"


def decode_referee_line(line: bytes) -> referee_pb2.RefereeMessage:
    """Return the ``RefereeMessage`` of one line the arena wrote (unknown fields ignored).

    Raises:
        json_format.ParseError: the line is not one.
    """
    return json_format.Parse(line, referee_pb2.RefereeMessage(), ignore_unknown_fields=True)


class _Match:
    __slots__ = ("bot", "game", "history", "seat")

    def __init__(self, bot: AnyBot, match_id: str) -> None:
        self.bot = bot
        self.history = History(match_id)
        self.game: Game | None = None
        self.seat = -1


class Host:
    """Serves one bot (object or factory) over a pair of byte streams until input ends."""

    def __init__(self, source: BotOrFactory, output: IO[bytes], errors: IO[str]) -> None:
        self.source = source
        self.output = output
        self.errors = errors
        self.matches: dict[str, _Match] = {}
        self._runner: asyncio.Runner | None = None

    def serve(self, lines: IO[bytes]) -> None:
        """Handle every line of ``lines`` until it ends."""
        try:
            while line := lines.readline(MAX_INPUT_LINE):
                if not line.strip():
                    continue
                received = time.monotonic()
                try:
                    message = decode_referee_line(line)
                except json_format.ParseError as exc:
                    self._log(f"unreadable line from the arena: {exc}")
                    continue
                self.handle(message, received)
        finally:
            if self._runner is not None:
                self._runner.close()

    def handle(self, message: referee_pb2.RefereeMessage, received: float) -> None:
        """Give one message to the bot's hooks (and answer it when it is a request)."""
        kind = message.WhichOneof("message")
        if kind in (None, "welcome", "batch", "event"):
            return
        if kind == "error":
            error = message.error
            self._log(
                f"the referee says: {referee_pb2.ErrorCode.Name(error.code)}: {error.message}"
            )
            return
        body = getattr(message, kind)
        match_id: str = body.match_id
        try:
            self._handle(kind, body, match_id, received)
        except ConversionError as exc:
            self._log(f"match {match_id}: unreadable {kind} from the arena: {exc}")
        except Exception:
            self._log(f"match {match_id}: failed to handle {kind}:\n{traceback.format_exc()}")

    def _handle(self, kind: str, body: Any, match_id: str, received: float) -> None:
        match = self.matches.get(match_id)
        if match is None:
            if kind not in ("match_start", "request"):
                return
            match = self.matches[match_id] = _Match(self._new_bot(), match_id)
        if kind == "match_start":
            info = match_start_from_proto(body)
            match.game, match.seat = info.game, info.seat
            if info.snapshot is not None:
                match.history.restart(info.snapshot.history)
            self._hook(match, "on_match_start", info)
            return
        for event in match.history.add(body.events, kind):
            self._hook(match, "on_event", event)
        if kind == "request":
            self._answer(match, body, received)
        elif kind == "hand_end":
            self._hook(match, "on_hand_end", hand_end_from_proto(body))
        elif kind == "fault":
            self._hook(match, "on_fault", fault_from_proto(body))
        elif kind == "match_end":
            del self.matches[match_id]
            self._hook(match, "on_match_end", match_end_from_proto(body, match.game, match.seat))

    def _answer(self, match: _Match, request: referee_pb2.ActionRequest, received: float) -> None:
        reply = referee_pb2.ActionReply(match_id=request.match_id, turn=request.turn)
        where = f"match {request.match_id} turn {request.turn}"
        observation = observation_from_proto(
            request.observation, "request.observation", history=tuple(match.history.steps)
        )
        set_current_clock(clock_from_proto(request.clock, received))
        try:
            action = self._call(match.bot.choose(observation))
        except Exception as exc:
            error = BotError.of(exc)
            self._log(f"{where}: choose raised {error.reason}:\n{traceback.format_exc()}")
            reply.error.CopyFrom(bot_error_to_proto(error))
        else:
            if isinstance(action, Action):
                try:
                    reply.action.CopyFrom(action_to_proto(action))
                except ConversionError as exc:
                    self._log(f"{where}: cannot send '{action}': {exc}; sending an empty reply")
            else:
                self._log(f"{where}: choose returned {action!r}, not an action; empty reply")
        finally:
            set_current_clock(None)
        self.output.write(encode_bot_message(referee_pb2.BotMessage(reply=reply)))
        self.output.flush()

    def _new_bot(self) -> AnyBot:
        source = self.source
        made = source if isinstance(source, Bot | AsyncBot) else source()
        if not isinstance(made, Bot | AsyncBot):
            raise TypeError(f"the bot factory returned {made!r}, not a Bot or an AsyncBot")
        return made

    def _hook(self, match: _Match, hook: str, info: object) -> None:
        try:
            self._call(getattr(match.bot, hook)(info))
        except Exception:
            self._log(f"the bot's {hook} hook raised:\n{traceback.format_exc()}")

    def _call(self, result: object) -> object:
        """``result`` itself, or what it comes to when it is a coroutine (an AsyncBot's)."""
        if isinstance(result, Coroutine):
            if self._runner is None:
                self._runner = asyncio.Runner()
            coroutine: Coroutine[Any, Any, object] = result
            return self._runner.run(coroutine)
        return result

    def _log(self, text: str) -> None:
        print(text, file=self.errors, flush=True)


def main(argv: list[str] | None = None) -> int:
    """``python -m domino_arena.sdk.stdio FILE.py:Class``: serve stdin/stdout; exit status."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] in ("-h", "--help"):
        print(
            "usage: python -m domino_arena.sdk.stdio FILE.py:CLASS\n"
            "Play a Python Bot over stdin/stdout with the stdio protocol "
            "(docs/writing-a-bot.md).",
            file=sys.stderr,
        )
        return 0 if args and args[0] in ("-h", "--help") else 2
    from domino_arena.sdk.loading import load_python_bot  # noqa: PLC0415

    try:
        source = load_python_bot(args[0])
    except (ImportError, AttributeError, ValueError, OSError) as exc:
        print(f"error: cannot load {args[0]}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    Host(source, sys.stdout.buffer, sys.stderr).serve(sys.stdin.buffer)
    return 0

"""A program in any language, speaking the stdio protocol, as a local
:class:`~domino_arena.sdk.bot.Bot`: local play (``domino-arena play GAME --bots
exec:./mybot,greedy``), the compliance check (``python -m domino_arena.sdk.testing
exec:./mybot``) and the hosted bots' validator play it like any Bot.

Each hook becomes the message the referee would send (through :mod:`domino_arena.sdk.wire`, the
referee's own converters): ``on_match_start`` a ``MatchStart``, ``choose`` an ``ActionRequest``
(the observation without its history, a turn numbered per match, the clock of
:func:`~domino_arena.sdk.bot.current_clock` or zeros), ``on_hand_end`` a ``HandEnd``,
``on_fault`` a ``Fault``, ``on_match_end`` a ``MatchEnd``; the steps ``on_event`` reports ride in
the ``events`` of the next one, as in protocol version 2. The child is started at the first
message, and told ``Welcome`` first.

``choose`` waits for the reply to its match and turn (replies to other turns are dropped). A
reply with ``error`` raises :class:`BotReportedError`, which local play charges as the bot's
own error ("ValueError: ..."); a reply without an action is returned as a
:class:`MalformedReply` (a ``malformed`` fault); a protocol error, a timeout or the child's exit
raise :class:`ExecBotError` naming the command, the stdout line and the rule, with the child's
last stderr lines. A child that failed stays failed: every later ``choose`` raises the same.

Local play calls a Bot's hooks one match at a time, and gives each seat its own Bot; the seats
of one program (the compliance check puts it in every seat) are :meth:`ExecBot.seat` views of
one process, each with its own match id on the wire when two share one.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import queue
import shlex
import shutil
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from domino_arena.sdk.bot import (
    Bot,
    FaultInfo,
    HandEndInfo,
    MatchEndInfo,
    MatchEvent,
    MatchStartInfo,
    current_clock,
)
from domino_arena.sdk.match.bot_errors import BotError
from domino_arena.sdk.rules import GAMES, Action, Observation
from domino_arena.sdk.wire import (
    event_to_proto,
    fault_to_proto,
    hand_result_to_proto,
    match_end_to_proto,
    match_start_to_proto,
    ms,
    observation_to_proto,
    reply_action,
)
from domino_arena.v1 import referee_pb2

from . import child
from .child import ChildCommand, StderrTail, status_text
from .codec import LineSplitter, StdioProtocolError, decode_bot_line, encode_referee_message

ALL: Final = tuple(sorted(GAMES))
"""Every game: what an ExecBot's Welcome offers by default."""

PROTOCOL_VERSION: Final = 2
EOF_GRACE: Final = 0.5
"""Seconds :meth:`ExecBot.close` lets a child end on its own once its stdin is closed, before
it is sent SIGTERM."""
MAX_BACKLOG: Final = 10_000
"""Lines that may wait for a child that does not read its stdin (the referee's bound on what
waits for a bot, server/net/limits.py)."""


class ExecBotError(RuntimeError):
    """The program broke the stdio protocol, did not answer in time, or exited."""


class BotReportedError(Exception):
    """The program answered a request with ``error``: its own exception, as it reported it.

    ``bot_error`` is what local play and the compliance check name (see
    :meth:`~domino_arena.sdk.match.bot_errors.BotError.of`)."""

    def __init__(self, bot_error: BotError) -> None:
        self.bot_error = bot_error
        super().__init__(bot_error.reason)


@dataclass(frozen=True, slots=True)
class MalformedReply:
    """A reply with neither a usable action nor an error: what ``choose`` returns for it, which
    local play judges as a malformed (not an action) answer."""

    reason: str

    def __repr__(self) -> str:
        return f"a malformed reply ({self.reason})"


@dataclass(slots=True)
class _MatchState:
    wire_id: str
    turn: int = 0
    events: list[referee_pb2.Event] = field(default_factory=list)


_Item = tuple[str, referee_pb2.ActionReply | str]
"""From the reader: ("reply", the reply), or ("failed", why the child is gone)."""

_SESSIONS: Final[weakref.WeakSet[_Session]] = weakref.WeakSet()


class _Session:
    """One child process and its two reading threads, shared by the seats playing it."""

    def __init__(
        self,
        command: ChildCommand,
        name: str,
        games: Sequence[str],
        reply_timeout: float | None,
        on_stderr: Callable[[bytes], None] | None,
    ) -> None:
        self.command = command
        self.name = name
        self.games = tuple(games)
        self.reply_timeout = reply_timeout
        self.on_stderr = on_stderr
        self.process: subprocess.Popen[bytes] | None = None
        self.items: queue.Queue[_Item] = queue.Queue()
        self.failure: str | None = None
        self.tail = StderrTail()
        self.wire_ids: set[str] = set()
        self.outbox: queue.Queue[bytes | None] = queue.Queue(MAX_BACKLOG)
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        _SESSIONS.add(self)

    def send(self, message: referee_pb2.RefereeMessage) -> None:
        """Write one message, starting the child first if need be.

        Raises:
            ExecBotError: the child failed (now or before).
        """
        with self._lock:
            if self.failure is None and self.process is None:
                self._start()
            if self.failure is not None:
                raise ExecBotError(self.failure)
            self._write(encode_referee_message(message))

    def _write(self, line: bytes) -> None:
        """Queue a line for the writer thread: a child that does not read never blocks us."""
        try:
            self.outbox.put_nowait(line)
        except queue.Full:
            self.failure = (
                f"bot command '{self.command.describe()}': more than {MAX_BACKLOG} messages wait "
                "for it: it does not read its stdin"
            )
            raise ExecBotError(self.failure) from None

    def _write_stdin(self, process: subprocess.Popen[bytes]) -> None:
        """Write the queued lines; at the end (None) close stdin, which a polite child takes
        as the end of its work."""
        stdin = process.stdin
        assert stdin is not None
        with contextlib.suppress(OSError, ValueError):  # it exited: the reader reports how
            while (line := self.outbox.get()) is not None:
                stdin.write(line)
            stdin.close()

    def _start(self) -> None:
        try:
            process = self.process = child.popen(self.command)
        except OSError as exc:
            self.failure = f"bot command '{self.command.describe()}' cannot start: {exc}"
            raise ExecBotError(self.failure) from None
        for target in (self._read_stdout, self._read_stderr, self._write_stdin):
            thread = threading.Thread(target=target, args=(process,), daemon=True)
            thread.start()
            self._threads.append(thread)
        welcome = referee_pb2.Welcome(
            name=self.name, protocol_version=PROTOCOL_VERSION, games=self.games
        )
        self._write(encode_referee_message(referee_pb2.RefereeMessage(welcome=welcome)))

    def wait_reply(self, wire_id: str, turn: int) -> referee_pb2.ActionReply:
        """The child's reply to ``turn`` of ``wire_id`` (replies to other turns are dropped).

        Raises:
            ExecBotError: the child failed, or did not reply within the timeout.
        """
        while True:
            if self.failure is not None:
                raise ExecBotError(self.failure)
            try:
                kind, item = self.items.get(timeout=self.reply_timeout)
            except queue.Empty:
                raise ExecBotError(
                    f"bot command '{self.command.describe()}': no reply to match {wire_id} "
                    f"turn {turn} within {self.reply_timeout:g} s (the reply timeout)"
                    f"{self.tail.shown()}"
                ) from None
            if kind == "failed":
                assert isinstance(item, str)
                self.failure = item
                continue
            assert isinstance(item, referee_pb2.ActionReply)
            if item.match_id == wire_id and item.turn == turn:
                return item

    def _read_stdout(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        fd = process.stdout.fileno()
        splitter = LineSplitter()
        why = ""
        try:
            while chunk := os.read(fd, child.CHUNK):
                for number, line in splitter.feed(chunk):
                    message = decode_bot_line(line, number)
                    kind = message.WhichOneof("message")
                    if kind == "reply":
                        self.items.put(("reply", message.reply))
                    elif kind == "replies":
                        for reply in message.replies.replies:
                            self.items.put(("reply", reply))
        except StdioProtocolError as exc:
            why = f"{exc}; the bot was stopped"
            child.stop(process)
        except OSError:
            pass
        code = process.wait()
        with contextlib.suppress(queue.Full):
            self.outbox.put_nowait(None)  # the writer's end
        self._threads[1].join(1.0)  # its last words on stderr
        why = why or f"exited ({status_text(code)})"
        self.items.put(
            ("failed", f"bot command '{self.command.describe()}': {why}{self.tail.shown()}")
        )

    def _read_stderr(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stderr is not None
        fd = process.stderr.fileno()
        with contextlib.suppress(OSError):
            while chunk := os.read(fd, child.CHUNK):
                self.tail.feed(chunk)
                if self.on_stderr is not None:
                    self.on_stderr(chunk)

    def close(self) -> None:
        with self._lock:
            process = self.process
            if self.failure is None:
                self.failure = f"bot command '{self.command.describe()}' was closed"
        if process is not None:
            with contextlib.suppress(queue.Full):
                self.outbox.put_nowait(None)  # the writer's end: stdin closes after the rest
            self._threads[2].join(1.0)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(EOF_GRACE)  # a child that ends at the end of its input
            child.stop(process)
            for thread in self._threads:
                thread.join(5.0)


@atexit.register
def _close_all() -> None:
    for session in list(_SESSIONS):
        session.close()


def _to_stderr(chunk: bytes) -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.buffer.write(chunk)
        sys.stderr.buffer.flush()


class ExecBot(Bot):
    """A :class:`~domino_arena.sdk.bot.Bot` played by a child process over the stdio protocol.

    ``on_stderr`` receives what the child writes to stderr (default: this process's stderr);
    the last lines are kept for error messages either way. ``reply_timeout``: seconds a reply
    may take (None: for ever).
    """

    threaded = False

    def __init__(
        self,
        command: ChildCommand,
        *,
        name: str = "exec",
        games: Sequence[str] = ALL,
        reply_timeout: float | None = 60.0,
        on_stderr: Callable[[bytes], None] | None = None,
    ) -> None:
        self.name = name
        self._session = _Session(
            command, name, games, reply_timeout, _to_stderr if on_stderr is None else on_stderr
        )
        self._matches: dict[str, _MatchState] = {}
        self._current: _MatchState | None = None

    def seat(self) -> ExecBot:
        """Another seat played by the same process (its own matches, the same child)."""
        other = ExecBot.__new__(ExecBot)
        other.name = self.name
        other._session = self._session
        other._matches = {}
        other._current = None
        return other

    def close(self) -> None:
        """Stop the child (every seat of it): SIGTERM, SIGKILL after a grace, reaped."""
        self._session.close()

    # -- the hooks ------------------------------------------------------------------------------

    def on_match_start(self, info: MatchStartInfo) -> None:
        wire_id = info.match_id
        if wire_id in self._session.wire_ids:
            wire_id = f"{info.match_id}/seat{info.seat}"
        self._session.wire_ids.add(wire_id)
        state = self._matches[info.match_id] = self._current = _MatchState(wire_id)
        start = match_start_to_proto(info)
        start.match_id = state.wire_id
        self._session.send(referee_pb2.RefereeMessage(match_start=start))

    def on_event(self, event: MatchEvent) -> None:
        state = self._matches.get(event.match_id)
        if state is not None:
            state.events.append(event_to_proto(event.step, event.scores, event.deal))

    def choose(self, observation: Observation) -> Action:
        state = self._current
        if state is None:  # no match started: present the position as a resumed one
            raise ExecBotError(
                f"bot command '{self._session.command.describe()}': choose before "
                "on_match_start; an ExecBot is asked inside a match (local play calls the hooks)"
            )
        state.turn += 1
        message = referee_pb2.RefereeMessage()
        request = message.request
        request.match_id = state.wire_id
        request.turn = state.turn
        request.observation.CopyFrom(observation_to_proto(observation, history=False))
        clock = current_clock()
        if clock is not None:
            request.clock.move_ms = ms(clock.remaining())
            request.clock.bank_ms = clock.bank_ms
        request.events.extend(self._take(state))
        self._session.send(message)
        answer = reply_action(self._session.wait_reply(state.wire_id, state.turn))
        if isinstance(answer, BotError):
            raise BotReportedError(answer)
        if isinstance(answer, str):
            return MalformedReply(answer)  # type: ignore[return-value]  # judged as not an action
        return answer

    def on_hand_end(self, hand: HandEndInfo) -> None:
        state = self._matches.get(hand.match_id)
        if state is not None:
            message = hand_result_to_proto(hand.result, hand.scores, state.wire_id)
            message.events.extend(self._take(state))
            self._quietly(referee_pb2.RefereeMessage(hand_end=message))

    def on_fault(self, fault: FaultInfo) -> None:
        state = self._matches.get(fault.match_id)
        if state is not None:
            message = fault_to_proto(fault)
            message.match_id, message.turn = state.wire_id, state.turn
            message.events.extend(self._take(state))
            self._quietly(referee_pb2.RefereeMessage(fault=message))

    def on_match_end(self, result: MatchEndInfo) -> None:
        state = self._matches.pop(result.match_id, None)
        if state is None:
            return
        if self._current is state:
            self._current = None
        message = match_end_to_proto(result)
        message.match_id = state.wire_id
        message.events.extend(self._take(state))
        self._session.wire_ids.discard(state.wire_id)
        self._quietly(referee_pb2.RefereeMessage(match_end=message))

    @staticmethod
    def _take(state: _MatchState) -> list[referee_pb2.Event]:
        events, state.events = state.events, []
        return events

    def _quietly(self, message: referee_pb2.RefereeMessage) -> None:
        """Send a message no answer depends on; a failed child is reported by ``choose``."""
        with contextlib.suppress(ExecBotError):
            self._session.send(message)


def exec_factory(command_line: str) -> Callable[[], ExecBot]:
    """The bot of ``exec:COMMAND`` (split as a shell would): a factory of seats of one child.

    Raises:
        ValueError: the command is empty, cannot be split, or is not found.
    """
    try:
        argv = shlex.split(command_line)
    except ValueError as exc:
        raise ValueError(f"exec:{command_line}: {exc}") from None
    if not argv:
        raise ValueError("exec: expected a command after 'exec:', e.g. exec:./mybot")
    program = argv[0]
    if shutil.which(program) is None:
        raise ValueError(
            f"exec:{command_line}: '{program}' is not an executable file"
            + (" (a path needs ./ or a /)" if "/" not in program else "")
        )
    first = ExecBot(ChildCommand(tuple(argv)), name=command_name(argv))
    return first.seat


SOURCE_SUFFIXES: Final = (".py", ".js", ".mjs", ".rb", ".pl", ".jar", ".php", ".lua")
"""Files an interpreter runs: a command naming one is named after it."""


def command_name(argv: Sequence[str]) -> str:
    """A bot's name from its command: the script's for an interpreter (``python3 mybot.py``
    and ``python3 -m domino_arena.sdk.stdio mybot.py:MyBot`` are "mybot"), else the program's
    file name (``./mybot`` is "mybot")."""
    for arg in argv[1:]:
        path = Path(arg.partition(":")[0])
        if path.suffix in SOURCE_SUFFIXES:
            return path.stem
    return Path(argv[0]).name

"""The bridge from a referee's ``BotService.Play`` stream (grpc.aio) to a child process over
the stdio protocol: ``domino-arena bot run NAME --exec ./mybot`` and the hosted runner.

It passes the messages through exactly, both ways: the referee's messages (batches unrolled,
in order) become lines on the child's stdin, the child's replies go to the referee (several
waiting together in one ``ReplyBatch``). The relay, not the child, holds the token: it sends
the ``Hello``, and gives the child the referee's ``Welcome`` as its first line.

The child lives while there are matches: it starts at the first ``MatchStart`` (``command`` may
be a function of the match id, so a runner picks a version per match), and stops after
``idle_stop_seconds`` with no match. When it exits while matches are active it is started again
(at most ``max_restarts`` times per match) and each active match's messages so far, its
``MatchStart`` and every message after it, are replayed to the new child; its replies to turns
already answered are dropped, so the referee sees one answer per request. A match the relay
gave up on (restarts spent) gets an empty reply to each request: a ``malformed`` fault, so its
seat plays on under the fault policy instead of waiting for the clock.

What the child writes is untrusted and bounded (:mod:`.codec`): a line that is too long, not
JSON or not a ``BotMessage`` stops the child with the reason (``hooks.on_stderr``), its pending
requests get an empty reply (``malformed``), and it counts as an exit. The child's backlog is
bounded as the referee bounds a bot's (:data:`MAX_BACKLOG`, the referee's outbox limit), and only
a reply to a request still waiting reaches the referee, so a child can never make the relay
break the referee's stream limits (docs/referee.md, "Limits").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Final

import grpc

from domino_arena.sdk.client.errors import (
    ConnectionLostError,
    ProtocolError,
    error_from_message,
    error_from_status,
)
from domino_arena.v1 import referee_pb2, referee_pb2_grpc

from . import child
from .child import ChildCommand, status_text
from .codec import LineSplitter, StdioProtocolError, decode_bot_line, encode_referee_message, unroll

logger: Final = logging.getLogger(__package__)

MAX_BACKLOG: Final = 10_000
"""Messages that may wait for a child that does not read its stdin (the referee's own bound
on what waits for a bot, server/net/limits.py)."""
MAX_REPLAY: Final = 50_000
"""Messages kept per match for a replay; a longer match is not replayed after a crash."""

CommandSource = ChildCommand | Callable[[str], ChildCommand]


@dataclass
class RelayHooks:
    """What a relay tells its owner (the hosted runner keeps the logs and counts crashes)."""

    on_stderr: Callable[[bytes, tuple[str, ...]], None] | None = None
    """A chunk of the child's stderr (or the relay's reason for stopping it), and the match
    ids active then."""
    on_exit: Callable[[int, tuple[str, ...]], None] | None = None
    """The child's return code and the matches active when it exited unasked."""
    on_match_end: Callable[[str], None] | None = None
    """A match id, after its MatchEnd was relayed."""


@dataclass
class _Match:
    log: list[referee_pb2.RefereeMessage] = field(default_factory=list)
    replayable: bool = True
    restarts: int = 0
    asked: int = 0
    """The latest turn the referee asked."""
    answered: int = 0
    """The latest turn answered."""
    given_up: bool = False


class _Child:
    """One run of the bot's process: its backlog of lines and the tasks that serve it."""

    def __init__(self, command: ChildCommand) -> None:
        self.command = command
        self.backlog: asyncio.Queue[bytes] = asyncio.Queue(MAX_BACKLOG)
        self.process: asyncio.subprocess.Process | None = None
        self.stopping = False
        self.reason = ""
        self.task: asyncio.Task[None] | None = None

    def send(self, message: referee_pb2.RefereeMessage) -> None:
        try:
            self.backlog.put_nowait(encode_referee_message(message))
        except asyncio.QueueFull:
            self.fail(f"more than {MAX_BACKLOG} messages wait for it: it does not read its stdin")

    def fail(self, reason: str) -> None:
        if not self.reason:
            self.reason = reason
        if self.process is not None and self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()


class _Relay:
    def __init__(
        self, command: CommandSource, hooks: RelayHooks, idle: float, max_restarts: int
    ) -> None:
        self.command = command
        self.hooks = hooks
        self.idle = idle
        self.max_restarts = max_restarts
        self.matches: dict[str, _Match] = {}
        self.welcome = referee_pb2.RefereeMessage()
        self.child: _Child | None = None
        self.idle_task: asyncio.Task[None] | None = None
        self.call: grpc.aio.StreamStreamCall[referee_pb2.BotMessage, referee_pb2.RefereeMessage]
        self.replies: list[referee_pb2.ActionReply] = []
        self.writing = False
        self.fatal: Exception | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        """Every task the relay started (children, writes), ended with it."""

    # -- the referee's side -----------------------------------------------------------------

    async def serve(self, channel: grpc.aio.Channel, hello: referee_pb2.Hello) -> None:
        self.call = referee_pb2_grpc.BotServiceStub(channel).Play()
        try:
            await self._write(referee_pb2.BotMessage(hello=hello))
            first = await self._read()
            kind = first.WhichOneof("message")
            if kind == "error":
                raise error_from_message(first.error)
            if kind != "welcome":
                raise ProtocolError("UNEXPECTED", f"expected Welcome after Hello, got {kind}")
            self.welcome = first
            logger.info("relay welcomed as '%s'", first.welcome.name)
            while self.fatal is None:
                for message in unroll(await self._read()):
                    self._dispatch(message)
            raise self.fatal
        finally:
            self.call.cancel()
            if self.idle_task is not None:
                self.idle_task.cancel()
            await self._stop_child()
            for task in self.tasks:
                task.cancel()
            await asyncio.gather(*self.tasks, return_exceptions=True)

    def _spawn_task(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def _read(self) -> referee_pb2.RefereeMessage:
        try:
            message = await self.call.read()
        except grpc.aio.AioRpcError as exc:
            raise error_from_status(exc.code(), exc.details() or "") from None
        if message is grpc.aio.EOF:
            raise ConnectionLostError("CLOSED", "the referee closed the stream")
        assert isinstance(message, referee_pb2.RefereeMessage)
        return message

    async def _write(self, message: referee_pb2.BotMessage) -> None:
        try:
            await self.call.write(message)
        except grpc.aio.AioRpcError as exc:
            raise error_from_status(exc.code(), exc.details() or "") from None
        except asyncio.InvalidStateError:
            raise error_from_status(await self.call.code(), await self.call.details()) from None

    def _dispatch(self, message: referee_pb2.RefereeMessage) -> None:
        kind = message.WhichOneof("message")
        if kind == "error":
            code = message.error.code
            if code in (
                referee_pb2.ERROR_CODE_UNAUTHENTICATED,
                referee_pb2.ERROR_CODE_ALREADY_CONNECTED,
            ):
                self.fatal = error_from_message(message.error)
            if self.child is not None:
                self.child.send(message)
            return
        if kind is None or kind in ("welcome", "batch", "event"):
            return
        match_id: str = getattr(message, kind).match_id
        match = self.matches.get(match_id)
        if kind == "match_start" or (match is None and kind == "request"):
            if match is None:
                match = self.matches[match_id] = _Match()
            match.log = []
            match.replayable = True
        if match is None:
            return  # a match not played here
        if match.replayable:
            match.log.append(message)
            if len(match.log) > MAX_REPLAY:
                match.log, match.replayable = [], False
        if kind == "request":
            match.asked = max(match.asked, message.request.turn)
            if match.given_up:
                self._queue_reply(
                    referee_pb2.ActionReply(match_id=match_id, turn=message.request.turn)
                )
                return
        self._to_child(message, match_id)
        if kind == "match_end":
            del self.matches[match_id]
            if self.hooks.on_match_end is not None:
                self.hooks.on_match_end(match_id)
            if not self.matches:
                self._idle_soon()

    def _queue_reply(self, reply: referee_pb2.ActionReply) -> None:
        self.replies.append(reply)
        if not self.writing:
            self.writing = True
            self._spawn_task(self._flush())

    async def _flush(self) -> None:
        """Write the waiting replies, several as one ReplyBatch (the client's way)."""
        try:
            await asyncio.sleep(0)
            while self.replies:
                replies, self.replies = self.replies, []
                if len(replies) == 1:
                    message = referee_pb2.BotMessage(reply=replies[0])
                else:
                    message = referee_pb2.BotMessage(
                        replies=referee_pb2.ReplyBatch(replies=replies)
                    )
                await self._write(message)
        except Exception as exc:  # the stream is gone: the reader ends the relay
            logger.debug("relay: could not write: %s", exc)
        finally:
            self.writing = False

    # -- the child's side ---------------------------------------------------------------------

    def _to_child(self, message: referee_pb2.RefereeMessage, match_id: str) -> None:
        if self.idle_task is not None:
            self.idle_task.cancel()
            self.idle_task = None
        if self.child is None:
            self._start_child(match_id)
        assert self.child is not None
        self.child.send(message)

    def _start_child(self, match_id: str) -> None:
        command = self.command if isinstance(self.command, ChildCommand) else self.command(match_id)
        started = self.child = _Child(command)
        started.send(self.welcome)
        started.task = self._spawn_task(self._run_child(started))

    def _answer(self, reply: referee_pb2.ActionReply) -> None:
        """Forward a child's reply if it answers a request still waiting; drop it otherwise."""
        match = self.matches.get(reply.match_id)
        if match is None or match.given_up or not match.answered < reply.turn <= match.asked:
            logger.debug("relay: dropped a reply to %s turn %d", reply.match_id, reply.turn)
            return
        match.answered = reply.turn
        self._queue_reply(reply)

    async def _run_child(self, run: _Child) -> None:
        try:
            run.process = await child.spawn(run.command)
        except OSError as exc:
            run.reason = f"cannot start '{run.command.describe()}': {exc}"
            self._exited(run, 127)
            return
        process = run.process
        feed = asyncio.create_task(self._feed(run, process))
        stderr = asyncio.create_task(self._drain_stderr(process))
        try:
            await self._read_replies(run, process)
        finally:
            feed.cancel()
            code = await child.stop_async(process)
            with contextlib.suppress(TimeoutError):  # its last words (a traceback)
                await asyncio.wait_for(asyncio.shield(stderr), 1.0)
            stderr.cancel()
            await asyncio.gather(feed, stderr, return_exceptions=True)
        self._exited(run, code)

    async def _feed(self, run: _Child, process: asyncio.subprocess.Process) -> None:
        stdin = process.stdin
        assert stdin is not None
        with contextlib.suppress(ConnectionError, OSError):
            while True:
                stdin.write(await run.backlog.get())
                await stdin.drain()

    async def _drain_stderr(self, process: asyncio.subprocess.Process) -> None:
        assert process.stderr is not None
        while chunk := await process.stderr.read(child.CHUNK):
            self._stderr(chunk)

    def _stderr(self, chunk: bytes) -> None:
        if self.hooks.on_stderr is not None:
            self.hooks.on_stderr(chunk, tuple(self.matches))

    async def _read_replies(self, run: _Child, process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None
        splitter = LineSplitter()
        try:
            while chunk := await process.stdout.read(child.CHUNK):
                for number, line in splitter.feed(chunk):
                    message = decode_bot_line(line, number)
                    kind = message.WhichOneof("message")
                    if kind == "reply":
                        self._answer(message.reply)
                    elif kind == "replies":
                        for reply in message.replies.replies:
                            self._answer(reply)
                if run.reason:
                    return
        except StdioProtocolError as exc:
            run.fail(str(exc))

    def _exited(self, run: _Child, code: int) -> None:
        if self.child is run:
            self.child = None
        if run.stopping:
            return
        active = tuple(self.matches)
        reason = run.reason or status_text(code)
        self._stderr(f"\n[arena] the bot was stopped: {reason}\n".encode())
        logger.warning("relay: the bot's process ended (%s); matches %s", reason, active)
        for match_id, match in self.matches.items():
            if match.answered < match.asked and run.reason:  # a protocol error: malformed
                match.answered = match.asked
                self._queue_reply(referee_pb2.ActionReply(match_id=match_id, turn=match.asked))
        if self.hooks.on_exit is not None:
            self.hooks.on_exit(code, active)
        replay = []
        for match_id, match in self.matches.items():
            if match.restarts >= self.max_restarts or not match.replayable:
                match.given_up = True
                if match.answered < match.asked:
                    match.answered = match.asked
                    self._queue_reply(referee_pb2.ActionReply(match_id=match_id, turn=match.asked))
            else:
                match.restarts += 1
                replay.append((match_id, match))
        if replay:
            self._start_child(replay[0][0])
            assert self.child is not None
            for _, match in replay:
                for message in match.log:
                    self.child.send(message)

    def _idle_soon(self) -> None:
        if self.idle_task is None and self.child is not None:
            self.idle_task = self._spawn_task(self._idle_stop())

    async def _idle_stop(self) -> None:
        await asyncio.sleep(self.idle)
        self.idle_task = None
        if not self.matches:
            await self._stop_child()

    async def _stop_child(self) -> None:
        run, self.child = self.child, None
        if run is None:
            return
        run.stopping = True
        if run.process is not None and run.process.stdin is not None:
            run.process.stdin.close()  # a polite child ends at the end of its input
        if run.task is not None:
            if run.process is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(run.process.wait()), child.STOP_GRACE)
            run.task.cancel()
            await asyncio.gather(run.task, return_exceptions=True)


async def relay(
    target: str,
    hello: referee_pb2.Hello,
    command: CommandSource,
    *,
    credentials: grpc.ChannelCredentials | None = None,
    hooks: RelayHooks = RelayHooks(),  # noqa: B008  # a frozen-by-use default, never mutated
    idle_stop_seconds: float = 60.0,
    max_restarts: int = 3,
) -> None:
    """Play the bot of ``command`` (a child over stdio) on the referee at ``target`` as
    ``hello`` names it, until the stream ends; returns only by raising.

    Raises:
        AuthenticationError, ProtocolError: the referee refused the hello (never retried).
        TakenOverError: another stream of the bot took over its seats.
        ConnectionLostError: the referee could not be reached, or the stream ended.
        RefereeError: another refusal.
    """
    if credentials is None:
        channel = grpc.aio.insecure_channel(target)
    else:
        channel = grpc.aio.secure_channel(target, credentials)
    async with channel:
        await _Relay(command, hooks, idle_stop_seconds, max_restarts).serve(channel, hello)

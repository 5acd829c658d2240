"""The main job's bot processes: one interpreter start for all of them, one process each.

Every entrant of ``domino-arena round-robin`` plays in its own process that dials the referee
over gRPC (``python -m domino_arena.bots NAME --from-stdin``). They are started by one launcher
(:mod:`domino_arena.bots.launcher`), which imports the SDK and the house bots once and forks a
child per bot: an interpreter start and its imports paid once instead of once a bot. Each child
has its own pid, connection and log; the job hands each its address and token on its own pipe,
signals it through a pidfd (never a pid that may have been reused) and learns its exit status
from the launcher, which reaps it and says so on its standard output, read on the event loop as
it comes (nothing polls).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, Final, Protocol

from domino_arena.bots import HOSTED_SEARCH_SAMPLES

STOP_TIMEOUT: Final = 10.0
"""Seconds the bot processes get to exit after SIGTERM before they are killed."""


class Entrant(Protocol):
    """What a bot process is started for (``main_job.Entrant``)."""

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> str: ...


@dataclass(eq=False)
class BotProcess:
    """An entrant's process: its pipe for the address and token, its log, and once the
    launcher has forked it, its pid, its pidfd and at last its exit status."""

    entrant: Entrant
    log: IO[str]
    stdin: int
    """The write end of the bot's standard input (-1 once closed)."""
    pid: int | None = None
    pidfd: int | None = None
    code: int | None = None
    """The exit status (negative: the signal that killed it), once reaped."""

    def dial(self, address: str, token: str) -> None:
        """Tell the bot where the referee is and its token (two lines on its standard input);
        it dials at once. A bot that died meanwhile is reported by the job's wait."""
        if self.stdin < 0:
            return
        with contextlib.suppress(BrokenPipeError):
            os.write(self.stdin, f"{address}\n{token}\n".encode())  # far below a pipe's buffer
        self._close_stdin()

    def output(self) -> str:
        """The end of what the process printed."""
        self.log.seek(0)
        return self.log.read()[-2000:].strip()

    def signal(self, signum: int) -> None:
        """Send ``signum`` unless the bot is not forked yet or already reaped."""
        if self.pidfd is not None and self.code is None:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self.pidfd, signum)

    def _close_stdin(self) -> None:
        if self.stdin >= 0:
            os.close(self.stdin)
            self.stdin = -1

    def _close(self) -> None:
        self._close_stdin()
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None
        self.log.close()


def _bot_argv(entrant: Entrant) -> list[str]:
    """The arguments of ``python -m domino_arena.bots`` for ``entrant``. No seed: each match's
    comes from the referee. The search bot plays at the hosted budget, not against the clock, so
    its moves do not depend on how busy the machine is (main_job's docstring)."""
    argv = [entrant.name, "--from-stdin", "--bot", entrant.kind]
    if entrant.kind == "search":
        argv += ["--samples", str(HOSTED_SEARCH_SAMPLES)]
    return argv


@dataclass(eq=False)
class BotGroup:
    """The launcher and the bots it forks; :meth:`attach` reads its reports on the loop."""

    launcher: subprocess.Popen[bytes]
    bots: list[BotProcess]
    _pending: bytes = b""
    _eof: bool = False
    _changed: asyncio.Event | None = None
    _reading: bool = False
    _killed: bool = False

    @classmethod
    def start(cls, entrants: Sequence[Entrant]) -> BotGroup:
        """Start the launcher for ``entrants`` (it loads while the job makes its database and
        starts the referee)."""
        bots: list[BotProcess] = []
        passed: list[int] = []
        try:
            for entrant in entrants:
                log = tempfile.TemporaryFile("w+", prefix=f"{entrant.name}-")  # noqa: SIM115
                read_end, write_end = os.pipe()
                bots.append(BotProcess(entrant, log, write_end))
                passed += [read_end, log.fileno()]
            specs = [
                {"argv": _bot_argv(bot.entrant), "stdin": passed[2 * i], "log": passed[2 * i + 1]}
                for i, bot in enumerate(bots)
            ]
            command = [sys.executable, "-m", "domino_arena.bots.launcher", json.dumps(specs)]
            launcher = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, pass_fds=passed
            )
        except BaseException:
            for bot in bots:
                bot._close()
            raise
        finally:
            for fd in passed[::2]:  # the read ends: the bots' now
                os.close(fd)
        return cls(launcher, bots)

    # -- on the event loop ----------------------------------------------------------------

    def attach(self) -> None:
        """Read the launcher's reports on the running loop from now on."""
        assert self.launcher.stdout is not None
        os.set_blocking(self.launcher.stdout.fileno(), False)
        self._changed = asyncio.Event()
        asyncio.get_running_loop().add_reader(self.launcher.stdout.fileno(), self._readable)
        self._reading = True

    def _readable(self) -> None:
        assert self.launcher.stdout is not None
        try:
            data = os.read(self.launcher.stdout.fileno(), 65536)
        except BlockingIOError:
            return
        if not data:
            self._detach()
            self._eof = True
        self._parse(data)
        if self._changed is not None:
            self._changed.set()
            self._changed = asyncio.Event()

    def _detach(self) -> None:
        if self._reading:
            assert self.launcher.stdout is not None
            asyncio.get_running_loop().remove_reader(self.launcher.stdout.fileno())
            self._reading = False

    def _parse(self, data: bytes) -> None:
        lines = (self._pending + data).split(b"\n")
        self._pending = lines.pop()
        by_pid = {bot.pid: bot for bot in self.bots if bot.pid is not None}
        for line in lines:
            match line.split():
                case [b"started", index, pid]:
                    bot = self.bots[int(index)]
                    bot.pid = int(pid)
                    by_pid[bot.pid] = bot
                    try:
                        bot.pidfd = os.pidfd_open(bot.pid)
                    except ProcessLookupError:  # reaped already: its "exited" line follows
                        bot.pidfd = None
                case [b"exited", pid, code]:
                    if (reaped := by_pid.get(int(pid))) is not None:
                        reaped.code = int(code)
                case _:
                    continue

    async def _until(self, done: Callable[[], bool]) -> None:
        while not done() and not self._eof:
            assert self._changed is not None, "attach() first"
            await self._changed.wait()

    async def exited(self, bot: BotProcess) -> int:
        """Wait for ``bot`` to exit; its status (the launcher's, if it died without saying)."""
        await self._until(lambda: bot.code is not None)
        if bot.code is not None:
            return bot.code
        return await asyncio.to_thread(self.launcher.wait)  # it closed its output: it is gone

    async def stop(self) -> None:
        """SIGTERM every bot and wait for all to exit; SIGKILL what still runs after
        :data:`STOP_TIMEOUT`; then reap the launcher (it exits after its last bot)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop(), STOP_TIMEOUT)
        self._detach()
        self.kill()

    async def _stop(self) -> None:
        await self._until(lambda: all(bot.pid is not None for bot in self.bots))
        for bot in self.bots:
            bot._close_stdin()  # a bot still waiting for its address gives up at once
            bot.signal(signal.SIGTERM)
        await self._until(lambda: all(bot.code is not None for bot in self.bots))

    # -- without a loop -------------------------------------------------------------------

    def kill(self) -> None:
        """Kill what still runs, reap the launcher, close the pipes, pidfds and logs (the job is
        over, or failed before its loop ran). Once; later calls do nothing."""
        if self._killed:
            return
        self._killed = True
        stdout = self.launcher.stdout
        assert stdout is not None
        for bot in self.bots:
            bot._close_stdin()  # unblocks a bot still reading its address
        if not self._eof:
            os.set_blocking(stdout.fileno(), True)
            while not all(bot.pid is not None for bot in self.bots):
                data = os.read(stdout.fileno(), 65536)  # the launcher forks at once
                if not data:
                    break
                self._parse(data)
        for bot in self.bots:
            bot.signal(signal.SIGKILL)
        self.launcher.wait()  # after its last bot: each is reaped
        for bot in self.bots:
            bot._close()
        stdout.close()

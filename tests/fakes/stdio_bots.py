"""Programs that speak the stdio protocol, and a relay run in a thread, for the stdio tests.

:data:`SCRIPT` is a bot written as a student without the SDK would write it: stdlib ``json``
only, one object a line. Its first argument picks a habit: ``play`` (the first legal action),
``crash-once`` (exits with status 3 at its third request unless the file named by its second
argument exists, which it creates first: the restarted child plays on), ``garbage`` (a line that
is not JSON), ``huge`` (100 MB without a newline), ``not-a-message`` (JSON that is no
BotMessage), ``error`` (answers every request with a reply ``error``), ``silent`` (never
answers), ``exit`` (exits with status 3 at its first request), ``stderr-flood`` (writes 1 MiB to
stderr before each answer). It says ``started`` and
``bye`` on stderr, so a test waits for its start and its end on those lines.

:class:`RelayThread` runs :func:`~domino_arena.sdk.stdio.relay.relay` on a loop of its own
thread until closed, and collects what its hooks report.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Final

from domino_arena.sdk.stdio.child import ChildCommand
from domino_arena.sdk.stdio.relay import RelayHooks, relay
from domino_arena.v1 import referee_pb2 as pb

WAIT: Final = 30.0

SCRIPT: Final = r"""
import json, os, sys

mode = sys.argv[1]
marker = sys.argv[2] if len(sys.argv) > 2 else ""
print("started", file=sys.stderr, flush=True)
asked = 0
for line in sys.stdin:
    message = json.loads(line)
    request = message.get("request")
    if request is None:
        continue
    asked += 1
    if mode == "silent":
        continue
    if mode == "exit":
        print("giving up", file=sys.stderr, flush=True)
        sys.exit(3)
    if mode == "stderr-flood":
        sys.stderr.write("e" * (1 << 20) + "\n")
        sys.stderr.flush()
    if mode == "garbage":
        print("this is not JSON", flush=True)
        continue
    if mode == "huge":
        chunk = "x" * (1 << 20)
        for _ in range(100):
            sys.stdout.write(chunk)
        sys.stdout.flush()
        continue
    if mode == "not-a-message":
        print(json.dumps({"reply": {"turn": "many"}}), flush=True)
        continue
    if mode == "crash-once" and asked == 3 and not os.path.exists(marker):
        open(marker, "w").close()
        print("crashing on purpose", file=sys.stderr, flush=True)
        os._exit(3)
    reply = {"matchId": request["matchId"], "turn": request["turn"]}
    if mode == "error":
        reply["error"] = {"type": "KeyError", "message": "no such tile"}
    else:
        reply["action"] = request["observation"]["legalActions"][0]
    print(json.dumps({"reply": reply}), flush=True)
print("bye", file=sys.stderr, flush=True)
"""


def write_script(folder: Path) -> Path:
    """Write :data:`SCRIPT` into ``folder`` and return its path."""
    path = folder / "stdio_bot.py"
    path.write_text(SCRIPT)
    return path


def script_command(script: Path, mode: str, *extra: str) -> ChildCommand:
    """The command running ``script`` in ``mode`` with this interpreter."""
    return ChildCommand((sys.executable, str(script), mode, *extra))


class RelayThread:
    """:func:`relay` in a thread with its own loop; the hooks' reports collected."""

    def __init__(
        self,
        address: str,
        name: str,
        token: str,
        command: ChildCommand | Callable[[str], ChildCommand],
        *,
        idle_stop_seconds: float = 60.0,
        max_restarts: int = 3,
    ) -> None:
        self.stderr = bytearray()
        self.exits: list[tuple[int, tuple[str, ...]]] = []
        self.ended: list[str] = []
        self.error: BaseException | None = None
        self._changed = threading.Condition()
        hooks = RelayHooks(
            on_stderr=lambda chunk, _active: self._note(lambda: self.stderr.extend(chunk)),
            on_exit=lambda code, active: self._note(lambda: self.exits.append((code, active))),
            on_match_end=lambda match_id: self._note(lambda: self.ended.append(match_id)),
        )
        welcomed = threading.Event()

        class Welcomed(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                if record.getMessage().startswith("relay welcomed"):
                    welcomed.set()

        self._handler = Welcomed()
        self._log = logging.getLogger("domino_arena.sdk.stdio")
        self._level = self._log.level
        self._log.setLevel(logging.INFO)
        self._log.addHandler(self._handler)
        hello = pb.Hello(name=name, token=token, games=["passing"], protocol_version=2)
        self._loop = asyncio.new_event_loop()
        self._task: asyncio.Task[None] | None = None
        started = threading.Event()

        def main() -> None:
            asyncio.set_event_loop(self._loop)
            self._task = self._loop.create_task(
                relay(
                    address,
                    hello,
                    command,
                    hooks=hooks,
                    idle_stop_seconds=idle_stop_seconds,
                    max_restarts=max_restarts,
                )
            )
            self._loop.call_soon(started.set)
            try:
                self._loop.run_until_complete(self._task)
            except asyncio.CancelledError:
                pass
            except BaseException as exc:
                self.error = exc
            finally:
                self._note(lambda: None)

        self._thread = threading.Thread(target=main, daemon=True)
        self._thread.start()
        assert started.wait(WAIT)
        while not welcomed.wait(0.05):  # bounded: a relay that ended is an error at once
            assert self._thread.is_alive(), f"the relay ended: {self.error!r}"

    def _note(self, change: Callable[[], None]) -> None:
        with self._changed:
            change()
            self._changed.notify_all()

    def wait_until(self, seen: Callable[[], bool]) -> None:
        """Wait until ``seen()`` holds (fails the test after :data:`WAIT` seconds)."""
        with self._changed:
            assert self._changed.wait_for(seen, WAIT), f"not seen: stderr {bytes(self.stderr)!r}"

    def text(self) -> str:
        with self._changed:
            return self.stderr.decode(errors="replace")

    def close(self) -> None:
        task = self._task
        if task is not None:
            self._loop.call_soon_threadsafe(task.cancel)
        self._thread.join(WAIT)
        with contextlib.suppress(Exception):
            self._loop.close()
        self._log.removeHandler(self._handler)
        self._log.setLevel(self._level)

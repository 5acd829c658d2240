"""Start several bot processes from one interpreter: ``python -m domino_arena.bots.launcher SPECS``.

The round robin runs every entrant as its own process, and each used to pay a whole interpreter
start and the import of grpc, protobuf, the SDK and the house bots (about half a second of CPU
each, more on a busy machine). The launcher pays it once, then forks one child per bot: each
child is a separate process with its own pid, its own connection and its own log, running
exactly ``python -m domino_arena.bots ARGS`` (:func:`domino_arena.bots.__main__.main`).

The fork comes before any gRPC channel or thread exists in the launcher (importing grpc makes
neither), so each child creates its own gRPC state from scratch, as grpc requires of a forked
process.

``SPECS`` is a JSON list with one object per bot: ``argv`` (the arguments of
``python -m domino_arena.bots``), ``stdin`` and ``log`` (file descriptors the parent passed: the
bot reads the referee's address and its token from the first, ``--from-stdin``, and writes its
output to the second). The launcher writes one line per bot to its standard output as it forks
it, ``started INDEX PID``, and one as it reaps it, ``exited PID CODE`` (``CODE`` negative: killed
by that signal); it exits once every bot has exited. It ignores Ctrl-C, as the bots stop
themselves on it; its parent stops the bots one by one (SIGTERM), as it would stop processes it
started itself.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import traceback
from collections.abc import Sequence
from typing import Any, NoReturn

from . import __main__ as bot_main


class SpecError(ValueError):
    """The launcher's argument is not a list of bot specs; the message says what is wrong."""


def parse_specs(text: str) -> list[tuple[list[str], int, int]]:
    """Each bot's ``(argv, stdin fd, log fd)`` from the JSON argument.

    Raises:
        SpecError: not JSON, not a list, or an entry without a list of strings ``argv`` and
            integer ``stdin`` and ``log``.
    """
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpecError(f"not JSON: {exc}") from None
    if not isinstance(data, list) or not data:
        raise SpecError("expected a non-empty JSON list of bots")
    specs: list[tuple[list[str], int, int]] = []
    for index, entry in enumerate(data):
        argv = entry.get("argv") if isinstance(entry, dict) else None
        stdin = entry.get("stdin") if isinstance(entry, dict) else None
        log = entry.get("log") if isinstance(entry, dict) else None
        if (
            not isinstance(argv, list)
            or not all(isinstance(a, str) for a in argv)
            or not isinstance(stdin, int)
            or not isinstance(log, int)
        ):
            raise SpecError(f"bot {index}: expected {{'argv': [str], 'stdin': int, 'log': int}}")
        specs.append((argv, stdin, log))
    return specs


def _exit_code(exc: SystemExit) -> int:
    """The status the interpreter would exit with for ``exc`` (printing a message code)."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def _child(argv: list[str], stdin: int, log: int, passed: set[int]) -> NoReturn:
    """Become the bot process: its standard streams, its arguments, its main; never returns
    (``os._exit``: nothing of the launcher's runs again in the child)."""
    code = 1
    try:
        os.dup2(stdin, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        for fd in passed:
            os.close(fd)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        # What ``python -m domino_arena.bots`` would see (a bot module may look at it).
        sys.argv = [bot_main.__file__ or "-m", *argv]
        code = bot_main.main(argv)
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException:  # what the interpreter would print too
        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                continue
        os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m domino_arena.bots.launcher SPECS (a JSON list)", file=sys.stderr)
        return 2
    try:
        specs = parse_specs(args[0])
    except SpecError as exc:
        print(f"domino_arena.bots.launcher: error: SPECS: {exc}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the bots stop on Ctrl-C; then this does
    passed = {fd for _, stdin, log in specs for fd in (stdin, log)}
    running = 0
    for index, (bot_argv, stdin, log) in enumerate(specs):
        sys.stdout.flush()  # nothing buffered may be written twice by the child
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(bot_argv, stdin, log, passed)
        running += 1
        print(f"started {index} {pid}", flush=True)
    for fd in passed:
        os.close(fd)
    while running:
        pid, status = os.wait()
        running -= 1
        print(f"exited {pid} {os.waitstatus_to_exitcode(status)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

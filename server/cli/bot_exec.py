"""``domino-arena bot run NAME --exec CMD``: a program of any language, speaking the stdio
protocol (docs/writing-a-bot.md, "Any language: the stdio protocol"), played against a referee
from the author's machine through the relay (:mod:`domino_arena.sdk.stdio.relay`).

The relay holds the token and the gRPC stream; the program only reads and writes lines. Its
stderr is passed through to this command's stderr. A lost connection is retried with the SDK's
backoff (:class:`~domino_arena.sdk.runner.Backoff`), a refusal is not (the one line
:func:`~domino_arena.sdk.runner.stopped_line` says why), Ctrl-C or SIGTERM stops it quietly.
"""

from __future__ import annotations

import asyncio
import logging
import random
import shlex
import sys
from collections.abc import Sequence

from domino_arena.sdk import runner
from domino_arena.sdk.client import (
    CLIENT,
    PROTOCOL_VERSION,
    AuthenticationError,
    ClientTls,
    RefereeError,
    TakenOverError,
    check_games,
)
from domino_arena.sdk.stdio.child import ChildCommand
from domino_arena.sdk.stdio.exec_bot import exec_factory
from domino_arena.sdk.stdio.relay import RelayHooks, relay
from domino_arena.server.cli.arguments import CliError
from domino_arena.v1 import referee_pb2

logger = logging.getLogger("domino_arena.sdk.stdio")


def command_of(text: str) -> ChildCommand:
    """The child of ``--exec CMD`` (split as a shell would), checked as ``exec:CMD`` is.

    Raises:
        CliError: the command is empty or not found.
    """
    try:
        exec_factory(text)  # the same checks as exec:CMD in play and the compliance check
    except ValueError as exc:
        raise CliError(f"--exec: {exc}".replace("--exec: exec:", "--exec ")) from None
    return ChildCommand(tuple(shlex.split(text)))


def _to_stderr(chunk: bytes, _active: tuple[str, ...]) -> None:
    sys.stderr.buffer.write(chunk)
    sys.stderr.buffer.flush()


async def _serve(
    server: str, hello: referee_pb2.Hello, command: ChildCommand, tls: ClientTls | None
) -> None:
    """Relay until stopped, reconnecting after a lost connection (never after a refusal)."""
    backoff, rng, attempt = runner.Backoff(), random.Random(), 0
    credentials = None if tls is None else tls.credentials()
    hooks = RelayHooks(on_stderr=_to_stderr)
    while True:
        try:
            await relay(server, hello, command, credentials=credentials, hooks=hooks)
        except RefereeError as exc:
            if not exc.retryable:
                raise
            delay = backoff.delay(attempt, rng)
            attempt += 1
            logger.warning("%s; reconnecting in %.2f s (attempt %d)", exc, delay, attempt)
            await asyncio.sleep(delay)


def run(
    name: str,
    token: str,
    command_text: str,
    *,
    server: str,
    games: Sequence[str] | None,
    tls: ClientTls | None,
) -> int:
    """Play ``command_text`` as the bot ``name`` until Ctrl-C; the exit status."""
    command = command_of(command_text)
    hello = referee_pb2.Hello(
        name=name,
        token=token,
        games=check_games(games),
        protocol_version=PROTOCOL_VERSION,
        client=f"{CLIENT} (stdio relay)",
    )
    logging.basicConfig(level="INFO", format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logger.info("relaying '%s' to %s as '%s'", command.describe(), server, name)
    try:
        asyncio.run(runner.until_signal(_serve(server, hello, command, tls)))
    except RefereeError as exc:
        mistake = isinstance(exc, AuthenticationError | TakenOverError)
        raise CliError(runner.stopped_line(name, server, exc), code=2 if mistake else 1) from None
    except KeyboardInterrupt:
        pass
    return 0

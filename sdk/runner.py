"""Run a bot against a referee until it is stopped: ``run(MyBot, name=..., token=...)``.

:func:`run` blocks. It connects (:class:`~.client.Connection`), plays every match the referee
seats the bot in, and when the connection is refused or lost (the referee restarts, the network
drops) it reconnects with exponential backoff and jitter, so a bot that drops mid-match gets its
seat back if it returns within the referee's grace window. An authentication or protocol error
is not retried (a token rotated, a bot disabled or deleted while connected is one: the loop
stops instead of knocking with a dead token); nor is a takeover by a second copy of the bot.
Such an end, or a missing name or token, raises :class:`BotStopped`: a ``SystemExit`` whose one
line says why and what to do, so a bot's script that does not catch it prints that line and
exits with status 1, never a traceback (docs/writing-a-bot.md). Ctrl-C (SIGINT) or SIGTERM
closes the stream and returns, without a traceback.

:func:`run_async` is the same loop as a coroutine, for programs that run their own event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import signal
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Final

from .client import TLS_CA_ENV as CLIENT_TLS_CA_ENV
from .client import (
    AuthenticationError,
    BotSource,
    ClientTls,
    Connection,
    ConnectionLostError,
    Players,
    RefereeError,
    TakenOverError,
    check_games,
    client_tls,
    read_secret,
)

logger = logging.getLogger(__name__)

DEFAULT_SERVER: Final = "127.0.0.1:50051"
SERVER_ENV: Final = "DOMINO_ARENA_SERVER"
"""Environment variable read for the referee's address when ``server`` is not given."""
NAME_ENV: Final = "DOMINO_ARENA_BOT"
"""Environment variable read for the bot's name when ``name`` is not given."""
TOKEN_ENV: Final = "DOMINO_ARENA_TOKEN"
"""Environment variable read for the bot's token when ``token`` is not given."""
TLS_CA_ENV: Final = CLIENT_TLS_CA_ENV
"""Environment variable read for the CA file of the referee's certificate (implies TLS)."""


class BotStopped(SystemExit):
    """:func:`run` stopped for good: the bot cannot start (no name or token, a token file that
    cannot be read), or the referee ended it in a way reconnecting would not fix (a wrong token,
    a disabled bot, a takeover by another copy, a TLS failure).

    Its message is one line: what happened and what to do. It is a ``SystemExit`` so that a
    script calling :func:`run` prints only that line and exits with status 1; a program that
    wants to act on it catches it and reads ``error``, the exception behind it.
    """

    def __init__(self, message: str, error: Exception) -> None:
        super().__init__(message)
        self.error = error

    def __str__(self) -> str:
        return str(self.code)


def stopped_line(name: str, server: str, error: RefereeError) -> str:
    """The one line of a bot stopped by ``error``: the referee's reason and what to do."""
    if isinstance(error, TakenOverError):
        return (
            f"bot '{name}' stopped: another copy of it connected to {server} with its token and "
            "took its seats; run one copy only (stop the other one, or this one)"
        )
    if isinstance(error, AuthenticationError):
        return (
            f"bot '{name}' stopped: the referee at {server} refused it: {error.message}; use the "
            "name and token that 'domino-arena bot register' or 'bot create' printed (a lost or "
            "rotated token: 'domino-arena bot rotate-own', or ask the organizer)"
        )
    if isinstance(error, ConnectionLostError):
        return (
            f"bot '{name}' stopped: the referee at {server} cannot be reached or ended the "
            f"connection ({error.code}: {error.message or 'no details'}); is it running there?"
        )
    return f"bot '{name}' stopped: {error}"


@dataclass(frozen=True, slots=True)
class Backoff:
    """Exponential backoff with jitter between reconnection attempts (in seconds).

    Attempt ``n`` (from 0) waits ``min(maximum, initial * factor**n)``, less a random part of
    up to ``jitter`` of it, so many bots dropped together do not return in step. The count
    starts again after every successful welcome.
    """

    initial: float = 0.1
    maximum: float = 5.0
    factor: float = 2.0
    jitter: float = 0.5

    def delay(self, attempt: int, rng: random.Random) -> float:
        """Return the wait before reconnection attempt ``attempt`` (0 is the first)."""
        base = min(self.maximum, self.initial * self.factor ** min(attempt, 64))
        return base * (1.0 - self.jitter * rng.random())


Sleep = Callable[[float], Awaitable[None]]


async def run_async(
    bot: BotSource,
    *,
    server: str,
    name: str,
    token: str,
    games: Sequence[str] | None = None,
    reconnect: bool = True,
    backoff: Backoff | None = None,
    sleep: Sleep = asyncio.sleep,
    rng: random.Random | None = None,
    tls: ClientTls | None = None,
) -> None:
    """Serve the referee until cancelled: connect, play, reconnect after a loss.

    Args:
        bot: a :class:`~.bot.Bot` or :class:`~.bot.AsyncBot` object, which plays every match,
            or a callable returning one (e.g. the bot's class), called for each new match;
            see :class:`~.client.Players`.
        reconnect: False raises the first :class:`~.client.ConnectionLostError` instead.
        sleep, rng: the wait between attempts and the jitter's source (tests replace them).
        tls: dial with TLS (:func:`~.client.client_tls` builds it); None: plaintext.

    Raises:
        AuthenticationError: unknown name or wrong token, a disabled or deleted bot, or a token
            an admin withdrew while the bot was connected (never retried: it ends the loop).
        ProtocolError: the referee refused the hello for a lasting reason (never retried).
        TlsHandshakeError: the TLS handshake failed, e.g. a wrong CA (never retried).
        RefereeError: any loss or refusal, when ``reconnect`` is False.
    """
    players = Players(bot)
    policy = backoff or Backoff()
    jitter = rng or random.Random()
    attempt = 0
    try:
        while True:
            connection = Connection(
                players, server=server, name=name, token=token, games=games, tls=tls
            )
            try:
                await connection.serve()
            except RefereeError as exc:
                if not (reconnect and exc.retryable):
                    raise
                if connection.welcome is not None:
                    attempt = 0
                delay = policy.delay(attempt, jitter)
                attempt += 1
                logger.warning("%s; reconnecting in %.2f s (attempt %d)", exc, delay, attempt)
                await sleep(delay)
    finally:
        players.close()


def run(
    bot: BotSource,
    *,
    server: str | None = None,
    name: str | None = None,
    token: str | None = None,
    games: Sequence[str] | None = None,
    reconnect: bool = True,
    backoff: Backoff | None = None,
    log_level: int | str | None = "INFO",
    token_file: str | None = None,
    tls: bool | ClientTls = False,
    tls_ca: str | None = None,
) -> None:
    """Connect ``bot`` to the referee and play until Ctrl-C or SIGTERM; blocks.

    Args:
        bot: a bot object, or a callable that returns a new bot for each match (the bot's
            class will do); see :class:`~.client.Players`.
        server: ``host:port`` of the referee; ``$DOMINO_ARENA_SERVER`` or 127.0.0.1:50051.
        name: the bot's registered name; ``$DOMINO_ARENA_BOT`` if not given.
        token: the token ``domino-arena bot create NAME`` (or ``bot rotate``) printed;
            ``$DOMINO_ARENA_TOKEN`` if not given (keep tokens out of source files).
        token_file: read the token from this file instead (its first line).
        games: the registry names of the games to play; all of them by default.
        reconnect: reconnect with backoff after a lost connection (not after a refusal).
        log_level: configures :mod:`logging` (``basicConfig``) unless the program already has;
            None leaves logging alone.
        tls: True dials with TLS, checking the referee's certificate against the system's
            roots; a :class:`~.client.ClientTls` chooses the CA and a client certificate.
        tls_ca: the CA file that signed the referee's certificate (implies TLS); default
            ``$DOMINO_ARENA_TLS_CA``.

    Raises:
        BotStopped: (one line, exit status 1 if uncaught; ``error`` is the cause) a missing or
            unreadable name, token or TLS file, or an unknown game (a ``ValueError``); the
            referee does not admit this name and token (unknown, wrong, disabled, deleted) or
            withdrew the token while the bot played (:class:`~.client.AuthenticationError`);
            another copy of the bot took over (:class:`~.client.TakenOverError`); the referee
            refused the hello for a lasting reason (:class:`~.client.ProtocolError`); the TLS
            handshake failed (:class:`~.client.TlsHandshakeError`); any loss of the connection
            when ``reconnect`` is False.
        TypeError: ``bot`` is neither a bot nor a callable (a mistake in the program).
    """
    address = server or os.environ.get(SERVER_ENV) or DEFAULT_SERVER
    bot_name = name or os.environ.get(NAME_ENV)
    try:
        if token and token_file:
            raise ValueError("give token=... or token_file=..., not both")
        bot_token = (
            read_secret(token_file, "token file") if token_file else token
        ) or os.environ.get(TOKEN_ENV)
        channel_tls = tls if isinstance(tls, ClientTls) else client_tls(tls, tls_ca)
        if not bot_name:
            raise ValueError(f"no bot name: pass name=... or set ${NAME_ENV}")
        if not bot_token:
            raise ValueError(
                f"no token for bot '{bot_name}': pass token=... or token_file=..., or set "
                f"${TOKEN_ENV} (the token 'domino-arena bot register' or 'bot create' printed)"
            )
        check_games(games)
    except ValueError as exc:
        raise BotStopped(f"bot '{bot_name or '?'}' not started: {exc}", exc) from None
    Players(bot)  # a wrong kind of bot fails here, before any connection
    if log_level is not None:
        logging.basicConfig(
            level=log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
    coroutine = run_async(
        bot,
        server=address,
        name=bot_name,
        token=bot_token,
        games=games,
        reconnect=reconnect,
        backoff=backoff,
        tls=channel_tls,
    )
    try:
        with contextlib.suppress(KeyboardInterrupt):  # a second Ctrl-C during shutdown
            asyncio.run(until_signal(coroutine))
    except RefereeError as exc:
        raise BotStopped(stopped_line(bot_name, address, exc), exc) from None
    logger.info("stopped")


async def until_signal(work: Awaitable[None]) -> None:
    """Await ``work``; SIGINT or SIGTERM cancels it (closing the stream) and returns quietly."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)
    stopped: list[int] = []

    def stop(signum: int) -> None:
        stopped.append(signum)
        task.cancel()

    installed: list[int] = []
    for signum in (int(signal.SIGINT), int(signal.SIGTERM)):
        try:
            loop.add_signal_handler(signum, stop, signum)
        except (NotImplementedError, RuntimeError, ValueError):  # Windows, or not main thread
            continue
        installed.append(signum)
    try:
        await task
    except asyncio.CancelledError:
        if not stopped:
            raise
        logger.info("%s received: closing the connection", signal.Signals(stopped[0]).name)
    finally:
        for signum in installed:
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(signum)

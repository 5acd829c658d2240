"""The bot's side of the protocol: one gRPC stream to the referee, every match seated on it.

A :class:`Connection` dials the referee (``grpc.aio``), sends ``Hello`` (name, token, the games
the bot plays) and waits for ``Welcome``; an in-band ``Error`` or a refusing gRPC status becomes
a typed exception (:class:`AuthenticationError`, :class:`ProtocolError`, or their base
:class:`RefereeError`, with the referee's code and words). Then it serves the stream:

- ``MatchStart`` picks the bot object for the match (see :class:`Players`) and calls its
  ``on_match_start`` hook;
- ``ActionRequest`` turns the observation into the rules library's own type
  (:mod:`domino_arena.sdk.wire`), calls ``choose`` and replies with an ``ActionReply`` that
  echoes the match id and the turn. A :class:`~domino_arena.sdk.bot.Bot`'s ``choose`` runs in
  a worker thread, so the stream keeps serving the bot's other matches while it thinks; an
  :class:`~domino_arena.sdk.bot.AsyncBot` is awaited;
- ``HandEnd``, ``Fault`` and ``MatchEnd`` go to the matching hooks;
- the events every one of these messages carries (protocol version 2: the public steps since
  the referee's last message about the match) go to ``on_event`` first, and the client keeps
  the current deal's steps from them: a request's observation comes without its history, and
  the bot gets it whole, exactly as if it had been sent.

Each match has its own task and queue, so its messages reach the bot in order and never
overlap; different matches run concurrently. When ``choose`` raises, the traceback is logged
and the request is answered with the exception's type and message (``ActionReply.error``): the
referee charges a ``bot_error`` fault at once ("bot error: ValueError: ..."), instead of letting
the clock run out and drain the bot's bank, and the bot plays on under the fault policy. When it
returns something that is not an action, the reply is *empty*: a ``malformed`` fault.
Everything is reported through :mod:`logging` (logger ``domino_arena.sdk.client``).

A connection serves until its stream ends and then raises;
:func:`~domino_arena.sdk.runner.run` reconnects.

The modules: :mod:`.errors` (the referee's refusals as exceptions), :mod:`.players` (which bot
object plays which match), :mod:`.connection` (the stream: hello, reading, routing, writing)
and :mod:`.matches` (one match: its history and the bot's hooks);
:mod:`.tls` dials with TLS and reads tokens from files.
"""

from .connection import CLIENT, PROTOCOL_VERSION, Connection, Welcome, check_games
from .errors import (
    AuthenticationError,
    ConnectionLostError,
    ProtocolError,
    RefereeError,
    TakenOverError,
    error_from_message,
    error_from_status,
)
from .players import WORKER_THREADS, BotFactory, BotSource, Players
from .tls import (
    TLS_CA_ENV,
    ClientTls,
    TlsConfigError,
    TlsHandshakeError,
    client_tls,
    read_secret,
)

__all__ = [
    "CLIENT",
    "PROTOCOL_VERSION",
    "TLS_CA_ENV",
    "WORKER_THREADS",
    "AuthenticationError",
    "BotFactory",
    "BotSource",
    "ClientTls",
    "Connection",
    "ConnectionLostError",
    "Players",
    "ProtocolError",
    "RefereeError",
    "TakenOverError",
    "TlsConfigError",
    "TlsHandshakeError",
    "Welcome",
    "check_games",
    "client_tls",
    "error_from_message",
    "error_from_status",
    "read_secret",
]

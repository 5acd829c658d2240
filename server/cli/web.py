"""``domino-arena web``: the read-only web face over a referee's database, as its own process.

It opens the database the referee writes (SQLite file or PostgreSQL URL), builds the Starlette
application of ``server/web`` and serves it with uvicorn, its connections guarded
(:mod:`.web_serving`: a header timeout, caps per client and in all), until Ctrl-C; with
``--server`` it also follows that referee's live matches (its spectator API). The address is printed
once the socket is bound, so ``--port 0`` (any free port) tells its caller where to look.
This module imports uvicorn and the web layer at its top: ``main`` imports it only for ``web``.
"""

from __future__ import annotations

import argparse
import contextlib
from typing import Final

from domino_arena.server.cli import web_face, web_serving
from domino_arena.server.cli.admin_client import channel_tls, token_file
from domino_arena.server.cli.arguments import (
    PROG,
    CliError,
    Handler,
    Handlers,
    client_tls_arguments,
    db_argument,
    positive,
)
from domino_arena.server.cli.storage_open import open_storage
from domino_arena.server.cli.web_face import DEFAULT_HOST, DEFAULT_PORT
from domino_arena.server.store.engine import display_url
from domino_arena.server.tournaments.lifecycle import games_of
from domino_arena.server.web.app import create_app
from domino_arena.server.web.live import LiveSource


def _web_arguments(parser: argparse.ArgumentParser) -> None:
    db_argument(parser)
    parser.add_argument(
        "--host",
        default=DEFAULT_HOST,
        help=f"the address to listen on (default {DEFAULT_HOST}: this machine only)",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"the port to listen on (default {DEFAULT_PORT}; 0: any free port)",
    )
    parser.add_argument(
        "--server",
        metavar="HOST:PORT",
        help="follow this referee's live matches through its spectator API (no token needed); "
        "without it the live pages say that no referee is connected",
    )
    # The name this option had before every command called the referee --server (kept working).
    parser.add_argument("--referee", dest="server", help=argparse.SUPPRESS)
    parser.add_argument(
        "--relay-token-file",
        metavar="FILE",
        help="the referee's relay token (serve --relay-token-file), first line of FILE: with it "
        "the referee also streams the matches whose live view is signed-in, and this web face "
        "shows each only to browsers signed in to its course; without it, public matches only",
    )
    client_tls_arguments(parser)
    _connection_arguments(parser)
    # How `serve` and `round-robin` start this command as their child (server/cli/web_face.py):
    # the socket they bound, and the pipe that ends when they do.
    parser.add_argument("--socket-fd", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--lifeline-fd", type=int, help=argparse.SUPPRESS)


def _connection_arguments(parser: argparse.ArgumentParser) -> None:
    """The guards on the web face's connections (docs/web.md, "Connections")."""
    parser.add_argument(
        "--header-timeout",
        type=float,
        default=web_serving.DEFAULT_HEADER_TIMEOUT,
        metavar="SECONDS",
        help="close a connection that has not sent a whole request head within this time, "
        f"from its opening or its last response (default {web_serving.DEFAULT_HEADER_TIMEOUT:g})",
    )
    parser.add_argument(
        "--max-connections-per-client",
        type=int,
        default=web_serving.DEFAULT_MAX_PER_CLIENT,
        metavar="N",
        help="open connections per client address; one more is answered 503 and closed "
        f"(default {web_serving.DEFAULT_MAX_PER_CLIENT}; a trusted proxy is exempt)",
    )
    parser.add_argument(
        "--max-connections",
        type=int,
        metavar="N",
        help="open connections in all (default: the open-file limit less an eighth, at most "
        f"{web_serving.MAX_CONNECTIONS_CEILING})",
    )
    parser.add_argument(
        "--forwarded-allow-ips",
        metavar="ADDRESSES",
        help="the reverse proxies (addresses or networks, comma-separated) whose "
        "X-Forwarded-For and X-Forwarded-Proto are believed and whose connections the "
        "per-client cap leaves to the proxy's own limits (default: none)",
    )


def _guard(args: argparse.Namespace) -> web_serving.ConnectionGuard:
    """The connection guard of the flags, the open-file limit raised first.

    Raises:
        CliError: a flag out of range (the message names it).
    """
    if not args.header_timeout > 0:
        raise CliError(f"--header-timeout: must be more than 0 seconds, got {args.header_timeout}")
    positive("--max-connections-per-client", args.max_connections_per_client)
    proxies = web_serving.trusted_proxies(args.forwarded_allow_ips)
    open_files = web_serving.raise_open_file_limit()
    return web_serving.ConnectionGuard(
        header_timeout=args.header_timeout,
        max_per_client=args.max_connections_per_client,
        max_connections=web_serving.connection_cap(open_files, args.max_connections),
        proxies=proxies,
        open_files=open_files,
    )


def _live_source(args: argparse.Namespace) -> LiveSource | None:
    """The referee of ``--server`` (with the client TLS options), or None without it."""
    tls_flags = (args.tls, args.tls_ca, args.tls_client_cert, args.tls_client_key)
    if args.server is None:
        if any(tls_flags):
            raise CliError("--tls, --tls-ca, --tls-client-*: they need --server HOST:PORT")
        if args.relay_token_file:
            raise CliError("--relay-token-file: it needs --server HOST:PORT")
        return None
    host, _, port = args.server.rpartition(":")
    if not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise CliError(f"--server: expected HOST:PORT with a port 1-65535, got {args.server!r}")
    relay = (
        token_file(args.relay_token_file, "--relay-token-file") if args.relay_token_file else None
    )
    return LiveSource(args.server, tls=channel_tls(args), relay_token=relay)


def _web(args: argparse.Namespace) -> int:
    child = args.socket_fd is not None
    if args.lifeline_fd is not None:
        web_face.exit_with_parent(args.lifeline_fd)
    live = _live_source(args)
    guard = _guard(args)
    sock = (
        web_face.inherited_socket(args.socket_fd) if child else web_face.bind(args.host, args.port)
    )
    storage = open_storage(args.db)
    try:
        if not child:  # a parent that passed its socket has printed the address itself
            print(f"{PROG}: database {display_url(args.db)}")
            if live is not None:
                print(f"{PROG}: live matches from the referee at {live.server}")
            print(
                f"{PROG}: connections: {guard.max_per_client} per client, "
                f"{guard.max_connections} in all (open-file limit {guard.open_files}); "
                f"request heads within {guard.header_timeout:g} s"
            )
            print(f"{PROG}: web face on {web_face.address(sock)} (Ctrl-C stops it)", flush=True)
        app = create_app(storage, tournament_total=lambda t: len(games_of(t, storage)), live=live)
        server = web_serving.server(app, guard)
        # uvicorn shuts down gracefully on Ctrl-C, then raises the signal again for its caller.
        with contextlib.suppress(KeyboardInterrupt):
            server.run(sockets=[sock])
    finally:
        sock.close()
        storage.close()
    return 0


HANDLERS: Final[Handlers] = {"web": Handler(_web_arguments, _web)}

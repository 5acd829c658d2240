"""``domino-arena relay --server REFEREE``: serve the referee's public matches to a crowd of gRPC
spectators, with one watch of the referee per match (server/net/relay.py, docs/spectators.md).

This module imports grpc at its top: ``main`` imports it only for ``relay``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from typing import Final

import grpc

from domino_arena.sdk.client.tls import ClientTls
from domino_arena.server.cli import serve_bounds
from domino_arena.server.cli.admin_client import channel_tls, token_file
from domino_arena.server.cli.arguments import PROG, CliError, Handler, Handlers, server_arguments
from domino_arena.server.net.relay import RELAY_LIMITS, RelayServicer
from domino_arena.server.net.spectators import add_spectator_service
from domino_arena.server.net.watch_limits import WatchLimits

DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 50052


def _arguments(parser: argparse.ArgumentParser) -> None:
    server_arguments(parser, token=False)
    parser.add_argument(
        "--relay-token-file",
        metavar="FILE",
        help="the referee's relay token (serve --relay-token-file): the referee then counts this "
        "relay's watches apart from the crowd's; without it they count as one address's",
    )
    parser.add_argument(
        "--host", default=DEFAULT_HOST, help=f"listen here (default {DEFAULT_HOST})"
    )
    parser.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"listen here (default {DEFAULT_PORT}; 0: any)",
    )
    serve_bounds.watcher_arguments(parser, RELAY_LIMITS, relays=False)


def _run(args: argparse.Namespace) -> int:
    if not 0 <= args.port <= 65535:
        raise CliError(f"--port: must be 0-65535, got {args.port}")
    limits = serve_bounds.watcher_limits(args, relays=False)
    token = ""
    if args.relay_token_file is not None:
        token = token_file(args.relay_token_file, "--relay-token-file")
    tls = channel_tls(args)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(args, token, tls, limits))
    return 0


async def _serve(
    args: argparse.Namespace, token: str, tls: ClientTls | None, limits: WatchLimits
) -> None:
    if tls is None:
        channel = grpc.aio.insecure_channel(args.server)
    else:
        channel = grpc.aio.secure_channel(args.server, tls.credentials())
    servicer = RelayServicer(channel, token=token, limits=limits)
    server = grpc.aio.server()
    add_spectator_service(servicer, server)
    try:
        port = server.add_insecure_port(f"{args.host}:{args.port}")
    except RuntimeError as exc:
        raise CliError(f"cannot listen on {args.host}:{args.port}: {exc}", code=1) from None
    await server.start()
    print(f"{PROG}: relay of the referee at {args.server} on {args.host}:{port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
    finally:
        await servicer.close()
        await server.stop(1.0)
        await channel.close()


HANDLERS: Final[Handlers] = {"relay": Handler(_arguments, _run)}

"""The commands that run a referee in this process: ``serve``, and ``round-robin`` (the main
job: an embedded referee, house bots over gRPC, standings at the end).

They need the service (grpc, trio, SQLAlchemy), imported here at the top: ``main`` imports this
module only when one of them runs. The main job's own module (with rich, its progress bars and
tables) is imported by ``round-robin`` alone: a referee never draws a table.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import socket
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from domino_arena.bots import HOSTED_BOTS
from domino_arena.sdk.client.tls import TlsConfigError, read_secret
from domino_arena.sdk.rules import GAMES, Game, RulesError, make_game
from domino_arena.server import logs
from domino_arena.server.app import ROLE_ALL, ROLE_GATEWAY, ROLES, App, Config, Served, run
from domino_arena.server.cli import broker_flags, serve_bounds, serve_runner, web_face
from domino_arena.server.cli.arguments import (
    ADMIN_TOKEN_ENV,
    PROG,
    PS_WARNING,
    CliError,
    Handler,
    Handlers,
    db_argument,
)
from domino_arena.server.cli.keys import record_signer
from domino_arena.server.cli.storage_open import open_storage
from domino_arena.server.net.cluster.broker_security import PLAINTEXT, BrokerError, BrokerSecurity
from domino_arena.server.net.cluster.subjects import DEFAULT_CLUSTER, default_node
from domino_arena.server.net.grpc_server import ServerTls, TlsFileError
from domino_arena.server.play import house
from domino_arena.server.store.bots import new_token
from domino_arena.server.store.engine import StorageError, display_url

if TYPE_CHECKING:
    from domino_arena.server.ladder.ratings_store import RatedStorage

# -- serve ---------------------------------------------------------------------------------------

NATS_ENV: Final = "DOMINO_ARENA_NATS"
"""The environment variable that gives a cluster role its broker (``--nats``)."""
NODE_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
MAX_ANALYSIS_WORKERS: Final = 64
"""The most analysis worker processes ``serve --analysis-workers`` starts."""


def _serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host", default="127.0.0.1", metavar="HOST", help="address to listen on (127.0.0.1)"
    )
    parser.add_argument(
        "--port", type=int, default=50051, metavar="PORT", help="port (50051; 0: any free port)"
    )
    db_argument(parser)
    parser.add_argument(
        "--reconnect-grace",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long a bot that dropped mid-match has to come back (default 10)",
    )
    parser.add_argument(
        "--shutdown-grace",
        type=float,
        default=2.0,
        metavar="SECONDS",
        help="how long open calls get to end at shutdown (default 2)",
    )
    parser.add_argument(
        "--admin-token",
        default=os.environ.get(ADMIN_TOKEN_ENV),
        metavar="TOKEN",
        help=f"the admin API's token (default ${ADMIN_TOKEN_ENV}; if neither is given, a new "
        f"one is made and printed at start; {PS_WARNING})",
    )
    parser.add_argument(
        "--metrics-port",
        type=int,
        metavar="PORT",
        help="serve Prometheus metrics on http://HOST:PORT/metrics (0: any free port; "
        "default: no metrics server)",
    )
    parser.add_argument(
        "--log-level",
        choices=tuple(logs.LEVELS),
        default="info",
        help="the least severe records logged (default info)",
    )
    parser.add_argument(
        "--log-format",
        choices=logs.FORMATS,
        default="text",
        help="text: 'TIME LEVEL LOGGER: MESSAGE' lines; json: one JSON object a line with "
        "time, level, logger and message (default text)",
    )
    parser.add_argument(
        "--record-key",
        metavar="FILE",
        help="sign the records the admin API hands out with this Ed25519 private key (PEM, "
        f"from `{PROG} keys new`), for `import --trust-key` elsewhere; default: unsigned",
    )
    _tls_arguments(parser)
    serve_bounds.stream_arguments(parser)
    serve_bounds.watch_arguments(parser)
    serve_bounds.people_arguments(parser)
    parser.add_argument(
        "--analysis-workers",
        type=int,
        default=1,
        metavar="N",
        help="worker processes that analyse the queued matches (tournaments of courses with "
        "--analyse-tournaments on, `analyse --tournament`; docs/analysis.md); 0: none "
        "(default 1)",
    )
    _cluster_arguments(parser)
    serve_runner.hosting_arguments(parser)
    web_arguments(parser)


def _cluster_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "cluster",
        "one role of a scaled-out arena: gateways hold the bots' streams, match hosts run the "
        "matches; NATS between them, one database for all (docs/cluster.md)",
    )
    group.add_argument(
        "--role",
        choices=(*ROLES, serve_runner.ROLE_RUNNER),
        default=ROLE_ALL,
        help="all: one process serves everything (the default); gateway: serve the bots' "
        "streams only; host: run matches, tournaments and ladders, serve the admin API, "
        "registration and spectators; runner: run hosted bots, dialing --referee",
    )
    group.add_argument(
        "--nats",
        default=os.environ.get(NATS_ENV),
        metavar="URL",
        help=f"the broker of a gateway or host (default ${NATS_ENV}), e.g. nats://127.0.0.1:4222 "
        "or tls://nats.example.org:4222 (TLS); no credentials in it: see --nats-token-file",
    )
    broker_flags.broker_arguments(group)
    group.add_argument(
        "--node",
        metavar="NAME",
        help="this process's name in the cluster's logs, metrics and match records "
        "(default ROLE-HOSTNAME-PID)",
    )
    group.add_argument(
        "--cluster",
        default=DEFAULT_CLUSTER,
        metavar="NAME",
        help=f"the cluster's name: its gateways and hosts find each other by it on the broker, "
        f"so several arenas can share one NATS (default {DEFAULT_CLUSTER})",
    )
    group.add_argument(
        "--lease-seconds",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="a host's lease on a tournament or ladder pool lasts this long unrenewed: "
        "how soon another host takes over from a dead one (default 30)",
    )


def web_arguments(parser: argparse.ArgumentParser) -> None:
    """The web face beside the referee (``serve`` and ``round-robin``): read by
    :func:`bind_web`."""
    group = parser.add_argument_group(
        "web face", "the read-only site (standings, tournaments, replays, live matches)"
    )
    group.add_argument(
        "--web-port",
        type=int,
        metavar="PORT",
        help=f"serve it on this port (default {web_face.DEFAULT_PORT} when that is free, "
        "else none; 0: any free port)",
    )
    group.add_argument(
        "--web-host",
        default=web_face.DEFAULT_HOST,
        metavar="HOST",
        help=f"the address it listens on (default {web_face.DEFAULT_HOST}: this machine only)",
    )
    group.add_argument("--no-web", action="store_true", help="do not serve the web face")


def bind_web(args: argparse.Namespace, wanted: bool = False) -> socket.socket | None:
    """The web face's listening socket as the options ask for it (None: no web face; why is
    printed when the default port is taken, unless ``wanted``: then any free port serves).

    Raises:
        CliError: ``--web-port`` given and not free, or given with ``--no-web``.
    """
    if args.no_web:
        if args.web_port is not None:
            raise CliError("--web-port and --no-web contradict each other: give one")
        return None
    sock, why_not = web_face.bind_default(args.web_host, args.web_port)
    if sock is None and wanted:
        return web_face.bind(args.web_host, 0, "--web-host")
    if why_not is not None:
        print(f"{PROG}: {why_not}", flush=True)
    return sock


def referee_address(host: str, port: int) -> str:
    """Where a process on this machine dials a referee listening on ``host:port``."""
    if host in ("", "0.0.0.0"):
        return f"127.0.0.1:{port}"
    if host == "::":
        return f"[::1]:{port}"
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _tls_arguments(parser: argparse.ArgumentParser) -> None:
    """TLS and the admin token from a file: read by :func:`_tls_and_token`."""
    group = parser.add_argument_group("TLS and secrets")
    group.add_argument(
        "--tls-cert",
        metavar="FILE",
        help="serve TLS with this certificate chain (PEM), with --tls-key",
    )
    group.add_argument("--tls-key", metavar="FILE", help="the certificate's private key (PEM)")
    group.add_argument(
        "--tls-client-ca",
        metavar="FILE",
        help="mutual TLS: every client must present a certificate signed by this CA (PEM)",
    )
    group.add_argument(
        "--admin-token-file",
        metavar="FILE",
        help="read the admin token from FILE (its first line); wins over --admin-token",
    )


def _tls_and_token(args: argparse.Namespace) -> tuple[ServerTls | None, str | None]:
    """The server's TLS (None: plaintext) and the admin token given, if any.

    Raises:
        CliError: a TLS option without its pair, or a file that cannot be used (named).
    """
    if (args.tls_cert is None) != (args.tls_key is None):
        raise CliError("--tls-cert and --tls-key go together: give both or neither")
    if args.tls_client_ca is not None and args.tls_cert is None:
        raise CliError("--tls-client-ca needs --tls-cert and --tls-key (mutual TLS is TLS)")
    tls = None
    try:
        if args.tls_cert is not None:
            tls = ServerTls.load(args.tls_cert, args.tls_key, args.tls_client_ca)
        if args.admin_token_file is not None:
            return tls, read_secret(args.admin_token_file, "--admin-token-file")
    except (TlsFileError, TlsConfigError) as exc:
        raise CliError(str(exc)) from None
    token: str | None = args.admin_token
    return tls, token


def _gateway() -> Callable[[Config, RatedStorage], Served]:
    """The gateway's application class, imported only for that role: it loads nats-py, which a
    single referee never uses (bench/idle_bots_bench.py counts what each import costs)."""
    from domino_arena.server.app_gateway import Gateway  # noqa: PLC0415

    return Gateway


def _cluster(args: argparse.Namespace) -> tuple[str, str, str, BrokerSecurity]:
    """The role, the broker's URL, the node name and the broker's TLS and credentials the
    options ask for.

    Raises:
        CliError: a cluster role without a broker, a broker or node name without a role, a
            bad lease time, the web face asked of a cluster role, or a broker's file or flag
            that cannot be used.
    """
    role: str = args.role
    node: str = args.node or default_node(role)
    if role == ROLE_ALL:
        if args.node is not None:
            raise CliError("--node names a process of a cluster: give it with --role")
        if flags := broker_flags.given(args):
            raise CliError(f"{flags[0]}: a broker's, for a cluster role: give it with --role")
        return role, "", node, PLAINTEXT
    if not args.nats:
        raise CliError(f"--role {role}: give the broker with --nats URL (or ${NATS_ENV})")
    security = broker_flags.security_of(args, args.nats)
    if not args.lease_seconds > 0:
        raise CliError(f"--lease-seconds: must be more than 0, got {args.lease_seconds}")
    for flag, name in (("--node", node), ("--cluster", args.cluster)):
        if not NODE_PATTERN.fullmatch(name):
            raise CliError(f"{flag}: {name!r}: use 1-64 letters, digits, '_', '.' or '-'")
    if args.web_port is not None:
        raise CliError(
            f"--web-port: a {role} serves no web face; run `{PROG} web --db URL` beside it"
        )
    return role, args.nats, node, security


def _serve(args: argparse.Namespace) -> int:
    if args.role == serve_runner.ROLE_RUNNER:
        return serve_runner.serve_runner(args, args.node or default_node(args.role))
    if not 0 <= args.port <= 65535:
        raise CliError(f"--port: must be 0-65535, got {args.port}")
    if args.reconnect_grace < 0 or args.shutdown_grace < 0:
        raise CliError("--reconnect-grace and --shutdown-grace must not be negative")
    stream_limits = serve_bounds.stream_limits(args)
    tls, given_token = _tls_and_token(args)
    watchers, relay_token = serve_bounds.watching(args)
    people_bounds = serve_bounds.people_bounds(args)
    if not 0 <= args.analysis_workers <= MAX_ANALYSIS_WORKERS:
        raise CliError(
            f"--analysis-workers: expected 0 to {MAX_ANALYSIS_WORKERS}, got {args.analysis_workers}"
        )
    if args.metrics_port is not None and not 0 <= args.metrics_port <= 65535:
        raise CliError(f"--metrics-port: must be 0-65535, got {args.metrics_port}")
    role, nats, node, nats_security = _cluster(args)
    sign_record = record_signer(args.record_key)
    storage = open_storage(args.db)
    admin_token: str = given_token or new_token()
    try:
        web_socket = None if role != ROLE_ALL else bind_web(args)
    except CliError:
        storage.close()
        raise
    web: list[web_face.WebChild] = []
    config = Config(
        host=args.host,
        port=args.port,
        reconnect_grace=args.reconnect_grace,
        shutdown_grace=args.shutdown_grace,
        admin_token=admin_token,
        metrics_port=args.metrics_port,
        tls=tls,
        limits=stream_limits,
        watch_limits=watchers,
        relay_token=relay_token or new_token(),  # without the file: for this run's web face
        people=people_bounds,
        role=role,
        nats=nats,
        nats_security=nats_security,
        node=node,
        cluster=args.cluster,
        lease_seconds=args.lease_seconds,
        sign_record=sign_record,
        analysis_workers=args.analysis_workers,
    )

    def ready(port: int) -> None:
        print(f"{PROG}: database {display_url(args.db)}")
        if role != ROLE_ALL:
            print(
                f"{PROG}: {role} {node} on the broker {display_url(nats)} "
                f"({nats_security.describe()})"
            )
        if not given_token and role != ROLE_GATEWAY:
            print(
                f"{PROG}: admin token (made for this run; set ${ADMIN_TOKEN_ENV} to keep one): "
                f"{admin_token}"
            )
        mode = "" if tls is None else " with TLS" if tls.client_ca is None else " with mutual TLS"
        print(f"{PROG}: serving on {args.host}:{port}{mode}", flush=True)
        if web_socket is not None:
            # With TLS, the child could not check the certificate's name on this address:
            # no live pages then (`domino-arena web --server ... --tls-ca ...` has them).
            live = None if tls is not None else referee_address(args.host, port)
            web.append(web_face.start(web_socket, args.db, live, relay_token=config.relay_token))
            note = "" if live is not None else " (live matches off: the referee serves TLS)"
            print(f"{PROG}: web face on {web[0].url}{note}", flush=True)

    handler = logs.configure(
        args.log_level, args.log_format, sys.stdout, node=node if role != ROLE_ALL else None
    )
    house.provide(HOSTED_BOTS)  # practice, checks and course baselines seat them in-process
    try:
        with serve_runner.hosting_dir(args) as workdir:
            if role == ROLE_ALL:
                hosting = serve_runner.single_referee_hosting(args, workdir)
                config = dataclasses.replace(config, hosting=hosting)
            run(config, storage, ready, _gateway() if role == ROLE_GATEWAY else App)
    except (OSError, StorageError, BrokerError) as exc:  # StorageError: the lease is held
        raise CliError(str(exc), code=1) from None
    finally:
        for child in web:
            child.stop()
        if web_socket is not None:
            web_socket.close()
        storage.close()
        logs.unconfigure(handler)
    print(f"{PROG}: stopped", flush=True)
    return 0


# -- round-robin ---------------------------------------------------------------------------------


def _round_robin_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--games",
        metavar="G1,G2",
        default=",".join(sorted(GAMES)),
        help=f"games to play, each with its default players (default: all: "
        f"{', '.join(sorted(GAMES))})",
    )
    parser.add_argument(
        "--players", type=int, metavar="N", help="players per game (default: each game's)"
    )
    parser.add_argument(
        "--bots",
        metavar="B1,B2,...",
        default="greedy-1,greedy-2,random-1,random-2",
        help="the bots, each a house bot name with an optional '-suffix', or a bot of your own "
        "as [NAME=]MODULE:CLASS, e.g. mine=./mybot.py:HeavyFirst "
        "(default: greedy-1,greedy-2,random-1,random-2)",
    )
    # The old name of --bots, kept for scripts that use it (one name per idea: not in --help).
    parser.add_argument("--entrants", dest="bots", help=argparse.SUPPRESS)
    parser.add_argument(
        "--games-per-pairing", type=int, default=2, metavar="N", help="deals per table (default 2)"
    )
    parser.add_argument(
        "--concurrency", type=int, default=4, metavar="N", help="games at once (default 4)"
    )
    parser.add_argument("--seed", type=int, default=1, metavar="S", help="seed (default 1)")
    parser.add_argument(
        "--db",
        metavar="URL",
        help="keep the results in this database (default: a temporary SQLite file)",
    )
    parser.add_argument(
        "--web",
        action="store_true",
        help="keep the web face up after the tournaments, until Ctrl-C",
    )
    web_arguments(parser)


def _round_robin(args: argparse.Namespace) -> int:
    from rich.console import Console  # noqa: PLC0415  # the main job's alone (module docstring)

    from domino_arena.server.cli import main_job  # noqa: PLC0415

    names = [n.strip() for n in args.games.split(",") if n.strip()]
    if not names:
        raise CliError(f"--games: expected some of {', '.join(sorted(GAMES))}")
    games: list[Game] = []
    for name in names:
        if name not in GAMES:
            raise CliError(f"--games: unknown game '{name}': expected {', '.join(sorted(GAMES))}")
        options = {} if args.players is None else {"players": args.players}
        try:
            games.append(make_game(name, **options))
        except RulesError as exc:
            raise CliError(f"--players: {exc}") from None
    try:
        entrants = tuple(main_job.entrant_of(e.strip()) for e in args.bots.split(",") if e.strip())
    except ValueError as exc:
        raise CliError(f"--bots: {exc}") from None
    if len({e.name for e in entrants}) != len(entrants):
        raise CliError(f"--bots: names must be unique, got {args.bots}")
    if len(entrants) < 2:
        raise CliError(f"--bots: a round robin needs 2 or more, got {args.bots}")
    if args.games_per_pairing < 1:
        raise CliError(f"--games-per-pairing: must be 1 or more, got {args.games_per_pairing}")
    if args.concurrency < 1:
        raise CliError(f"--concurrency: must be 1 or more, got {args.concurrency}")
    if args.web and args.no_web:
        raise CliError("--web and --no-web contradict each other: give one")
    settings = main_job.Settings(
        games=tuple(games),
        entrants=entrants,
        games_per_pairing=args.games_per_pairing,
        seed=args.seed,
        concurrency=args.concurrency,
        db_url=args.db,
        keep_web=args.web,
    )
    console = Console(highlight=False)
    console.print(
        f"Round robin of {', '.join(e.name for e in entrants)} through the gRPC referee; "
        f"seed {args.seed}"
    )
    web_socket = bind_web(args, wanted=args.web)
    try:
        main_job.run(settings, console, web_socket)
    except main_job.StoppedError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr, flush=True)
        return 130
    except (StorageError, main_job.MainJobError) as exc:
        raise CliError(str(exc), code=1) from None
    finally:
        if web_socket is not None:
            web_socket.close()
    return 0


HANDLERS: Final[Handlers] = {
    "serve": Handler(_serve_arguments, _serve),
    "round-robin": Handler(_round_robin_arguments, _round_robin),
}

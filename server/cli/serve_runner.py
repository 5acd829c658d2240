"""``serve``'s hosted bots: the single referee's own runner, and ``serve --role runner``.

A single referee runs the hosted bots itself (nothing to set up; ``--no-hosting`` turns it
off). On a cluster, runners are their own processes: ``serve --role runner --referee
GATEWAYS:PORT --db URL`` dials the gateways as the bots' remote clients, and the ownership
leases decide which runner hosts which bot (docs/hosting.md, "On a cluster"). Untrusted code
never runs unsandboxed: without bubblewrap or user namespaces a runner refuses to start.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from domino_arena.sdk.client.tls import ClientTls, TlsConfigError
from domino_arena.server import logs
from domino_arena.server.cli.arguments import PROG, CliError
from domino_arena.server.cli.storage_open import open_storage
from domino_arena.server.hosting.runner import Hosting, Runner, RunnerConfig
from domino_arena.server.hosting.sandbox import SandboxUnavailableError, probe
from domino_arena.server.store import lease
from domino_arena.server.store.engine import display_url

ROLE_RUNNER: Final = "runner"
"""The cluster role that runs hosted bots only (no port of its own: it dials the gateways)."""


def hosting_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "hosted bots",
        "submitted bots the arena runs itself, sandboxed with bubblewrap (docs/hosting.md)",
    )
    group.add_argument(
        "--no-hosting",
        action="store_true",
        help="do not run hosted bots in this referee (run `serve --role runner` for them)",
    )
    group.add_argument(
        "--hosting-dir",
        metavar="DIR",
        help="where versions are unpacked for their sandboxes (default: a new temporary "
        "directory, removed at the end); the sandbox's user (nobody) must read it",
    )
    group.add_argument(
        "--idle-stop",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="stop a hosted bot's process after this long without a match (60)",
    )
    group.add_argument(
        "--referee",
        metavar="HOST:PORT",
        help="--role runner: the bot address of the gateways (or of a single referee) to dial",
    )
    group.add_argument(
        "--referee-tls-ca",
        metavar="FILE",
        help="--role runner: dial the referee with TLS, trusting this CA (PEM)",
    )
    group.add_argument(
        "--max-hosted",
        type=int,
        default=500,
        metavar="N",
        help="--role runner: the most bots this runner hosts at once (500)",
    )


def _checked(args: argparse.Namespace) -> None:
    if not args.idle_stop > 0:
        raise CliError(f"--idle-stop: must be more than 0 seconds, got {args.idle_stop}")
    if args.max_hosted < 1:
        raise CliError(f"--max-hosted: must be at least 1, got {args.max_hosted}")


@contextlib.contextmanager
def hosting_dir(args: argparse.Namespace) -> Iterator[Path]:
    """The runner's work directory: ``--hosting-dir``, or a temporary one removed after."""
    if args.hosting_dir is not None:
        path = Path(args.hosting_dir)
        path.mkdir(parents=True, exist_ok=True)
        yield path
        return
    path = Path(tempfile.mkdtemp(prefix="domino-arena-hosted-"))
    path.chmod(0o755)  # the sandbox's user reads the unpacked versions
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def single_referee_hosting(args: argparse.Namespace, workdir: Path) -> Hosting | None:
    """The single referee's own runner, unless ``--no-hosting``."""
    _checked(args)
    if args.no_hosting:
        return None
    return Hosting(workdir=workdir, idle_stop_seconds=args.idle_stop)


def serve_runner(args: argparse.Namespace, node: str) -> int:
    """``serve --role runner``: host this runner's share of the bots until SIGINT/SIGTERM."""
    _checked(args)
    if not args.referee:
        raise CliError("--role runner: give the gateways' bot address with --referee HOST:PORT")
    try:
        probe()
    except SandboxUnavailableError as error:
        raise CliError(f"--role runner: {error}", code=1) from None
    try:
        tls = None if args.referee_tls_ca is None else ClientTls.load(args.referee_tls_ca)
    except TlsConfigError as error:
        raise CliError(str(error).replace("--tls-ca", "--referee-tls-ca")) from None
    storage = open_storage(args.db)
    handler = logs.configure(args.log_level, args.log_format, sys.stdout, node=node)
    try:
        with hosting_dir(args) as workdir:
            config = RunnerConfig(
                target=args.referee,
                workdir=workdir,
                tls=tls,
                idle_stop_seconds=args.idle_stop,
                node=node,
                holder=lease.new_holder(),
                lease_seconds=args.lease_seconds,
                max_bots=args.max_hosted,
            )
            print(f"{PROG}: database {display_url(args.db)}")
            print(f"{PROG}: runner {node} hosting bots on {args.referee}", flush=True)
            asyncio.run(_until_signal(Runner(storage.engine, config)))
    finally:
        storage.close()
        logs.unconfigure(handler)
    print(f"{PROG}: stopped", flush=True)
    return 0


async def _until_signal(runner: Runner) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    task = asyncio.create_task(runner.run())
    waiting = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait([task, waiting], return_when=asyncio.FIRST_COMPLETED)
    finally:
        for pending in (task, waiting):
            pending.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
    if task.done() and not task.cancelled() and task.exception() is not None:
        raise task.exception()  # type: ignore[misc]

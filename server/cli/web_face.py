"""The web face beside a referee command (``serve``, ``round-robin``): a child process.

Why a child process and not a thread: the referee times every move, and a web server sharing
its interpreter would share its GIL, so a busy page would show up in the bots' think times. The
child is ``domino-arena web`` itself, so there is one web server, however it is started.

The parent binds the listening socket (a taken port is reported before anything starts, and the
printed address is open the moment it is printed) and hands the socket to the child by file
descriptor. It also hands the child the read end of a pipe whose write end only the parent
holds: when the parent exits, however it exits (SIGKILL included), the child reads end-of-file
and shuts down, so no web face outlives its referee and keeps its port.

This module imports neither uvicorn nor the web layer: the parent needs neither.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass
from typing import Final

from domino_arena.server.cli.arguments import PROG, CliError

DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8080
BACKLOG: Final = 2048
"""Connections the kernel queues before the server accepts them (uvicorn's default)."""
STOP_SECONDS: Final = 10.0
"""How long the child gets to shut down gracefully before it is killed."""


def bind(
    host: str, port: int, flag: str = "--host/--port", port_flag: str = "--port"
) -> socket.socket:
    """Return a socket listening on ``host:port``, bound before the address is printed.

    Raises:
        CliError: the address cannot be listened on; the message names the flag and the reason.
    """
    if not 0 <= port <= 65535:
        raise CliError(f"{port_flag}: must be 0-65535, got {port}")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        why = exc.strerror or str(exc)
        raise CliError(f"{flag}: cannot listen on {host}:{port}: {why}") from None
    return sock


def address(sock: socket.socket) -> str:
    """The page address of a listening socket: ``http://HOST:PORT/``."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def bind_default(host: str, port: int | None) -> tuple[socket.socket | None, str | None]:
    """Bind the web face's socket for a referee command: ``port`` None is the default port,
    which may be taken (then no web face, and the reason, rather than an error); a port asked
    for explicitly must be free (:class:`CliError` otherwise)."""
    if port is not None:
        return bind(host, port, "--web-host/--web-port", "--web-port"), None
    try:
        return bind(host, DEFAULT_PORT, "--web-host/--web-port", "--web-port"), None
    except CliError:
        return None, (
            f"web face off: {host}:{DEFAULT_PORT} is taken (give --web-port PORT, or 0 for any "
            "free port)"
        )


@dataclass
class WebChild:
    """A running ``domino-arena web`` child serving on the parent's socket."""

    url: str
    process: subprocess.Popen[bytes]
    _lifeline: int

    def stop(self) -> None:
        """Ask the child to shut down (SIGTERM: uvicorn's graceful stop); kill it if it will
        not within :data:`STOP_SECONDS`."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        with contextlib.suppress(OSError):
            os.close(self._lifeline)


def start(
    sock: socket.socket,
    db_url: str,
    referee: str | None,
    extra: tuple[str, ...] = (),
    *,
    niceness: int = 0,
    relay_token: str | None = None,
) -> WebChild:
    """Start ``domino-arena web`` on ``sock`` over ``db_url`` (following live matches on
    ``referee``, ``HOST:PORT``, when given) and close the parent's copy of the socket.

    ``extra``: more ``web`` arguments (e.g. the referee's TLS settings). ``niceness``: how much
    lower the child's CPU priority is (the main job's web face yields the CPU to its referee
    and bots while they play: its start-up alone takes about a second of CPU). ``relay_token``:
    the referee's relay token, handed over through a pipe the child reads as its
    ``--relay-token-file`` (never on its command line, where ``ps`` would show it)."""
    read_end, write_end = os.pipe()
    secret: tuple[str, ...] = ()
    passed = [sock.fileno(), read_end]
    if relay_token is not None and referee is not None:
        token_read, token_write = os.pipe()
        os.write(token_write, relay_token.encode() + b"\n")  # far below a pipe's buffer
        os.close(token_write)
        passed.append(token_read)
        secret = ("--relay-token-file", f"/dev/fd/{token_read}")
    command = [
        sys.executable,
        "-m",
        "domino_arena.server.cli.main",
        "web",
        "--db",
        db_url,
        "--socket-fd",
        str(sock.fileno()),
        "--lifeline-fd",
        str(read_end),
        *(("--server", referee) if referee is not None else ()),
        *secret,
        *extra,
    ]
    url = address(sock)
    try:
        process = subprocess.Popen(command, pass_fds=passed)
    except OSError:
        os.close(write_end)
        raise
    finally:
        for fd in passed[1:]:
            os.close(fd)
        sock.close()
    if niceness:
        with contextlib.suppress(OSError):  # the child died at once: its status says why
            os.setpriority(os.PRIO_PROCESS, process.pid, niceness)
    return WebChild(url, process, write_end)


# -- the child's side -----------------------------------------------------------------------


def inherited_socket(fd: int) -> socket.socket:
    """The listening socket the parent passed as ``fd`` (``web --socket-fd``)."""
    try:
        sock = socket.socket(fileno=fd)
    except OSError as exc:
        raise CliError(f"--socket-fd: {fd} is not an open socket: {exc.strerror}") from None
    if sock.type != socket.SOCK_STREAM:
        raise CliError(f"--socket-fd: {fd} is not a stream socket")
    return sock


def exit_with_parent(fd: int) -> None:
    """Shut this process down (SIGTERM to itself) once the pipe ``fd`` reads end-of-file: its
    writer, the parent, has exited. A daemon thread blocks on the read, so nothing polls."""

    def watch() -> None:
        while True:
            try:
                if not os.read(fd, 1):
                    break
            except OSError as exc:
                if exc.errno != errno.EINTR:
                    break
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name=f"{PROG}-lifeline", daemon=True).start()

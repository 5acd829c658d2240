"""How ``domino-arena web`` serves its ASGI application: uvicorn, with guards on its connections.

uvicorn alone closes no connection that has not finished its request head: a client that sends
half its headers, or nothing, keeps its connection (and its file descriptor) for as long as it
likes, and a thousand such clients starve the process of descriptors (issue 29; uvicorn's
``timeout_keep_alive`` only starts after a response, and any byte received cancels it). When
the descriptors run out, asyncio's accept loop logs ``socket.accept() out of system resource``
with a traceback for every connection still queued, again and again (CPython's
``_accept_connection`` keeps looping after the error): tens of megabytes in seconds.

So the web face is served with (docs/web.md, "Connections"):

- a **header timeout**: a connection has ``header_timeout`` seconds to send a complete request
  head, from the moment the server waits for one: when it is opened and after each response on
  a kept-alive connection; no byte received extends it;
- a **per-client cap** on open connections per peer address, and a **global cap** below the
  process's open-file limit: a connection over either is answered a one-line 503 and closed at
  once. A peer named in ``--forwarded-allow-ips`` (a reverse proxy) is subject to the global cap
  only: every browser behind it shares its address, so the proxy enforces the per-client limits
  (deploy/nginx.conf);
- the open-file limit's soft value raised to its hard one at start (:func:`raise_open_file_limit`);
- every refusal, timeout and accept error logged at a bounded rate (:class:`RateLimitedLog`): at
  most one line per kind every :data:`LOG_INTERVAL` seconds, with the count of those it held back.

The guards live in a subclass of uvicorn's h11 protocol (uvicorn takes a protocol class in its
``http`` setting); the state they share, the counts per address, is one :class:`ConnectionGuard`.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import resource
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from domino_arena.server.cli.arguments import CliError
from domino_arena.server.logs import RateLimitedLog

DEFAULT_HEADER_TIMEOUT: Final = 10.0
"""Seconds a connection has to send a whole request head. A browser sends its head in one
packet; 10 s leaves room for a slow mobile link and holds a slow client's connection briefly."""
DEFAULT_MAX_PER_CLIENT: Final = 128
"""Open connections per client address. One address may be a classroom behind NAT: 30 browsers
of about 4 connections each (a page's, a kept-alive one, a live stream) fit; one host holding
slow connections is held to 128 of the global cap's 4,096."""
MAX_CONNECTIONS_CEILING: Final = 4096
"""The global cap when the open-file limit allows more. A connection waiting for its head holds
about 5 kB of the process's memory (4,000 of them added 21 MB of RSS: measured with
tests/fakes/processes.py's ``memory``), so 4,096 fit in the container's 512 MiB many times
over; the cap is there so that one process's descriptors and event loop are never all spent on
idle sockets (the live streams are capped far lower, in server/web/live.py)."""
KEEP_ALIVE_SECONDS: Final = 5
"""uvicorn's keep-alive timeout (its default), kept: an idle kept-alive connection closes then."""
LOG_INTERVAL: Final = 10.0
"""Seconds between two log lines of one kind of refusal or error."""

log = logging.getLogger("uvicorn.error")
"""The web face's log: uvicorn's own, so these lines look like (and go where) its lines do."""


def fd_reserve(open_files: int) -> int:
    """Descriptors kept back from connections for the process itself: the database's pool, the
    referee's channel, the log, the event loop (an eighth of the limit, at least 32)."""
    return max(32, open_files // 8)


def raise_open_file_limit() -> int:
    """Raise ``RLIMIT_NOFILE``'s soft limit to its hard limit; return the soft limit now in force.

    The default soft limit (1,024 on most Linux systems) is what starved the web face; the hard
    limit is what the administrator allows (often 524,288 or more in a container). An unlimited
    hard limit is taken as 1,048,576 (the kernel's usual ``nr_open``)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = 1 << 20 if hard == resource.RLIM_INFINITY else hard
    if soft == resource.RLIM_INFINITY or soft >= target:
        return target if soft == resource.RLIM_INFINITY else soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (ValueError, OSError):  # a hard limit over the kernel's nr_open: keep the soft one
        return soft
    return target


def connection_cap(open_files: int, asked: int | None) -> int:
    """The global cap on open connections: ``asked`` (``--max-connections``) if it fits under
    the open-file limit less :func:`fd_reserve`, else that room (at most
    :data:`MAX_CONNECTIONS_CEILING` when not asked).

    Raises:
        CliError: ``asked`` is under 1 or over the room the open-file limit leaves.
    """
    room = max(1, open_files - fd_reserve(open_files))
    if asked is None:
        return min(room, MAX_CONNECTIONS_CEILING)
    if asked < 1:
        raise CliError(f"--max-connections: must be 1 or more, got {asked}")
    if asked > room:
        raise CliError(
            f"--max-connections: at most {room} with this process's open-file limit of "
            f"{open_files} ({fd_reserve(open_files)} kept for the process itself), got {asked}; "
            "raise the limit (ulimit -n) or ask for fewer"
        )
    return asked


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def trusted_proxies(text: str | None) -> tuple[Network, ...]:
    """``--forwarded-allow-ips``: comma-separated addresses or networks (``10.0.0.5``,
    ``172.30.0.0/24``, ``::1``) of the reverse proxies whose ``X-Forwarded-For`` and
    ``X-Forwarded-Proto`` the web face believes. None or empty: nobody's.

    Raises:
        CliError: an entry is not an address or network, or is ``*``.
    """
    if not text:
        return ()
    found: list[Network] = []
    for entry in (part.strip() for part in text.split(",")):
        if entry == "*":
            raise CliError(
                "--forwarded-allow-ips: '*' would let every client choose the address it is "
                "counted as; name the proxy's addresses or networks (e.g. 172.30.0.10,10.0.0.0/8)"
            )
        try:
            found.append(ipaddress.ip_network(entry))
        except ValueError:
            raise CliError(
                f"--forwarded-allow-ips: expected IP addresses or networks separated by commas "
                f"(e.g. 127.0.0.1,10.0.0.0/8), got {entry[:80]!r}"
            ) from None
    return tuple(found)


@dataclass
class ConnectionGuard:
    """The connection limits of one served web face and the counts they are checked against."""

    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    max_per_client: int = DEFAULT_MAX_PER_CLIENT
    max_connections: int = MAX_CONNECTIONS_CEILING
    proxies: tuple[Network, ...] = ()
    open_files: int = 0
    """The open-file limit in force (for the messages)."""
    per_client: dict[str, int] = field(default_factory=dict)
    total: int = 0
    logs: dict[str, RateLimitedLog] = field(default_factory=dict)

    def logged(self, what: str) -> RateLimitedLog:
        """The rate-limited log of one kind of event (made on first use, on the event loop)."""
        found = self.logs.get(what)
        if found is None:
            try:
                schedule: Any = asyncio.get_running_loop().call_later
            except RuntimeError:
                schedule = None
            found = self.logs[what] = RateLimitedLog(
                what, LOG_INTERVAL, schedule=schedule, logger=log
            )
        return found

    def is_proxy(self, host: str) -> bool:
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(address in network for network in self.proxies)

    def admit(self, host: str) -> str | None:
        """Count a new connection from ``host``; or return why it is refused (nothing counted)."""
        if self.total >= self.max_connections:
            self.logged("connections refused (server full)").event(
                f"{self.max_connections} open (--max-connections), the latest from {host}"
            )
            return f"the server is full: {self.max_connections} connections are open; try again"
        if not self.is_proxy(host) and self.per_client.get(host, 0) >= self.max_per_client:
            self.logged("connections refused (per-client cap)").event(
                f"{host} has {self.max_per_client} open (--max-connections-per-client)"
            )
            return (
                f"too many connections from your address: at most {self.max_per_client} "
                "at once; close some and try again"
            )
        self.total += 1
        self.per_client[host] = self.per_client.get(host, 0) + 1
        return None

    def release(self, host: str) -> None:
        """Forget a connection :meth:`admit` counted."""
        self.total -= 1
        left = self.per_client[host] - 1
        if left:
            self.per_client[host] = left
        else:
            del self.per_client[host]

    def loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """The event loop's exception handler: accept errors (``EMFILE``, ``ENFILE``, ...) at a
        bounded rate (asyncio retries the accept a second later by itself); the rest as asyncio
        logs them."""
        if context.get("message") == "socket.accept() out of system resource":
            error = context.get("exception")
            why = error.strerror if isinstance(error, OSError) and error.strerror else error
            self.logged("accept failed").event(
                f"{why} ({self.total} connections open, open-file limit {self.open_files}); "
                "new connections wait in the backlog, retried every second"
            )
            return
        loop.default_exception_handler(context)


def refusal(reason: str) -> bytes:
    """A whole HTTP/1.1 503 response saying ``reason`` in one line, closing the connection."""
    body = f"{reason}\n".encode()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\n"
        "content-type: text/plain; charset=utf-8\r\n"
        f"content-length: {len(body)}\r\n"
        "retry-after: 10\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode() + body


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the :class:`ConnectionGuard`'s caps and header timeout.

    ``guard`` is set on the subclass :func:`guarded_protocol` makes for each server."""

    guard: ClassVar[ConnectionGuard]

    _counted: str | None = None
    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        peer = transport.get_extra_info("peername")
        host = str(peer[0]) if isinstance(peer, tuple) and peer else "unknown"
        why = self.guard.admit(host)
        if why is not None:
            transport.write(refusal(why))
            transport.close()
            return
        self._counted = host
        super().connection_made(transport)
        self._watch_head()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._counted is None:
            return  # refused: uvicorn never saw it
        self.guard.release(self._counted)
        self._counted = None
        self._stop_head_timer()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        super().handle_events()
        self._watch_head()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch_head()

    def _watch_head(self) -> None:
        """Run the header timer while the server waits for a request head (h11's IDLE: nothing,
        or part of a head, received), stop it once a whole head has come."""
        waiting = self.conn.their_state is h11.IDLE and not self.transport.is_closing()
        if not waiting:
            self._stop_head_timer()
        elif self._head_timer is None:
            self._head_timer = self.loop.call_later(self.guard.header_timeout, self._head_late)

    def _stop_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_late(self) -> None:
        self._head_timer = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        self.guard.logged("connections closed (header timeout)").event(
            f"no whole request head within {self.guard.header_timeout:g} s (--header-timeout), "
            f"the latest from {self._counted}"
        )
        self.transport.close()


def guarded_protocol(guard: ConnectionGuard) -> type[GuardedH11Protocol]:
    """A protocol class for one server, its ``guard`` set."""

    class Guarded(GuardedH11Protocol):
        pass

    Guarded.guard = guard
    return Guarded


def forwarded_allow_ips(proxies: tuple[Network, ...]) -> list[str] | None:
    """uvicorn's ``forwarded_allow_ips`` for ``proxies``: a lone address as an address (every
    uvicorn reads those; networks only since 0.31), a network as a network."""
    return [
        str(network.network_address) if network.num_addresses == 1 else str(network)
        for network in proxies
    ] or None


class GuardedServer(uvicorn.Server):
    """uvicorn's server, with the guard's exception handler on its event loop."""

    def __init__(self, config: uvicorn.Config, guard: ConnectionGuard) -> None:
        super().__init__(config)
        self.guard = guard

    async def serve(self, sockets: Any = None) -> None:
        asyncio.get_running_loop().set_exception_handler(self.guard.loop_exception)
        await super().serve(sockets)


def server(app: Any, guard: ConnectionGuard) -> GuardedServer:
    """The uvicorn server of the web face: ``app`` behind ``guard``'s limits, the forwarded
    headers believed from ``guard.proxies`` only, no WebSocket upgrades (the web face has none:
    an upgraded connection would leave the guard's counts)."""
    config = uvicorn.Config(
        app,
        http=guarded_protocol(guard),
        ws="none",
        log_level="warning",
        access_log=False,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        proxy_headers=bool(guard.proxies),
        forwarded_allow_ips=forwarded_allow_ips(guard.proxies),
    )
    return GuardedServer(config, guard)
